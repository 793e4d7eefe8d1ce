//! One upstream OpenAI Chat Completions stream ("leg") of a recall-aware response, chunk by chunk.
//!
//! Chunks go to the client as they come, minus the recall tool call's deltas; the client's own
//! tool calls are renumbered so their indices stay dense. The finishing chunk, the usage chunk
//! and `[DONE]` are held until the gateway knows whether it continues the response itself; the
//! markers go out as one content delta at the end of the leg.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use lore_proto::SseEvent;
use lore_proto::recall_tool::{
    RECALL_TOOL_NAME, RecallArguments, chat_marker, marker_text, new_key,
};
use lore_storage::now_ms;
use serde_json::{Map, Value, json};

use super::{LegCall, add_usage};

/// The state of one Chat leg.
pub(crate) struct ChatLeg {
    /// True for the first leg, whose role delta the client gets.
    first: bool,
    /// Usage of the earlier legs, added to this leg's usage chunk.
    earlier_usage: Map<String, Value>,
    /// Recall calls by tool-call index: (call id, arguments so far).
    recall: BTreeMap<usize, (String, String)>,
    /// Indices of the client's own tool calls.
    others: BTreeSet<usize>,
    /// The leg's text, for the follow-up.
    content: String,
    /// `id`, `object`, `created`, `model` of the leg's chunks, for the chunks the gateway writes.
    shell: Option<Map<String, Value>>,
    finish_reason: Option<String>,
    /// The finishing chunk, the usage chunk and `[DONE]`, held back.
    held: Vec<Value>,
    done_seen: bool,
    calls: Vec<LegCall>,
}

impl ChatLeg {
    /// The first leg of a response.
    pub(crate) fn first() -> Self {
        Self::new(true, Map::new())
    }

    fn new(first: bool, earlier_usage: Map<String, Value>) -> Self {
        Self {
            first,
            earlier_usage,
            recall: BTreeMap::new(),
            others: BTreeSet::new(),
            content: String::new(),
            shell: None,
            finish_reason: None,
            held: Vec::new(),
            done_seen: false,
            calls: Vec::new(),
        }
    }

    /// The leg that continues this one.
    pub(crate) fn next(&self) -> Self {
        Self::new(false, self.total_usage())
    }

    /// What the client gets for one upstream event.
    pub(crate) fn push(&mut self, event: &SseEvent) -> Vec<Bytes> {
        if event.data.trim() == "[DONE]" {
            self.done_seen = true;
            return Vec::new();
        }
        let Ok(Value::Object(mut chunk)) = serde_json::from_str::<Value>(&event.data) else {
            return vec![Bytes::from(format!("data: {}\n\n", event.data))];
        };
        if self.shell.is_none() {
            let shell: Map<String, Value> = chunk
                .iter()
                .filter(|(key, _)| {
                    matches!(
                        key.as_str(),
                        "id" | "object" | "created" | "model" | "system_fingerprint"
                    )
                })
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            self.shell = Some(shell);
        }
        let empty_choices = chunk
            .get("choices")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if empty_choices && chunk.get("usage").is_some_and(|usage| !usage.is_null()) {
            self.held.push(Value::Object(chunk));
            return Vec::new();
        }
        let Some(choice) = chunk.get_mut("choices").and_then(|c| c.get_mut(0)) else {
            return vec![data(&Value::Object(chunk))];
        };
        let finish = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(delta) = choice.get_mut("delta").and_then(Value::as_object_mut) {
            self.filter_delta(delta);
        }
        if let Some(finish) = finish {
            self.finish_reason = Some(finish);
            self.held.push(Value::Object(chunk));
            return Vec::new();
        }
        let delta_empty = choice
            .get("delta")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty);
        if delta_empty && choice.get("logprobs").is_none_or(Value::is_null) {
            return Vec::new();
        }
        vec![data(&Value::Object(chunk))]
    }

    fn filter_delta(&mut self, delta: &mut Map<String, Value>) {
        if !self.first {
            delta.remove("role");
            if delta.get("content").and_then(Value::as_str) == Some("") {
                delta.remove("content");
            }
        }
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            self.content.push_str(text);
        }
        let Some(Value::Array(calls)) = delta.remove("tool_calls") else {
            return;
        };
        let mut kept = Vec::new();
        for mut call in calls {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
            let arguments = call
                .pointer("/function/arguments")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if call.pointer("/function/name").and_then(Value::as_str) == Some(RECALL_TOOL_NAME) {
                let id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                self.recall.insert(index, (id, arguments));
                continue;
            }
            if let Some((_, so_far)) = self.recall.get_mut(&index) {
                so_far.push_str(&arguments);
                continue;
            }
            self.others.insert(index);
            let before = self.recall.range(..index).count();
            call["index"] = json!(index - before);
            kept.push(call);
        }
        if !kept.is_empty() {
            delta.insert("tool_calls".into(), Value::Array(kept));
        }
    }

    /// Ends the leg: turns the recall calls into markers (once) and returns them.
    pub(crate) fn finish_calls(&mut self) -> &[LegCall] {
        if self.calls.is_empty() {
            let now = now_ms();
            for (call_id, arguments) in std::mem::take(&mut self.recall).into_values() {
                let input: Value = serde_json::from_str(&arguments).unwrap_or_else(|_| json!({}));
                let input = input.to_string();
                let key = new_key(&call_id, now);
                let marker = marker_text(&key, &RecallArguments::parse(&input));
                self.calls.push(LegCall {
                    key,
                    call_id,
                    input,
                    marker,
                });
            }
        }
        &self.calls
    }

    /// True when the model called recall and nothing else, and stopped for it.
    pub(crate) fn recall_only(&self) -> bool {
        !self.calls.is_empty()
            && self.others.is_empty()
            && self.finish_reason.as_deref() == Some("tool_calls")
    }

    /// The leg's text, for the follow-up request.
    pub(crate) fn prefix(&self) -> &str {
        &self.content
    }

    /// The markers of this leg's calls as one content chunk (empty when there were none).
    pub(crate) fn markers(&self) -> Vec<Bytes> {
        if self.calls.is_empty() {
            return Vec::new();
        }
        let text: String = self
            .calls
            .iter()
            .map(|call| chat_marker(&call.marker))
            .collect();
        let mut chunk = self.shell.clone().unwrap_or_default();
        chunk.insert(
            "choices".into(),
            json!([{"index": 0, "delta": {"content": text}, "finish_reason": null}]),
        );
        vec![data(&Value::Object(chunk))]
    }

    /// The held closing chunks: a tool stop with no tool left for the client becomes `stop`;
    /// usage covers every leg.
    pub(crate) fn closing(&self) -> Vec<Bytes> {
        let mut out: Vec<Bytes> = self
            .held
            .iter()
            .map(|chunk| {
                let mut chunk = chunk.clone();
                if self.others.is_empty()
                    && let Some(reason) = chunk.pointer_mut("/choices/0/finish_reason")
                    && reason == "tool_calls"
                {
                    *reason = json!("stop");
                }
                if chunk.get("usage").is_some_and(Value::is_object) {
                    chunk["usage"] = Value::Object(self.total_usage());
                }
                data(&chunk)
            })
            .collect();
        if self.done_seen {
            out.push(Bytes::from_static(b"data: [DONE]\n\n"));
        }
        out
    }

    fn total_usage(&self) -> Map<String, Value> {
        let mut total = self.earlier_usage.clone();
        let usage = self
            .held
            .iter()
            .find_map(|chunk| chunk.get("usage").and_then(Value::as_object));
        if let Some(usage) = usage {
            add_usage(&mut total, usage);
        }
        total
    }
}

fn data(chunk: &Value) -> Bytes {
    Bytes::from(format!("data: {chunk}\n\n"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn event(data: Value) -> SseEvent {
        SseEvent {
            event: None,
            data: data.to_string(),
            id: None,
            retry: None,
        }
    }

    fn text(out: &[Bytes]) -> String {
        out.iter()
            .map(|b| String::from_utf8_lossy(b).to_string())
            .collect()
    }

    #[test]
    fn recall_calls_are_withheld_and_others_renumbered() {
        let mut leg = ChatLeg::first();
        let mut out = Vec::new();
        for chunk in [
            json!({"id": "c", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi."}}]}),
            json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "r1", "type": "function", "function": {"name": "recall", "arguments": ""}}]}}]}),
            json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"query\":\"x\"}"}}]}}]}),
            json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "b1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}}]}),
            json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        ] {
            out.extend(leg.push(&event(chunk)));
        }
        leg.push(&SseEvent {
            event: None,
            data: "[DONE]".into(),
            id: None,
            retry: None,
        });
        let sent = text(&out);
        assert!(!sent.contains("recall"), "{sent}");
        assert!(sent.contains(r#"{"index":0,"id":"b1""#), "{sent}");
        assert_eq!(leg.finish_calls().len(), 1);
        assert!(!leg.recall_only());
        assert!(text(&leg.markers()).contains("Searching all archives for \\\"x\\\""));
        let closing = text(&leg.closing());
        assert!(
            closing.contains("tool_calls") && closing.ends_with("data: [DONE]\n\n"),
            "{closing}"
        );
    }

    #[test]
    fn a_recall_only_leg_and_its_continuation() {
        let mut leg = ChatLeg::first();
        leg.push(&event(json!({"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "r1", "function": {"name": "recall", "arguments": "{}"}}]}}]})));
        leg.push(&event(json!({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})));
        leg.push(&event(json!({"id": "c", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})));
        leg.finish_calls();
        assert!(leg.recall_only());
        let mut next = leg.next();
        let role = next.push(&event(json!({"id": "d", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})));
        assert!(
            role.is_empty(),
            "a continuation's bare role delta is dropped"
        );
        next.push(&event(
            json!({"id": "d", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ));
        next.push(&event(json!({"id": "d", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 3, "total_tokens": 23}})));
        let closing = text(&next.closing());
        assert!(
            closing.contains(r#""prompt_tokens":30"#)
                && closing.contains(r#""completion_tokens":5"#),
            "{closing}"
        );
    }
}
