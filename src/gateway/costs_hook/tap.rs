//! Reads a reply's usage from the bytes on their way to the client, without holding any back:
//! SSE events that mention `"usage"` are parsed (Anthropic `message_start` and
//! `message_delta`, the last OpenAI Chat chunk, Responses `response.completed`), a JSON body is
//! parsed once at its end. The turn is recorded when the body ends or is dropped.

use std::pin::Pin;
use std::task::{Context, Poll};

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use awc::ClientResponse;
use bytes::Bytes;
use futures_util::Stream;
use lore_actors::costs::{CostTrackerHandle, RecordTurn};
use lore_proto::{Protocol, SseDecoder, Usage};
use serde::Deserialize;

type Boxed = Pin<Box<dyn Stream<Item = Result<Bytes, PayloadError>>>>;

#[derive(Deserialize, Default)]
struct Cached {
    cached_tokens: Option<u64>,
}

/// Every usage field of the three protocols.
#[derive(Deserialize, Default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<Cached>,
    input_tokens_details: Option<Cached>,
}

#[derive(Deserialize)]
struct Inner {
    usage: Option<WireUsage>,
}

/// Where usage sits in an event or a body.
#[derive(Deserialize)]
struct Probe {
    usage: Option<WireUsage>,
    message: Option<Inner>,
    response: Option<Inner>,
}

/// Adds what `wire` says to `usage` (later events overwrite earlier counts).
fn merge(usage: &mut Usage, protocol: Protocol, wire: &WireUsage) {
    match protocol {
        Protocol::Anthropic => {
            let fields = [
                (&mut usage.input_tokens, wire.input_tokens),
                (&mut usage.output_tokens, wire.output_tokens),
                (
                    &mut usage.cache_read_input_tokens,
                    wire.cache_read_input_tokens,
                ),
                (
                    &mut usage.cache_creation_input_tokens,
                    wire.cache_creation_input_tokens,
                ),
            ];
            for (field, value) in fields {
                if let Some(value) = value {
                    *field = value;
                }
            }
        }
        Protocol::OpenAiChat | Protocol::OpenAiResponses => {
            let (prompt, details, output) = match protocol {
                Protocol::OpenAiChat => (
                    wire.prompt_tokens,
                    &wire.prompt_tokens_details,
                    wire.completion_tokens,
                ),
                _ => (
                    wire.input_tokens,
                    &wire.input_tokens_details,
                    wire.output_tokens,
                ),
            };
            if let Some(prompt) = prompt {
                let cached = details.as_ref().and_then(|d| d.cached_tokens).unwrap_or(0);
                usage.input_tokens = prompt.saturating_sub(cached);
                usage.cache_read_input_tokens = cached;
            }
            if let Some(output) = output {
                usage.output_tokens = output;
            }
        }
    }
}

fn probe(usage: &mut Usage, protocol: Protocol, text: &[u8]) -> bool {
    let Ok(probe) = serde_json::from_slice::<Probe>(text) else {
        return false;
    };
    let wires = [
        probe.usage,
        probe.message.and_then(|m| m.usage),
        probe.response.and_then(|r| r.usage),
    ];
    let mut found = false;
    for wire in wires.iter().flatten() {
        merge(usage, protocol, wire);
        found = true;
    }
    found
}

enum Body {
    Sse(SseDecoder),
    Json(Vec<Bytes>),
}

/// The reply body on its way to the client.
struct Tap {
    inner: Payload<Boxed>,
    protocol: Protocol,
    body: Body,
    usage: Usage,
    record: Option<(CostTrackerHandle, RecordTurn)>,
}

impl Tap {
    fn observe(&mut self, chunk: &Bytes) {
        match &mut self.body {
            Body::Sse(decoder) => {
                for event in decoder.push(chunk) {
                    if event.data.contains("\"usage\"") {
                        probe(&mut self.usage, self.protocol, event.data.as_bytes());
                    }
                }
            }
            Body::Json(chunks) => chunks.push(chunk.clone()),
        }
    }

    fn finish(&mut self) {
        let Some((costs, mut turn)) = self.record.take() else {
            return;
        };
        match &mut self.body {
            Body::Sse(decoder) => {
                if let Some(event) = decoder.finish()
                    && event.data.contains("\"usage\"")
                {
                    probe(&mut self.usage, self.protocol, event.data.as_bytes());
                }
            }
            Body::Json(chunks) => {
                let whole: Vec<u8> = chunks.concat();
                probe(&mut self.usage, self.protocol, &whole);
            }
        }
        turn.usage = self.usage;
        turn.at_ms = lore_storage::now_ms();
        costs.record_turn(turn);
    }
}

impl Stream for Tap {
    type Item = Result<Bytes, PayloadError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                this.observe(&chunk);
                Poll::Ready(Some(Ok(chunk)))
            }
            Poll::Ready(Some(Err(err))) => {
                this.finish();
                Poll::Ready(Some(Err(err)))
            }
            Poll::Ready(None) => {
                this.finish();
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        // The client went away before the end: what was seen is still spent.
        self.finish();
    }
}

/// The reply with its body read through a [`Tap`].
pub(super) fn wrap(
    upstream: ClientResponse,
    protocol: Protocol,
    stream: bool,
    costs: CostTrackerHandle,
    turn: RecordTurn,
) -> ClientResponse {
    upstream.map_body(move |_, payload| {
        let tap = Tap {
            inner: payload,
            protocol,
            body: if stream {
                Body::Sse(SseDecoder::new())
            } else {
                Body::Json(Vec::new())
            },
            usage: Usage::default(),
            record: Some((costs, turn)),
        };
        let boxed: Boxed = Box::pin(tap);
        Payload::Stream { payload: boxed }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage_of(protocol: Protocol, events: &[&str]) -> Usage {
        let mut usage = Usage::default();
        for event in events {
            probe(&mut usage, protocol, event.as_bytes());
        }
        usage
    }

    #[test]
    fn anthropic_usage_comes_from_message_start_and_message_delta() {
        let usage = usage_of(
            Protocol::Anthropic,
            &[
                r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":12,"cache_read_input_tokens":900,"cache_creation_input_tokens":40,"output_tokens":1}}}"#,
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":77}}"#,
            ],
        );
        assert_eq!(
            usage,
            Usage {
                input_tokens: 12,
                output_tokens: 77,
                cache_read_input_tokens: 900,
                cache_creation_input_tokens: 40,
            }
        );
    }

    #[test]
    fn openai_usage_counts_cached_tokens_as_cache_reads() {
        let chat = usage_of(
            Protocol::OpenAiChat,
            &[
                r#"{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":600}}}"#,
            ],
        );
        assert_eq!(
            (
                chat.input_tokens,
                chat.cache_read_input_tokens,
                chat.output_tokens
            ),
            (400, 600, 20)
        );
        let responses = usage_of(
            Protocol::OpenAiResponses,
            &[
                r#"{"type":"response.completed","response":{"usage":{"input_tokens":50,"output_tokens":5,"input_tokens_details":{"cached_tokens":10}}}}"#,
            ],
        );
        assert_eq!(
            (
                responses.input_tokens,
                responses.cache_read_input_tokens,
                responses.output_tokens
            ),
            (40, 10, 5)
        );
    }

    #[test]
    fn events_without_usage_or_of_another_shape_change_nothing() {
        let usage = usage_of(
            Protocol::OpenAiResponses,
            &[
                r#"{"type":"error","message":"the usage is high"}"#,
                "not json",
                r#"{"type":"response.output_text.delta","delta":"usage"}"#,
            ],
        );
        assert_eq!(usage, Usage::default());
    }
}
