//! Owns the lossless wire types of Anthropic Messages requests: the request, its messages and
//! the content blocks shared with responses. Unknown fields and block types are kept verbatim.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::{Extra, Field, Tolerant};

/// A `POST /v1/messages` request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    /// Model name.
    pub model: String,
    /// The conversation.
    pub messages: Vec<Tolerant<InputMessage>>,
    /// System prompt, a string or text blocks.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub system: Field<Content>,
    /// Output token limit.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub max_tokens: Field<u64>,
    /// Whether to stream.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub stream: Field<bool>,
    /// Tool definitions.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub tools: Field<Vec<Tolerant<Tool>>>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// A string or content blocks.
    pub content: Content,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// Content given either as a plain string or as blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// A plain string.
    Text(String),
    /// Content blocks.
    Blocks(Vec<Tolerant<ContentBlock>>),
}

/// A content block of a message or response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Unknown fields (`cache_control`, `citations`, ...).
        #[serde(flatten)]
        extra: Extra,
    },
    /// An image.
    Image {
        /// The image source.
        source: Value,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A client tool call.
    ToolUse {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments.
        input: Value,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A server tool call (web search, code execution).
    ServerToolUse {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments.
        input: Value,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// The result of a client tool call.
    ToolResult {
        /// The id of the call.
        tool_use_id: String,
        /// A string or blocks.
        #[serde(default, skip_serializing_if = "Field::is_absent")]
        content: Field<Content>,
        /// Whether the tool failed.
        #[serde(default, skip_serializing_if = "Field::is_absent")]
        is_error: Field<bool>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Extended thinking.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The signature.
        #[serde(default, skip_serializing_if = "Field::is_absent")]
        signature: Field<String>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Redacted thinking.
    RedactedThinking {
        /// Opaque data.
        data: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
}

/// A tool definition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    /// Tool name.
    pub name: String,
    /// Unknown fields (`description`, `input_schema`, `type`, `cache_control`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testgen::{extra, json_value, with_extra};
    use proptest::prelude::*;
    use serde_json::json;

    fn block() -> impl Strategy<Value = Value> {
        let base = prop_oneof![
            "[a-z ]{0,8}".prop_map(|t| json!({"type": "text", "text": t})),
            ("[a-z]{1,4}", json_value()).prop_map(
                |(id, input)| json!({"type": "tool_use", "id": id, "name": "n", "input": input})
            ),
            "[a-z]{0,4}"
                .prop_map(|c| json!({"type": "tool_result", "tool_use_id": "t", "content": c})),
            Just(
                json!({"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "x"}], "is_error": null})
            ),
            "[a-z]{0,4}".prop_map(|t| json!({"type": "thinking", "thinking": t, "signature": "s"})),
            Just(json!({"type": "image", "source": {"type": "base64", "data": "AA"}})),
            ("[a-z]{3,8}_block", json_value()).prop_map(|(t, v)| json!({"type": t, "payload": v})),
            Just(json!({"type": "text", "text": 12})),
        ];
        (base, extra()).prop_map(|(b, e)| with_extra(b, e))
    }

    fn message() -> impl Strategy<Value = Value> {
        let content = prop_oneof![
            "[a-z ]{0,8}".prop_map(Value::String),
            prop::collection::vec(block(), 0..4).prop_map(Value::Array),
        ];
        (
            prop_oneof![Just("user"), Just("assistant")],
            content,
            extra(),
        )
            .prop_map(|(r, c, e)| with_extra(json!({"role": r, "content": c}), e))
    }

    fn request() -> impl Strategy<Value = Value> {
        (
            prop::collection::vec(message(), 0..4),
            prop::option::of(prop_oneof![
                Just(json!("sys")),
                Just(json!([{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}])),
                Just(Value::Null)
            ]),
            extra(),
        )
            .prop_map(|(m, s, e)| {
                let mut v = json!({"model": "m", "messages": m, "max_tokens": 5, "tools": [{"name": "t", "input_schema": {}}]});
                if let Some(s) = s {
                    v["system"] = s;
                }
                with_extra(v, e)
            })
    }

    proptest! {
        #[test]
        fn request_round_trip_is_lossless(v in request()) {
            let parsed: MessagesRequest = serde_json::from_value(v.clone()).unwrap();
            let back = serde_json::to_value(&parsed).unwrap();
            prop_assert_eq!(&back, &v);
            let again: MessagesRequest = serde_json::from_value(back).unwrap();
            prop_assert_eq!(again, parsed);
        }
    }

    #[test]
    fn known_blocks_are_typed_and_unknown_kept() {
        let v = json!({"model": "m", "messages": [{"role": "user", "content": [
            {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
            {"type": "fancy", "z": 1}
        ]}]});
        let parsed: MessagesRequest = serde_json::from_value(v).unwrap();
        let Some(msg) = parsed.messages[0].known() else {
            panic!("message not typed")
        };
        let Content::Blocks(blocks) = &msg.content else {
            panic!("not blocks")
        };
        assert!(
            matches!(blocks[0].known(), Some(ContentBlock::Text { text, extra }) if text == "a" && extra.contains_key("cache_control"))
        );
        assert_eq!(
            blocks[1],
            Tolerant::Unknown(json!({"type": "fancy", "z": 1}))
        );
    }
}
