//! Compaction interception: when a harness asks the model to summarise the conversation so it
//! can compact it (Claude Code's `/compact` and auto-compact, OpenCode's anchored summary,
//! Codex's `POST /v1/responses/compact`), Lore answers from what it already distilled: the
//! session's observation logs and the tail it has not distilled yet (reference §15). No model
//! is called. With nothing distilled the request goes to the upstream as it is.
//!
//! A streaming client gets its stream opened at once and a keepalive (Anthropic `ping`) every
//! 15 s until the summary is ready.

use std::time::Duration;

use lore_proto::{CanonicalRequest, Part, Role};
use lore_storage::{StorageError, Store};

/// How often a streaming client waiting for the summary gets a keepalive.
pub const PING_EVERY: Duration = Duration::from_secs(15);
/// Most characters of raw, not yet distilled messages in the summary.
const TAIL_CHARS: usize = 4_000;
/// Sections of OpenCode's anchored-summary template; four of them mark one.
const TEMPLATE_SECTIONS: [&str; 6] = [
    "## Goal",
    "## Progress",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
    "## Relevant Files",
];

/// Who asked for the summary, which decides how it is wrapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summarise {
    /// Claude Code reads the summary between `<summary>` tags.
    pub claude_code: bool,
    /// The summary the client already has (`<previous-summary>`), carried over.
    pub previous: Option<String>,
    /// Why this is a compaction request, for the log.
    pub reason: &'static str,
}

/// Recognises a request that asks for a summary of the conversation (reference §2 item 4, the
/// textual detectors, and Claude Code 2.1's own compaction prompt).
pub fn detect(request: &CanonicalRequest) -> Option<Summarise> {
    let system = request.system.as_deref().unwrap_or("");
    let last_user = request
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(user_text)
        .unwrap_or_default();
    let previous = between(&last_user, "<previous-summary>", "</previous-summary>")
        .or_else(|| between(&last_user, "<prior-summary>", "</prior-summary>"));
    let claude = |reason| {
        Some(Summarise {
            claude_code: true,
            previous: None,
            reason,
        })
    };
    if last_user.contains("Your task is to create a detailed summary of the conversation so far") {
        return claude("Claude Code's compaction prompt in the last user message");
    }
    if system.contains("tasked with summarizing conversations") {
        return claude("Claude Code's summarising system prompt");
    }
    let other = |reason| {
        Some(Summarise {
            claude_code: false,
            previous: previous.clone(),
            reason,
        })
    };
    if system.contains("anchored context summarization assistant")
        || system.contains("You are a context summarization agent")
    {
        return other("OpenCode's summarisation system prompt");
    }
    if request.tool_count == 0
        && (last_user.contains("anchored summary from the conversation history")
            || last_user.contains("Update the anchored summary below")
            || last_user.contains("<previous-summary>")
            || last_user.contains("<prior-summary>"))
    {
        return other("an anchored-summary request without tools");
    }
    if let Some(template) = between(&last_user, "<template>", "</template>")
        && TEMPLATE_SECTIONS
            .iter()
            .filter(|section| template.contains(*section))
            .count()
            >= 4
    {
        return other("a summary template with the anchored sections");
    }
    None
}

/// The user text of a message, tool results left out.
fn user_text(message: &lore_proto::Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn between(text: &str, open: &str, close: &str) -> Option<String> {
    let start = text.find(open)? + open.len();
    let end = text[start..]
        .find(close)
        .map_or(text.len(), |end| start + end);
    Some(text[start..end].trim().to_string()).filter(|inner| !inner.is_empty())
}

/// The summary of `session_id` from its observation logs and its undistilled tail; `None` when
/// nothing is distilled yet (the request then goes to the upstream).
pub fn summary(
    store: &Store,
    session_id: &str,
    ask: &Summarise,
) -> Result<Option<String>, StorageError> {
    let logs: Vec<_> = store
        .session_distillations(session_id)?
        .into_iter()
        .filter(|log| !log.archived)
        .collect();
    if logs.is_empty() {
        return Ok(None);
    }
    let through = store.distill_state(session_id)?.next_seq;
    let tail = store.session_log_from(session_id, through)?;
    let mut out = String::from("# Session Summary\n\n");
    if let Some(previous) = &ask.previous {
        out.push_str("## Earlier summary\n\n");
        out.push_str(previous);
        out.push_str("\n\n");
    }
    out.push_str("## Conversation history\n\n");
    for (i, log) in logs.iter().enumerate() {
        let consolidated = if log.generation > 0 {
            " (consolidated)"
        } else {
            ""
        };
        out.push_str(&format!(
            "### Segment {}{consolidated}\n\n{}\n\n",
            i + 1,
            log.observations.trim()
        ));
    }
    let mut recent = String::new();
    for message in tail.iter().rev() {
        let text = message.message.text();
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let line = format!("[{}] {text}\n", message.message.role.as_str());
        if recent.len() + line.len() > TAIL_CHARS {
            let room = TAIL_CHARS.saturating_sub(recent.len());
            if room > 80 {
                let cut: String = line.chars().take(room).collect();
                recent.insert_str(0, &format!("{cut}…\n"));
            }
            break;
        }
        recent.insert_str(0, &line);
    }
    if !recent.is_empty() {
        out.push_str("## Recent activity (not yet summarized)\n\n");
        out.push_str(&recent);
    }
    let out = out.trim_end().to_string();
    Ok(Some(if ask.claude_code {
        format!("<summary>\n{out}\n</summary>")
    } else {
        out
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lore_proto::Message;

    fn request(system: Option<&str>, last: &str, tools: usize) -> CanonicalRequest {
        CanonicalRequest {
            system: system.map(str::to_string),
            messages: vec![
                Message::new(
                    Role::User,
                    vec![Part::Text {
                        text: "fix it".into(),
                    }],
                ),
                Message::new(
                    Role::Assistant,
                    vec![Part::Text {
                        text: "done".into(),
                    }],
                ),
                Message::new(Role::User, vec![Part::Text { text: last.into() }]),
            ],
            tool_count: tools,
            tools_json: None,
            ..CanonicalRequest::default()
        }
    }

    #[test]
    fn the_harnesses_compaction_prompts_are_recognised() {
        let claude = request(
            Some("You are an agent."),
            "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests.",
            12,
        );
        assert!(detect(&claude).is_some_and(|s| s.claude_code));
        let claude_fallback = request(
            Some("You are a helpful AI assistant tasked with summarizing conversations."),
            "summarise",
            0,
        );
        assert!(detect(&claude_fallback).is_some());
        let opencode = request(
            Some("You are an anchored context summarization assistant."),
            "go",
            0,
        );
        assert!(detect(&opencode).is_some_and(|s| !s.claude_code));
        let update = request(
            None,
            "Update the anchored summary below.\n<previous-summary>\nwe fixed the build\n</previous-summary>",
            0,
        );
        assert_eq!(
            detect(&update).and_then(|s| s.previous).as_deref(),
            Some("we fixed the build")
        );
        // OpenCode 1.18.33: its compaction agent and its prompt with a prior summary.
        let opencode_118 = request(
            Some(
                "You are a context summarization agent. You are given a conversation between a user and an agent.",
            ),
            "Here is the conversation so far:\n<conversation>\n[User]: fix it\n</conversation>\nCreate a new anchored summary from the conversation history in the <conversation> tags above so another coding agent can continue the work.",
            0,
        );
        assert!(detect(&opencode_118).is_some());
        let prior = request(
            None,
            "<conversation>\n[User]: more\n</conversation>\n<prior-summary>\nthe parser moved\n</prior-summary>\nThe <prior-summary> summarizes everything that happened before the <conversation>.",
            0,
        );
        assert_eq!(
            detect(&prior).and_then(|s| s.previous).as_deref(),
            Some("the parser moved")
        );
        let template = request(
            None,
            "Summarise.\n<template>\n## Goal\n## Progress\n## Key Decisions\n## Next Steps\n</template>",
            3,
        );
        assert!(detect(&template).is_some());
        // With tools, the phrase alone is the user talking about summaries.
        let talk = request(None, "Update the anchored summary below", 4);
        assert_eq!(detect(&talk), None);
        assert_eq!(detect(&request(None, "summarise the README", 0)), None);
    }
}
