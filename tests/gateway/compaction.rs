//! Compaction interception: a harness's request to summarise the conversation is answered by
//! the gateway from the session's observation logs and its undistilled tail, in the client's
//! protocol, without a model call; with nothing distilled it goes to the upstream. Codex's
//! `POST /v1/responses/compact` likewise.

use lore_test_support::FakeUpstream;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::memory::{Conversation, distillations, memory_gateway, slowly};

const CLAUDE_COMPACT: &str = "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions.";

fn compact_request(history: &[Value], stream: bool) -> Value {
    let mut messages = history.to_vec();
    messages.push(json!({"role": "user", "content": CLAUDE_COMPACT}));
    anthropic_body(Value::Array(messages), stream)
}

#[test]
fn claude_code_compaction_is_answered_from_the_observation_logs() {
    let upstream = FakeUpstream::start();
    let gateway = memory_gateway(&upstream, &[("LORE_CONTEXT", "off")]);
    let mut chat = Conversation::new(&gateway, "compact-session-1");
    let headers = vec![
        ("x-api-key", chat.key),
        ("anthropic-version", "2023-06-01"),
        ("x-claude-code-session-id", "compact-session-1"),
        ("x-lore-project", chat.project),
    ];
    // Nothing distilled yet: the upstream summarises.
    chat.turn("zqcompact: we moved the parser into src/parser.rs and kept nom for the tokens");
    let early = gateway.post("/v1/messages", &headers, &compact_request(&[json!({"role": "user", "content": "zqcompact: we moved the parser into src/parser.rs and kept nom for the tokens"})], false));
    assert_eq!(early.status, 200, "{}", early.text());
    assert!(
        !early.text().contains("# Session Summary"),
        "{}",
        early.text()
    );
    chat.turn("zqcompact: then we wrote tests for the parser in tests/parser.rs with proptest");
    chat.turn("zqcompact: and finally we documented the grammar in docs/grammar.md for users");
    let session = chat.session_id();
    slowly("an observation log", || {
        (!distillations(&gateway, &session).is_empty()).then_some(())
    });
    // The history as the client holds it, with the summarise instruction last.
    let detail = gateway.session(&session);
    let history: Vec<Value> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!({"role": m["role"], "content": m["text"]}))
        .collect();
    let before = upstream.conversation_bodies().len();
    let answer = gateway.post("/v1/messages", &headers, &compact_request(&history, false));
    assert_eq!(answer.status, 200, "{}", answer.text());
    let text = answer.json()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.starts_with("<summary>\n# Session Summary"), "{text}");
    assert!(
        text.contains("## Conversation history") && text.contains("### Segment 1"),
        "{text}"
    );
    assert!(
        text.contains("zqcompact"),
        "the observations are in it: {text}"
    );
    assert_eq!(answer.header("x-lore-session-id"), Some(session.as_str()));
    // Streaming: the stream of a reply with the same summary.
    let streamed = gateway.post("/v1/messages", &headers, &compact_request(&history, true));
    let events: Vec<String> = streamed
        .sse()
        .iter()
        .filter_map(|e| e.event.clone())
        .collect();
    assert_eq!(
        events.first().map(String::as_str),
        Some("message_start"),
        "{events:?}"
    );
    assert_eq!(
        events.last().map(String::as_str),
        Some("message_stop"),
        "{events:?}"
    );
    assert!(streamed.text().contains("# Session Summary"));
    assert_eq!(
        upstream.conversation_bodies().len(),
        before,
        "no model was asked to summarise"
    );
    assert!(
        gateway
            .log()
            .contains("compaction answered from the observation logs")
    );
}

#[test]
fn codex_compact_endpoint_goes_upstream_when_nothing_is_distilled() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let body = json!({"model": "gpt-5-codex", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a fresh thread"}]}],
        "instructions": "You are Codex."});
    let answer = gateway.post(
        "/v1/responses/compact",
        &[("authorization", "Bearer sk-codex")],
        &body,
    );
    assert!(answer.status < 500, "{}", answer.text());
    let forwarded: Vec<_> = upstream
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/responses/compact")
        .collect();
    assert_eq!(
        forwarded.len(),
        1,
        "forwarded to the upstream's own endpoint"
    );
    assert_eq!(forwarded[0].json(), body);
}

#[test]
fn codex_compact_endpoint_answers_from_the_observation_logs() {
    let upstream = FakeUpstream::start();
    let gateway = memory_gateway(&upstream, &[("LORE_CONTEXT", "off")]);
    let headers = [
        ("authorization", "Bearer sk-codex-compact"),
        ("x-session-id", "codex-compact-1"),
    ];
    let mut input: Vec<Value> = Vec::new();
    let mut session = String::new();
    for step in 0..3 {
        input.push(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": format!(
            "zqcodex step {step}: we renamed the crate to lore-core and moved its tests into tests/core")}]}));
        let answer = format!("done with step {step} of the rename");
        upstream.push(lore_test_support::Script::Text(answer.clone()));
        let reply = gateway.post(
            "/v1/responses",
            &headers,
            &json!({"model": "gpt-5-codex", "instructions": "You are Codex.", "input": input.clone()}),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
        session = reply.header("x-lore-session-id").unwrap().to_string();
        input.push(json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": answer}]}));
    }
    slowly("an observation log", || {
        (!distillations(&gateway, &session).is_empty()).then_some(())
    });
    // The memory workers may still be at work: only conversation calls count.
    let before = upstream.conversation_bodies().len();
    let answer = gateway.post(
        "/v1/responses/compact",
        &headers,
        &json!({"model": "gpt-5-codex", "instructions": "You are Codex.", "input": input}),
    );
    assert_eq!(answer.status, 200, "{}", answer.text());
    let output = &answer.json()["output"][0];
    assert_eq!(output["type"], "message");
    assert_eq!(output["role"], "assistant");
    assert_eq!(output["status"], "completed");
    let text = output["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("# Session Summary") && text.contains("zqcodex"),
        "{text}"
    );
    assert_eq!(
        upstream.conversation_bodies().len(),
        before,
        "no model was asked"
    );
}
