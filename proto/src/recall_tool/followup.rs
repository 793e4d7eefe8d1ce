//! The follow-up request that carries recall results back to the model inside one client
//! response: the original request plus the assistant's turn so far (ending in the recall calls)
//! and the results, appended after the last message with every earlier byte unchanged.
//!
//! The block builders here are shared with [`super::expand`], so a later turn rebuilds exactly
//! what the follow-up sent.

use serde_json::{Value, json};

use super::definition::{RECALL_TOOL_NAME, RecallRecord};
use crate::error::ProtoError;
use crate::inject::message_items;
use crate::protocol::Protocol;

/// The Anthropic `tool_use` block of a recorded call.
pub fn anthropic_tool_use(record: &RecallRecord) -> Value {
    let input: Value = serde_json::from_str(&record.input).unwrap_or_else(|_| json!({}));
    json!({"type": "tool_use", "id": record.call_id, "name": RECALL_TOOL_NAME, "input": input})
}

/// The Anthropic `tool_result` block of a recorded call.
pub fn anthropic_tool_result(record: &RecallRecord) -> Value {
    json!({"type": "tool_result", "tool_use_id": record.call_id, "content": record.result})
}

/// The OpenAI Chat `tool_calls[]` entry of a recorded call.
pub fn chat_tool_call(record: &RecallRecord) -> Value {
    json!({
        "id": record.call_id,
        "type": "function",
        "function": {"name": RECALL_TOOL_NAME, "arguments": record.input},
    })
}

/// The OpenAI Chat `tool` message of a recorded call.
pub fn chat_tool_message(record: &RecallRecord) -> Value {
    json!({"role": "tool", "tool_call_id": record.call_id, "content": record.result})
}

/// The Responses `function_call` item of a recorded call.
pub fn responses_call(record: &RecallRecord) -> Value {
    json!({"type": "function_call", "call_id": record.call_id, "name": RECALL_TOOL_NAME, "arguments": record.input})
}

/// The Responses `function_call_output` item of a recorded call.
pub fn responses_output(record: &RecallRecord) -> Value {
    json!({"type": "function_call_output", "call_id": record.call_id, "output": record.result})
}

/// OpenAI Responses: `input` + the leg's finished items + each call and its output. A string
/// `input` becomes the equivalent one-message list.
pub fn responses_followup(
    body: &[u8],
    prefix: &[Value],
    records: &[RecallRecord],
) -> Result<Vec<u8>, ProtoError> {
    let mut items: Vec<Value> = prefix.to_vec();
    for record in records {
        items.push(responses_call(record));
        items.push(responses_output(record));
    }
    if !message_items(Protocol::OpenAiResponses, body)?.is_empty() {
        return append_messages(Protocol::OpenAiResponses, body, &items);
    }
    let mut request: serde_json::Map<String, Value> = serde_json::from_slice(body)?;
    let first = match request.remove("input") {
        Some(Value::String(text)) => vec![json!({"role": "user", "content": text})],
        Some(Value::Array(existing)) => existing,
        _ => Vec::new(),
    };
    let mut input = first;
    input.extend(items);
    request.insert("input".into(), Value::Array(input));
    Ok(serde_json::to_vec(&request)?)
}

/// Anthropic: `body` + an assistant message (`prefix` blocks, then the calls) + a user message
/// with the results.
pub fn anthropic_followup(
    body: &[u8],
    prefix: &[Value],
    records: &[RecallRecord],
) -> Result<Vec<u8>, ProtoError> {
    let mut content: Vec<Value> = prefix.to_vec();
    content.extend(records.iter().map(anthropic_tool_use));
    let results: Vec<Value> = records.iter().map(anthropic_tool_result).collect();
    append_messages(
        Protocol::Anthropic,
        body,
        &[
            json!({"role": "assistant", "content": content}),
            json!({"role": "user", "content": results}),
        ],
    )
}

/// OpenAI Chat: `body` + an assistant message (`prefix` text, the calls) + one tool message per
/// result.
pub fn chat_followup(
    body: &[u8],
    prefix: &str,
    records: &[RecallRecord],
) -> Result<Vec<u8>, ProtoError> {
    let content = if prefix.is_empty() {
        Value::Null
    } else {
        Value::String(prefix.to_string())
    };
    let calls: Vec<Value> = records.iter().map(chat_tool_call).collect();
    let mut items = vec![json!({"role": "assistant", "content": content, "tool_calls": calls})];
    items.extend(records.iter().map(chat_tool_message));
    append_messages(Protocol::OpenAiChat, body, &items)
}

/// `body` with `items` appended to its message array.
fn append_messages(
    protocol: Protocol,
    body: &[u8],
    items: &[Value],
) -> Result<Vec<u8>, ProtoError> {
    let ranges = message_items(protocol, body)?;
    let Some(last) = ranges.last() else {
        return Err(ProtoError::InvalidShape(
            "the request has no messages to continue".into(),
        ));
    };
    let mut addition = String::new();
    for item in items {
        addition.push(',');
        addition.push_str(&serde_json::to_string(item)?);
    }
    let mut out = Vec::with_capacity(body.len() + addition.len());
    out.extend_from_slice(&body[..last.end]);
    out.extend_from_slice(addition.as_bytes());
    out.extend_from_slice(&body[last.end..]);
    Ok(out)
}
