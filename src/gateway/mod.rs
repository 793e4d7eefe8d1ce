//! The gateway: everything on the path of an LLM call.
//!
//! - [`handlers`]: the LLM routes (parse, identify, capture, forward, relay).
//! - [`classify`]: what a request is before the pipeline sees it (turn, side channel, meta,
//!   `/lore:` command, compaction).
//! - [`intercept`]: the requests that are no turn: proxied untouched or answered by the gateway.
//! - [`compaction`]: summaries for the harnesses' compaction, from the observation logs.
//! - [`synthetic`]: replies the gateway writes itself, in the client's protocol.
//! - [`websocket`]: the Responses API over WebSocket, bridged to the upstream's HTTP stream.
//! - [`turn`]: the request parsed once and handed to its session, which answers what to send.
//! - [`parse_memo`]: each conversation's latest parse, so a turn parses only what changed.
//! - [`overflow`]: "prompt is too long" answers, their ratio, and the note of what Lore tried.
//! - [`costs_hook`]: the throttle sleep before forwarding and the reply's usage for the cost
//!   tracker.
//! - [`passthrough`]: every other path, proxied untouched.
//! - [`forward`]: the upstream client and its retries.
//! - [`relay`]: chunk-by-chunk relaying with a tee into the stream accumulator.
//! - [`recall`]: the `recall` tool: injection, markers, in-stream follow-ups.
//! - [`upstream`]: which upstream a request goes to.
//! - [`headers`]: which headers cross the gateway.
//! - [`identity`]: session headers, fingerprints and project attribution.
//! - [`worker_route`]: where a session's worker calls go, with which credential.
//! - [`access`]: the gateway token of remote mode and the management API's loopback checks.

pub mod access;
pub mod classify;
pub mod compaction;
pub mod costs_hook;
pub mod forward;
pub mod handlers;
pub mod headers;
pub mod identity;
pub mod intercept;
pub mod overflow;
pub mod parse_memo;
pub mod passthrough;
pub mod recall;
pub mod relay;
pub mod synthetic;
pub mod turn;
pub mod upstream;
pub mod websocket;
pub mod worker_route;

use actix_web::http::header::HeaderMap;

/// A header's value as text, if present and valid.
pub fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}
