//! Transformations of single request elements for the context manager: tool outputs replaced by
//! an annotation, the client's cache breakpoints removed, ours added, and the two synthetic
//! messages of the distilled prefix. Each returns JSON text; the same input gives the same
//! text, so a transformed element is byte-stable from one turn to the next.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::error::ProtoError;
use crate::protocol::Protocol;

/// Lifetime of a cache breakpoint (Anthropic `cache_control`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttl {
    /// The default five minutes: `{"type":"ephemeral"}`.
    FiveMinutes,
    /// One hour: `{"type":"ephemeral","ttl":"1h"}`.
    OneHour,
}

impl Ttl {
    fn marker(self) -> Value {
        match self {
            Ttl::FiveMinutes => json!({"type": "ephemeral"}),
            Ttl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
        }
    }
}

fn object(item: &[u8]) -> Result<Map<String, Value>, ProtoError> {
    Ok(serde_json::from_slice(item)?)
}

fn text_of(map: &Map<String, Value>) -> Result<String, ProtoError> {
    Ok(serde_json::to_string(map)?)
}

/// True when the element mentions `cache_control` anywhere (a cheap byte test first).
pub fn mentions_cache_control(raw: &[u8]) -> bool {
    memchr_find(raw, b"\"cache_control\"")
}

fn memchr_find(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

fn remove_cache_control(value: &mut Value) -> usize {
    match value {
        Value::Object(map) => {
            let mut removed = usize::from(map.remove("cache_control").is_some());
            for child in map.values_mut() {
                removed += remove_cache_control(child);
            }
            removed
        }
        Value::Array(items) => items.iter_mut().map(remove_cache_control).sum(),
        _ => 0,
    }
}

fn count_cache_control(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.get("cache_control").is_some_and(|v| !v.is_null()))
                + map.values().map(count_cache_control).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_cache_control).sum(),
        _ => 0,
    }
}

/// How many cache breakpoints a `system` value or a `tools` array carries.
pub fn cache_control_count(raw: &[u8]) -> usize {
    if !mentions_cache_control(raw) {
        return 0;
    }
    serde_json::from_slice::<Value>(raw)
        .map(|value| count_cache_control(&value))
        .unwrap_or(0)
}

/// The element without any `cache_control`; `None` when it had none.
pub fn without_cache_control(item: &[u8]) -> Result<Option<String>, ProtoError> {
    if !mentions_cache_control(item) {
        return Ok(None);
    }
    let mut value: Value = serde_json::from_slice(item)?;
    if remove_cache_control(&mut value) == 0 {
        return Ok(None);
    }
    Ok(Some(serde_json::to_string(&value)?))
}

/// Block types that cannot carry a breakpoint themselves.
fn uncacheable(block: &Value) -> bool {
    matches!(
        block.get("type").and_then(Value::as_str),
        Some("thinking" | "redacted_thinking")
    )
}

/// An Anthropic message element with a breakpoint on its last block that can take one (a
/// string content becomes one text block). `None` when no block can take it.
pub fn with_cache_control(item: &[u8], ttl: Ttl) -> Result<Option<String>, ProtoError> {
    let mut message = object(item)?;
    match message.get_mut("content") {
        Some(Value::String(text)) => {
            let block = json!({"type": "text", "text": text, "cache_control": ttl.marker()});
            message.insert("content".into(), Value::Array(vec![block]));
        }
        Some(Value::Array(blocks)) => {
            let Some(block) = blocks.iter_mut().rev().find(|block| !uncacheable(block)) else {
                return Ok(None);
            };
            let Some(fields) = block.as_object_mut() else {
                return Ok(None);
            };
            fields.insert("cache_control".into(), ttl.marker());
        }
        _ => return Ok(None),
    }
    Ok(Some(text_of(&message)?))
}

/// An Anthropic `system` value with a breakpoint on its last text block (a string becomes one
/// text block). `None` when it already has a breakpoint or cannot take one.
pub fn system_with_cache_control(system: &[u8], ttl: Ttl) -> Result<Option<String>, ProtoError> {
    let value: Value = serde_json::from_slice(system)?;
    let blocks = match value {
        Value::String(text) if !text.is_empty() => {
            vec![json!({"type": "text", "text": text, "cache_control": ttl.marker()})]
        }
        Value::Array(mut blocks) => {
            if blocks.iter().any(|block| count_cache_control(block) > 0) {
                return Ok(None);
            }
            let Some(fields) = blocks.last_mut().and_then(Value::as_object_mut) else {
                return Ok(None);
            };
            fields.insert("cache_control".into(), ttl.marker());
            blocks
        }
        _ => return Ok(None),
    };
    Ok(Some(serde_json::to_string(&blocks)?))
}

/// A tool definition with a breakpoint; `None` when it already has one.
pub fn tool_with_cache_control(tool: &[u8], ttl: Ttl) -> Result<Option<String>, ProtoError> {
    let mut tool = object(tool)?;
    if tool.contains_key("cache_control") {
        return Ok(None);
    }
    tool.insert("cache_control".into(), ttl.marker());
    Ok(Some(text_of(&tool)?))
}

/// The element with the outputs of the named tool calls replaced by their annotation: Anthropic
/// `tool_result` blocks (`content`), OpenAI Chat `tool` messages (`content`), Responses
/// `function_call_output` items (`output`). `None` when nothing in it is named.
pub fn with_outputs_replaced(
    protocol: Protocol,
    item: &[u8],
    annotations: &HashMap<String, String>,
) -> Result<Option<String>, ProtoError> {
    let mut element = object(item)?;
    let mut changed = false;
    match protocol {
        Protocol::Anthropic => {
            if let Some(Value::Array(blocks)) = element.get_mut("content") {
                for block in blocks.iter_mut() {
                    let Some(fields) = block.as_object_mut() else {
                        continue;
                    };
                    if fields.get("type").and_then(Value::as_str) != Some("tool_result") {
                        continue;
                    }
                    let id = fields.get("tool_use_id").and_then(Value::as_str);
                    if let Some(note) = id.and_then(|id| annotations.get(id)) {
                        fields.insert("content".into(), Value::String(note.clone()));
                        changed = true;
                    }
                }
            }
        }
        Protocol::OpenAiChat => {
            let id = element.get("tool_call_id").and_then(Value::as_str);
            if let Some(note) = id.and_then(|id| annotations.get(id)).cloned() {
                element.insert("content".into(), Value::String(note));
                changed = true;
            }
        }
        Protocol::OpenAiResponses => {
            let is_output = element
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|kind| kind.ends_with("_output"));
            let id = element.get("call_id").and_then(Value::as_str);
            if is_output && let Some(note) = id.and_then(|id| annotations.get(id)).cloned() {
                element.insert("output".into(), Value::String(note));
                changed = true;
            }
        }
    }
    if !changed {
        return Ok(None);
    }
    Ok(Some(text_of(&element)?))
}

/// The two messages of the distilled prefix: a user message with `notice`, then an assistant
/// message with `sections` (Anthropic: one text block each, the last with the breakpoint, so
/// appending a section leaves the earlier blocks as they were; the OpenAI protocols: one text,
/// the sections joined by blank lines, whose earlier part stays a prefix of the longer one).
pub fn prefix_items(
    protocol: Protocol,
    notice: &str,
    sections: &[String],
    breakpoint: Option<Ttl>,
) -> Result<[String; 2], ProtoError> {
    let joined = sections.join("\n\n");
    let (user, assistant) = match protocol {
        Protocol::Anthropic => {
            let mut blocks: Vec<Value> = sections
                .iter()
                .map(|section| json!({"type": "text", "text": section}))
                .collect();
            if let (Some(ttl), Some(Value::Object(last))) = (breakpoint, blocks.last_mut()) {
                last.insert("cache_control".into(), ttl.marker());
            }
            (
                json!({"role": "user", "content": [{"type": "text", "text": notice}]}),
                json!({"role": "assistant", "content": blocks}),
            )
        }
        Protocol::OpenAiChat => (
            json!({"role": "user", "content": notice}),
            json!({"role": "assistant", "content": joined}),
        ),
        Protocol::OpenAiResponses => (
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": notice}]}),
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": joined}]}),
        ),
    };
    Ok([
        serde_json::to_string(&user)?,
        serde_json::to_string(&assistant)?,
    ])
}
