//! Relaying an upstream stream to the client, chunk by chunk, while rebuilding the reply.
//!
//! Each chunk is handed to the client the moment it arrives, byte for byte; a tee feeds an SSE
//! decoder and the protocol's stream accumulator. The reply is sent to the session actor when
//! the terminal event is seen (before that event is handed to the client, so the client's next
//! request always finds the reply stored), when the upstream ends or breaks, or when the client
//! goes away (the relay is dropped and the partial reply is stored). After `keepalive_after` of
//! upstream silence a keepalive is sent, but only between events, never inside one.
//!
//! When the session's context is managed, the client must be shown a usage under its own
//! auto-compaction threshold: the relay then hands the client each event as soon as it is
//! complete, re-encoded, with the usage of `message_start`/`message_delta` (or the Responses
//! events) scaled ([`lore_proto::rebuild::usage`]); every other field stays as it came.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix::Addr;
use actix_web::error::PayloadError;
use bytes::Bytes;
use futures_util::Stream;
use lore_actors::{SessionActor, TurnCompleted};
use lore_proto::rebuild::usage::scaled_event_data;
use lore_proto::{Protocol, SseDecoder, SseEvent, StreamAccumulator, new_accumulator};
use tokio::time::{Instant, Sleep};
use tracing::{debug, warn};

/// Where the rebuilt reply goes.
#[derive(Clone)]
pub struct Completion {
    /// The session's actor.
    pub session: Addr<SessionActor>,
    /// The turn the reply answers.
    pub turn: u64,
}

/// The relaying stream handed to actix-web as the response body.
pub struct Relay<S> {
    upstream: S,
    protocol: Protocol,
    decoder: SseDecoder,
    accumulator: Box<dyn StreamAccumulator>,
    completion: Option<Completion>,
    keepalive: Pin<Box<Sleep>>,
    keepalive_after: Duration,
    /// True once the protocol's terminal event went by.
    terminal_seen: bool,
    finished: bool,
    /// The most input tokens the client may be shown; `Some` relays event by event.
    usage_cap: Option<u64>,
}

impl<S> Relay<S>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    /// Wraps an upstream body stream.
    pub fn new(
        upstream: S,
        protocol: Protocol,
        completion: Option<Completion>,
        keepalive_after: Duration,
    ) -> Self {
        Self {
            upstream,
            protocol,
            decoder: SseDecoder::new(),
            accumulator: new_accumulator(protocol),
            completion,
            keepalive: Box::pin(tokio::time::sleep(keepalive_after)),
            keepalive_after,
            terminal_seen: false,
            finished: false,
            usage_cap: None,
        }
    }

    /// Shows the client at most `cap` input tokens in the usage it reports.
    pub fn with_usage_cap(mut self, cap: Option<u64>) -> Self {
        self.usage_cap = cap;
        self
    }

    fn complete(&mut self) {
        if let Some(completion) = self.completion.take() {
            let reply = self.accumulator.reply();
            completion.session.do_send(TurnCompleted {
                turn: completion.turn,
                reply,
                plan_used: true,
            });
        }
    }

    /// Feeds the accumulator; with a usage cap, answers the events re-encoded for the client.
    fn observe(&mut self, chunk: &[u8]) -> Option<Vec<u8>> {
        let mut out = self.usage_cap.map(|_| Vec::with_capacity(chunk.len() + 64));
        for event in self.decoder.push(chunk) {
            self.accumulator.push(&event);
            if is_terminal(self.protocol, &event) {
                self.terminal_seen = true;
                self.complete();
            }
            if let (Some(out), Some(cap)) = (out.as_mut(), self.usage_cap) {
                out.extend_from_slice(self.shown(event, cap).as_bytes());
            }
        }
        out
    }

    /// The event as the client sees it: its usage scaled under the cap.
    fn shown(&self, mut event: SseEvent, cap: u64) -> String {
        if let Ok(Some(data)) = scaled_event_data(self.protocol, &event.data, cap) {
            event.data = data;
        }
        event.encode()
    }
}

impl<S> Stream for Relay<S>
where
    S: Stream<Item = Result<Bytes, PayloadError>> + Unpin,
{
    type Item = Result<Bytes, actix_web::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.finished {
            return Poll::Ready(None);
        }
        loop {
            match Pin::new(&mut this.upstream).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    let deadline = Instant::now() + this.keepalive_after;
                    this.keepalive.as_mut().reset(deadline);
                    match this.observe(&chunk) {
                        None => return Poll::Ready(Some(Ok(chunk))),
                        // Event by event: nothing complete yet, read on.
                        Some(events) if events.is_empty() => continue,
                        Some(events) => return Poll::Ready(Some(Ok(Bytes::from(events)))),
                    }
                }
                Poll::Ready(Some(Err(err))) => {
                    this.finished = true;
                    warn!(error = %err, "upstream stream broke");
                    let at_boundary = this.decoder.is_at_boundary();
                    this.complete();
                    if at_boundary {
                        let event = error_event(
                            this.protocol,
                            &format!(
                                "the upstream stream broke before the reply was complete: {err}"
                            ),
                        );
                        return Poll::Ready(Some(Ok(event)));
                    }
                    return Poll::Ready(Some(Err(actix_web::error::ErrorBadGateway(
                        err.to_string(),
                    ))));
                }
                Poll::Ready(None) => {
                    this.finished = true;
                    let at_boundary = this.decoder.is_at_boundary();
                    let mut tail = None;
                    if let Some(event) = this.decoder.finish() {
                        this.accumulator.push(&event);
                        this.terminal_seen |= is_terminal(this.protocol, &event);
                        if let Some(cap) = this.usage_cap {
                            tail = Some(this.shown(event, cap));
                        }
                    }
                    this.complete();
                    if let Some(tail) = tail {
                        return Poll::Ready(Some(Ok(Bytes::from(tail))));
                    }
                    if this.terminal_seen || !at_boundary {
                        return Poll::Ready(None);
                    }
                    // The upstream closed without finishing the reply: tell the client so it does
                    // not take a truncated answer for a whole one.
                    warn!("upstream stream ended before its terminal event");
                    let event = error_event(
                        this.protocol,
                        "the upstream stream ended before the reply was complete",
                    );
                    return Poll::Ready(Some(Ok(event)));
                }
                Poll::Pending => {
                    if this.keepalive.as_mut().poll(cx).is_ready() {
                        let deadline = Instant::now() + this.keepalive_after;
                        this.keepalive.as_mut().reset(deadline);
                        // Re-register the timer with the waker before returning.
                        let _ = this.keepalive.as_mut().poll(cx);
                        if this.decoder.is_at_boundary() {
                            debug!("upstream silent; keepalive sent");
                            return Poll::Ready(Some(Ok(keepalive_bytes(this.protocol))));
                        }
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

impl<S> Drop for Relay<S> {
    fn drop(&mut self) {
        // The client went away (or the response was dropped) before the end: keep what came.
        if let Some(completion) = self.completion.take() {
            let reply = self.accumulator.reply();
            debug!(
                complete = reply.complete,
                "stream ended early; storing the partial reply"
            );
            completion.session.do_send(TurnCompleted {
                turn: completion.turn,
                reply,
                plan_used: true,
            });
        }
    }
}

/// True for the event that ends a reply in each protocol.
fn is_terminal(protocol: Protocol, event: &SseEvent) -> bool {
    match protocol {
        Protocol::Anthropic => {
            event.event.as_deref() == Some("message_stop")
                || (event.event.is_none() && event.data.contains("\"message_stop\""))
        }
        Protocol::OpenAiChat => event.data.trim() == "[DONE]",
        Protocol::OpenAiResponses => matches!(
            event.event.as_deref(),
            Some("response.completed" | "response.failed" | "response.incomplete")
        ),
    }
}

/// What keeps a quiet stream alive in each protocol.
pub(crate) fn keepalive_bytes(protocol: Protocol) -> Bytes {
    match protocol {
        Protocol::Anthropic => Bytes::from_static(b"event: ping\ndata: {\"type\": \"ping\"}\n\n"),
        Protocol::OpenAiChat | Protocol::OpenAiResponses => Bytes::from_static(b": keepalive\n\n"),
    }
}

/// An error event in the protocol's own stream shape.
pub(crate) fn error_event(protocol: Protocol, message: &str) -> Bytes {
    let escaped = serde_json::Value::String(message.to_string()).to_string();
    let text = match protocol {
        Protocol::Anthropic => format!(
            "event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"api_error\",\"message\":{escaped}}}}}\n\n"
        ),
        Protocol::OpenAiChat => {
            format!("data: {{\"error\":{{\"message\":{escaped},\"type\":\"api_error\"}}}}\n\n")
        }
        Protocol::OpenAiResponses => format!(
            "event: error\ndata: {{\"type\":\"error\",\"code\":\"upstream_error\",\"message\":{escaped}}}\n\n"
        ),
    };
    Bytes::from(text)
}

/// A response body that holds a value (the request's in-flight mark on the activity board)
/// until the body has been sent to the end or dropped.
pub struct HeldWhileStreaming<S, H> {
    inner: S,
    _held: Option<H>,
}

impl<S, H> HeldWhileStreaming<S, H> {
    /// Wraps `inner`, holding `held` as long as it lives.
    pub fn new(inner: S, held: Option<H>) -> Self {
        Self { inner, _held: held }
    }
}

impl<S, H> Stream for HeldWhileStreaming<S, H>
where
    S: Stream + Unpin,
    H: Unpin,
{
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(None) = polled {
            self._held = None;
        }
        polled
    }
}
