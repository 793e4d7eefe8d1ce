//! Owns the protocol-neutral entry points the gateway uses: which protocol a body speaks, the
//! fast request summary ([`CanonicalRequest`]), the rebuilt reply ([`Reply`]) and the streaming
//! accumulator trait, dispatching to the per-protocol modules.

use serde::{Deserialize, Serialize};

use crate::canonical::{Message, Usage};
use crate::error::ProtoError;
use crate::sse::{SseDecoder, SseEvent, looks_like_sse};
use crate::{anthropic, openai_chat, openai_responses};

/// A wire protocol spoken by a harness or a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions API.
    OpenAiChat,
    /// OpenAI Responses API.
    OpenAiResponses,
}

/// What the gateway needs from a request body, extracted fast with borrowed typed parsing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CanonicalRequest {
    /// The requested model.
    pub model: Option<String>,
    /// Whether a streaming reply was asked for.
    pub stream: bool,
    /// System prompt text: Anthropic `system`, OpenAI chat `system`/`developer` messages,
    /// Responses `instructions` plus system/developer input items; joined with `"\n"`.
    pub system: Option<String>,
    /// Conversation messages in order, system/developer messages excluded.
    pub messages: Vec<Message>,
    /// Number of tools offered.
    pub tool_count: usize,
    /// The `tools` array as the client sent it, when it holds at least one tool (the same text
    /// [`raw_tools`] reads, taken from the one parse of the body).
    pub tools_json: Option<String>,
    /// Responses `previous_response_id` (then `messages` holds only the new input).
    pub previous_response_id: Option<String>,
    /// For each of `messages`, the index of the element of the wire array (`messages`, or
    /// Responses `input`) it was read from; empty when there is no array (a Responses `input`
    /// string).
    pub items: Vec<u32>,
}

impl CanonicalRequest {
    /// Merges adjacent assistant messages, as the Responses API spreads one reply over several
    /// input items (reasoning, message, function calls); returns, for each merged message, the
    /// wire elements it covers. Other protocols keep one element per message.
    pub fn merge_adjacent_assistant(&mut self) -> Vec<Vec<u32>> {
        let messages = std::mem::take(&mut self.messages);
        let items = std::mem::take(&mut self.items);
        let mut merged: Vec<Message> = Vec::with_capacity(messages.len());
        let mut spans: Vec<Vec<u32>> = Vec::with_capacity(messages.len());
        for (n, message) in messages.into_iter().enumerate() {
            let item = items.get(n).copied();
            match merged.last_mut() {
                Some(previous)
                    if previous.role == crate::canonical::Role::Assistant
                        && message.role == crate::canonical::Role::Assistant =>
                {
                    previous.parts.extend(message.parts);
                    if let (Some(span), Some(item)) = (spans.last_mut(), item) {
                        span.push(item);
                    }
                }
                _ => {
                    merged.push(message);
                    spans.push(item.into_iter().collect());
                }
            }
        }
        self.messages = merged;
        self.items = spans
            .iter()
            .filter_map(|span| span.first().copied())
            .collect();
        spans
    }

    /// The wire elements of each message, one each (no merging).
    pub fn spans(&self) -> Vec<Vec<u32>> {
        self.items.iter().map(|item| vec![*item]).collect()
    }
}

/// Extracts a [`CanonicalRequest`] from a request body. Fails when the body is not a JSON object
/// or its messages have the wrong shape.
pub fn parse_request(protocol: Protocol, body: &[u8]) -> Result<CanonicalRequest, ProtoError> {
    match protocol {
        Protocol::Anthropic => anthropic::parse_request(body),
        Protocol::OpenAiChat => openai_chat::parse_request(body),
        Protocol::OpenAiResponses => openai_responses::parse_request(body),
    }
}

/// The two fields routing needs, read without building anything else.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestHead {
    /// The `model` field, if it is a string.
    pub model: Option<String>,
    /// The `stream` field (false when absent).
    pub stream: bool,
    /// Whether `tools` is a non-empty array (only then can the recall tool be added).
    pub has_tools: bool,
    /// Bytes of the `tools` value (the tool definitions' share of the prompt).
    pub tools_bytes: usize,
    /// Bytes of the system prompt (`system` or `instructions`).
    pub system_bytes: usize,
    /// Whether the request asks the provider to manage its context (Anthropic
    /// `context_management`).
    pub context_management: bool,
    /// The reply's token limit (`max_tokens`, `max_completion_tokens` or `max_output_tokens`).
    pub max_tokens: Option<u64>,
}

/// Reads `model`, `stream` and whether there are `tools` from a request body, skipping
/// everything else; one fast pass that
/// also proves the body is a JSON object. Used to route a request before it is parsed in full.
pub fn peek_head(body: &[u8]) -> Result<RequestHead, ProtoError> {
    // Values, not typed fields: a request with an odd `model` must still be forwarded.
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(default)]
        model: Option<serde_json::Value>,
        #[serde(default)]
        stream: Option<serde_json::Value>,
        #[serde(borrow, default)]
        tools: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default)]
        system: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default)]
        instructions: Option<&'a serde_json::value::RawValue>,
        #[serde(borrow, default)]
        context_management: Option<&'a serde_json::value::RawValue>,
        #[serde(default)]
        max_tokens: Option<serde_json::Value>,
        #[serde(default)]
        max_completion_tokens: Option<serde_json::Value>,
        #[serde(default)]
        max_output_tokens: Option<serde_json::Value>,
    }
    // A derived struct would also accept a JSON array; a request must be an object.
    let first = body.iter().find(|byte| !byte.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(ProtoError::InvalidShape(
            "the request body must be a JSON object".into(),
        ));
    }
    let head: Head<'_> = serde_json::from_slice(body)?;
    let has_tools = head.tools.is_some_and(|raw| {
        let text = raw.get().trim_start();
        text.starts_with('[') && !text[1..].trim_start().starts_with(']')
    });
    let size = |raw: Option<&serde_json::value::RawValue>| raw.map_or(0, |raw| raw.get().len());
    let max_tokens = [
        &head.max_tokens,
        &head.max_completion_tokens,
        &head.max_output_tokens,
    ]
    .into_iter()
    .find_map(|value| value.as_ref().and_then(serde_json::Value::as_u64));
    Ok(RequestHead {
        max_tokens,
        has_tools,
        tools_bytes: size(head.tools),
        system_bytes: size(head.system) + size(head.instructions),
        context_management: head
            .context_management
            .is_some_and(|raw| raw.get().trim() != "null"),
        model: head
            .model
            .as_ref()
            .and_then(serde_json::Value::as_str)
            .map(str::to_string),
        stream: head
            .stream
            .as_ref()
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false),
    })
}

/// The text of a `tools` array that holds at least one element; `None` for `[]`.
pub(crate) fn non_empty_tools(raw: &serde_json::value::RawValue) -> Option<String> {
    let text = raw.get();
    let inner = text.trim_start().strip_prefix('[')?;
    (!inner.trim_start().starts_with(']')).then(|| text.to_string())
}

/// The number of elements of a raw JSON array (0 when it is not one).
pub(crate) fn array_len(raw: &serde_json::value::RawValue) -> usize {
    serde_json::from_str::<Vec<serde::de::IgnoredAny>>(raw.get()).map_or(0, |items| items.len())
}

/// The final assistant reply rebuilt from a response (streaming or not).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    /// The assistant message; `None` if nothing was produced.
    pub message: Option<Message>,
    /// Token usage, normalised (see [`Usage`]).
    pub usage: Usage,
    /// Anthropic `stop_reason`, OpenAI chat `finish_reason`, or for Responses the final status
    /// (`completed`, `failed`) or the `incomplete_details.reason`.
    pub stop_reason: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// The provider's id of the response.
    pub id: Option<String>,
    /// True once the terminal event was seen, or for a parsed non-streaming body.
    pub complete: bool,
}

impl Reply {
    /// Whether the model stopped to have a client tool run: `stop_reason` is `tool_use` /
    /// `tool_calls`, or the reply holds a tool call and did not stop for another explicit reason
    /// (the Responses API reports `completed` even when the output contains a `function_call`).
    pub fn stopped_for_tool(&self) -> bool {
        match self.stop_reason.as_deref() {
            Some("tool_use" | "tool_calls" | "function_call") => true,
            Some("max_tokens" | "length" | "failed" | "error" | "content_filter" | "refusal") => {
                false
            }
            _ => self.message.as_ref().is_some_and(Message::has_tool_call),
        }
    }
}

/// Non-streaming response body to [`Reply`]. A body that looks like SSE (mislabelled) is decoded
/// as a stream instead.
pub fn parse_response(protocol: Protocol, body: &[u8]) -> Result<Reply, ProtoError> {
    if looks_like_sse(body) {
        let mut decoder = SseDecoder::new();
        let mut acc = new_accumulator(protocol);
        for event in decoder.push(body) {
            acc.push(&event);
        }
        if let Some(event) = decoder.finish() {
            acc.push(&event);
        }
        return Ok(acc.reply());
    }
    let value: serde_json::Value = serde_json::from_slice(body)?;
    if !value.is_object() {
        return Err(ProtoError::InvalidShape(
            "response body is not a json object".into(),
        ));
    }
    Ok(match protocol {
        Protocol::Anthropic => anthropic::reply_from_value(&value),
        Protocol::OpenAiChat => openai_chat::reply_from_value(&value),
        Protocol::OpenAiResponses => openai_responses::reply_from_value(&value),
    })
}

/// Rebuilds the reply from a stream of decoded SSE events.
pub trait StreamAccumulator: Send {
    /// Feeds one event; unknown or malformed events are ignored.
    fn push(&mut self, event: &SseEvent);
    /// The reply so far (partial if the stream was cut), usable at any time.
    fn reply(&self) -> Reply;
}

/// A fresh accumulator for a protocol's stream.
pub fn new_accumulator(protocol: Protocol) -> Box<dyn StreamAccumulator> {
    match protocol {
        Protocol::Anthropic => Box::<anthropic::Accumulator>::default(),
        Protocol::OpenAiChat => Box::<openai_chat::Accumulator>::default(),
        Protocol::OpenAiResponses => Box::<openai_responses::Accumulator>::default(),
    }
}

/// Reads a `u64` field of a JSON object, 0 when absent or not a number.
pub(crate) fn u64_at(v: &serde_json::Value, key: &str) -> u64 {
    v.get(key).and_then(serde_json::Value::as_u64).unwrap_or(0)
}

/// Reads a string field of a JSON object.
pub(crate) fn str_at<'a>(v: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(serde_json::Value::as_str)
}

/// Parses the JSON data of an event; `None` for empty or malformed data.
pub(crate) fn event_json(event: &SseEvent) -> Option<serde_json::Value> {
    let data = event.data.trim();
    if data.is_empty() {
        return None;
    }
    serde_json::from_str(data).ok()
}

#[cfg(test)]
mod head_tests {
    use super::*;

    #[test]
    fn head_reads_model_and_stream_only() {
        let head = peek_head(br#"{"messages":[{"role":"user","content":"x"}],"model":"claude-x","stream":true,"extra":{"a":[1,2]}}"#).unwrap();
        assert_eq!(
            head,
            RequestHead {
                model: Some("claude-x".into()),
                stream: true,
                has_tools: false,
                tools_bytes: 0,
                system_bytes: 0,
                context_management: false,
                max_tokens: None,
            }
        );
        let tools_json =
            |protocol: Protocol, body: &[u8]| parse_request(protocol, body).unwrap().tools_json;
        for protocol in [
            Protocol::Anthropic,
            Protocol::OpenAiChat,
            Protocol::OpenAiResponses,
        ] {
            assert_eq!(
                tools_json(
                    protocol,
                    br#"{"model":"m","tools":[{"name":"bash"}],"x":1}"#
                )
                .as_deref(),
                Some(r#"[{"name":"bash"}]"#)
            );
            assert_eq!(tools_json(protocol, br#"{"tools":[]}"#), None);
            assert_eq!(tools_json(protocol, br#"{"tools":null}"#), None);
            assert_eq!(tools_json(protocol, br#"{"messages":[]}"#), None);
        }
        let limit = |body: &[u8]| peek_head(body).unwrap().max_tokens;
        assert_eq!(limit(br#"{"max_tokens":256}"#), Some(256));
        assert_eq!(limit(br#"{"max_output_tokens":32000}"#), Some(32000));
        assert_eq!(limit(br#"{"max_completion_tokens":"x"}"#), None);
        let tools = |body: &[u8]| peek_head(body).unwrap().has_tools;
        assert!(tools(br#"{"tools":[{"name":"bash"}],"messages":[]}"#));
        assert!(tools(br#"{"tools": [ {"name":"bash"} ]}"#));
        assert!(!tools(br#"{"tools":[],"messages":[]}"#));
        assert!(!tools(br#"{"tools": [ ] }"#));
        assert!(!tools(br#"{"tools":null}"#));
        assert!(!tools(br#"{"messages":[{"tools":[1]}]}"#));
        let sized =
            peek_head(br#"{"system":"abcd","tools":[1,2],"context_management":{"edits":[]}}"#)
                .unwrap();
        assert_eq!((sized.system_bytes, sized.tools_bytes), (6, 5));
        assert!(sized.context_management);
        assert!(
            !peek_head(br#"{"context_management":null}"#)
                .unwrap()
                .context_management
        );
        assert_eq!(
            peek_head(br#"{"model":null}"#).unwrap(),
            RequestHead::default()
        );
        assert_eq!(
            peek_head(br#"{"model":"a\"b","stream":"yes"}"#)
                .unwrap()
                .model
                .as_deref(),
            Some("a\"b")
        );
        assert_eq!(
            peek_head(br#"{"model":5}"#).unwrap(),
            RequestHead::default()
        );
        assert!(peek_head(b"[1,2]").is_err());
        assert!(peek_head(b"{\"model\": ").is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::{Part, Role};

    fn reply(stop: Option<&str>, tool: bool) -> Reply {
        let mut parts = vec![Part::Text { text: "x".into() }];
        if tool {
            parts.push(Part::ToolCall {
                id: "c".into(),
                name: "n".into(),
                arguments: "{}".into(),
            });
        }
        Reply {
            message: Some(Message::new(Role::Assistant, parts)),
            stop_reason: stop.map(str::to_owned),
            ..Reply::default()
        }
    }

    #[test]
    fn stopped_for_tool_cases() {
        let cases = [
            (Some("tool_use"), false, true),
            (Some("tool_calls"), true, true),
            (Some("end_turn"), false, false),
            (Some("completed"), true, true),
            (Some("completed"), false, false),
            (Some("max_tokens"), true, false),
            (None, true, true),
        ];
        for (stop, tool, expected) in cases {
            assert_eq!(
                reply(stop, tool).stopped_for_tool(),
                expected,
                "{stop:?} {tool}"
            );
        }
    }

    #[test]
    fn parse_response_rejects_non_objects() {
        for p in [
            Protocol::Anthropic,
            Protocol::OpenAiChat,
            Protocol::OpenAiResponses,
        ] {
            assert!(parse_response(p, b"[1,2]").is_err());
            assert!(parse_response(p, b"not json").is_err());
            assert!(parse_request(p, b"[1,2]").is_err());
            assert!(parse_request(p, b"\"x\"").is_err());
        }
    }

    #[test]
    fn protocol_serde_names() {
        assert_eq!(
            serde_json::to_value(Protocol::OpenAiResponses).unwrap(),
            serde_json::json!("open_ai_responses")
        );
    }

    /// A ~1 MB conversation body in each protocol's shape.
    fn big_body(protocol: Protocol) -> Vec<u8> {
        use serde_json::json;
        let text = "fn main() { println!(\"hello\"); } // some code\n".repeat(20);
        let mut messages = Vec::new();
        for i in 0..500 {
            let m = match (protocol, i % 2) {
                (Protocol::OpenAiResponses, 0) => {
                    json!({"type": "function_call_output", "call_id": format!("c{i}"), "output": text})
                }
                (Protocol::OpenAiResponses, _) => {
                    json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
                }
                (Protocol::OpenAiChat, 0) => {
                    json!({"role": "tool", "tool_call_id": format!("c{i}"), "content": text})
                }
                (Protocol::OpenAiChat, _) => {
                    json!({"role": "assistant", "content": text, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]})
                }
                (Protocol::Anthropic, 0) => {
                    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("c{i}"), "content": text}]})
                }
                (Protocol::Anthropic, _) => {
                    json!({"role": "assistant", "content": [{"type": "text", "text": text}, {"type": "tool_use", "id": "c", "name": "f", "input": {"a": 1}}]})
                }
            };
            messages.push(m);
        }
        let key = if protocol == Protocol::OpenAiResponses {
            "input"
        } else {
            "messages"
        };
        let mut body = json!({"model": "m", "stream": true, "tools": [{"name": "f"}]});
        body[key] = serde_json::Value::Array(messages);
        serde_json::to_vec(&body).unwrap()
    }

    /// A large body (hundreds of messages) parses completely; speed is measured by
    /// `scripts/bench` (the 1 MB conversation row), not here.
    #[test]
    fn large_bodies_parse_completely() {
        for p in [
            Protocol::Anthropic,
            Protocol::OpenAiChat,
            Protocol::OpenAiResponses,
        ] {
            let body = big_body(p);
            let req = parse_request(p, &body).unwrap();
            assert_eq!(req.messages.len(), 500, "{p:?}");
            assert!(req.stream);
        }
    }
}
