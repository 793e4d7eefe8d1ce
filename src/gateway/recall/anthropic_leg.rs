//! One upstream Anthropic stream ("leg") of a recall-aware response, event by event.
//!
//! Every event goes to the client except the recall `tool_use` blocks, which become a text block
//! with the marker at the same index (so no later block moves), and the closing `message_delta`
//! and `message_stop`, which are held until the gateway knows whether it continues the response
//! itself. A continuation leg drops its `message_start` and shifts its block indices past the
//! blocks the client already has, so the client sees one message.

use std::collections::HashMap;

use bytes::Bytes;
use lore_proto::SseEvent;
use lore_proto::recall_tool::{RECALL_TOOL_NAME, RecallArguments, marker_text, new_key};
use lore_storage::now_ms;
use serde_json::{Value, json};

use super::LegCall;

/// The state of one Anthropic leg.
pub(crate) struct AnthropicLeg {
    /// Added to every block index of this leg.
    offset: usize,
    /// True for the first leg, whose `message_start` the client gets.
    first: bool,
    /// Output tokens of the earlier legs, added to this leg's count.
    earlier_output_tokens: u64,
    /// Text and thinking blocks as they build up, by upstream index (the follow-up's prefix).
    prefix: Vec<(usize, Value)>,
    /// Recall calls still streaming their input, by upstream index.
    open_calls: HashMap<usize, (String, String)>,
    /// Finished recall calls.
    calls: Vec<LegCall>,
    /// A client tool was called too.
    other_tools: bool,
    /// Highest block index seen.
    max_index: Option<usize>,
    stop_reason: Option<String>,
    output_tokens: u64,
    /// `message_delta` and `message_stop`, held back.
    held: Vec<Value>,
}

impl AnthropicLeg {
    /// The first leg of a response.
    pub(crate) fn first() -> Self {
        Self::new(0, true, 0)
    }

    fn new(offset: usize, first: bool, earlier_output_tokens: u64) -> Self {
        Self {
            offset,
            first,
            earlier_output_tokens,
            prefix: Vec::new(),
            open_calls: HashMap::new(),
            calls: Vec::new(),
            other_tools: false,
            max_index: None,
            stop_reason: None,
            output_tokens: 0,
            held: Vec::new(),
        }
    }

    /// The leg that continues this one.
    pub(crate) fn next(&self) -> Self {
        let offset = self.offset + self.max_index.map_or(0, |index| index + 1);
        Self::new(
            offset,
            false,
            self.earlier_output_tokens + self.output_tokens,
        )
    }

    /// What the client gets for one upstream event.
    pub(crate) fn push(&mut self, event: &SseEvent) -> Vec<Bytes> {
        let Ok(mut data) = serde_json::from_str::<Value>(&event.data) else {
            return vec![encode_raw(event)];
        };
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let index = data
            .get("index")
            .and_then(Value::as_u64)
            .map(|i| i as usize);
        match (kind.as_str(), index) {
            ("message_start", _) => {
                if self.first {
                    vec![encode("message_start", &data)]
                } else {
                    Vec::new()
                }
            }
            ("content_block_start", Some(index)) => {
                self.max_index = Some(self.max_index.map_or(index, |max| max.max(index)));
                let block = data.get("content_block").cloned().unwrap_or(Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use")
                        if block.get("name").and_then(Value::as_str) == Some(RECALL_TOOL_NAME) =>
                    {
                        let id = block
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        self.open_calls.insert(index, (id, String::new()));
                        return Vec::new();
                    }
                    Some("tool_use" | "server_tool_use") => self.other_tools = true,
                    Some("text" | "thinking" | "redacted_thinking") => {
                        self.prefix.push((index, block))
                    }
                    _ => {}
                }
                vec![self.shifted(&mut data, index)]
            }
            ("content_block_delta", Some(index)) => {
                let delta = data.get("delta").cloned().unwrap_or(Value::Null);
                if let Some((_, input)) = self.open_calls.get_mut(&index) {
                    if let Some(part) = delta.get("partial_json").and_then(Value::as_str) {
                        input.push_str(part);
                    }
                    return Vec::new();
                }
                self.apply_delta(index, &delta);
                vec![self.shifted(&mut data, index)]
            }
            ("content_block_stop", Some(index)) => match self.open_calls.remove(&index) {
                Some((call_id, input)) => self.finish_call(index, call_id, &input),
                None => vec![self.shifted(&mut data, index)],
            },
            ("message_delta", _) => {
                self.stop_reason = data
                    .pointer("/delta/stop_reason")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                self.output_tokens = data
                    .pointer("/usage/output_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                self.held.push(data);
                Vec::new()
            }
            ("message_stop", _) => {
                self.held.push(data);
                Vec::new()
            }
            _ => vec![encode_raw(event)],
        }
    }

    /// The recall calls of this leg.
    pub(crate) fn calls(&self) -> &[LegCall] {
        &self.calls
    }

    /// True when the model called recall and nothing else, and stopped for it.
    pub(crate) fn recall_only(&self) -> bool {
        !self.calls.is_empty()
            && !self.other_tools
            && self.stop_reason.as_deref() == Some("tool_use")
    }

    /// The text and thinking blocks of this leg, for the follow-up request.
    pub(crate) fn prefix(&self) -> Vec<Value> {
        self.prefix.iter().map(|(_, block)| block.clone()).collect()
    }

    /// The held closing events; a tool stop with no tool left for the client becomes `end_turn`.
    pub(crate) fn closing(&self) -> Vec<Bytes> {
        let visible_tools = self.other_tools;
        self.held
            .iter()
            .map(|data| {
                let mut data = data.clone();
                let kind = data
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if kind == "message_delta" {
                    if !visible_tools && self.stop_reason.as_deref() == Some("tool_use") {
                        data["delta"]["stop_reason"] = json!("end_turn");
                    }
                    if let Some(tokens) = data.pointer_mut("/usage/output_tokens") {
                        *tokens = json!(self.earlier_output_tokens + self.output_tokens);
                    }
                }
                encode(&kind, &data)
            })
            .collect()
    }

    fn finish_call(&mut self, index: usize, call_id: String, input: &str) -> Vec<Bytes> {
        let input: Value = serde_json::from_str(input).unwrap_or_else(|_| json!({}));
        let input = input.to_string();
        let key = new_key(&call_id, now_ms());
        let marker = marker_text(&key, &RecallArguments::parse(&input));
        let client_index = index + self.offset;
        let events = vec![
            encode(
                "content_block_start",
                &json!({"type": "content_block_start", "index": client_index, "content_block": {"type": "text", "text": ""}}),
            ),
            encode(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": client_index, "delta": {"type": "text_delta", "text": marker}}),
            ),
            encode(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": client_index}),
            ),
        ];
        self.calls.push(LegCall {
            key,
            call_id,
            input,
            marker,
        });
        events
    }

    fn apply_delta(&mut self, index: usize, delta: &Value) {
        let Some((_, block)) = self.prefix.iter_mut().find(|(i, _)| *i == index) else {
            return;
        };
        let append = |block: &mut Value, field: &str, piece: Option<&str>| {
            if let Some(piece) = piece {
                let current = block.get(field).and_then(Value::as_str).unwrap_or("");
                block[field] = Value::String(format!("{current}{piece}"));
            }
        };
        match delta.get("type").and_then(Value::as_str) {
            Some("text_delta") => append(block, "text", delta.get("text").and_then(Value::as_str)),
            Some("thinking_delta") => append(
                block,
                "thinking",
                delta.get("thinking").and_then(Value::as_str),
            ),
            Some("signature_delta") => {
                if let Some(signature) = delta.get("signature") {
                    block["signature"] = signature.clone();
                }
            }
            _ => {}
        }
    }

    fn shifted(&self, data: &mut Value, index: usize) -> Bytes {
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        data["index"] = json!(index + self.offset);
        encode(&kind, data)
    }
}

/// An SSE event with a name and JSON data.
fn encode(name: &str, data: &Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// An event passed on as it came.
fn encode_raw(event: &SseEvent) -> Bytes {
    let mut out = String::new();
    if let Some(name) = &event.event {
        out.push_str(&format!("event: {name}\n"));
    }
    for line in event.data.split('\n') {
        out.push_str(&format!("data: {line}\n"));
    }
    out.push('\n');
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn event(name: &str, data: Value) -> SseEvent {
        SseEvent {
            event: Some(name.to_string()),
            data: data.to_string(),
            id: None,
            retry: None,
        }
    }

    fn texts(out: &[Bytes]) -> String {
        out.iter()
            .map(|b| String::from_utf8_lossy(b).to_string())
            .collect()
    }

    #[test]
    fn a_recall_block_becomes_a_marker_at_its_index() {
        let mut leg = AnthropicLeg::first();
        let mut out = Vec::new();
        for (name, data) in [
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "m"}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me check."}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "recall", "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"dep"}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "loy\"}"}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 1}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ] {
            out.extend(leg.push(&event(name, data)));
        }
        let sent = texts(&out);
        assert!(!sent.contains("tool_use"), "{sent}");
        assert!(
            sent.contains("Searching all archives for \\\"deploy\\\""),
            "{sent}"
        );
        assert!(!sent.contains("message_stop"), "closing events are held");
        assert!(leg.recall_only());
        assert_eq!(leg.calls()[0].input, r#"{"query":"deploy"}"#);
        assert_eq!(leg.prefix()[0]["text"], "Let me check.");
        let closing = texts(&leg.closing());
        assert!(closing.contains("end_turn"), "{closing}");

        let mut next = leg.next();
        let started = next.push(&event("message_start", json!({"type": "message_start"})));
        assert!(started.is_empty());
        let block = texts(&next.push(&event(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        )));
        assert!(block.contains("\"index\":2"), "{block}");
        next.push(&event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}})));
        assert!(texts(&next.closing()).contains("\"output_tokens\":13"));
    }

    #[test]
    fn recall_beside_another_tool_is_not_recall_only() {
        let mut leg = AnthropicLeg::first();
        for (name, data) in [
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "a", "name": "recall"}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "b", "name": "bash"}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 1}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
            ),
        ] {
            leg.push(&event(name, data));
        }
        assert_eq!(leg.calls().len(), 1);
        assert!(!leg.recall_only());
        assert!(texts(&leg.closing()).contains("tool_use"));
    }
}
