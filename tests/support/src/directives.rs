//! The unscripted conversation replies' inputs: `[[call:NAME]]` tool-call directives in the
//! final user message, and the tool result a request ends with (which the default reply echoes).

use crate::script::Script;
use serde_json::Value;

/// `[[call:NAME]]` or `[[call:NAME {json arguments}]]` in the text of the request's final
/// message, a user message → a call of tool NAME (fixed arguments when none are given). Several
/// directives make parallel calls. Only the final message's own text counts (never a tool
/// result), so the follow-up carrying the tool result gets an ordinary text reply.
pub(crate) fn tool_call_directive(body: &Value, n: u64) -> Option<Script> {
    let last = match body.get("messages").or_else(|| body.get("input"))? {
        Value::Array(items) => items.last()?,
        other => other,
    };
    let is_user = last.is_string() || last.get("role").and_then(Value::as_str) == Some("user");
    if !is_user {
        return None;
    }
    let text = own_text(last);
    let mut calls = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("[[call:") {
        let after = &rest[start + "[[call:".len()..];
        let Some(end) = after.find("]]") else { break };
        let directive = after[..end].trim();
        rest = &after[end + 2..];
        let (name, arguments) = match directive.split_once(char::is_whitespace) {
            Some((name, json)) => (name, serde_json::from_str(json.trim()).ok()),
            None => (directive, None),
        };
        if name.is_empty() || name.len() > 64 {
            continue;
        }
        let arguments =
            arguments.unwrap_or_else(|| serde_json::json!({"requested_by": "directive", "n": n}));
        let id = if calls.is_empty() {
            format!("call_fake_{n}")
        } else {
            format!("call_fake_{n}_{}", calls.len())
        };
        calls.push((name.to_string(), id, arguments));
    }
    match calls.len() {
        0 => None,
        1 => calls.pop().map(|(name, id, arguments)| Script::ToolCall {
            name,
            id,
            arguments,
            text: None,
        }),
        _ => Some(Script::ToolCalls { calls, text: None }),
    }
}

/// Characters of a tool result the default reply echoes.
pub(crate) const TOOL_ECHO_CHARS: usize = 2000;

/// The content of the tool result that ends the request, if it ends with one: an OpenAI `tool`
/// message, an Anthropic user message of `tool_result` blocks, or a Responses
/// `function_call_output` item.
pub(crate) fn last_tool_result(body: &Value) -> Option<String> {
    let last = body
        .get("messages")
        .or_else(|| body.get("input"))?
        .as_array()?
        .last()?;
    if last.get("type").and_then(Value::as_str) == Some("function_call_output") {
        return last
            .get("output")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if last.get("role").and_then(Value::as_str) == Some("tool") {
        return Some(own_text(last));
    }
    let blocks = last.get("content")?.as_array()?;
    let result = blocks
        .iter()
        .find(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))?;
    Some(match result.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(content @ Value::Array(_)) => own_text(&serde_json::json!({"content": content})),
        _ => String::new(),
    })
}

/// The text a message itself carries: a plain string, or its text blocks (never tool results).
fn own_text(message: &Value) -> String {
    let content = match message {
        Value::String(text) => return text.clone(),
        other => other.get("content"),
    };
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|block| {
                matches!(
                    block.get("type").and_then(Value::as_str),
                    Some("text" | "input_text")
                )
            })
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
