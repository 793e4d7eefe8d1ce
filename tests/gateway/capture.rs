//! Capture: every message stored exactly once, forks recorded, `x-lore-no-store` honoured, and
//! requests the gateway cannot understand forwarded unchanged.

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

/// Plays a conversation of `turns` turns the way a harness does: the whole history every time.
fn converse(
    gateway: &Gateway,
    upstream: &FakeUpstream,
    headers: &[(&str, &str)],
    turns: usize,
) -> Vec<Value> {
    let mut history: Vec<Value> = Vec::new();
    for turn in 0..turns {
        history.push(
            json!({"role": "user", "content": format!("turn {turn}: please do step {turn}")}),
        );
        upstream.push(Script::Text(format!("done with step {turn}")));
        let stream = turn % 2 == 0;
        let response = gateway.post(
            "/v1/messages",
            headers,
            &anthropic_body(Value::Array(history.clone()), stream),
        );
        assert_eq!(response.status, 200, "{}", response.text());
        history.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("done with step {turn}")}]}));
    }
    history
}

#[test]
fn a_fifty_turn_conversation_is_stored_exactly_once() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let headers = anthropic_headers("sk-fifty");
    converse(&gateway, &upstream, &view(&headers), 50);
    let session = single_session_with(&gateway, 100);
    let detail = gateway.session(session["id"].as_str().unwrap());
    assert_eq!(detail["session"]["forks"], 0);
    let messages = detail["messages"].as_array().unwrap();
    let seqs: Vec<u64> = messages
        .iter()
        .map(|m| m["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(
        seqs,
        (0..100).collect::<Vec<_>>(),
        "no message was written twice"
    );
    for (index, message) in messages.iter().enumerate() {
        let turn = index / 2;
        let expected = if index % 2 == 0 {
            format!("turn {turn}: please do step {turn}")
        } else {
            format!("done with step {turn}")
        };
        assert_eq!(message["text"], expected);
    }
    // Replies were captured from the upstream's answer, then recognised when resent.
    assert_eq!(messages[1]["source"], "response");
    assert_eq!(messages[2]["source"], "request");
}

#[test]
fn a_rewritten_history_is_recorded_as_a_fork_not_an_overwrite() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let headers = anthropic_headers("sk-fork");
    let history = converse(&gateway, &upstream, &view(&headers), 3);
    // The user edits their second message: same first exchange, new second question.
    let mut edited: Vec<Value> = history[..2].to_vec();
    edited.push(json!({"role": "user", "content": "actually, do something else"}));
    upstream.push(Script::Text("ok, something else".into()));
    let response = gateway.post(
        "/v1/messages",
        &view(&headers),
        &anthropic_body(Value::Array(edited), false),
    );
    assert_eq!(response.status, 200);
    let session = single_session_with(&gateway, 4);
    let detail = gateway.session(session["id"].as_str().unwrap());
    assert_eq!(detail["session"]["forks"], 1);
    assert_eq!(detail["forks"][0]["at_position"], 2);
    assert_eq!(detail["forks"][0]["replaced_seqs"], json!([2, 3, 4, 5]));
    assert_eq!(
        gateway.transcript(session["id"].as_str().unwrap())[2],
        "user: actually, do something else"
    );
}

#[test]
fn no_store_requests_store_nothing() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let mut headers = view(&anthropic_headers("sk-private"));
    headers.push(("x-lore-no-store", "true"));
    let response = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(json!([{"role": "user", "content": "secret"}]), false),
    );
    assert_eq!(response.status, 200);
    assert!(response.header("x-lore-session-id").is_none());
    assert!(
        upstream.requests()[0].header("x-lore-no-store").is_none(),
        "x-lore-* never reaches the upstream"
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(gateway.sessions().is_empty());
}

#[test]
fn an_unfamiliar_request_is_forwarded_unchanged() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    upstream.push(Script::Error { status: 400, body: json!({"type": "error", "error": {"type": "invalid_request_error", "message": "messages: expected array"}}), headers: vec![] });
    // `messages` has a shape the gateway does not know: it must not block the call.
    let body = json!({"model": "claude-x", "max_tokens": 5, "messages": "not a list", "future_field": {"a": 1}});
    let response = gateway.post("/v1/messages", &view(&anthropic_headers("k")), &body);
    assert_eq!(response.status, 400);
    assert_eq!(
        response.json()["error"]["message"],
        "messages: expected array"
    );
    assert_eq!(
        upstream.requests()[0].body,
        serde_json::to_vec(&body).unwrap()
    );
}

#[test]
fn malformed_json_gets_a_clear_error_in_the_client_protocol() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let response = lore_test_support::http_client::request(
        &gateway.url(),
        "POST",
        "/v1/messages",
        &[("content-type", "application/json")],
        b"{\"model\": ",
    )
    .unwrap();
    assert_eq!(response.status, 400);
    let body = response.json();
    assert_eq!(body["type"], "error");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a valid JSON object"),
        "{body}"
    );
    let response = lore_test_support::http_client::request(
        &gateway.url(),
        "POST",
        "/v1/chat/completions",
        &[("content-type", "application/json")],
        b"[1,",
    )
    .unwrap();
    assert_eq!(response.status, 400);
    assert!(
        response.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a valid JSON object")
    );
    assert!(upstream.requests().is_empty());
}
