//! Owns rebuilding an Anthropic reply: the stream accumulator over Messages SSE events and the
//! non-streaming body parser, both producing the same [`Reply`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::parse::block_to_part;
use crate::canonical::{Message, Part, Role, Usage};
use crate::protocol::{Reply, StreamAccumulator, event_json, str_at};
use crate::sse::SseEvent;

/// Accumulates an Anthropic Messages stream into a [`Reply`].
#[derive(Debug, Default)]
pub struct Accumulator {
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    stop_reason: Option<String>,
    model: Option<String>,
    id: Option<String>,
    complete: bool,
}

#[derive(Debug)]
enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Tool {
        id: String,
        name: String,
        initial: Value,
        json: String,
    },
    ServerTool {
        raw: Value,
        json: String,
    },
    Other(Value),
}

impl Block {
    fn start(block: &Value) -> Self {
        let text = |key| str_at(block, key).unwrap_or_default().to_owned();
        match str_at(block, "type").unwrap_or_default() {
            "text" => Block::Text(text("text")),
            "thinking" => Block::Thinking {
                text: text("thinking"),
                signature: text("signature"),
            },
            "tool_use" => Block::Tool {
                id: text("id"),
                name: text("name"),
                initial: block.get("input").cloned().unwrap_or(Value::Null),
                json: String::new(),
            },
            "server_tool_use" => Block::ServerTool {
                raw: block.clone(),
                json: String::new(),
            },
            _ => Block::Other(block.clone()),
        }
    }

    fn delta(&mut self, delta: &Value) {
        let piece = |key| str_at(delta, key).unwrap_or_default();
        match (self, str_at(delta, "type").unwrap_or_default()) {
            (Block::Text(text), "text_delta") => text.push_str(piece("text")),
            (Block::Thinking { text, .. }, "thinking_delta") => text.push_str(piece("thinking")),
            (Block::Thinking { signature, .. }, "signature_delta") => {
                signature.push_str(piece("signature"));
            }
            (Block::Tool { json, .. } | Block::ServerTool { json, .. }, "input_json_delta") => {
                json.push_str(piece("partial_json"));
            }
            _ => {}
        }
    }

    fn to_part(&self) -> Part {
        match self {
            Block::Text(text) => Part::Text { text: text.clone() },
            Block::Thinking { text, signature } => Part::Thinking {
                text: text.clone(),
                signature: (!signature.is_empty()).then(|| signature.clone()),
            },
            Block::Tool {
                id,
                name,
                initial,
                json,
            } => {
                let arguments = if !json.is_empty() {
                    json.clone()
                } else if initial.as_object().is_some_and(|o| !o.is_empty()) {
                    initial.to_string()
                } else {
                    "{}".to_owned()
                };
                Part::ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    arguments,
                }
            }
            Block::ServerTool { raw, json } => {
                let mut raw = raw.clone();
                if !json.is_empty() {
                    let input = serde_json::from_str(json).unwrap_or_else(|_| json.clone().into());
                    if let Value::Object(obj) = &mut raw {
                        obj.insert("input".into(), input);
                    }
                }
                other(raw)
            }
            Block::Other(raw) => other(raw.clone()),
        }
    }
}

fn other(raw: Value) -> Part {
    let kind = str_at(&raw, "type").unwrap_or("unknown").to_owned();
    Part::Other { kind, raw }
}

/// Overrides the usage counters present in an Anthropic `usage` object.
fn apply_usage(usage: &mut Usage, v: Option<&Value>) {
    let Some(v) = v else { return };
    let fields = [
        ("input_tokens", &mut usage.input_tokens),
        ("output_tokens", &mut usage.output_tokens),
        (
            "cache_read_input_tokens",
            &mut usage.cache_read_input_tokens,
        ),
        (
            "cache_creation_input_tokens",
            &mut usage.cache_creation_input_tokens,
        ),
    ];
    for (key, slot) in fields {
        if let Some(n) = v.get(key).and_then(Value::as_u64) {
            *slot = n;
        }
    }
}

fn message_of(parts: Vec<Part>) -> Option<Message> {
    (!parts.is_empty()).then(|| Message::new(Role::Assistant, parts))
}

impl StreamAccumulator for Accumulator {
    fn push(&mut self, event: &SseEvent) {
        let Some(v) = event_json(event) else { return };
        let kind = str_at(&v, "type")
            .or(event.event.as_deref())
            .unwrap_or_default();
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => {
                let Some(message) = v.get("message") else {
                    return;
                };
                self.id = str_at(message, "id").map(str::to_owned).or(self.id.take());
                self.model = str_at(message, "model")
                    .map(str::to_owned)
                    .or(self.model.take());
                apply_usage(&mut self.usage, message.get("usage"));
            }
            "content_block_start" => {
                if let Some(block) = v.get("content_block") {
                    self.blocks.insert(index, Block::start(block));
                }
            }
            "content_block_delta" => {
                if let (Some(block), Some(delta)) = (self.blocks.get_mut(&index), v.get("delta")) {
                    block.delta(delta);
                }
            }
            "message_delta" => {
                if let Some(stop) = v.get("delta").and_then(|d| str_at(d, "stop_reason")) {
                    self.stop_reason = Some(stop.to_owned());
                }
                apply_usage(&mut self.usage, v.get("usage"));
            }
            "message_stop" => self.complete = true,
            "error" => self.stop_reason = Some("error".to_owned()),
            _ => {}
        }
    }

    fn reply(&self) -> Reply {
        Reply {
            message: message_of(self.blocks.values().map(Block::to_part).collect()),
            usage: self.usage,
            stop_reason: self.stop_reason.clone(),
            model: self.model.clone(),
            id: self.id.clone(),
            complete: self.complete,
        }
    }
}

/// Rebuilds the reply from a non-streaming Messages response.
pub(crate) fn reply_from_value(v: &Value) -> Reply {
    let parts = v
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| serde_json::to_string(b).ok())
                .filter_map(|text| {
                    let fast = serde_json::from_str::<crate::fast::Fast<'_>>(&text).ok()?;
                    Some(block_to_part(fast))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut usage = Usage::default();
    apply_usage(&mut usage, v.get("usage"));
    let stop_reason = if str_at(v, "type") == Some("error") {
        Some("error".to_owned())
    } else {
        str_at(v, "stop_reason").map(str::to_owned)
    };
    Reply {
        message: message_of(parts),
        usage,
        stop_reason,
        model: str_at(v, "model").map(str::to_owned),
        id: str_at(v, "id").map(str::to_owned),
        complete: true,
    }
}

#[cfg(test)]
#[path = "accumulator_tests.rs"]
mod tests;
