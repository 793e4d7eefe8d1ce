//! What the observer reads: undistilled messages rendered as `[role] (HH:MM) body` lines, long
//! tool outputs replaced by an annotation, the user's standing instructions pinned, and the tool
//! failures of the window counted. Pure.

use std::collections::HashMap;
use std::sync::LazyLock;

use lore_proto::{Part, Role};
use lore_storage::StoredMessage;
use lore_storage::memory::day_of;
use regex::Regex;

/// Most standing instructions pinned above the messages.
const MAX_PINNED: usize = 5;
/// Most tool-failure lines.
const MAX_FAILURES: usize = 5;
/// Longest tool-call argument text kept.
const MAX_ARGUMENT_CHARS: usize = 600;

/// Estimated tokens of a text: one per three characters, as the reference estimates.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(3)
}

/// `HH:MM` (UTC) of a time in ms since the epoch.
pub fn clock(ms: u64) -> String {
    let minutes = (ms / 60_000) % (24 * 60);
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

static ERROR_LINE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(error|errors|failed|failure|panic(ked)?|exception|traceback|fatal|denied|not found|cannot|undefined)\b").ok()
});
static PATH: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?:~/|\./|/)?(?:[A-Za-z0-9_.@-]+/)+[A-Za-z0-9_.@-]+\.[A-Za-z0-9]{1,8}\b").ok()
});
static STANDING: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(always|never|make sure|i prefer|prefer to|switched to|from now on|don't ever|do not ever|remember that|please stop|stop using)\b").ok()
});

/// The compact stand-in for a tool output longer than the limit: its size, its first error
/// lines and the file paths it mentions.
pub fn annotate_tool_output(output: &str) -> String {
    let lines = output.lines().count();
    let errors: Vec<String> = match ERROR_LINE.as_ref() {
        Some(re) => output
            .lines()
            .filter(|line| re.is_match(line))
            .take(3)
            .map(|line| cut(line.trim(), 160))
            .collect(),
        None => Vec::new(),
    };
    let paths = paths_in(output, 10);
    let mut note = format!(
        "[tool output omitted: {lines} lines, {} chars",
        output.chars().count()
    );
    if !errors.is_empty() {
        note.push_str("; errors: ");
        note.push_str(&errors.join(" | "));
    }
    if !paths.is_empty() {
        note.push_str("; paths: ");
        note.push_str(&paths.join(", "));
    }
    note.push(']');
    note
}

/// True when a line of `text` reads like an error (error, failed, panic, traceback, …).
pub fn has_error_line(text: &str) -> bool {
    ERROR_LINE
        .as_ref()
        .is_some_and(|re| text.lines().any(|line| re.is_match(line)))
}

/// Up to `limit` distinct file paths in a text, in order of appearance.
pub fn paths_in(text: &str, limit: usize) -> Vec<String> {
    let Some(re) = PATH.as_ref() else {
        return Vec::new();
    };
    let mut seen = Vec::new();
    for found in re.find_iter(text) {
        let path = found.as_str().to_string();
        if !seen.contains(&path) {
            seen.push(path);
            if seen.len() == limit {
                break;
            }
        }
    }
    seen
}

fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The body of one message for the observer.
fn render_body(message: &StoredMessage, tool_output_max_chars: usize) -> String {
    let mut pieces = Vec::new();
    for part in &message.message.parts {
        match part {
            Part::Text { text } if !text.trim().is_empty() => pieces.push(text.trim().to_string()),
            Part::Text { .. } | Part::Thinking { .. } => {}
            Part::ToolCall {
                name, arguments, ..
            } => pieces.push(format!(
                "[tool call {name}] {}",
                cut(arguments, MAX_ARGUMENT_CHARS)
            )),
            Part::ToolResult {
                content, is_error, ..
            } => {
                let label = if *is_error {
                    "[tool error]"
                } else {
                    "[tool result]"
                };
                if content.chars().count() > tool_output_max_chars {
                    pieces.push(format!("{label} {}", annotate_tool_output(content)));
                } else {
                    pieces.push(format!("{label} {}", content.trim()));
                }
            }
            Part::Other { kind, .. } => pieces.push(format!("[{kind}]")),
        }
    }
    pieces.join("\n")
}

/// One undistilled message, rendered.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedMessage {
    /// Its sequence number in the session's log.
    pub seq: u64,
    /// `[role] (HH:MM) body`.
    pub line: String,
    /// Estimated tokens of the line.
    pub tokens: u64,
}

/// Renders messages for the observer; messages with nothing to say are left out but still
/// returned with an empty line, so the cursor moves past them.
pub fn render_messages(
    messages: &[StoredMessage],
    tool_output_max_chars: usize,
) -> Vec<RenderedMessage> {
    messages
        .iter()
        .map(|message| {
            let body = render_body(message, tool_output_max_chars);
            let line = if body.is_empty() || message.message.role == Role::System {
                String::new()
            } else {
                format!(
                    "[{}] ({}) {body}",
                    message.message.role.as_str(),
                    clock(message.created_at_ms)
                )
            };
            RenderedMessage {
                seq: message.seq,
                tokens: estimate_tokens(&line),
                line,
            }
        })
        .collect()
}

/// The user's standing instructions in a window ("always …", "from now on …"), one sentence
/// each, at most five.
pub fn pinned_assertions(messages: &[StoredMessage]) -> Vec<String> {
    let Some(re) = STANDING.as_ref() else {
        return Vec::new();
    };
    let mut pinned = Vec::new();
    for message in messages.iter().filter(|m| m.message.role == Role::User) {
        for part in &message.message.parts {
            let Part::Text { text } = part else { continue };
            for sentence in text.split_inclusive(['.', '!', '?', '\n']) {
                let sentence = sentence.trim();
                if re.is_match(sentence) && !pinned.iter().any(|p: &String| p == sentence) {
                    pinned.push(cut(sentence, 240));
                    if pinned.len() == MAX_PINNED {
                        return pinned;
                    }
                }
            }
        }
    }
    pinned
}

/// `tool:error (×n)` for the tools whose results in the window were errors.
pub fn tool_failures(messages: &[StoredMessage]) -> Vec<String> {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for message in messages {
        for part in &message.message.parts {
            match part {
                Part::ToolCall { id, name, .. } => {
                    names.insert(id.as_str(), name.as_str());
                }
                Part::ToolResult {
                    call_id,
                    is_error: true,
                    ..
                } => {
                    let name = names.get(call_id.as_str()).copied().unwrap_or("tool");
                    match counts.iter_mut().find(|(n, _)| *n == name) {
                        Some((_, count)) => *count += 1,
                        None => counts.push((name, 1)),
                    }
                }
                _ => {}
            }
        }
    }
    counts
        .into_iter()
        .take(MAX_FAILURES)
        .map(|(name, count)| format!("- {name}:error (×{count})"))
        .collect()
}

/// The date line of a window.
pub fn session_date(messages: &[StoredMessage]) -> String {
    day_of(messages.first().map_or(0, |m| m.created_at_ms))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use lore_proto::Message;
    use lore_storage::MessageSource;

    fn stored(seq: u64, role: Role, parts: Vec<Part>) -> StoredMessage {
        let message = Message { role, parts };
        StoredMessage {
            version: 1,
            session_id: "s".into(),
            seq,
            position: seq as u32,
            identity: message.identity(),
            message,
            source: MessageSource::Request,
            created_at_ms: 1_795_996_800_000 + 14 * 3_600_000 + 5 * 60_000,
            model: None,
            usage: None,
            partial: false,
            context_layer: None,
        }
    }

    fn text(text: &str) -> Part {
        Part::Text { text: text.into() }
    }

    #[test]
    fn long_tool_output_becomes_an_annotation_keeping_errors_and_paths() {
        let mut output = String::new();
        for i in 0..300 {
            output.push_str(&format!("compiling crate {i} at src/gen/mod_{i}.rs\n"));
        }
        output.push_str("error[E0308]: mismatched types in src/main.rs\n");
        let messages = vec![
            stored(
                0,
                Role::Assistant,
                vec![Part::ToolCall {
                    id: "c1".into(),
                    name: "bash".into(),
                    arguments: r#"{"cmd":"cargo build"}"#.into(),
                }],
            ),
            stored(
                1,
                Role::User,
                vec![Part::ToolResult {
                    call_id: "c1".into(),
                    content: output.clone(),
                    is_error: true,
                }],
            ),
        ];
        let rendered = render_messages(&messages, 4_000);
        assert_eq!(
            rendered[0].line,
            r#"[assistant] (14:05) [tool call bash] {"cmd":"cargo build"}"#
        );
        let line = &rendered[1].line;
        assert!(
            line.starts_with("[user] (14:05) [tool error] [tool output omitted: 301 lines"),
            "{line}"
        );
        assert!(
            line.contains("error[E0308]: mismatched types in src/main.rs"),
            "{line}"
        );
        assert!(line.contains("src/gen/mod_0.rs"), "{line}");
        assert!(line.len() < 1_500, "{}", line.len());
        assert_eq!(tool_failures(&messages), ["- bash:error (×1)"]);
        // Short outputs stay verbatim.
        let short = render_messages(&messages, 100_000);
        assert!(short[1].line.contains("compiling crate 299"));
    }

    #[test]
    fn standing_instructions_are_pinned_once() {
        let messages = vec![
            stored(
                0,
                Role::User,
                vec![text(
                    "Fix the build. From now on, always run cargo fmt first. Thanks!",
                )],
            ),
            stored(1, Role::Assistant, vec![text("I will always do that.")]),
            stored(
                2,
                Role::User,
                vec![text("From now on, always run cargo fmt first.")],
            ),
        ];
        assert_eq!(
            pinned_assertions(&messages),
            ["From now on, always run cargo fmt first."]
        );
        assert_eq!(session_date(&messages), "2026-11-30");
    }

    #[test]
    fn empty_messages_render_empty_but_keep_their_seq() {
        let messages = vec![
            stored(
                4,
                Role::Assistant,
                vec![Part::Thinking {
                    text: "hmm".into(),
                    signature: None,
                }],
            ),
            stored(5, Role::User, vec![text("hello there")]),
        ];
        let rendered = render_messages(&messages, 4_000);
        assert_eq!(rendered[0].line, "");
        assert_eq!(rendered[0].seq, 4);
        assert_eq!(rendered[1].line, "[user] (14:05) hello there");
        assert_eq!(
            rendered[1].tokens,
            estimate_tokens("[user] (14:05) hello there")
        );
    }
}
