//! Owns the lossless wire types of Chat Completions responses: the non-streaming completion,
//! the streaming chunk and the `[DONE]` sentinel.

use serde::{Deserialize, Serialize};

use super::request::{ChatContent, ToolCall};
use crate::error::ProtoError;
use crate::wire::{Extra, Field, Tolerant};

/// A non-streaming `chat.completion` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletion {
    /// Completion id.
    pub id: String,
    /// Model that answered.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub model: Field<String>,
    /// Choices (usually one).
    pub choices: Vec<Tolerant<Choice>>,
    /// Token usage.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub usage: Field<Tolerant<ChatUsage>>,
    /// Unknown fields (`object`, `created`, `system_fingerprint`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// One choice of a completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// Choice index.
    pub index: u64,
    /// The assistant message.
    pub message: ResponseMessage,
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub finish_reason: Field<String>,
    /// Unknown fields (`logprobs`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// The message of a choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseMessage {
    /// Always `assistant`.
    pub role: String,
    /// The text.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub content: Field<ChatContent>,
    /// Tool calls.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub tool_calls: Field<Vec<Tolerant<ToolCall>>>,
    /// Unknown fields (`refusal`, `reasoning_content`, `annotations`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// Chat token usage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatUsage {
    /// Prompt tokens, cached ones included.
    pub prompt_tokens: u64,
    /// Generated tokens.
    pub completion_tokens: u64,
    /// Unknown fields (`total_tokens`, `prompt_tokens_details`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// A streaming `chat.completion.chunk`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatChunk {
    /// Completion id.
    pub id: String,
    /// Model.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub model: Field<String>,
    /// Choice deltas (empty in the final usage chunk).
    pub choices: Vec<Tolerant<ChunkChoice>>,
    /// Usage, in the final chunk when requested.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub usage: Field<Tolerant<ChatUsage>>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One choice of a chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice {
    /// Choice index.
    pub index: u64,
    /// What this chunk adds.
    pub delta: Delta,
    /// Why generation stopped (last chunk of the choice).
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub finish_reason: Field<String>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The delta of a chunk choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// Role, in the first chunk.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub role: Field<String>,
    /// A text fragment.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub content: Field<String>,
    /// Tool call fragments.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub tool_calls: Field<Vec<Tolerant<DeltaToolCall>>>,
    /// Unknown fields (`reasoning_content`, `refusal`, ...).
    #[serde(flatten)]
    pub extra: Extra,
}

/// A tool call fragment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeltaToolCall {
    /// Which call this extends.
    pub index: u64,
    /// Call id, in the first fragment.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub id: Field<String>,
    /// Name and arguments fragments.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub function: Field<DeltaFunction>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// A function fragment of a tool call fragment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeltaFunction {
    /// Name, in the first fragment.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub name: Field<String>,
    /// A fragment of the arguments JSON text.
    #[serde(default, skip_serializing_if = "Field::is_absent")]
    pub arguments: Field<String>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The data of one Chat streaming event.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamData {
    /// The `[DONE]` sentinel.
    Done,
    /// A chunk (or unknown JSON, kept verbatim).
    Chunk(Box<Tolerant<ChatChunk>>),
}

impl StreamData {
    /// Parses the `data` of a streaming event.
    pub fn parse(data: &str) -> Result<Self, ProtoError> {
        if data.trim() == "[DONE]" {
            return Ok(StreamData::Done);
        }
        Ok(StreamData::Chunk(Box::new(serde_json::from_str(data)?)))
    }

    /// The `data` text of the event.
    pub fn to_data(&self) -> Result<String, ProtoError> {
        match self {
            StreamData::Done => Ok("[DONE]".to_owned()),
            StreamData::Chunk(chunk) => Ok(serde_json::to_string(chunk)?),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn completion_round_trip() {
        let v = json!({"id": "c", "object": "chat.completion", "model": "g", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": null, "refusal": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, "logprobs": null, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7, "prompt_tokens_details": {"cached_tokens": 0}}});
        let parsed: ChatCompletion = serde_json::from_value(v.clone()).unwrap();
        assert!(parsed.choices[0].known().is_some());
        assert_eq!(serde_json::to_value(&parsed).unwrap(), v);
    }

    #[test]
    fn stream_data_round_trip() {
        let cases = [
            r#"{"id":"c","object":"chat.completion.chunk","model":"g","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":"r"},"finish_reason":null}]}"#,
            r#"{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"finish_reason":null}]}"#,
            r#"{"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}"#,
            r#"{"error":{"message":"boom"}}"#,
        ];
        for data in cases {
            let parsed = StreamData::parse(data).unwrap();
            let back: Value = serde_json::from_str(&parsed.to_data().unwrap()).unwrap();
            assert_eq!(back, serde_json::from_str::<Value>(data).unwrap());
        }
        assert_eq!(StreamData::parse(" [DONE]").unwrap(), StreamData::Done);
    }
}
