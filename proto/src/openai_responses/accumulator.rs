//! Owns rebuilding a Responses reply: the stream accumulator over `response.*` events and the
//! non-streaming body parser, both producing the same [`Reply`].

use std::collections::BTreeMap;

use serde_json::Value;

use crate::canonical::{Message, Part, Role, Usage};
use crate::protocol::{Reply, StreamAccumulator, event_json, str_at, u64_at};
use crate::sse::SseEvent;

/// Accumulates a Responses stream into a [`Reply`].
#[derive(Debug, Default)]
pub struct Accumulator {
    id: Option<String>,
    model: Option<String>,
    items: BTreeMap<u64, Item>,
    final_output: Option<Vec<Value>>,
    usage: Usage,
    stop_reason: Option<String>,
    complete: bool,
}

#[derive(Debug)]
enum Item {
    Message(BTreeMap<u64, String>),
    Reasoning {
        summary: BTreeMap<u64, String>,
        content: BTreeMap<u64, String>,
        encrypted: Option<String>,
    },
    Call {
        call_id: String,
        name: String,
        arguments: String,
    },
    Verbatim(Value),
}

fn texts_of(list: Option<&Value>) -> BTreeMap<u64, String> {
    let items = list.and_then(Value::as_array).into_iter().flatten();
    (0u64..).zip(items.map(part_text)).collect()
}

/// The text of an output content part (`output_text`, `input_text`, `refusal`, `summary_text`,
/// `reasoning_text`).
fn part_text(part: &Value) -> String {
    str_at(part, "text")
        .or_else(|| str_at(part, "refusal"))
        .unwrap_or_default()
        .to_owned()
}

fn thinking<'a>(texts: impl Iterator<Item = &'a str>, signature: Option<&str>) -> Part {
    let texts: Vec<&str> = texts.filter(|t| !t.is_empty()).collect();
    Part::Thinking {
        text: texts.join("\n"),
        signature: signature.filter(|s| !s.is_empty()).map(str::to_owned),
    }
}

fn tool_call(call_id: &str, name: &str, arguments: &str) -> Part {
    Part::ToolCall {
        id: call_id.to_owned(),
        name: name.to_owned(),
        arguments: if arguments.is_empty() {
            "{}"
        } else {
            arguments
        }
        .to_owned(),
    }
}

fn texts_to_parts<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<Part> {
    texts
        .filter(|t| !t.is_empty())
        .map(|t| Part::Text { text: t.to_owned() })
        .collect()
}

/// Converts one output (or input) item to parts; unknown items are kept verbatim.
pub(crate) fn item_to_parts(item: &Value) -> Vec<Part> {
    match str_at(item, "type").unwrap_or("message") {
        "message" => match item.get("content") {
            Some(Value::String(s)) => texts_to_parts(std::iter::once(s.as_str())),
            other => texts_to_parts(texts_of(other).values().map(String::as_str)),
        },
        "reasoning" => {
            let summary = texts_of(item.get("summary"));
            let content = texts_of(item.get("content"));
            vec![thinking(
                summary.values().chain(content.values()).map(String::as_str),
                str_at(item, "encrypted_content"),
            )]
        }
        "function_call" => vec![tool_call(
            str_at(item, "call_id")
                .or_else(|| str_at(item, "id"))
                .unwrap_or_default(),
            str_at(item, "name").unwrap_or_default(),
            str_at(item, "arguments").unwrap_or_default(),
        )],
        kind => vec![Part::Other {
            kind: kind.to_owned(),
            raw: item.clone(),
        }],
    }
}

impl Item {
    fn added(item: &Value) -> Self {
        match str_at(item, "type").unwrap_or_default() {
            "message" => Item::Message(texts_of(item.get("content"))),
            "reasoning" => Item::Reasoning {
                summary: texts_of(item.get("summary")),
                content: texts_of(item.get("content")),
                encrypted: str_at(item, "encrypted_content").map(str::to_owned),
            },
            "function_call" => Item::Call {
                call_id: str_at(item, "call_id").unwrap_or_default().to_owned(),
                name: str_at(item, "name").unwrap_or_default().to_owned(),
                arguments: str_at(item, "arguments").unwrap_or_default().to_owned(),
            },
            _ => Item::Verbatim(item.clone()),
        }
    }

    fn to_parts(&self) -> Vec<Part> {
        match self {
            Item::Message(parts) => texts_to_parts(parts.values().map(String::as_str)),
            Item::Reasoning {
                summary,
                content,
                encrypted,
            } => vec![thinking(
                summary.values().chain(content.values()).map(String::as_str),
                encrypted.as_deref(),
            )],
            Item::Call {
                call_id,
                name,
                arguments,
            } => vec![tool_call(call_id, name, arguments)],
            Item::Verbatim(v) => item_to_parts(v),
        }
    }
}

/// Normalises Responses usage: cached input tokens are moved out of `input_tokens`.
fn usage_of(v: &Value) -> Usage {
    let cached = v
        .get("input_tokens_details")
        .map_or(0, |d| u64_at(d, "cached_tokens"));
    Usage {
        input_tokens: u64_at(v, "input_tokens").saturating_sub(cached),
        output_tokens: u64_at(v, "output_tokens"),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
    }
}

/// The stop reason of a response object: its status, or the incomplete reason.
fn stop_reason_of(response: &Value) -> Option<String> {
    let status = str_at(response, "status")?;
    let reason = (status == "incomplete")
        .then(|| response.get("incomplete_details"))
        .flatten()
        .and_then(|d| str_at(d, "reason"));
    Some(reason.unwrap_or(status).to_owned())
}

fn message_of(parts: Vec<Part>) -> Option<Message> {
    (!parts.is_empty()).then(|| Message::new(Role::Assistant, parts))
}

impl Accumulator {
    fn take_response(&mut self, response: &Value) {
        if let Some(id) = str_at(response, "id") {
            self.id = Some(id.to_owned());
        }
        if let Some(model) = str_at(response, "model") {
            self.model = Some(model.to_owned());
        }
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            self.usage = usage_of(usage);
        }
    }

    fn text_slot(&mut self, v: &Value, list: &str) -> Option<&mut String> {
        let index = v.get("output_index").and_then(Value::as_u64)?;
        let item = self.items.entry(index).or_insert_with(|| match list {
            "message" => Item::Message(BTreeMap::new()),
            _ => Item::Reasoning {
                summary: BTreeMap::new(),
                content: BTreeMap::new(),
                encrypted: None,
            },
        });
        let key = if list == "summary" {
            "summary_index"
        } else {
            "content_index"
        };
        let slot = v.get(key).and_then(Value::as_u64).unwrap_or(0);
        match (item, list) {
            (Item::Message(parts), "message") => Some(parts.entry(slot).or_default()),
            (Item::Reasoning { summary, .. }, "summary") => Some(summary.entry(slot).or_default()),
            (Item::Reasoning { content, .. }, "content") => Some(content.entry(slot).or_default()),
            _ => None,
        }
    }
}

impl StreamAccumulator for Accumulator {
    fn push(&mut self, event: &SseEvent) {
        let Some(v) = event_json(event) else { return };
        let kind = str_at(&v, "type")
            .or(event.event.as_deref())
            .unwrap_or_default();
        let delta = str_at(&v, "delta").unwrap_or_default();
        let index = v.get("output_index").and_then(Value::as_u64);
        match kind {
            "response.created" | "response.in_progress" | "response.queued" => {
                if let Some(r) = v.get("response") {
                    self.take_response(r);
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let Some(r) = v.get("response") else { return };
                self.take_response(r);
                self.stop_reason =
                    stop_reason_of(r).or_else(|| kind.strip_prefix("response.").map(str::to_owned));
                let output = r.get("output").and_then(Value::as_array);
                if let Some(output) = output.filter(|o| !o.is_empty()) {
                    self.final_output = Some(output.clone());
                }
                self.complete = true;
            }
            "response.output_item.added" | "response.output_item.done" => {
                if let (Some(index), Some(item)) = (index, v.get("item")) {
                    let item = if kind.ends_with("added") {
                        Item::added(item)
                    } else {
                        Item::Verbatim(item.clone())
                    };
                    self.items.insert(index, item);
                }
            }
            "response.content_part.added" => {
                let text = v.get("part").map(part_text).unwrap_or_default();
                if let Some(slot) = self.text_slot(&v, "message")
                    && slot.is_empty()
                {
                    *slot = text;
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(slot) = self.text_slot(&v, "message") {
                    slot.push_str(delta);
                }
            }
            "response.reasoning_summary_text.delta" => {
                if let Some(slot) = self.text_slot(&v, "summary") {
                    slot.push_str(delta);
                }
            }
            "response.reasoning_text.delta" => {
                if let Some(slot) = self.text_slot(&v, "content") {
                    slot.push_str(delta);
                }
            }
            "response.function_call_arguments.delta" => {
                let item = index.and_then(|i| self.items.get_mut(&i));
                if let Some(Item::Call { arguments, .. }) = item {
                    arguments.push_str(delta);
                }
            }
            "error" => self.stop_reason = Some("error".to_owned()),
            _ => {}
        }
    }

    fn reply(&self) -> Reply {
        let parts = match &self.final_output {
            Some(output) => output.iter().flat_map(item_to_parts).collect(),
            None => self.items.values().flat_map(Item::to_parts).collect(),
        };
        Reply {
            message: message_of(parts),
            usage: self.usage,
            stop_reason: self.stop_reason.clone(),
            model: self.model.clone(),
            id: self.id.clone(),
            complete: self.complete,
        }
    }
}

/// Rebuilds the reply from a non-streaming `response` object.
pub(crate) fn reply_from_value(v: &Value) -> Reply {
    let output = v.get("output").and_then(Value::as_array);
    let parts = output
        .into_iter()
        .flatten()
        .flat_map(item_to_parts)
        .collect();
    let stop_reason =
        if v.get("error").is_some_and(Value::is_object) && str_at(v, "status").is_none() {
            Some("error".to_owned())
        } else {
            stop_reason_of(v)
        };
    Reply {
        message: message_of(parts),
        usage: v.get("usage").map(usage_of).unwrap_or_default(),
        stop_reason,
        model: str_at(v, "model").map(str::to_owned),
        id: str_at(v, "id").map(str::to_owned),
        complete: true,
    }
}

#[cfg(test)]
#[path = "accumulator_tests.rs"]
mod tests;
