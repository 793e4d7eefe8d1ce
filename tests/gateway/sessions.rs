//! Session identity: never merge two conversations, always find the same one again, also after
//! a restart; project attribution.

use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

use crate::helpers::*;

#[test]
fn same_first_message_with_different_keys_stays_apart() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    for key in ["sk-alice", "sk-bob"] {
        upstream.push(Script::Text(format!("hello {key}")));
        let response = gateway.post(
            "/v1/messages",
            &view(&anthropic_headers(key)),
            &anthropic_body(json!([{"role": "user", "content": "hi"}]), false),
        );
        assert_eq!(response.status, 200);
    }
    let sessions = eventually("two sessions", || {
        let sessions = gateway.sessions();
        (sessions.len() == 2 && sessions.iter().all(|s| s["messages"] == 2)).then_some(sessions)
    });
    assert_ne!(sessions[0]["id"], sessions[1]["id"]);
}

#[test]
fn same_first_message_and_key_but_different_conversations_stay_apart() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let headers = anthropic_headers("sk-same");
    // Conversation A: two turns.
    upstream.push(Script::Text("A1".into()));
    gateway.post(
        "/v1/messages",
        &view(&headers),
        &anthropic_body(json!([{"role": "user", "content": "hi"}]), false),
    );
    upstream.push(Script::Text("A2".into()));
    gateway.post("/v1/messages", &view(&headers), &anthropic_body(json!([
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "A1"}, {"role": "user", "content": "more A"}]), false));
    // Conversation B opens with the same words.
    upstream.push(Script::Text("B1".into()));
    let response = gateway.post(
        "/v1/messages",
        &view(&headers),
        &anthropic_body(json!([{"role": "user", "content": "hi"}]), false),
    );
    let session_b = response.header("x-lore-session-id").unwrap().to_string();
    upstream.push(Script::Text("B2".into()));
    let response = gateway.post("/v1/messages", &view(&headers), &anthropic_body(json!([
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "B1"}, {"role": "user", "content": "more B"}]), false));
    assert_eq!(
        response.header("x-lore-session-id"),
        Some(session_b.as_str())
    );
    let sessions = eventually("two sessions of four messages", || {
        let sessions = gateway.sessions();
        (sessions.len() == 2 && sessions.iter().all(|s| s["messages"] == 4)).then_some(sessions)
    });
    assert!(sessions.iter().all(|s| s["forks"] == 0), "{sessions:?}");
    assert_eq!(
        gateway.transcript(&session_b),
        vec!["user: hi", "assistant: B1", "user: more B", "assistant: B2"]
    );
}

#[test]
fn a_session_header_keeps_parallel_side_requests_apart() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let mut headers = view(&anthropic_headers("sk-cc"));
    headers.push((
        "x-claude-code-session-id",
        "5f3c2a10-0000-4000-8000-000000000001",
    ));
    upstream.push(Script::Text("main reply".into()));
    let main = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(
            json!([{"role": "user", "content": "refactor the parser"}]),
            false,
        ),
    );
    // Claude Code's title generator shares the header but not the conversation.
    upstream.push(Script::Text("Parser refactor".into()));
    let side = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(
            json!([{"role": "user", "content": "Write a title for: refactor the parser"}]),
            false,
        ),
    );
    upstream.push(Script::Text("next".into()));
    let next = gateway.post("/v1/messages", &headers, &anthropic_body(json!([
        {"role": "user", "content": "refactor the parser"}, {"role": "assistant", "content": "main reply"}, {"role": "user", "content": "go on"}]), false));
    assert_eq!(
        main.header("x-lore-session-id"),
        next.header("x-lore-session-id")
    );
    assert_ne!(
        main.header("x-lore-session-id"),
        side.header("x-lore-session-id")
    );
    let id = main.header("x-lore-session-id").unwrap().to_string();
    eventually("main session complete", || {
        (gateway.transcript(&id).len() == 4).then_some(())
    });
    assert_eq!(gateway.session(&id)["session"]["forks"], 0);
}

#[test]
fn a_restart_resumes_the_same_session() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    let headers = anthropic_headers("sk-restart");
    upstream.push(Script::Text("first answer".into()));
    let first = gateway.post(
        "/v1/messages",
        &view(&headers),
        &anthropic_body(json!([{"role": "user", "content": "remember me"}]), false),
    );
    let id = first.header("x-lore-session-id").unwrap().to_string();
    single_session_with(&gateway, 2);
    gateway.stop();
    gateway.restart();
    upstream.push(Script::Text("second answer".into()));
    let second = gateway.post("/v1/messages", &view(&headers), &anthropic_body(json!([
        {"role": "user", "content": "remember me"}, {"role": "assistant", "content": "first answer"}, {"role": "user", "content": "still there?"}]), false));
    assert_eq!(
        second.header("x-lore-session-id"),
        Some(id.as_str()),
        "fingerprint match survives a restart"
    );
    single_session_with(&gateway, 4);
}

#[test]
fn projects_come_from_the_prompt_then_the_header() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let mut body = anthropic_body(json!([{"role": "user", "content": "where am I?"}]), false);
    body["system"] = json!([{"type": "text", "text": "You are Claude Code.\nWorking directory: /home/ada/compiler\n"}]);
    let mut headers = view(&anthropic_headers("sk-proj"));
    headers.push(("x-lore-project", "/somewhere/else"));
    gateway.post("/v1/messages", &headers, &body);
    gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(json!([{"role": "user", "content": "no cwd here"}]), false),
    );
    gateway.post(
        "/v1/messages",
        &view(&anthropic_headers("sk-proj")),
        &anthropic_body(
            json!([{"role": "user", "content": "nothing at all"}]),
            false,
        ),
    );
    let sessions = eventually("three sessions", || {
        let sessions = gateway.sessions();
        (sessions.len() == 3 && sessions.iter().all(|s| s["messages"] == 2)).then_some(sessions)
    });
    let projects: Vec<(String, bool)> = sessions
        .iter()
        .map(|s| {
            (
                s["project"].as_str().unwrap().to_string(),
                s["project_provisional"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(
        projects.contains(&("/home/ada/compiler".to_string(), false)),
        "{projects:?}"
    );
    assert!(
        projects.contains(&("/somewhere/else".to_string(), false)),
        "{projects:?}"
    );
    assert_eq!(
        projects
            .iter()
            .filter(|(_, provisional)| *provisional)
            .count(),
        1,
        "the gateway's own directory is only provisional: {projects:?}"
    );
}
