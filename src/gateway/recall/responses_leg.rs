//! One upstream OpenAI Responses stream ("leg") of a recall-aware response, event by event.
//!
//! A recall `function_call` output item never reaches the client: in its place, at the same
//! `output_index`, the client gets a finished assistant message item holding the marker. The
//! terminal event (`response.completed`, `.incomplete` or `.failed`) is held until the gateway
//! knows whether it continues; its `response.output` then lists what the client saw across all
//! legs, with usage summed. A continuation leg drops its `response.created`/`in_progress` and
//! shifts its output indices; every event is renumbered so `sequence_number` keeps rising.

use std::collections::HashMap;

use bytes::Bytes;
use lore_proto::SseEvent;
use lore_proto::recall_tool::{RECALL_TOOL_NAME, RecallArguments, marker_text, new_key};
use lore_storage::now_ms;
use serde_json::{Map, Value, json};

use super::{LegCall, add_usage};

/// The state of one Responses leg.
pub(crate) struct ResponsesLeg {
    offset: usize,
    first: bool,
    /// Next `sequence_number` the client gets.
    next_sequence: u64,
    /// Output items the client saw in earlier legs, and their usage.
    earlier_output: Vec<Value>,
    earlier_usage: Map<String, Value>,
    /// Recall calls still streaming, by upstream output index: (call id, arguments).
    open_calls: HashMap<usize, (String, String)>,
    calls: Vec<LegCall>,
    /// Finished non-recall items of this leg (the follow-up's prefix).
    prefix: Vec<Value>,
    /// What the client saw of this leg, by client output index.
    visible: Vec<(usize, Value)>,
    other_tools: bool,
    max_index: Option<usize>,
    /// The held terminal event: (event name, data).
    terminal: Option<(String, Value)>,
}

impl ResponsesLeg {
    /// The first leg of a response.
    pub(crate) fn first() -> Self {
        Self {
            offset: 0,
            first: true,
            next_sequence: 0,
            earlier_output: Vec::new(),
            earlier_usage: Map::new(),
            open_calls: HashMap::new(),
            calls: Vec::new(),
            prefix: Vec::new(),
            visible: Vec::new(),
            other_tools: false,
            max_index: None,
            terminal: None,
        }
    }

    /// The leg that continues this one.
    pub(crate) fn next(&self) -> Self {
        let mut next = Self::first();
        next.first = false;
        next.offset = self.offset + self.max_index.map_or(0, |index| index + 1);
        next.next_sequence = self.next_sequence;
        next.earlier_output = self.client_output();
        next.earlier_usage = self.total_usage();
        next
    }

    /// What the client gets for one upstream event.
    pub(crate) fn push(&mut self, event: &SseEvent) -> Vec<Bytes> {
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            return vec![Bytes::from(format!("data: {}\n\n", event.data))];
        };
        let kind = event
            .event
            .clone()
            .or_else(|| data.get("type").and_then(Value::as_str).map(str::to_string))
            .unwrap_or_default();
        let index = data
            .get("output_index")
            .and_then(Value::as_u64)
            .map(|i| i as usize);
        if let Some(index) = index {
            self.max_index = Some(self.max_index.map_or(index, |max| max.max(index)));
        }
        match (kind.as_str(), index) {
            ("response.created" | "response.in_progress" | "response.queued", _) => {
                if self.first {
                    vec![self.emit(&kind, data)]
                } else {
                    Vec::new()
                }
            }
            ("response.completed" | "response.incomplete" | "response.failed", _) => {
                self.terminal = Some((kind, data));
                Vec::new()
            }
            ("response.output_item.added", Some(index)) => {
                let item = data.get("item").cloned().unwrap_or(Value::Null);
                if is_recall(&item) {
                    let id = item
                        .get("call_id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    self.open_calls.insert(index, (id, String::new()));
                    return Vec::new();
                }
                if item.get("type").and_then(Value::as_str) == Some("function_call") {
                    self.other_tools = true;
                }
                vec![self.shifted(&kind, data, index)]
            }
            ("response.function_call_arguments.delta", Some(index))
                if self.open_calls.contains_key(&index) =>
            {
                if let (Some((_, so_far)), Some(delta)) = (
                    self.open_calls.get_mut(&index),
                    data.get("delta").and_then(Value::as_str),
                ) {
                    so_far.push_str(delta);
                }
                Vec::new()
            }
            ("response.output_item.done", Some(index)) => {
                let item = data.get("item").cloned().unwrap_or(Value::Null);
                if let Some((call_id, streamed)) = self.open_calls.remove(&index) {
                    let arguments = item
                        .get("arguments")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or(streamed);
                    return self.finish_call(index, call_id, &arguments);
                }
                self.prefix.push(item.clone());
                self.visible.push((index + self.offset, item));
                vec![self.shifted(&kind, data, index)]
            }
            (_, Some(index)) if self.open_calls.contains_key(&index) => Vec::new(),
            (_, Some(index)) => vec![self.shifted(&kind, data, index)],
            _ => vec![self.emit(&kind, data)],
        }
    }

    /// The recall calls of this leg.
    pub(crate) fn calls(&self) -> &[LegCall] {
        &self.calls
    }

    /// True when the model called recall and nothing else, and completed.
    pub(crate) fn recall_only(&self) -> bool {
        !self.calls.is_empty()
            && !self.other_tools
            && self
                .terminal
                .as_ref()
                .is_some_and(|(kind, _)| kind == "response.completed")
    }

    /// The finished items of this leg before the calls, for the follow-up.
    pub(crate) fn prefix(&self) -> Vec<Value> {
        self.prefix.clone()
    }

    /// The held terminal event, its output being everything the client saw, usage summed.
    pub(crate) fn closing(&mut self) -> Vec<Bytes> {
        let Some((kind, mut data)) = self.terminal.clone() else {
            return Vec::new();
        };
        let output = self.client_output();
        let usage = self.total_usage();
        if let Some(response) = data.get_mut("response").and_then(Value::as_object_mut) {
            response.insert("output".into(), Value::Array(output));
            if !usage.is_empty() {
                response.insert("usage".into(), Value::Object(usage));
            }
        }
        vec![self.emit(&kind, data)]
    }

    fn client_output(&self) -> Vec<Value> {
        let mut visible = self.visible.clone();
        visible.sort_by_key(|(index, _)| *index);
        let mut output = self.earlier_output.clone();
        output.extend(visible.into_iter().map(|(_, item)| item));
        output
    }

    fn total_usage(&self) -> Map<String, Value> {
        let mut total = self.earlier_usage.clone();
        let usage = self
            .terminal
            .as_ref()
            .and_then(|(_, data)| data.pointer("/response/usage"))
            .and_then(Value::as_object);
        if let Some(usage) = usage {
            add_usage(&mut total, usage);
        }
        total
    }

    fn finish_call(&mut self, index: usize, call_id: String, arguments: &str) -> Vec<Bytes> {
        let input: Value = serde_json::from_str(arguments).unwrap_or_else(|_| json!({}));
        let input = input.to_string();
        let key = new_key(&call_id, now_ms());
        let marker = marker_text(&key, &RecallArguments::parse(&input));
        let client_index = index + self.offset;
        let item_id = format!("msg_lore_{}", key.trim_start_matches("r:"));
        let part = json!({"type": "output_text", "text": marker, "annotations": []});
        let item = json!({"id": item_id, "type": "message", "status": "completed", "role": "assistant", "content": [part]});
        let at = |extra: Value| {
            let mut data =
                json!({"item_id": item_id, "output_index": client_index, "content_index": 0});
            if let (Some(data), Some(extra)) = (data.as_object_mut(), extra.as_object()) {
                data.extend(extra.clone());
            }
            data
        };
        let events = [
            (
                "response.output_item.added",
                json!({"output_index": client_index, "item": {"id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}),
            ),
            (
                "response.content_part.added",
                at(json!({"part": {"type": "output_text", "text": "", "annotations": []}})),
            ),
            ("response.output_text.delta", at(json!({"delta": marker}))),
            ("response.output_text.done", at(json!({"text": marker}))),
            ("response.content_part.done", at(json!({"part": part}))),
            (
                "response.output_item.done",
                json!({"output_index": client_index, "item": item}),
            ),
        ];
        let out = events
            .into_iter()
            .map(|(kind, mut data)| {
                data["type"] = json!(kind);
                self.emit(kind, data)
            })
            .collect();
        self.visible.push((client_index, item));
        self.calls.push(LegCall {
            key,
            call_id,
            input,
            marker,
        });
        out
    }

    fn shifted(&mut self, kind: &str, mut data: Value, index: usize) -> Bytes {
        data["output_index"] = json!(index + self.offset);
        self.emit(kind, data)
    }

    fn emit(&mut self, kind: &str, mut data: Value) -> Bytes {
        data["sequence_number"] = json!(self.next_sequence);
        self.next_sequence += 1;
        Bytes::from(format!("event: {kind}\ndata: {data}\n\n"))
    }
}

fn is_recall(item: &Value) -> bool {
    item.get("type").and_then(Value::as_str) == Some("function_call")
        && item.get("name").and_then(Value::as_str) == Some(RECALL_TOOL_NAME)
}
