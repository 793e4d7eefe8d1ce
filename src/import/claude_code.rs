//! Claude Code transcripts: `~/.claude/projects/<project slug>/<session id>.jsonl`, one JSON
//! record per line (as Claude Code 2.1 writes them).
//!
//! Conversation records have `type` `user` or `assistant`, the API message in `message`, the
//! `sessionId`, the `cwd` and an ISO `timestamp`. An assistant reply streamed as several
//! content blocks may be written as several records with the same `message.id`; they are one
//! message. Sub-agent records (`isSidechain: true`), meta records (`isMeta: true`) and every
//! other record type (`attachment`, `summary`, `queue-operation`, `api-request`, …) are not the
//! conversation and are skipped. The messages go through Lore's own Anthropic parser, so an
//! imported message has the identity the gateway gives the same message on the wire.

use lore_proto::Protocol;
use lore_storage::{ImportMessage, ImportSession};
use serde_json::{Value, json};

use super::time::parse_timestamp_ms;

/// Parses one transcript file; `None` when it holds no conversation.
pub fn parse(text: &str, fallback_id: &str) -> Result<Option<ImportSession>, String> {
    let mut session_id: Option<String> = None;
    let mut cwd: Option<String> = None;
    let mut model: Option<String> = None;
    // (wire message, timestamp, model, assistant message id)
    let mut wire: Vec<(Value, u64, Option<String>, Option<String>)> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let Ok(record) = serde_json::from_str::<Value>(line) else {
            // A line cut short by a crash mid-write: the rest of the file still counts.
            continue;
        };
        let kind = record["type"].as_str().unwrap_or("");
        if kind != "user" && kind != "assistant" {
            continue;
        }
        if record["isSidechain"].as_bool() == Some(true) || record["isMeta"].as_bool() == Some(true)
        {
            continue;
        }
        let message = &record["message"];
        let Some(role) = message["role"].as_str() else {
            continue;
        };
        if session_id.is_none() {
            session_id = record["sessionId"].as_str().map(str::to_string);
        }
        if let Some(dir) = record["cwd"].as_str() {
            cwd = Some(dir.to_string());
        }
        let at = record["timestamp"]
            .as_str()
            .and_then(parse_timestamp_ms)
            .unwrap_or(0);
        let message_model = message["model"].as_str().map(str::to_string);
        if role == "assistant" && message_model.is_some() {
            model = message_model.clone();
        }
        let content = match &message["content"] {
            Value::String(text) => json!([{"type": "text", "text": text}]),
            Value::Array(blocks) => Value::Array(blocks.clone()),
            _ => continue,
        };
        let id = message["id"].as_str().map(str::to_string);
        // Blocks of one streamed reply, written as separate records: one message.
        if let Some((last, _, _, last_id)) = wire.last_mut()
            && role == "assistant"
            && id.is_some()
            && *last_id == id
            && let (Some(into), Value::Array(more)) =
                (last["content"].as_array_mut(), content.clone())
        {
            into.extend(more);
            continue;
        }
        wire.push((
            json!({"role": role, "content": content}),
            at,
            if role == "assistant" {
                message_model
            } else {
                None
            },
            if role == "assistant" { id } else { None },
        ));
    }
    if wire.is_empty() {
        return Ok(None);
    }
    let body = json!({
        "model": model.clone().unwrap_or_default(),
        "messages": wire.iter().map(|(m, ..)| m.clone()).collect::<Vec<_>>(),
    });
    let bytes = serde_json::to_vec(&body).map_err(|err| err.to_string())?;
    let parsed = lore_proto::parse_request(Protocol::Anthropic, &bytes)
        .map_err(|err| format!("not a Claude Code transcript: {err}"))?;
    if parsed.messages.len() != wire.len() {
        return Err(format!(
            "{} conversation records became {} messages",
            wire.len(),
            parsed.messages.len()
        ));
    }
    let messages = parsed
        .messages
        .into_iter()
        .zip(wire)
        .map(|(message, (_, at, model, _))| ImportMessage {
            message,
            created_at_ms: at,
            model,
        })
        .collect();
    Ok(Some(ImportSession {
        harness: "claude-code".into(),
        external_id: session_id.unwrap_or_else(|| fallback_id.to_string()),
        project: cwd,
        model,
        protocol: Protocol::Anthropic,
        messages,
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use lore_proto::{Part, Role};

    #[test]
    fn streamed_blocks_are_one_message_and_side_records_are_skipped() {
        let text = [
            r#"{"type":"queue-operation","operation":"enqueue","sessionId":"s1"}"#,
            r#"{"type":"user","isSidechain":false,"sessionId":"s1","cwd":"/p","timestamp":"2026-11-30T09:00:00.000Z","message":{"role":"user","content":"run the tests"}}"#,
            r#"{"type":"attachment","sessionId":"s1","attachment":{"type":"date"}}"#,
            r#"{"type":"assistant","sessionId":"s1","cwd":"/p","timestamp":"2026-11-30T09:00:01.000Z","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-5","content":[{"type":"thinking","thinking":"hm","signature":"sig"}]}}"#,
            r#"{"type":"assistant","sessionId":"s1","cwd":"/p","timestamp":"2026-11-30T09:00:02.000Z","message":{"id":"msg_1","role":"assistant","model":"claude-opus-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cargo test"}}]}}"#,
            r#"{"type":"user","sessionId":"s1","cwd":"/p","timestamp":"2026-11-30T09:00:03.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}"#,
            r#"{"type":"user","isSidechain":true,"sessionId":"s1","message":{"role":"user","content":"sub-agent"}}"#,
            r#"{"type":"user","isMeta":true,"sessionId":"s1","message":{"role":"user","content":"caveat"}}"#,
            r#"{"type":"assistant","sessionId":"s1","message":{"id":"msg_2","role":"assistant","content":[{"type":"text","text":"all green"}]"#,
        ]
        .join("\n");
        let session = parse(&text, "file").unwrap().unwrap();
        assert_eq!(session.external_id, "s1");
        assert_eq!(session.project.as_deref(), Some("/p"));
        assert_eq!(session.model.as_deref(), Some("claude-opus-4-5"));
        let roles: Vec<Role> = session.messages.iter().map(|m| m.message.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::User]);
        let reply = &session.messages[1];
        assert_eq!(reply.message.parts.len(), 2);
        assert!(matches!(&reply.message.parts[1], Part::ToolCall { name, .. } if name == "Bash"));
        assert_eq!(session.messages[0].created_at_ms, 1_796_029_200_000);
        assert!(parse("{\"type\":\"summary\"}\n", "f").unwrap().is_none());
    }
}
