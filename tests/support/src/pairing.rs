//! Tool pairing as the providers enforce it: a request whose tool calls and results do not pair
//! gets the provider's own 400, so every test that goes through the fake checks the invariant.
//!
//! * Anthropic: every `tool_use` of an assistant message is answered by a `tool_result` in the
//!   next (user) message, and every `tool_result` answers a `tool_use` of the message before.
//! * OpenAI Chat: an assistant message's `tool_calls` are followed by a `tool` message for each
//!   id, and a `tool` message follows the call it answers.
//! * Responses: a `function_call_output` follows its `function_call` (unless the request
//!   continues a stored response, which may hold the call).
//!
//! The last message may be an assistant's unanswered call (a prefill the client makes).

use std::collections::HashSet;

use serde_json::Value;

use crate::server::Protocol;

fn blocks<'a>(message: &'a Value, kind: &str) -> Vec<&'a str> {
    message
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some(kind))
                .filter_map(|b| {
                    b.get(if kind == "tool_use" {
                        "id"
                    } else {
                        "tool_use_id"
                    })
                    .and_then(Value::as_str)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn anthropic(body: &Value) -> Result<(), String> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, message) in messages.iter().enumerate() {
        let uses = blocks(message, "tool_use");
        if !uses.is_empty() && i + 1 < messages.len() {
            let answered = blocks(&messages[i + 1], "tool_result");
            let missing: Vec<&str> = uses
                .iter()
                .filter(|id| !answered.contains(id))
                .copied()
                .collect();
            if !missing.is_empty() {
                return Err(format!(
                    "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                    missing.join(", ")
                ));
            }
        }
        let results = blocks(message, "tool_result");
        if !results.is_empty() {
            let asked = if i > 0 {
                blocks(&messages[i - 1], "tool_use")
            } else {
                Vec::new()
            };
            if let Some(orphan) = results.iter().find(|id| !asked.contains(id)) {
                return Err(format!(
                    "messages.{i}.content: unexpected `tool_use_id` found in `tool_result` blocks: {orphan}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                ));
            }
        }
    }
    Ok(())
}

fn chat(body: &Value) -> Result<(), String> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut open: Vec<String> = Vec::new();
    let mut open_at = 0;
    for (i, message) in messages.iter().enumerate() {
        let role = message.get("role").and_then(Value::as_str).unwrap_or("");
        if role == "tool" {
            let id = message
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or("");
            match open.iter().position(|call| call == id) {
                Some(at) => {
                    open.remove(at);
                }
                None => {
                    return Err(format!(
                        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (messages.[{i}])."
                    ));
                }
            }
            continue;
        }
        if !open.is_empty() {
            return Err(format!(
                "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {} (messages.[{open_at}])",
                open.join(", ")
            ));
        }
        if role == "assistant"
            && let Some(calls) = message.get("tool_calls").and_then(Value::as_array)
        {
            open = calls
                .iter()
                .filter_map(|c| c.get("id").and_then(Value::as_str).map(str::to_string))
                .collect();
            open_at = i;
        }
    }
    Ok(())
}

fn responses(body: &Value) -> Result<(), String> {
    if body
        .get("previous_response_id")
        .is_some_and(|v| !v.is_null())
    {
        return Ok(());
    }
    let items = body
        .get("input")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut calls: HashSet<String> = HashSet::new();
    for item in &items {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        let call_id = item
            .get("call_id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if kind == "function_call" {
            calls.insert(call_id);
        } else if kind == "function_call_output" && !calls.contains(&call_id) {
            return Err(format!(
                "No tool call found for function call output with call_id {call_id}."
            ));
        }
    }
    Ok(())
}

/// The provider's complaint about the request's tool pairing, if any.
pub(crate) fn check(proto: Protocol, body: &Value) -> Result<(), String> {
    match proto {
        Protocol::Anthropic => anthropic(body),
        Protocol::Chat => chat(body),
        Protocol::Responses => responses(body),
    }
}
