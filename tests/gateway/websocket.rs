//! The Responses API over WebSocket, as Codex 0.171 speaks it: a prewarm (`generate: false`),
//! `response.create` turns answered event by event, a tool-call follow-up that names the
//! connection's previous response and carries only the new items, and errors; bridged to the
//! fake upstream's HTTP stream and captured like the HTTP path.

use std::net::TcpStream;

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};
use tungstenite::client::IntoClientRequest;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use crate::helpers::*;

type Socket = WebSocket<MaybeTlsStream<TcpStream>>;

fn connect(gateway: &Gateway) -> Socket {
    let mut request = format!("ws://127.0.0.1:{}/v1/responses", gateway.port)
        .into_client_request()
        .unwrap();
    let headers = request.headers_mut();
    headers.insert("authorization", "Bearer sk-ws-test".parse().unwrap());
    headers.insert(
        "openai-beta",
        "responses_websockets=2026-02-06".parse().unwrap(),
    );
    headers.insert("originator", "codex_exec".parse().unwrap());
    let (socket, response) = tungstenite::connect(request).unwrap();
    assert_eq!(response.status().as_u16(), 101);
    socket
}

/// Sends one message and reads events until the response completes (or an error).
fn exchange(socket: &mut Socket, message: &Value) -> Vec<Value> {
    socket.send(Message::text(message.to_string())).unwrap();
    let mut events = Vec::new();
    loop {
        let Message::Text(text) = socket.read().unwrap() else {
            continue;
        };
        let event: Value = serde_json::from_str(text.as_str()).unwrap();
        let kind = event["type"].as_str().unwrap_or("").to_string();
        events.push(event);
        if kind == "response.completed" || kind == "error" || kind == "response.failed" {
            return events;
        }
    }
}

fn developer() -> Value {
    json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are a coding agent running in the Codex CLI."}]})
}

fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
}

fn create(input: Vec<Value>) -> Value {
    json!({"type": "response.create", "model": "gpt-5-codex", "stream": true, "store": false,
        "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}],
        "input": input})
}

#[test]
fn codex_over_websocket_is_bridged_to_http_and_captured_as_one_session() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let mut socket = connect(&gateway);
    // The prewarm: nothing generated, nothing sent upstream.
    let mut prewarm = create(vec![developer()]);
    prewarm["generate"] = json!(false);
    let events = exchange(&mut socket, &prewarm);
    assert_eq!(
        events.last().unwrap()["type"],
        "response.completed",
        "{events:?}"
    );
    assert_eq!(upstream.requests().len(), 0, "a prewarm calls no model");
    // The first turn: a tool call.
    let context =
        user("<environment_context>\n  <cwd>/home/ada/ws-app</cwd>\n</environment_context>");
    upstream.push(Script::ToolCall {
        name: "exec_command".into(),
        id: "call_ws_1".into(),
        arguments: json!({"cmd": "echo hi"}),
        text: None,
    });
    let events = exchange(
        &mut socket,
        &create(vec![developer(), context.clone(), user("run echo")]),
    );
    let completed = events.last().unwrap();
    assert_eq!(completed["type"], "response.completed", "{events:?}");
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "response.output_item.added")
    );
    let response_id = completed["response"]["id"].as_str().unwrap().to_string();
    let first = upstream.requests();
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].path, "/v1/responses");
    assert_eq!(first[0].method, "POST");
    assert!(
        first[0]
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
    );
    assert!(first[0].header("sec-websocket-key").is_none());
    let sent = first[0].json();
    assert_eq!(sent["stream"], true);
    assert!(
        sent.get("type").is_none() && sent.get("generate").is_none(),
        "{sent}"
    );
    // The follow-up names the previous response and carries only the tool output, as Codex
    // does on a WebSocket; the upstream gets the whole conversation.
    upstream.clear_requests();
    upstream.push(Script::Text("the command printed hi".into()));
    let output = json!({"type": "function_call_output", "call_id": "call_ws_1", "output": "hi"});
    let mut follow_up = create(vec![output.clone()]);
    follow_up["previous_response_id"] = json!(response_id);
    let events = exchange(&mut socket, &follow_up);
    assert_eq!(
        events.last().unwrap()["type"],
        "response.completed",
        "{events:?}"
    );
    let sent = upstream.requests()[0].json();
    assert!(sent.get("previous_response_id").is_none(), "{sent}");
    let kinds: Vec<&str> = sent["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap_or("message"))
        .collect();
    assert_eq!(
        kinds,
        vec![
            "message",
            "message",
            "message",
            "function_call",
            "function_call_output"
        ],
        "{sent}"
    );
    // Captured like the HTTP path: one session, its project from <cwd>, the reply stored.
    let session = single_session_with(&gateway, 5);
    assert_eq!(session["project"], "/home/ada/ws-app");
    let transcript = gateway.transcript(session["id"].as_str().unwrap());
    assert_eq!(
        transcript.last().map(String::as_str),
        Some("assistant: the command printed hi"),
        "{transcript:?}"
    );
    // An upstream error reaches the client as an `error` message with its status.
    upstream.push(Script::Error {
        status: 429,
        body: json!({"error": {"type": "rate_limit_exceeded", "message": "slow down"}}),
        headers: vec![],
    });
    let events = exchange(&mut socket, &create(vec![user("again")]));
    let error = events.last().unwrap();
    assert_eq!(error["type"], "error", "{events:?}");
    assert_eq!(error["status"], 429);
    assert_eq!(error["error"]["message"], "slow down");
    socket.close(None).unwrap();
}

#[test]
fn a_websocket_message_that_is_no_response_create_gets_an_error() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let mut socket = connect(&gateway);
    let events = exchange(&mut socket, &json!({"type": "session.update"}));
    assert_eq!(events[0]["type"], "error");
    assert!(
        events[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("response.create")
    );
    assert!(upstream.requests().is_empty());
}

#[test]
fn an_upstream_that_offers_the_websocket_gets_the_connection_relayed_and_captured() {
    let upstream = FakeUpstream::start();
    upstream.offer_websocket(true);
    let gateway = Gateway::start(&upstream);
    let mut socket = connect(&gateway);
    let mut prewarm = create(vec![developer()]);
    prewarm["generate"] = json!(false);
    let events = exchange(&mut socket, &prewarm);
    assert_eq!(
        events.last().unwrap()["type"],
        "response.completed",
        "{events:?}"
    );
    let context =
        user("<environment_context>\n  <cwd>/home/ada/relayed</cwd>\n</environment_context>");
    upstream.push(Script::ToolCall {
        name: "exec_command".into(),
        id: "call_relay_1".into(),
        arguments: json!({"cmd": "echo hi"}),
        text: None,
    });
    let events = exchange(
        &mut socket,
        &create(vec![developer(), context, user("run echo")]),
    );
    let completed = events.last().unwrap();
    assert_eq!(completed["type"], "response.completed", "{events:?}");
    let response_id = completed["response"]["id"].as_str().unwrap().to_string();
    // The follow-up goes up as Codex sent it: the upstream's connection knows the response.
    upstream.push(Script::Text("relayed: the command printed hi".into()));
    let mut follow_up = create(vec![
        json!({"type": "function_call_output", "call_id": "call_relay_1", "output": "hi"}),
    ]);
    follow_up["previous_response_id"] = json!(response_id);
    let events = exchange(&mut socket, &follow_up);
    assert_eq!(
        events.last().unwrap()["type"],
        "response.completed",
        "{events:?}"
    );
    let sent: Vec<Value> = upstream
        .requests()
        .iter()
        .map(|r| {
            assert_eq!(
                r.method, "WS",
                "every message went over the upstream's WebSocket"
            );
            r.json()
        })
        .collect();
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0]["generate"], false);
    assert_eq!(sent[2]["previous_response_id"], json!(response_id));
    assert_eq!(sent[2]["input"].as_array().unwrap().len(), 1);
    // Captured as one session: the continuation found by its response id.
    let session = single_session_with(&gateway, 5);
    assert_eq!(session["project"], "/home/ada/relayed");
    let transcript = gateway.transcript(session["id"].as_str().unwrap());
    assert_eq!(
        transcript.last().map(String::as_str),
        Some("assistant: relayed: the command printed hi"),
        "{transcript:?}"
    );
    assert!(
        gateway
            .log()
            .contains("relayed to the upstream's WebSocket")
    );
}
