//! Owns the lossless wire types of Anthropic Messages streaming events and block deltas.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::request::ContentBlock;
use super::response::{MessagesResponse, WireUsage};
use crate::wire::{Extra, Field, Tolerant};

/// The data of one streaming event; unknown event types stay [`Tolerant::Unknown`].
pub type Event = Tolerant<StreamEvent>;

/// A known Anthropic streaming event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// Opens the message, with input usage.
    MessageStart {
        /// The message shell.
        message: Tolerant<MessagesResponse>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Opens a content block.
    ContentBlockStart {
        /// Block index.
        index: u64,
        /// The block shell.
        content_block: Tolerant<ContentBlock>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Extends a content block.
    ContentBlockDelta {
        /// Block index.
        index: u64,
        /// The delta.
        delta: Tolerant<BlockDelta>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Closes a content block.
    ContentBlockStop {
        /// Block index.
        index: u64,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Top-level changes: stop reason and output usage.
    MessageDelta {
        /// Stop reason and sequence.
        delta: MessageDeltaBody,
        /// Usage so far.
        #[serde(default, skip_serializing_if = "Field::is_absent")]
        usage: Field<Tolerant<WireUsage>>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Ends the stream.
    MessageStop {
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Keepalive.
    Ping {
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// An error mid-stream.
    Error {
        /// The error object.
        error: Value,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
}

/// The `delta` of a `content_block_delta` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockDelta {
    /// More text.
    TextDelta {
        /// The text fragment.
        text: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// More thinking.
    ThinkingDelta {
        /// The thinking fragment.
        thinking: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// The thinking signature.
    SignatureDelta {
        /// The signature.
        signature: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A fragment of tool input JSON.
    InputJsonDelta {
        /// The JSON fragment.
        partial_json: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A citation attached to the text block.
    CitationsDelta {
        /// The citation.
        citation: Value,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
}

/// The `delta` of a `message_delta` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageDeltaBody {
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub stop_reason: Field<String>,
    /// The stop sequence hit.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub stop_sequence: Field<String>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_round_trip_and_are_typed() {
        let cases = [
            (
                json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "model": "c", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 3, "output_tokens": 1}}}),
                true,
            ),
            (
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                true,
            ),
            (
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "brand_new", "q": 1}}),
                true,
            ),
            (
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
                true,
            ),
            (
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"a"}}),
                true,
            ),
            (
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "s"}}),
                true,
            ),
            (
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "future_delta", "x": [1]}}),
                true,
            ),
            (json!({"type": "content_block_stop", "index": 0}), true),
            (
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null}, "usage": {"output_tokens": 15}}),
                true,
            ),
            (json!({"type": "message_stop"}), true),
            (json!({"type": "ping", "extra_field": 1}), true),
            (
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
                true,
            ),
            (json!({"type": "future_event", "data": {}}), false),
        ];
        for (v, known) in cases {
            let parsed: Event = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(parsed.known().is_some(), known, "{v}");
            assert_eq!(serde_json::to_value(&parsed).unwrap(), v);
        }
    }
}
