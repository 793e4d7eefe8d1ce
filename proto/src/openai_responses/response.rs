//! Owns the lossless wire types of Responses response objects, their usage and every streaming
//! event. Unknown event types are kept verbatim.

use serde::{Deserialize, Serialize};

use super::request::{ContentPart, Item};
use crate::wire::{Extra, Field, Tolerant};

/// A response object (non-streaming body, and the `response` of lifecycle events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// Response id.
    pub id: String,
    /// `completed`, `in_progress`, `incomplete`, `failed`, ...
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub status: Field<String>,
    /// Model that answered.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub model: Field<String>,
    /// Output items.
    #[serde(default)]
    pub output: Vec<Tolerant<Item>>,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub usage: Field<Tolerant<ResponsesUsage>>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Responses token usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesUsage {
    /// Input tokens, cached ones included.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Unknown fields (`input_tokens_details`, `total_tokens`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// The data of one streaming event; unknown event types stay [`Tolerant::Unknown`].
pub type Event = Tolerant<StreamEvent>;

/// A known Responses streaming event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum StreamEvent {
    /// The response was created.
    #[serde(rename = "response.created")]
    Created {
        /// The response shell.
        response: Tolerant<Response>,
        /// Unknown fields (`sequence_number`, ...).
        #[serde(flatten)]
        extra: Extra,
    },
    /// Generation is in progress.
    #[serde(rename = "response.in_progress")]
    InProgress {
        /// The response so far.
        response: Tolerant<Response>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Generation finished.
    #[serde(rename = "response.completed")]
    Completed {
        /// The final response.
        response: Tolerant<Response>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Generation stopped early.
    #[serde(rename = "response.incomplete")]
    Incomplete {
        /// The final response.
        response: Tolerant<Response>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Generation failed.
    #[serde(rename = "response.failed")]
    Failed {
        /// The final response with its error.
        response: Tolerant<Response>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// An output item starts.
    #[serde(rename = "response.output_item.added")]
    OutputItemAdded {
        /// Position in `output`.
        output_index: u64,
        /// The item shell.
        item: Tolerant<Item>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// An output item is complete.
    #[serde(rename = "response.output_item.done")]
    OutputItemDone {
        /// Position in `output`.
        output_index: u64,
        /// The whole item.
        item: Tolerant<Item>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A content part of a message starts.
    #[serde(rename = "response.content_part.added")]
    ContentPartAdded {
        /// Position in `output`.
        output_index: u64,
        /// Position in the message content.
        content_index: u64,
        /// The part shell.
        part: Tolerant<ContentPart>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A text fragment.
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta {
        /// Position in `output`.
        output_index: u64,
        /// Position in the message content.
        content_index: u64,
        /// The fragment.
        delta: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A fragment of function call arguments.
    #[serde(rename = "response.function_call_arguments.delta")]
    FunctionCallArgumentsDelta {
        /// Position in `output`.
        output_index: u64,
        /// The fragment.
        delta: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A fragment of a reasoning summary.
    #[serde(rename = "response.reasoning_summary_text.delta")]
    ReasoningSummaryTextDelta {
        /// Position in `output`.
        output_index: u64,
        /// Which summary part.
        summary_index: u64,
        /// The fragment.
        delta: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A fragment of raw reasoning text.
    #[serde(rename = "response.reasoning_text.delta")]
    ReasoningTextDelta {
        /// Position in `output`.
        output_index: u64,
        /// Which content part.
        content_index: u64,
        /// The fragment.
        delta: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A stream-level error.
    #[serde(rename = "error")]
    Error {
        /// Unknown fields (`code`, `message`, `param`, ...).
        #[serde(flatten)]
        extra: Extra,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_round_trip_and_are_typed() {
        let resp = json!({"id": "resp_1", "object": "response", "status": "completed", "model": "g", "output": [
            {"type": "message", "id": "m", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "hi", "annotations": []}]},
            {"type": "web_search_call", "id": "ws", "status": "completed"}
        ], "usage": {"input_tokens": 3, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1, "total_tokens": 4}});
        let cases = [
            (
                json!({"type": "response.created", "sequence_number": 0, "response": resp}),
                true,
            ),
            (
                json!({"type": "response.completed", "sequence_number": 9, "response": resp}),
                true,
            ),
            (
                json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call", "call_id": "c", "name": "f", "arguments": ""}}),
                true,
            ),
            (
                json!({"type": "response.content_part.added", "output_index": 0, "content_index": 0, "item_id": "m", "part": {"type": "output_text", "text": ""}}),
                true,
            ),
            (
                json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": "m", "delta": "h"}),
                true,
            ),
            (
                json!({"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": "fc", "delta": "{"}),
                true,
            ),
            (
                json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "r"}),
                true,
            ),
            (
                json!({"type": "error", "code": "x", "message": "m", "param": null}),
                true,
            ),
            (
                json!({"type": "response.output_text.annotation.added", "annotation": {}}),
                false,
            ),
        ];
        for (v, known) in cases {
            let parsed: Event = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(parsed.known().is_some(), known, "{v}");
            assert_eq!(serde_json::to_value(&parsed).unwrap(), v);
        }
    }
}
