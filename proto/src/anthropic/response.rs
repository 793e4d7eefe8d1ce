//! Owns the lossless wire types of non-streaming Anthropic Messages responses and their usage.

use serde::{Deserialize, Serialize};

use super::request::ContentBlock;
use crate::wire::{Extra, Field, Tolerant};

/// A non-streaming Messages response (also the `message` of `message_start`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesResponse {
    /// Message id.
    pub id: String,
    /// Model that answered.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub model: Field<String>,
    /// Always `assistant`.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub role: Field<String>,
    /// Content blocks.
    #[serde(default)]
    pub content: Vec<Tolerant<ContentBlock>>,
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub stop_reason: Field<String>,
    /// The stop sequence hit, if any.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub stop_sequence: Field<String>,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub usage: Field<Tolerant<WireUsage>>,
    /// Unknown fields (`type`, `container`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// Anthropic token usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireUsage {
    /// Uncached input tokens.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub input_tokens: Field<u64>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub output_tokens: Field<u64>,
    /// Tokens read from the cache.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub cache_read_input_tokens: Field<u64>,
    /// Tokens written to the cache.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub cache_creation_input_tokens: Field<u64>,
    /// Unknown fields (`service_tier`, `server_tool_use`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn response_round_trip() {
        let cases = [
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "content": [
                {"type": "text", "text": "hi", "citations": null},
                {"type": "tool_use", "id": "t", "name": "n", "input": {"a": [1, 2]}},
                {"type": "web_search_tool_result", "tool_use_id": "s", "content": []}
            ], "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 2, "cache_read_input_tokens": 0, "cache_creation_input_tokens": null, "service_tier": "standard"}}),
            json!({"id": "msg_2", "content": [], "usage": {"input_tokens": -1}}),
        ];
        for v in cases {
            let parsed: MessagesResponse = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&parsed).unwrap(), v);
        }
    }
}
