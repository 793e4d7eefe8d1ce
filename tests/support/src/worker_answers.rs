//! The default answers to worker calls (no `WorkerScript` queued): deterministic stand-ins for
//! the observer, the consolidator, the curator and query expansion, so a whole gateway can run
//! against the fake upstream.
//!
//! - distillation over `<messages>`: one bullet per non-empty message, its first sentence
//!   (🔴 what the user wrote, ≤ 200 chars; 🟢 others and tool results, ≤ 160 chars), plus the
//!   file paths, identifiers and backticked spans it mentions (`[keeps: …]`, at most 8);
//! - distillation over `<observation-logs>` (after the `<previous-meta-summary>`, if any): every
//!   🔴 bullet (what the user asserted, which the reflector's prompt says wins) and the most
//!   recent 60 % of the other unique bullets, in order, under the four working-context headings;
//! - curation: no operations; query expansion: no rephrasings; anything else: `ok`.

use std::time::{SystemTime, UNIX_EPOCH};

/// Characters kept of a user message's first sentence.
const USER_CHARS: usize = 200;
/// Characters kept of any other message's first sentence.
const OTHER_CHARS: usize = 160;
/// Verbatim tokens kept per message.
const MAX_KEEPS: usize = 8;

/// The answer to a worker call of `bucket` whose user message is `user`.
pub(crate) fn answer(bucket: &str, user: &str) -> String {
    match bucket {
        "distillation" => {
            if let Some(messages) = between(user, "<messages>", "</messages>") {
                observe(user, messages)
            } else if let Some(logs) = between(user, "<observation-logs>", "</observation-logs>") {
                // The previous consolidation comes first: its bullets are the oldest.
                let previous = between(user, "<previous-meta-summary>", "</previous-meta-summary>")
                    .unwrap_or("");
                consolidate(&format!("{previous}\n{logs}"))
            } else {
                "ok".into()
            }
        }
        "curation" => r#"{"ops": [], "entities": [], "relations": []}"#.into(),
        "query_expansion" => "[]".into(),
        _ => "ok".into(),
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

/// One message of the observer's input.
struct Message {
    role: String,
    time: Option<String>,
    body: String,
}

/// `[role] (HH:MM) rest` → (role, time, rest).
fn header(line: &str) -> Option<(String, Option<String>, &str)> {
    let rest = line.strip_prefix('[')?;
    let close = rest.find(']')?;
    let role = &rest[..close];
    if role.is_empty()
        || role.len() > 24
        || !role.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let rest = rest[close + 1..].trim_start();
    let (time, rest) = match rest.strip_prefix('(').and_then(|r| Some((r, r.find(')')?))) {
        Some((inner, end)) if end <= 32 => (Some(inner[..end].to_string()), &inner[end + 1..]),
        _ => (None, rest),
    };
    Some((role.to_ascii_lowercase(), time, rest.trim()))
}

fn messages(block: &str) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for line in block.lines() {
        if let Some((role, time, rest)) = header(line.trim_start()) {
            out.push(Message {
                role,
                time,
                body: rest.trim().to_string(),
            });
        } else if let Some(last) = out.last_mut()
            && !line.trim().is_empty()
        {
            if !last.body.is_empty() {
                last.body.push('\n');
            }
            last.body.push_str(line.trim());
        }
    }
    out
}

/// The first sentence of `text`, whitespace collapsed, at most `max` characters.
fn first_sentence(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars: Vec<char> = flat.chars().collect();
    let mut end = chars.len();
    for (i, c) in chars.iter().enumerate() {
        if matches!(c, '.' | '!' | '?') && chars.get(i + 1).is_none_or(|n| n.is_whitespace()) {
            end = i + 1;
            break;
        }
    }
    if end > max {
        let mut cut: String = chars[..max.saturating_sub(1)].iter().collect();
        cut.push('…');
        return cut;
    }
    chars[..end].iter().collect()
}

fn is_path(token: &str) -> bool {
    token.starts_with("./")
        || token.starts_with("~/")
        || (token.starts_with('/') && token.len() > 1)
        || (token.contains('/') && token.contains('.'))
}

fn is_identifier(token: &str) -> bool {
    (token.contains('_') || token.contains("::"))
        && token.chars().any(|c| c.is_ascii_alphanumeric())
}

/// Paths, identifiers and backticked spans of `body`, in order of appearance, deduplicated.
fn keeps(body: &str) -> Vec<String> {
    let mut found: Vec<(usize, String)> = Vec::new();
    let mut rest = body.to_string();
    let mut from = 0;
    while let Some(open) = rest[from..].find('`').map(|i| i + from) {
        let Some(close) = rest[open + 1..].find('`').map(|i| i + open + 1) else {
            break;
        };
        if close > open + 1 {
            found.push((open, rest[open..=close].to_string()));
        }
        // Blank the span out so its inside is not found again as a token.
        rest.replace_range(open..=close, &" ".repeat(close - open + 1));
        from = close + 1;
    }
    let mut offset = 0;
    for word in rest.split(' ') {
        for token in word.split_whitespace() {
            let token = token
                .trim_matches(|c: char| "\"'()[]{}<>,;!?".contains(c))
                .trim_end_matches(['.', ':']);
            if !token.is_empty() && (is_path(token) || is_identifier(token)) {
                found.push((offset, token.to_string()));
            }
        }
        offset += word.len() + 1;
    }
    found.sort_by_key(|(at, _)| *at);
    let mut out: Vec<String> = Vec::new();
    for (_, token) in found {
        if !out.contains(&token) {
            out.push(token);
        }
        if out.len() == MAX_KEEPS {
            break;
        }
    }
    out
}

fn session_date(user: &str) -> String {
    user.lines()
        .find_map(|line| line.trim().strip_prefix("Session date:"))
        .map(str::trim)
        .filter(|date| !date.is_empty())
        .map_or_else(today, str::to_string)
}

/// Today (UTC) as `YYYY-MM-DD`.
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn observe(user: &str, block: &str) -> String {
    let mut out = format!("<observations>\nDate: {}\n", session_date(user));
    for message in messages(block) {
        if message.body.trim().is_empty() {
            continue;
        }
        // What the user wrote is 🔴; a tool result rides in a user message but is not the
        // user's word, so it is 🟢 like the rest (as the observer's prompt asks).
        let (mark, max) = if message.role == "user" && !message.body.starts_with("[tool result]") {
            ("🔴", USER_CHARS)
        } else {
            ("🟢", OTHER_CHARS)
        };
        out.push_str("* ");
        out.push_str(mark);
        if let Some(time) = &message.time {
            out.push_str(&format!(" ({time})"));
        }
        out.push(' ');
        out.push_str(&first_sentence(&message.body, max));
        let kept = keeps(&message.body);
        if !kept.is_empty() {
            out.push_str(&format!(" [keeps: {}]", kept.join(", ")));
        }
        out.push('\n');
    }
    out.push_str("</observations>");
    out
}

fn consolidate(logs: &str) -> String {
    let mut bullets: Vec<&str> = Vec::new();
    for line in logs.lines().map(str::trim) {
        if line.starts_with("* ") {
            // Keep the most recent occurrence of a repeated bullet.
            bullets.retain(|seen| *seen != line);
            bullets.push(line);
        }
    }
    // As the reflector's prompt asks: what the user asserted (🔴) stays; of the rest, the
    // most recent 60 %.
    let asserted = |bullet: &str| bullet.starts_with("* 🔴");
    let others = bullets.iter().filter(|b| !asserted(b)).count();
    let keep_others = (others * 3).div_ceil(5);
    let mut skip = others - keep_others;
    let mut out = String::from(
        "## Current State\n\n## Key Decisions\n\n## Technical Changes\n\n## Session Timeline\n",
    );
    for bullet in bullets {
        if !asserted(bullet) && skip > 0 {
            skip -= 1;
            continue;
        }
        out.push_str(bullet);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn headers_and_sentences() {
        let (role, time, rest) = header("[user] (14:05) Fix it. Now.").unwrap();
        assert_eq!(
            (role.as_str(), time.as_deref(), rest),
            ("user", Some("14:05"), "Fix it. Now.")
        );
        assert!(header("[not a role] x").is_none());
        assert_eq!(first_sentence("One  two.\nThree.", 200), "One two.");
        assert_eq!(first_sentence("see v1.2 now", 200), "see v1.2 now");
        assert_eq!(first_sentence(&"x".repeat(300), 10).chars().count(), 10);
    }

    #[test]
    fn keeps_paths_identifiers_and_spans() {
        let kept = keeps(
            "Edit src/main.rs and ./run, not ~/x; E_TIMEOUT in lore::worker. Run `cargo test -p x` then /tmp/y. Again src/main.rs",
        );
        assert_eq!(
            kept,
            [
                "src/main.rs",
                "./run",
                "~/x",
                "E_TIMEOUT",
                "lore::worker",
                "`cargo test -p x`",
                "/tmp/y"
            ]
        );
        assert!(keeps("plain words only. and/or").is_empty());
    }

    #[test]
    fn dates() {
        assert_eq!(session_date("x\nSession date: 2025-03-04\n"), "2025-03-04");
        let today = session_date("nothing");
        assert_eq!(today.len(), 10);
        assert!(today.starts_with("20"));
    }

    #[test]
    fn consolidation_keeps_what_the_user_asserted_and_the_newest_of_the_rest() {
        let logs = "* 🔴 (09:00) The port is 6543.\n* 🟢 a1\n* 🟢 a2\n* 🟢 a3\n* 🟢 a4\n* 🟢 a5\n* 🔴 Use tabs.\n* 🟢 a1\n";
        let out = consolidate(logs);
        let bullets: Vec<&str> = out.lines().filter(|l| l.starts_with("* ")).collect();
        // a1 repeated: its newest place counts; of five others the newest three stay.
        assert_eq!(
            bullets,
            [
                "* 🔴 (09:00) The port is 6543.",
                "* 🟢 a4",
                "* 🟢 a5",
                "* 🔴 Use tabs.",
                "* 🟢 a1"
            ]
        );
    }
}
