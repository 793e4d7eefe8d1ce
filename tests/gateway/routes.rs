//! Every LLM route, streaming and not: the client gets the upstream's reply, the upstream gets
//! the client's body byte for byte, and the turn is captured.

use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

use crate::helpers::*;

#[test]
fn anthropic_messages_json_and_stream_are_relayed_and_captured() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let headers = anthropic_headers("sk-ant-test");
    upstream.push(Script::Text("Hello from the fake.".into()));
    let body = anthropic_body(json!([{"role": "user", "content": "hi there"}]), false);
    let response = gateway.post("/v1/messages", &view(&headers), &body);
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(
        response.json()["content"][0]["text"],
        "Hello from the fake."
    );
    let session_id = response
        .header("x-lore-session-id")
        .expect("session header")
        .to_string();
    // Lossless: the upstream received exactly the client's bytes.
    let recorded = upstream.requests();
    assert_eq!(recorded.last().unwrap().path, "/v1/messages");
    assert_eq!(
        recorded.last().unwrap().body,
        serde_json::to_vec(&body).unwrap()
    );

    upstream.push(Script::Text("Streamed answer.".into()));
    let body = anthropic_body(
        json!([
            {"role": "user", "content": "hi there"},
            {"role": "assistant", "content": [{"type": "text", "text": "Hello from the fake."}]},
            {"role": "user", "content": "stream please"}
        ]),
        true,
    );
    let response = gateway.post("/v1/messages", &view(&headers), &body);
    assert_eq!(response.status, 200);
    assert!(
        response
            .header("content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = response.sse();
    assert_eq!(
        events.first().unwrap().event.as_deref(),
        Some("message_start")
    );
    assert_eq!(
        events.last().unwrap().event.as_deref(),
        Some("message_stop")
    );
    assert_eq!(
        response.header("x-lore-session-id"),
        Some(session_id.as_str())
    );

    single_session_with(&gateway, 4);
    assert_eq!(
        gateway.transcript(&session_id),
        vec![
            "user: hi there",
            "assistant: Hello from the fake.",
            "user: stream please",
            "assistant: Streamed answer."
        ]
    );
}

#[test]
fn openai_chat_on_both_paths_json_and_stream() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let auth = [("authorization", "Bearer sk-openai-test")];
    for (path, stream) in [("/v1/chat/completions", false), ("/chat/completions", true)] {
        upstream.push(Script::Text(format!("reply via {path}")));
        let body = chat_body(
            json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": format!("question on {path}")}]),
            stream,
        );
        let response = gateway.post(path, &auth, &body);
        assert_eq!(response.status, 200, "{}", response.text());
        if stream {
            let events = response.sse();
            assert_eq!(events.last().unwrap().data, "[DONE]");
            let text: String = events
                .iter()
                .filter(|e| e.data != "[DONE]")
                .filter_map(|e| {
                    e.json()["choices"][0]["delta"]["content"]
                        .as_str()
                        .map(String::from)
                })
                .collect();
            assert_eq!(text, format!("reply via {path}"));
        } else {
            assert_eq!(
                response.json()["choices"][0]["message"]["content"],
                format!("reply via {path}")
            );
        }
        assert_eq!(upstream.requests().last().unwrap().path, path);
    }
    let sessions = eventually("two chat sessions with replies", || {
        let sessions = gateway.sessions();
        (sessions.len() == 2 && sessions.iter().all(|s| s["messages"] == 2)).then_some(sessions)
    });
    for session in sessions {
        let transcript = gateway.transcript(session["id"].as_str().unwrap());
        assert!(
            transcript[1].starts_with("assistant: reply via"),
            "{transcript:?}"
        );
    }
}

#[test]
fn responses_and_codex_routes_are_relayed_and_captured() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let auth = [("authorization", "Bearer sk-openai-test")];
    upstream.push(Script::Text("responses json".into()));
    let body = json!({"model": "gpt-5", "input": "what is lore?", "stream": false});
    let response = gateway.post("/v1/responses", &auth, &body);
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(
        response.json()["output"][0]["content"][0]["text"],
        "responses json"
    );

    upstream.push(Script::Text("codex stream".into()));
    let body = json!({"model": "gpt-5-codex", "store": false, "stream": true, "instructions": "you are codex",
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]}]});
    let response = gateway.post("/v1/codex/responses", &auth, &body);
    assert_eq!(response.status, 200, "{}", response.text());
    let events = response.sse();
    assert_eq!(
        events.last().unwrap().event.as_deref(),
        Some("response.completed")
    );
    assert_eq!(
        upstream.requests().last().unwrap().path,
        "/backend-api/codex/responses"
    );

    let sessions = eventually("two responses sessions", || {
        let sessions = gateway.sessions();
        (sessions.len() == 2 && sessions.iter().all(|s| s["messages"] == 2)).then_some(sessions)
    });
    let transcripts: Vec<Vec<String>> = sessions
        .iter()
        .map(|s| gateway.transcript(s["id"].as_str().unwrap()))
        .collect();
    assert!(
        transcripts.contains(&vec![
            "user: what is lore?".to_string(),
            "assistant: responses json".to_string()
        ]),
        "{transcripts:?}"
    );
    assert!(
        transcripts.contains(&vec![
            "user: fix the bug".to_string(),
            "assistant: codex stream".to_string()
        ]),
        "{transcripts:?}"
    );
}

#[test]
fn tool_calls_round_trip_and_are_captured_with_arguments() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let headers = anthropic_headers("sk-tools");
    upstream.push(Script::ToolCall {
        name: "read_file".into(),
        id: "toolu_01".into(),
        arguments: json!({"path": "src/main.rs", "lines": [1, 20]}),
        text: Some("Let me look.".into()),
    });
    let tools =
        json!([{"name": "read_file", "description": "read", "input_schema": {"type": "object"}}]);
    let mut body = anthropic_body(json!([{"role": "user", "content": "open main"}]), true);
    body["tools"] = tools.clone();
    let response = gateway.post("/v1/messages", &view(&headers), &body);
    let events = response.sse();
    let stop = events
        .iter()
        .find(|e| e.event.as_deref() == Some("message_delta"))
        .unwrap()
        .json();
    assert_eq!(stop["delta"]["stop_reason"], "tool_use");

    upstream.push(Script::Text("It is a main function.".into()));
    let mut body = anthropic_body(
        json!([
            {"role": "user", "content": "open main"},
            {"role": "assistant", "content": [{"type": "text", "text": "Let me look."}, {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "src/main.rs", "lines": [1, 20]}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "fn main() {}"}]}
        ]),
        false,
    );
    body["tools"] = tools;
    let response = gateway.post("/v1/messages", &view(&headers), &body);
    assert_eq!(response.status, 200);

    let session = single_session_with(&gateway, 4);
    let detail = gateway.session(session["id"].as_str().unwrap());
    let messages = detail["messages"].as_array().unwrap();
    let call = &messages[1]["parts"][1];
    assert_eq!(call["type"], "tool_call");
    assert_eq!(call["id"], "toolu_01");
    let arguments: serde_json::Value =
        serde_json::from_str(call["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"path": "src/main.rs", "lines": [1, 20]}));
    assert_eq!(messages[2]["parts"][0]["type"], "tool_result");
    assert_eq!(
        detail["session"]["forks"], 0,
        "the resent assistant message must match the captured reply"
    );
}

#[test]
fn other_paths_and_models_are_proxied_untouched() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let response = http_get_with(
        &gateway,
        "/v1/models",
        &[("anthropic-version", "2023-06-01"), ("x-api-key", "k")],
    );
    assert_eq!(response.status, 200);
    assert!(response.json()["data"].is_array());
    let response = http_get_with(
        &gateway,
        "/v1/files?limit=2",
        &[("authorization", "Bearer k")],
    );
    assert_eq!(response.json()["path"], "/v1/files?limit=2");
    assert!(
        gateway.sessions().is_empty(),
        "passthrough captures nothing"
    );
}

fn http_get_with(
    gateway: &Gateway,
    path: &str,
    headers: &[(&str, &str)],
) -> lore_test_support::http_client::Response {
    lore_test_support::http_client::get(&gateway.url(), path, headers)
}

#[test]
fn health_and_websocket_refusal() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let health = gateway.get("/health").json();
    assert_eq!(health["status"], "ok");
    let response = lore_test_support::http_client::request(
        &gateway.url(),
        "GET",
        // The Responses routes speak WebSocket (tests/gateway/websocket.rs); the others refuse.
        "/v1/messages",
        &[
            ("upgrade", "websocket"),
            ("connection", "Upgrade"),
            ("sec-websocket-version", "13"),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ],
        b"",
    )
    .unwrap();
    assert_eq!(response.status, 426, "{}", response.text());
    assert!(response.text().contains("WebSocket"));
}
