//! Codex sessions: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (`$CODEX_HOME`), one
//! `{timestamp, type, payload}` record per line (as Codex 0.171 writes them).
//!
//! `session_meta` carries the session `id` and its `cwd`; `turn_context` the `cwd` and `model`
//! of each turn; `response_item` one Responses API item (a `message` with its role, a
//! `function_call`, a `function_call_output`, `reasoning`, …). `codex exec resume` appends to the
//! same file. Every other record (`event_msg`, `world_state`, `token_usage_record`, …) restates
//! the items and is skipped. Each item goes through Lore's own Responses parser; developer and
//! system messages are the model's instructions, not the conversation, and are left out.

use lore_proto::Protocol;
use lore_storage::{ImportMessage, ImportSession};
use serde_json::{Value, json};

use super::time::parse_timestamp_ms;

/// Parses one rollout file; `None` when it holds no conversation.
pub fn parse(text: &str, fallback_id: &str) -> Result<Option<ImportSession>, String> {
    let mut session_id: Option<String> = None;
    let mut cwd: Option<String> = None;
    let mut model: Option<String> = None;
    let mut messages = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let payload = &record["payload"];
        match record["type"].as_str().unwrap_or("") {
            "session_meta" => {
                if session_id.is_none() {
                    session_id = payload["id"].as_str().map(str::to_string);
                }
                if let Some(dir) = payload["cwd"].as_str() {
                    cwd = Some(dir.to_string());
                }
            }
            "turn_context" => {
                if let Some(dir) = payload["cwd"].as_str() {
                    cwd = Some(dir.to_string());
                }
                if let Some(name) = payload["model"].as_str() {
                    model = Some(name.to_string());
                }
            }
            "response_item" => {
                let role = payload["role"].as_str().unwrap_or("");
                if role == "developer" || role == "system" {
                    continue;
                }
                let body = json!({"model": model.clone().unwrap_or_default(), "input": [payload]});
                let bytes = serde_json::to_vec(&body).map_err(|err| err.to_string())?;
                let Ok(parsed) = lore_proto::parse_request(Protocol::OpenAiResponses, &bytes)
                else {
                    continue;
                };
                let at = record["timestamp"]
                    .as_str()
                    .and_then(parse_timestamp_ms)
                    .unwrap_or(0);
                for message in parsed.messages {
                    let by_model = message.role == lore_proto::Role::Assistant;
                    messages.push(ImportMessage {
                        message,
                        created_at_ms: at,
                        model: if by_model { model.clone() } else { None },
                    });
                }
            }
            _ => {}
        }
    }
    if messages.is_empty() {
        return Ok(None);
    }
    Ok(Some(ImportSession {
        harness: "codex".into(),
        external_id: session_id.unwrap_or_else(|| fallback_id.to_string()),
        project: cwd,
        model,
        protocol: Protocol::OpenAiResponses,
        messages,
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use lore_proto::{Part, Role};

    #[test]
    fn items_become_messages_and_instructions_are_left_out() {
        let text = [
            r#"{"timestamp":"2026-11-30T09:00:00.000Z","type":"session_meta","payload":{"id":"019a-1","cwd":"/work/api","cli_version":"0.171.0"}}"#,
            r#"{"timestamp":"2026-11-30T09:00:00.100Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"<permissions instructions>"}]}}"#,
            r#"{"timestamp":"2026-11-30T09:00:00.200Z","type":"turn_context","payload":{"cwd":"/work/api","model":"gpt-5-codex"}}"#,
            r#"{"timestamp":"2026-11-30T09:00:00.300Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list the routes"}]}}"#,
            r#"{"timestamp":"2026-11-30T09:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"rg route\"}","call_id":"call_1"}}"#,
            r#"{"timestamp":"2026-11-30T09:00:01.500Z","type":"event_msg","payload":{"type":"token_count"}}"#,
            r#"{"timestamp":"2026-11-30T09:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"src/routes.rs"}}"#,
            r#"{"timestamp":"2026-11-30T09:00:03.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Routes live in src/routes.rs."}]}}"#,
        ]
        .join("\n");
        let session = parse(&text, "f").unwrap().unwrap();
        assert_eq!(session.external_id, "019a-1");
        assert_eq!(session.project.as_deref(), Some("/work/api"));
        assert_eq!(session.model.as_deref(), Some("gpt-5-codex"));
        let all = serde_json::to_string(&session.messages).unwrap();
        assert!(!all.contains("permissions instructions"));
        assert_eq!(session.messages[0].message.role, Role::User);
        assert!(session.messages.iter().any(|m| {
            m.message
                .parts
                .iter()
                .any(|p| matches!(p, Part::ToolCall { name, .. } if name == "exec_command"))
        }));
        assert!(all.contains("src/routes.rs"));
        assert_eq!(
            session.messages.last().unwrap().model.as_deref(),
            Some("gpt-5-codex")
        );
    }
}
