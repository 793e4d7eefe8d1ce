//! What the model was told besides the conversation: the system prompt and the tool
//! definitions of each turn, stored once per distinct version with the turns that used it, in
//! the session's messages API and in `lore log`; Responses developer messages are part of it
//! and Codex's `additional_tools` item is no message.

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

fn with_prompt(messages: Value, system: &str) -> Value {
    let mut body = anthropic_body(messages, false);
    body["system"] = json!(system);
    body["tools"] = json!([{"name": "Bash", "description": "run a command", "input_schema": {"type": "object"}}]);
    body
}

#[test]
fn each_distinct_prompt_is_stored_once_with_the_turns_that_used_it() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let mut headers = anthropic_headers("sk-prompts");
    headers.push(("x-session-id", "prompts-session-1"));
    let mut history = Vec::new();
    for (turn, system) in [
        "You are a careful coder.",
        "You are a careful coder.",
        "You are a terse coder.",
    ]
    .iter()
    .enumerate()
    {
        history.push(json!({"role": "user", "content": format!("step {turn}")}));
        upstream.push(Script::Text(format!("did {turn}")));
        let reply = gateway.post(
            "/v1/messages",
            &headers,
            &with_prompt(Value::Array(history.clone()), system),
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
        history.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("did {turn}")}]}));
    }
    let session = single_session_with(&gateway, 6);
    let id = session["id"].as_str().unwrap().to_string();
    let prompts = eventually("two prompt versions", || {
        let detail = gateway.session(&id);
        let prompts = detail["prompts"].as_array().cloned().unwrap_or_default();
        (prompts.len() == 2 && prompts[1]["turns"] == 1).then_some(prompts)
    });
    assert_eq!(prompts[0]["system"], "You are a careful coder.");
    assert_eq!(prompts[0]["turns"], 2);
    assert_eq!(prompts[0]["from_seq"], 0);
    assert_eq!(prompts[1]["system"], "You are a terse coder.");
    assert_eq!(
        prompts[1]["from_seq"], 4,
        "the third turn's new messages start at seq 4"
    );
    // The recall tool rides along: what the model was really given.
    let names: Vec<&str> = prompts[0]["tool_names"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(names.contains(&"Bash"), "{names:?}");
    // `lore log` shows it before the messages it held for.
    let (code, out, err) = lore(&["log", &id[..12]], gateway.data_dir(), &[]);
    assert_eq!(code, 0, "{err}");
    let told = out.find("the model is told").unwrap_or(usize::MAX);
    let first = out.find("step 0").unwrap_or(0);
    assert!(told < first, "{out}");
    assert!(out.contains("You are a terse coder."), "{out}");
}

#[test]
fn codex_developer_messages_are_captured_and_additional_tools_are_no_message() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let developer = format!(
        "You are a coding agent running in the Codex CLI. {}",
        "Follow the rules. ".repeat(200)
    );
    let body = json!({"model": "gpt-5-codex", "stream": false, "store": false,
    "tools": [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}],
    "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": developer}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/home/ada/rs</cwd>\n</environment_context>"}]},
        {"type": "additional_tools", "tools": [{"type": "function", "name": "mcp__docs__search"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "say hi"}]}
    ]});
    upstream.push(Script::Text("hi".into()));
    let reply = gateway.post(
        "/v1/responses",
        &[("authorization", "Bearer sk-codex-dev")],
        &body,
    );
    assert_eq!(reply.status, 200, "{}", reply.text());
    let session = single_session_with(&gateway, 3);
    assert_eq!(session["project"], "/home/ada/rs");
    let id = session["id"].as_str().unwrap();
    let detail = gateway.session(id);
    let roles: Vec<&str> = detail["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(
        roles,
        vec!["user", "user", "assistant"],
        "no assistant message from additional_tools"
    );
    let prompts = eventually("the developer prompt", || {
        let detail = gateway.session(id);
        detail["prompts"]
            .as_array()
            .cloned()
            .filter(|p| !p.is_empty())
    });
    assert_eq!(prompts[0]["system"].as_str(), Some(developer.as_str()));
    assert_eq!(prompts[0]["tool_names"][0], "exec_command");
}
