//! Owns the lossless wire types of Responses requests and of the items shared by `input` and
//! `output`. Unknown fields, item types and content part types are kept verbatim.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::{Extra, Field, Tolerant};

/// A `POST /v1/responses` request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesRequest {
    /// Model name.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub model: Field<String>,
    /// A string or items.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub input: Field<Input>,
    /// System instructions.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub instructions: Field<String>,
    /// Server-side conversation continuation.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub previous_response_id: Field<String>,
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

/// The `input` of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Input {
    /// A single user message.
    Text(String),
    /// Items.
    Items(Vec<Tolerant<Item>>),
}

/// An input or output item. Messages without a `type` (the short form) stay
/// [`Tolerant::Unknown`], which keeps them verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item {
    /// A message.
    Message {
        /// `user`, `assistant`, `system` or `developer`.
        role: String,
        /// A string or parts.
        content: ItemContent,
        /// Unknown fields (`id`, `status`, ...).
        #[serde(flatten)]
        extra: Extra,
    },
    /// A function tool call.
    FunctionCall {
        /// Call id.
        call_id: String,
        /// Function name.
        name: String,
        /// JSON text of the arguments.
        arguments: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// The output of a function call.
    FunctionCallOutput {
        /// The call answered.
        call_id: String,
        /// A string or content parts.
        output: Value,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Reasoning, with summaries and possibly encrypted content.
    Reasoning {
        /// Summary parts.
        #[serde(default, skip_serializing_if = "Field::is_absent")]
        summary: Field<Vec<Tolerant<ContentPart>>>,
        /// Opaque reasoning state.
        #[serde(default, skip_serializing_if = "Field::is_absent")]
        encrypted_content: Field<String>,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
}

/// Message content as a string or parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ItemContent {
    /// A plain string.
    Text(String),
    /// Content parts.
    Parts(Vec<Tolerant<ContentPart>>),
}

/// A content part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// User-side text.
    InputText {
        /// The text.
        text: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// Model-side text.
    OutputText {
        /// The text.
        text: String,
        /// Unknown fields (`annotations`, `logprobs`, ...).
        #[serde(flatten)]
        extra: Extra,
    },
    /// A refusal.
    Refusal {
        /// The refusal text.
        refusal: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
    /// A reasoning summary.
    SummaryText {
        /// The text.
        text: String,
        /// Unknown fields.
        #[serde(flatten)]
        extra: Extra,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::testgen::{extra, json_value, with_extra};
    use proptest::prelude::*;
    use serde_json::json;

    fn part() -> impl Strategy<Value = Value> {
        let base = prop_oneof![
            "[a-z ]{0,8}".prop_map(|t| json!({"type": "input_text", "text": t})),
            "[a-z ]{0,8}"
                .prop_map(|t| json!({"type": "output_text", "text": t, "annotations": []})),
            Just(json!({"type": "input_image", "image_url": "data:,"})),
            ("[a-z]{3,8}_part", json_value()).prop_map(|(t, v)| json!({"type": t, "v": v})),
        ];
        (base, extra()).prop_map(|(b, e)| with_extra(b, e))
    }

    fn item() -> impl Strategy<Value = Value> {
        let content = prop_oneof![
            "[a-z ]{0,8}".prop_map(Value::String),
            prop::collection::vec(part(), 0..3).prop_map(Value::Array),
        ];
        let base = prop_oneof![
            (prop_oneof![Just("user"), Just("assistant"), Just("developer")], content.clone())
                .prop_map(|(r, c)| json!({"type": "message", "role": r, "content": c})),
            content.prop_map(|c| json!({"role": "user", "content": c})),
            json_value().prop_map(|a| json!({"type": "function_call", "call_id": "c", "name": "f", "arguments": a.to_string()})),
            json_value().prop_map(|o| json!({"type": "function_call_output", "call_id": "c", "output": o})),
            Just(json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}], "encrypted_content": null})),
            ("[a-z]{3,8}_call", json_value()).prop_map(|(t, v)| json!({"type": t, "v": v})),
        ];
        (base, extra()).prop_map(|(b, e)| with_extra(b, e))
    }

    proptest! {
        #[test]
        fn request_round_trip_is_lossless(
            input in prop_oneof!["[a-z]{0,5}".prop_map(Value::String), prop::collection::vec(item(), 0..5).prop_map(Value::Array)],
            top in extra(),
        ) {
            let v = with_extra(json!({"model": "m", "input": input, "instructions": "i", "previous_response_id": null, "tools": []}), top);
            let parsed: ResponsesRequest = serde_json::from_value(v.clone()).unwrap();
            let back = serde_json::to_value(&parsed).unwrap();
            prop_assert_eq!(&back, &v);
            let again: ResponsesRequest = serde_json::from_value(back).unwrap();
            prop_assert_eq!(again, parsed);
        }
    }

    #[test]
    fn items_are_typed() {
        let v = json!({"input": [
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}", "id": "fc_1"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]},
            {"role": "user", "content": "short form"}
        ]});
        let parsed: ResponsesRequest = serde_json::from_value(v).unwrap();
        let Field::Value(Input::Items(items)) = &parsed.input else {
            panic!("no items")
        };
        assert!(
            matches!(items[0].known(), Some(Item::FunctionCall { extra, .. }) if extra.contains_key("id"))
        );
        assert!(matches!(items[1].known(), Some(Item::Message { .. })));
        assert!(items[2].known().is_none());
    }
}
