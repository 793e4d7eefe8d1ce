//! Owns the lossless wire types of Chat Completions requests: the request, its role-tagged
//! messages, content parts and tool calls. Unknown fields, roles and part types are kept verbatim.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::{Extra, Field, Tolerant};

/// A `POST /v1/chat/completions` request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Model name.
    pub model: String,
    /// The conversation.
    pub messages: Vec<Tolerant<ChatMessage>>,
    /// Whether to stream.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub stream: Field<bool>,
    /// Tool definitions.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub tools: Field<Vec<Value>>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A message, tagged by `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    /// System instructions.
    System {
        /// Text or parts.
        content: ChatContent,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Developer instructions.
    Developer {
        /// Text or parts.
        content: ChatContent,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// The user.
    User {
        /// Text or parts.
        content: ChatContent,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// The model.
    Assistant {
        /// Text or parts; often `null` with tool calls.
        #[serde(default, skip_serializing_if = "Field::is_absent")]
        content: Field<ChatContent>,
        /// Tool calls.
        #[serde(default, skip_serializing_if = "Field::is_absent")]
        tool_calls: Field<Vec<Tolerant<ToolCall>>>,
        /// Unknown fields (`reasoning_content`, `refusal`, ...).
        #[serde(flatten)]
        extra: Extra,
    },
    /// A tool result.
    Tool {
        /// The call answered.
        tool_call_id: String,
        /// Text or parts.
        content: ChatContent,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
}

/// Content given as a string or parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ChatContent {
    /// A plain string.
    Text(String),
    /// Content parts.
    Parts(Vec<Tolerant<ContentPart>>),
}

/// A content part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// An image by URL or data URL.
    ImageUrl {
        /// `{url, detail}`.
        image_url: Value,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
}

/// A tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Call id.
    pub id: String,
    /// The function called.
    pub function: FunctionCall,
    /// Unknown fields (`type`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// The function of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// Function name.
    pub name: String,
    /// JSON text of the arguments.
    pub arguments: String,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testgen::{extra, json_value, with_extra};
    use proptest::prelude::*;
    use serde_json::json;

    fn part() -> impl Strategy<Value = Value> {
        let base = prop_oneof![
            "[a-z ]{0,8}".prop_map(|t| json!({"type": "text", "text": t})),
            Just(json!({"type": "image_url", "image_url": {"url": "data:,"}})),
            ("[a-z]{3,8}_part", json_value()).prop_map(|(t, v)| json!({"type": t, "v": v})),
        ];
        (base, extra()).prop_map(|(b, e)| with_extra(b, e))
    }

    fn content() -> impl Strategy<Value = Value> {
        prop_oneof![
            "[a-z ]{0,8}".prop_map(Value::String),
            prop::collection::vec(part(), 0..3).prop_map(Value::Array),
        ]
    }

    fn message() -> impl Strategy<Value = Value> {
        let call = (("call_[a-z]{1,3}", json_value()), extra()).prop_map(|((id, a), e)| {
            with_extra(json!({"id": id, "type": "function", "function": {"name": "f", "arguments": a.to_string()}}), e)
        });
        let base = prop_oneof![
            (
                prop_oneof![Just("system"), Just("developer"), Just("user")],
                content()
            )
                .prop_map(|(r, c)| json!({"role": r, "content": c})),
            (
                prop_oneof![content(), Just(Value::Null)],
                prop::collection::vec(call, 0..3)
            )
                .prop_map(
                    |(c, calls)| json!({"role": "assistant", "content": c, "tool_calls": calls})
                ),
            content().prop_map(|c| json!({"role": "tool", "tool_call_id": "call_a", "content": c})),
            content().prop_map(|c| json!({"role": "narrator", "content": c})),
        ];
        (base, extra()).prop_map(|(b, e)| with_extra(b, e))
    }

    proptest! {
        #[test]
        fn request_round_trip_is_lossless(
            messages in prop::collection::vec(message(), 0..5),
            top in extra(),
        ) {
            let v = with_extra(json!({"model": "m", "messages": messages, "stream": true, "tools": [{"type": "function"}]}), top);
            let parsed: ChatRequest = serde_json::from_value(v.clone()).unwrap();
            let back = serde_json::to_value(&parsed).unwrap();
            prop_assert_eq!(&back, &v);
            let again: ChatRequest = serde_json::from_value(back).unwrap();
            prop_assert_eq!(again, parsed);
        }
    }

    #[test]
    fn roles_are_typed() {
        let v = json!({"model": "m", "messages": [
            {"role": "tool", "tool_call_id": "c", "content": "x"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "wizard", "content": "?"}
        ]});
        let parsed: ChatRequest = serde_json::from_value(v).unwrap();
        assert!(
            matches!(parsed.messages[0].known(), Some(ChatMessage::Tool { tool_call_id, .. }) if tool_call_id == "c")
        );
        assert!(matches!(
            parsed.messages[1].known(),
            Some(ChatMessage::Assistant {
                content: Field::Null,
                ..
            })
        ));
        assert!(parsed.messages[2].known().is_none());
    }
}
