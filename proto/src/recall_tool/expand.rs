//! Marker-and-expand: the client saw a text marker where the model called `recall`; before the
//! history goes upstream again, each marker with a known record becomes the call plus its result
//! again, so the model's view of its own past is what it was.
//!
//! * A call the gateway continued itself (`continued`): the assistant message is split around
//!   the marker, as the follow-up request had it: assistant (… call), results, assistant (rest).
//! * A call that came with other tool calls: the call goes back in place and its result joins
//!   the client's tool results (Anthropic: first in the next user message; Chat: a tool message
//!   right after the assistant message).
//! * Responses: the marker is an output message of its own, which becomes the `function_call`
//!   item and its `function_call_output`, in place (what the follow-up sent, too).
//!
//! Only the messages that carry markers are rewritten; every other byte stays as sent. The quick
//! check looks for the ASCII `[r:` of the key, since clients may send the emoji JSON-escaped.

use std::ops::Range;

use serde_json::{Map, Value, json};

use super::definition::{RecallRecord, find_marker_keys, marker_key};
use super::followup::{
    anthropic_tool_result, anthropic_tool_use, chat_tool_call, chat_tool_message, responses_call,
    responses_output,
};
use crate::error::ProtoError;
use crate::inject::{message_items, splice};
use crate::protocol::Protocol;

/// Finds the record a marker key names.
pub type RecordLookup<'a> = &'a dyn Fn(&str) -> Option<RecallRecord>;

/// The body with every known marker expanded; `None` when there was nothing to expand.
pub fn expand_markers(
    protocol: Protocol,
    body: &[u8],
    lookup: RecordLookup<'_>,
) -> Result<Option<Vec<u8>>, ProtoError> {
    if !contains(body, b"[r:") {
        return Ok(None);
    }
    let ranges = message_items(protocol, body)?;
    let mut replacements: Vec<(Range<usize>, String)> = Vec::new();
    let mut index = 0;
    while index < ranges.len() {
        let range = ranges[index].clone();
        index += 1;
        let Ok(message) = serde_json::from_slice::<Map<String, Value>>(&body[range.clone()]) else {
            continue;
        };
        if message.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let expanded = match protocol {
            Protocol::Anthropic => expand_anthropic(&message, lookup),
            Protocol::OpenAiChat => expand_chat(&message, lookup),
            Protocol::OpenAiResponses => expand_responses(&message, lookup),
        };
        let Some(Expanded { mut items, results }) = expanded else {
            continue;
        };
        if !results.is_empty() {
            match protocol {
                Protocol::Anthropic => {
                    let next = ranges.get(index).and_then(|next| {
                        let user =
                            serde_json::from_slice::<Map<String, Value>>(&body[next.clone()])
                                .ok()
                                .filter(|m| {
                                    m.get("role").and_then(Value::as_str) == Some("user")
                                })?;
                        Some((next.clone(), user))
                    });
                    match next {
                        Some((next_range, user)) => {
                            replacements.push((
                                next_range,
                                serde_json::to_string(&with_results_first(user, results))?,
                            ));
                            index += 1;
                        }
                        None => items.push(json!({"role": "user", "content": results})),
                    }
                }
                _ => items.extend(results),
            }
        }
        let texts: Result<Vec<String>, _> = items.iter().map(serde_json::to_string).collect();
        replacements.push((range, texts?.join(",")));
    }
    if replacements.is_empty() {
        return Ok(None);
    }
    Ok(Some(splice(body, &replacements)))
}

/// The messages one assistant message becomes, and the results that go after it.
struct Expanded {
    items: Vec<Value>,
    results: Vec<Value>,
}

fn expand_anthropic(message: &Map<String, Value>, lookup: RecordLookup<'_>) -> Option<Expanded> {
    let blocks: Vec<Value> = match message.get("content")? {
        Value::Array(blocks) => blocks.clone(),
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        _ => return None,
    };
    let mut items = Vec::new();
    let mut results = Vec::new();
    let mut current: Vec<Value> = Vec::new();
    let mut changed = false;
    for block in blocks {
        let record = (block.get("type").and_then(Value::as_str) == Some("text"))
            .then(|| block.get("text").and_then(Value::as_str))
            .flatten()
            .and_then(marker_key)
            .and_then(lookup);
        let Some(record) = record else {
            current.push(block);
            continue;
        };
        changed = true;
        current.push(anthropic_tool_use(&record));
        if record.continued {
            items.push(with_content(
                message,
                Value::Array(std::mem::take(&mut current)),
            ));
            items.push(json!({"role": "user", "content": [anthropic_tool_result(&record)]}));
        } else {
            results.push(anthropic_tool_result(&record));
        }
    }
    if !changed {
        return None;
    }
    if !current.is_empty() {
        items.push(with_content(message, Value::Array(current)));
    }
    Some(Expanded { items, results })
}

/// A Responses output message that is exactly one marker becomes the call and its output.
fn expand_responses(message: &Map<String, Value>, lookup: RecordLookup<'_>) -> Option<Expanded> {
    let parts = message.get("content")?.as_array()?;
    let [part] = parts.as_slice() else {
        return None;
    };
    let record = part
        .get("text")
        .and_then(Value::as_str)
        .and_then(marker_key)
        .and_then(lookup)?;
    Some(Expanded {
        items: vec![responses_call(&record), responses_output(&record)],
        results: Vec::new(),
    })
}

fn expand_chat(message: &Map<String, Value>, lookup: RecordLookup<'_>) -> Option<Expanded> {
    let content = message.get("content")?.as_str()?;
    let markers: Vec<(Range<usize>, RecallRecord)> = find_marker_keys(content)
        .into_iter()
        .filter_map(|(range, key)| lookup(&key).map(|record| (range, record)))
        .collect();
    if markers.is_empty() {
        return None;
    }
    let mut items = Vec::new();
    let mut results = Vec::new();
    let mut text = String::new();
    let mut calls: Vec<Value> = Vec::new();
    let mut cursor = 0;
    for (range, record) in markers {
        text.push_str(&content[cursor..range.start]);
        cursor = range.end;
        calls.push(chat_tool_call(&record));
        if record.continued {
            items.push(chat_assistant(
                message,
                std::mem::take(&mut text),
                std::mem::take(&mut calls),
                false,
            ));
            items.push(chat_tool_message(&record));
        } else {
            results.push(chat_tool_message(&record));
        }
    }
    text.push_str(&content[cursor..]);
    let original_calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    calls.extend(original_calls);
    if !text.is_empty() || !calls.is_empty() {
        items.push(chat_assistant(message, text, calls, true));
    }
    Some(Expanded { items, results })
}

/// An assistant message like `message` with `text` and `calls` (no `tool_calls` key when empty).
fn chat_assistant(
    message: &Map<String, Value>,
    text: String,
    calls: Vec<Value>,
    last: bool,
) -> Value {
    let mut out = message.clone();
    if !last {
        // Earlier pieces of a split message keep only role, content and calls.
        out.retain(|key, _| key == "role");
    }
    let content = if text.is_empty() {
        Value::Null
    } else {
        Value::String(text)
    };
    out.insert("content".into(), content);
    out.remove("tool_calls");
    if !calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(out)
}

fn with_content(message: &Map<String, Value>, content: Value) -> Value {
    let mut out = message.clone();
    out.insert("content".into(), content);
    Value::Object(out)
}

/// A user message with `results` before its own content.
fn with_results_first(mut user: Map<String, Value>, results: Vec<Value>) -> Value {
    let mut content = results;
    match user.remove("content") {
        Some(Value::Array(blocks)) => content.extend(blocks),
        Some(Value::String(text)) if !text.is_empty() => {
            content.push(json!({"type": "text", "text": text}));
        }
        _ => {}
    }
    user.insert("content".into(), Value::Array(content));
    Value::Object(user)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}
