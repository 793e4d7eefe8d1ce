//! Owns rebuilding a Chat Completions reply: the stream accumulator over `chat.completion.chunk`
//! events and the non-streaming body parser, both producing the same [`Reply`].

use std::collections::BTreeMap;

use serde_json::Value;

use crate::canonical::{Message, Part, Role, Usage};
use crate::protocol::{Reply, StreamAccumulator, event_json, str_at, u64_at};
use crate::sse::SseEvent;

/// Accumulates a Chat Completions stream into a [`Reply`].
#[derive(Debug, Default)]
pub struct Accumulator {
    id: Option<String>,
    model: Option<String>,
    reasoning: String,
    text: String,
    calls: BTreeMap<u64, Call>,
    finish_reason: Option<String>,
    usage: Usage,
    complete: bool,
}

#[derive(Debug, Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// Normalises Chat usage: cached prompt tokens are moved out of `input_tokens`.
fn usage_of(v: &Value) -> Usage {
    let prompt = u64_at(v, "prompt_tokens");
    let cached = v
        .get("prompt_tokens_details")
        .map_or(0, |d| u64_at(d, "cached_tokens"));
    Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: u64_at(v, "completion_tokens"),
        cache_read_input_tokens: cached,
        cache_creation_input_tokens: 0,
    }
}

/// Reasoning text under `reasoning_content` or `reasoning` (when a string).
fn reasoning_of(v: &Value) -> Option<&str> {
    str_at(v, "reasoning_content").or_else(|| str_at(v, "reasoning"))
}

/// The first choice (index 0, or the first one listed).
fn first_choice(v: &Value) -> Option<&Value> {
    let choices = v.get("choices")?.as_array()?;
    choices
        .iter()
        .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
}

fn assemble(reasoning: &str, text: &str, calls: impl Iterator<Item = Part>) -> Option<Message> {
    let mut parts = Vec::new();
    if !reasoning.is_empty() {
        parts.push(Part::Thinking {
            text: reasoning.to_owned(),
            signature: None,
        });
    }
    if !text.is_empty() {
        parts.push(Part::Text {
            text: text.to_owned(),
        });
    }
    parts.extend(calls);
    (!parts.is_empty()).then(|| Message::new(Role::Assistant, parts))
}

fn tool_call(id: &str, name: &str, arguments: &str) -> Part {
    Part::ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: if arguments.is_empty() {
            "{}".to_owned()
        } else {
            arguments.to_owned()
        },
    }
}

impl Accumulator {
    fn push_delta(&mut self, delta: &Value) {
        if let Some(text) = str_at(delta, "content") {
            self.text.push_str(text);
        }
        if let Some(reasoning) = reasoning_of(delta) {
            self.reasoning.push_str(reasoning);
        }
        let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) else {
            return;
        };
        for (pos, tc) in calls.iter().enumerate() {
            let index = tc
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(pos as u64);
            let call = self.calls.entry(index).or_default();
            if let Some(id) = str_at(tc, "id").filter(|s| !s.is_empty())
                && call.id.is_empty()
            {
                call.id = id.to_owned();
            }
            let Some(function) = tc.get("function") else {
                continue;
            };
            if let Some(name) = str_at(function, "name").filter(|s| !s.is_empty())
                && call.name.is_empty()
            {
                call.name = name.to_owned();
            }
            if let Some(arguments) = str_at(function, "arguments") {
                call.arguments.push_str(arguments);
            }
        }
    }
}

impl StreamAccumulator for Accumulator {
    fn push(&mut self, event: &SseEvent) {
        if event.data.trim() == "[DONE]" {
            self.complete = true;
            return;
        }
        let Some(v) = event_json(event) else { return };
        if let Some(id) = str_at(&v, "id").filter(|s| !s.is_empty()) {
            self.id.get_or_insert_with(|| id.to_owned());
        }
        if let Some(model) = str_at(&v, "model").filter(|s| !s.is_empty()) {
            self.model = Some(model.to_owned());
        }
        if v.get("error").is_some_and(Value::is_object) {
            self.finish_reason = Some("error".to_owned());
        }
        if let Some(choice) = first_choice(&v) {
            if let Some(delta) = choice.get("delta") {
                self.push_delta(delta);
            }
            if let Some(finish) = str_at(choice, "finish_reason") {
                self.finish_reason = Some(finish.to_owned());
                self.complete = true;
            }
        }
        if let Some(usage) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = usage_of(usage);
        }
    }

    fn reply(&self) -> Reply {
        let calls = self
            .calls
            .values()
            .map(|c| tool_call(&c.id, &c.name, &c.arguments));
        Reply {
            message: assemble(&self.reasoning, &self.text, calls),
            usage: self.usage,
            stop_reason: self.finish_reason.clone(),
            model: self.model.clone(),
            id: self.id.clone(),
            complete: self.complete,
        }
    }
}

/// Rebuilds the reply from a non-streaming `chat.completion` body.
pub(crate) fn reply_from_value(v: &Value) -> Reply {
    let choice = first_choice(v);
    let message = choice.and_then(|c| c.get("message"));
    let message = message.and_then(|m| {
        let text = match m.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| str_at(p, "text"))
                .collect::<String>(),
            _ => String::new(),
        };
        let calls = m
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|tc| {
                let function = tc.get("function").unwrap_or(&Value::Null);
                tool_call(
                    str_at(tc, "id").unwrap_or_default(),
                    str_at(function, "name").unwrap_or_default(),
                    str_at(function, "arguments").unwrap_or_default(),
                )
            });
        assemble(reasoning_of(m).unwrap_or_default(), &text, calls)
    });
    let stop_reason = if v.get("error").is_some_and(Value::is_object) {
        Some("error".to_owned())
    } else {
        choice
            .and_then(|c| str_at(c, "finish_reason"))
            .map(str::to_owned)
    };
    Reply {
        message,
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
