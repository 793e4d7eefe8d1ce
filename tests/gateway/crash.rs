//! `kill -9` in the middle of a turn loses nothing once the harness sends its next request.

use std::time::Duration;

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

#[test]
fn kill_nine_during_a_turn_then_restart_loses_nothing() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    let headers = anthropic_headers("sk-crash");
    let mut history: Vec<Value> = Vec::new();
    let mut session_id = String::new();
    for turn in 0..3 {
        history.push(json!({"role": "user", "content": format!("step {turn}")}));
        upstream.push(Script::Text(format!("did {turn}")));
        let response = gateway.post(
            "/v1/messages",
            &view(&headers),
            &anthropic_body(Value::Array(history.clone()), false),
        );
        session_id = response.header("x-lore-session-id").unwrap().to_string();
        history.push(json!({"role": "assistant", "content": format!("did {turn}")}));
    }
    // Let the group-commit timer run once so the session itself is durable.
    std::thread::sleep(Duration::from_millis(300));

    // Turn 4 starts streaming slowly; the gateway dies in the middle of it.
    history.push(json!({"role": "user", "content": "step 3"}));
    upstream.push(Script::SlowStream {
        text: "a long reply that never arrives".into(),
        chunks: 6,
        interval: Duration::from_millis(300),
    });
    let url = gateway.url();
    let body = anthropic_body(Value::Array(history.clone()), true);
    let request_headers = headers.clone();
    let client = std::thread::spawn(move || {
        lore_test_support::http_client::post_json(&url, "/v1/messages", &request_headers, &body)
    });
    std::thread::sleep(Duration::from_millis(500));
    gateway.kill9();
    let interrupted = client.join().unwrap();
    assert!(
        !interrupted.complete || !interrupted.text().contains("message_stop"),
        "the turn really was interrupted"
    );

    // The harness retries the turn against the restarted gateway.
    gateway.restart();
    upstream.push(Script::Text("did 3".into()));
    let response = gateway.post(
        "/v1/messages",
        &view(&headers),
        &anthropic_body(Value::Array(history.clone()), false),
    );
    assert_eq!(response.status, 200);
    assert_eq!(
        response.header("x-lore-session-id"),
        Some(session_id.as_str()),
        "the same session resumes"
    );
    history.push(json!({"role": "assistant", "content": "did 3"}));

    eventually("the whole conversation", || {
        let transcript = gateway.transcript(&session_id);
        (transcript.len() == 8).then_some(transcript)
    });
    let transcript = gateway.transcript(&session_id);
    let expected: Vec<String> = (0..4)
        .flat_map(|turn| {
            [
                format!("user: step {turn}"),
                format!("assistant: did {turn}"),
            ]
        })
        .collect();
    assert_eq!(transcript, expected);
    assert_eq!(gateway.sessions().len(), 1);
}
