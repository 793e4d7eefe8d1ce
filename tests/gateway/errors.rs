//! Upstream errors relayed faithfully, retries before the first byte, and an unreachable
//! upstream reported clearly.

use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

use crate::helpers::*;

#[test]
fn rate_limits_are_relayed_with_their_headers_and_not_retried() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    upstream.push(Script::Error {
        status: 429,
        body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        headers: vec![
            ("retry-after".into(), "7".into()),
            ("anthropic-ratelimit-requests-remaining".into(), "0".into()),
            ("request-id".into(), "req_429".into()),
        ],
    });
    let response = gateway.post(
        "/v1/messages",
        &view(&anthropic_headers("k")),
        &anthropic_body(json!([{"role": "user", "content": "x"}]), true),
    );
    assert_eq!(response.status, 429);
    assert_eq!(response.header("retry-after"), Some("7"));
    assert_eq!(
        response.header("anthropic-ratelimit-requests-remaining"),
        Some("0")
    );
    assert_eq!(response.header("request-id"), Some("req_429"));
    assert_eq!(response.json()["error"]["message"], "slow down");
    assert_eq!(
        upstream.requests().len(),
        1,
        "a 429 is the client's to retry"
    );
}

#[test]
fn unavailable_upstreams_are_retried_before_the_first_byte() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    for status in [503, 502] {
        upstream.push(Script::Error {
            status,
            body: json!({"error": {"message": "overloaded"}}),
            headers: vec![("retry-after".into(), "0".into())],
        });
    }
    upstream.push(Script::Text("finally".into()));
    let response = gateway.post(
        "/v1/chat/completions",
        &[("authorization", "Bearer k")],
        &chat_body(json!([{"role": "user", "content": "x"}]), false),
    );
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(
        response.json()["choices"][0]["message"]["content"],
        "finally"
    );
    assert_eq!(upstream.requests().len(), 3);
    // Every attempt carried the same body.
    let bodies: Vec<_> = upstream.requests().iter().map(|r| r.body.clone()).collect();
    assert!(bodies.windows(2).all(|pair| pair[0] == pair[1]));
}

#[test]
fn retries_are_bounded_and_the_last_error_is_relayed() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_UPSTREAM_RETRY_MAX_ATTEMPTS", "2")],
    );
    for _ in 0..3 {
        upstream.push(Script::Error {
            status: 503,
            body: json!({"error": {"message": "still overloaded"}}),
            headers: vec![],
        });
    }
    let response = gateway.post(
        "/v1/chat/completions",
        &[("authorization", "Bearer k")],
        &chat_body(json!([{"role": "user", "content": "x"}]), false),
    );
    assert_eq!(response.status, 503);
    assert_eq!(response.json()["error"]["message"], "still overloaded");
    assert_eq!(upstream.requests().len(), 2);
}

#[test]
fn an_unreachable_upstream_gets_a_clear_error_in_the_client_protocol() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gateway = Gateway::start_with(
        &format!("http://127.0.0.1:{closed}"),
        &[("LORE_UPSTREAM_RETRY_MAX_ATTEMPTS", "2")],
    );
    let response = gateway.post(
        "/v1/messages",
        &view(&anthropic_headers("k")),
        &anthropic_body(json!([{"role": "user", "content": "x"}]), false),
    );
    assert_eq!(response.status, 502);
    let body = response.json();
    assert_eq!(body["type"], "error");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("could not reach the upstream")
            && message.contains("LORE_UPSTREAM_ANTHROPIC"),
        "{message}"
    );
    let response = gateway.post(
        "/v1/chat/completions",
        &[],
        &chat_body(json!([{"role": "user", "content": "x"}]), false),
    );
    assert_eq!(response.status, 502);
    assert!(
        response.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("could not reach")
    );
}

#[test]
fn a_bad_upstream_override_is_refused_with_the_reason() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let mut headers = view(&anthropic_headers("k"));
    headers.push(("x-lore-upstream-url", "https://user:secret@example.com"));
    let response = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(json!([{"role": "user", "content": "x"}]), false),
    );
    assert_eq!(response.status, 400);
    assert!(
        response.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("credentials")
    );
    assert!(upstream.requests().is_empty());
}
