//! The request path's calls into the cost tracker, until the session actor makes them: the
//! throttle sleep before a conversation request is forwarded ([`throttle`]), and the usage of
//! the reply ([`on_reply`]) and of each recall follow-up ([`on_follow_up`]) when it has been
//! read.
//!
//! Before capture has resolved the session, the throttle keys "time since the previous
//! request" by the client's credential fingerprint, and estimates the prompt as a quarter of
//! the body's bytes. The reply's usage is read from the bytes the client gets ([`tap`]), so
//! nothing is held back. Without a budget and without an OAuth bearer no message is sent
//! before forwarding.

mod tap;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use actix_web::http::header::HeaderMap;
use awc::ClientResponse;
use lore_actors::costs::pricing::estimate_request_cost;
use lore_actors::costs::{Bearer, PlanThrottle, RecordTurn};
use lore_proto::Protocol;
use tracing::info;

use crate::gateway::header_str;
use crate::gateway::identity::credential_fingerprint;
use crate::gateway::turn::Turn;
use crate::server::AppState;

/// The cache lifetime of a request that does not ask for one hour.
const DEFAULT_TTL: Duration = Duration::from_secs(300);
/// The cache lifetime of a request with `"ttl": "1h"` breakpoints.
const ONE_HOUR_TTL: Duration = Duration::from_secs(3_600);
/// Clients remembered; past this, those quiet for over an hour are forgotten.
const REMEMBERED_CLIENTS: usize = 4_096;

/// When each client (by credential fingerprint) last sent a request.
#[derive(Debug, Default)]
pub struct HookState {
    recent: Mutex<HashMap<String, Instant>>,
}

impl HookState {
    /// Time since `key`'s previous request (`Duration::MAX` for its first), and now is noted.
    fn since_last(&self, key: &str) -> Duration {
        let now = Instant::now();
        let mut recent = self
            .recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if recent.len() >= REMEMBERED_CLIENTS {
            recent.retain(|_, at| now.duration_since(*at) < ONE_HOUR_TTL);
        }
        recent
            .insert(key.to_string(), now)
            .map_or(Duration::MAX, |at| now.duration_since(at))
    }
}

/// True when the body asks for 1-hour cache entries (`"ttl": "1h"` on a breakpoint).
fn asks_one_hour(body: &[u8]) -> bool {
    memchr::memmem::find_iter(body, b"\"ttl\"").any(|at| {
        let rest = &body[at + 5..];
        let rest = rest.trim_ascii_start();
        rest.strip_prefix(b":")
            .is_some_and(|rest| rest.trim_ascii_start().starts_with(b"\"1h\""))
    })
}

/// Sleeps as long as the cost tracker says before a conversation request is forwarded.
pub(crate) async fn throttle(
    state: &AppState,
    headers: &HeaderMap,
    model: Option<&str>,
    body: &[u8],
) {
    let Some(costs) = &state.costs else {
        return;
    };
    let bearer = header_str(headers, "authorization").and_then(Bearer::from_authorization);
    if !costs.wants_plan(bearer.is_some()) {
        return;
    }
    let key = credential_fingerprint(|name| header_str(headers, name));
    let since_last_request = state.costs_hook.since_last(&key);
    let price = costs.catalogue().lookup(model.unwrap_or("")).price;
    let plan = PlanThrottle {
        session_id: key,
        bearer,
        ttl: if asks_one_hour(body) {
            ONE_HOUR_TTL
        } else {
            DEFAULT_TTL
        },
        since_last_request,
        estimated_cost_usd: estimate_request_cost(&price, body.len() as u64 / 4),
    };
    let throttle = costs.plan(plan);
    if !throttle.delay.is_zero() {
        info!(
            delay_ms = throttle.delay.as_millis() as u64,
            reason = %throttle.reason,
            "request throttled"
        );
        actix_rt::time::sleep(throttle.delay).await;
    }
}

/// Wraps a successful reply so its usage goes to the cost tracker once it has been relayed.
pub(crate) fn on_reply(
    state: &AppState,
    upstream: ClientResponse,
    protocol: Protocol,
    turn: Option<&Turn>,
    model: Option<&str>,
    sent: &[u8],
) -> ClientResponse {
    // Without a plan of the context manager, what went is what the client sent.
    let bytes_estimate = sent.len() as u64 / 4;
    let plan = turn
        .map(|turn| &turn.plan)
        .filter(|plan| plan.client_tokens > 0);
    let record = RecordTurn {
        session_id: turn.map(|turn| turn.session_id.clone()).unwrap_or_default(),
        project: turn.and_then(|turn| turn.plan.project.clone()),
        model: model.unwrap_or_default().to_string(),
        usage: lore_proto::Usage::default(),
        one_hour_writes: asks_one_hour(sent),
        passthrough_tokens: plan.map_or(bytes_estimate, |plan| plan.client_tokens),
        sent_tokens: plan.map_or(bytes_estimate, |plan| plan.sent_tokens),
        layer_changed: plan.is_some_and(|plan| plan.layer_changed),
        follow_up: false,
        at_ms: 0,
    };
    tapped(state, upstream, protocol, record)
}

/// Wraps the reply to a recall follow-up (the gateway's own extra call inside a turn) so its
/// usage is priced too, added to the session's cost without counting another turn. It claims
/// no savings: a passthrough
/// proxy would not have sent it, so its prompt counts as neither sent nor saved.
pub(crate) fn on_follow_up(
    state: &AppState,
    upstream: ClientResponse,
    protocol: Protocol,
    session: (Option<&str>, Option<&str>),
    model: Option<&str>,
    sent: &[u8],
) -> ClientResponse {
    let (session_id, project) = session;
    let record = RecordTurn {
        session_id: session_id.unwrap_or_default().to_string(),
        project: project.map(str::to_string),
        model: model.unwrap_or_default().to_string(),
        usage: lore_proto::Usage::default(),
        one_hour_writes: asks_one_hour(sent),
        passthrough_tokens: 0,
        sent_tokens: 0,
        layer_changed: false,
        follow_up: true,
        at_ms: 0,
    };
    tapped(state, upstream, protocol, record)
}

/// `upstream` with its body read through the usage tap, when there is a tracker and the reply
/// succeeded.
fn tapped(
    state: &AppState,
    upstream: ClientResponse,
    protocol: Protocol,
    record: RecordTurn,
) -> ClientResponse {
    let Some(costs) = state.costs.clone() else {
        return upstream;
    };
    if !upstream.status().is_success() {
        return upstream;
    }
    let stream = upstream
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    tap::wrap(upstream, protocol, stream, costs, record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hour_breakpoints_are_recognised() {
        assert!(asks_one_hour(
            br#"{"cache_control":{"type":"ephemeral","ttl":"1h"}}"#
        ));
        assert!(asks_one_hour(br#"{"ttl" :  "1h"}"#));
        assert!(!asks_one_hour(br#"{"ttl":"5m"}"#));
        assert!(!asks_one_hour(br#"{"text":"ttl 1h"}"#));
        assert!(!asks_one_hour(br#"{"ttl""#));
    }

    #[test]
    fn the_first_request_of_a_client_has_no_previous_one() {
        let state = HookState::default();
        assert_eq!(state.since_last("a"), Duration::MAX);
        assert!(state.since_last("a") < Duration::from_secs(1));
        assert_eq!(state.since_last("b"), Duration::MAX);
    }
}
