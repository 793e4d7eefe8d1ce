//! The observer's and the reflector's instructions and the user messages they get. The
//! markers (`<messages>`, `<observation-logs>`, `<observations>`) are part of the contract with
//! the parser below and with the fake upstream's default worker answers.

/// Instructions of the observer (generation 0).
pub const OBSERVER_SYSTEM: &str = "\
You keep the working notes of a coding session between a user and an AI assistant. You read a \
stretch of the conversation and write down what happened as a dated log of events, one event \
per line. These notes replace the conversation later, so anything you leave out is lost.

Write only this, nothing before or after:
<observations>
Date: YYYY-MM-DD
* 🔴 (HH:MM) …
</observations>

Each line starts with a priority and the time of the message it comes from:
🔴 something the user stated, decided, corrected or asked to always/never do;
🟡 a question or request that is still open;
🟢 background: what the assistant did, found or tried.

Keep exactly, character for character: file paths, function and type names, commands, flags, \
config keys and values, environment variables, error messages and codes, version numbers, test \
counts and every other number. For a bug write the problem, its root cause, the fix and the \
outcome. For a decision list each alternative and why it was taken or rejected. Keep wrong \
guesses as investigation notes, marked as such. When a value replaces an earlier one, say what \
it replaced. Enumerate lists the assistant produced item by item. Tag user behaviour with \
[verb-noun] tags such as [requested-tests], [corrected-style], [rejected-approach]. Record facts \
neutrally and leave out secrets (keys, passwords, tokens). Do not repeat the previous \
observations you are shown. Be dense: a note is worth writing only if someone continuing the \
work would need it.";

/// Instructions of the reflector (generation ≥ 1).
pub const REFLECTOR_SYSTEM: &str = "\
You maintain the consolidated working context of a long coding session. You get the previous \
consolidated context (if any) and older observation logs. Fold them into one updated context \
under exactly these headings:
## Current State
## Key Decisions
## Technical Changes
## Session Timeline

Keep every date and time. Merge duplicates. Drop values that were later replaced, but keep the \
replacement. What the user asserted wins over what was inferred. When two numbers conflict, \
keep the earlier one and note the conflict. Never drop a fix made early in the session. Keep \
file paths, commands, identifiers and error messages exactly. Update the previous context in \
place rather than starting over. Write only the four sections.";

/// The observer's user message.
pub fn observer_user(
    previous: Option<&str>,
    date: &str,
    pinned: &[String],
    failures: &[String],
    lines: &[&str],
) -> String {
    let mut out = String::new();
    if let Some(previous) = previous.filter(|p| !p.trim().is_empty()) {
        out.push_str("<previous-observations>\n");
        out.push_str(previous.trim());
        out.push_str("\n</previous-observations>\nDo not repeat these; continue after them.\n\n");
    }
    out.push_str("Session date: ");
    out.push_str(date);
    out.push('\n');
    if !pinned.is_empty() {
        out.push_str("\n<standing-instructions>\n");
        for line in pinned {
            out.push_str("- ");
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("</standing-instructions>\n");
    }
    if !failures.is_empty() {
        out.push_str("\n<tool-failures>\n");
        for line in failures {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("</tool-failures>\n");
    }
    out.push_str("\n<messages>\n");
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("</messages>\n");
    out
}

/// The reflector's user message: the previous consolidation and the logs to fold in, oldest
/// first.
pub fn reflector_user(previous: Option<&str>, logs: &[(u64, &str)]) -> String {
    let mut out = String::new();
    if let Some(previous) = previous {
        out.push_str("<previous-meta-summary>\n");
        out.push_str(previous.trim());
        out.push_str("\n</previous-meta-summary>\n\n");
    }
    out.push_str("<observation-logs>\n");
    for (n, log) in logs {
        out.push_str(&format!("<log n=\"{n}\">\n{}\n</log>\n", log.trim()));
    }
    out.push_str("</observation-logs>\n");
    out
}

/// The observations in a reply: the `<observations>` element if there is one, else the whole
/// text; trimmed.
pub fn extract_observations(reply: &str) -> String {
    let open = "<observations>";
    let close = "</observations>";
    match reply.find(open) {
        Some(start) => {
            let body = &reply[start + open.len()..];
            let end = body.find(close).unwrap_or(body.len());
            body[..end].trim().to_string()
        }
        None => reply.trim().to_string(),
    }
}

/// True when an observer reply expands its source instead of compressing it: more than 5× the
/// source under 100 tokens, 2× under 500, 1× above.
pub fn expands(source_tokens: u64, output_tokens: u64) -> bool {
    let factor = match source_tokens {
        0..100 => 5,
        100..500 => 2,
        _ => 1,
    };
    output_tokens > source_tokens * factor
}

/// Output limit of an observer call: `clamp(10·√N, 256, 4096)`.
pub fn observer_max_tokens(source_tokens: u64) -> u32 {
    ((source_tokens as f64).sqrt() * 10.0).clamp(256.0, 4_096.0) as u32
}

/// Output limit of a reflector call: `clamp(N / 4, 1024, 8192)`.
pub fn reflector_max_tokens(input_tokens: u64) -> u32 {
    (input_tokens / 4).clamp(1_024, 8_192) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_are_taken_from_their_element_or_the_whole_reply() {
        assert_eq!(
            extract_observations("Sure!\n<observations>\nDate: x\n* a\n</observations>\nbye"),
            "Date: x\n* a"
        );
        assert_eq!(extract_observations("  * a\n"), "* a");
        assert_eq!(
            extract_observations("<observations>\n* cut off"),
            "* cut off"
        );
    }

    #[test]
    fn expansion_limits_follow_the_source_size() {
        assert!(!expands(50, 250));
        assert!(expands(50, 251));
        assert!(!expands(400, 800));
        assert!(expands(400, 801));
        assert!(expands(1_000, 1_001));
        assert_eq!(observer_max_tokens(100), 256);
        assert_eq!(observer_max_tokens(10_000), 1_000);
        assert_eq!(observer_max_tokens(1_000_000), 4_096);
        assert_eq!(reflector_max_tokens(100), 1_024);
    }

    #[test]
    fn user_messages_carry_their_markers() {
        let user = observer_user(
            Some("* old"),
            "2026-11-30",
            &["always test".into()],
            &[],
            &["[user] (10:00) hi"],
        );
        assert!(user.contains("<previous-observations>\n* old\n</previous-observations>"));
        assert!(user.contains("<messages>\n[user] (10:00) hi\n</messages>"));
        assert!(user.contains("<standing-instructions>\n- always test\n"));
        assert!(!user.contains("<tool-failures>"));
        let meta = reflector_user(None, &[(3, "* a"), (4, "* b")]);
        assert!(meta.starts_with("<observation-logs>\n<log n=\"3\">\n* a\n</log>"));
    }
}
