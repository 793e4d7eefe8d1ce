//! Tests of the recall tool's wire handling.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::*;
use crate::protocol::Protocol;

fn record(key: &str, continued: bool) -> RecallRecord {
    RecallRecord {
        key: key.to_string(),
        call_id: format!("call_{key}"),
        input: r#"{"query":"deploy steps"}"#.to_string(),
        result: "## Recall Results\n- (user, 2d ago) run make deploy (t:s:1)".to_string(),
        continued,
        created_at_ms: 1,
    }
}

fn lookup(records: Vec<RecallRecord>) -> impl Fn(&str) -> Option<RecallRecord> {
    move |key| records.iter().find(|r| r.key == key).cloned()
}

#[test]
fn the_tool_is_appended_last_and_nothing_else_changes() {
    let body = br#"{"model":"m","tools":[{"name":"bash","input_schema":{"type":"object"}}] ,"messages":[]}"#;
    let out = with_recall_tool(Protocol::Anthropic, body)
        .unwrap()
        .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with(
        r#"{"model":"m","tools":[{"name":"bash","input_schema":{"type":"object"}},{"name":"recall""#
    ));
    assert!(text.ends_with(r#"}] ,"messages":[]}"#));
    let parsed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(parsed["tools"][1]["name"], "recall");

    let chat = br#"{"tools":[{"type":"function","function":{"name":"f"}}],"messages":[]}"#;
    let out: Value = serde_json::from_slice(
        &with_recall_tool(Protocol::OpenAiChat, chat)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(out["tools"][1]["function"]["name"], "recall");
}

#[test]
fn no_tool_without_tools_or_with_a_recall_of_its_own() {
    for body in [
        &br#"{"messages":[]}"#[..],
        br#"{"tools":[],"messages":[]}"#,
        br#"{"tools":[{"name":"recall"}],"messages":[]}"#,
    ] {
        assert!(
            with_recall_tool(Protocol::Anthropic, body)
                .unwrap()
                .is_none()
        );
    }
}

#[test]
fn markers_are_found_whole_and_inside_text() {
    let args = RecallArguments::parse(r#"{"query":"deploy steps","scope":"project"}"#);
    let marker = marker_text("r:0123abcd", &args);
    assert_eq!(
        marker,
        "📚 Searching project archives for \"deploy steps\"… [r:0123abcd]"
    );
    assert_eq!(marker_key(&marker), Some("r:0123abcd"));
    assert_eq!(marker_key("📚 not a marker [r:xyz]"), None);
    let content = format!("Let me look.{}Found it.", chat_marker(&marker));
    let found = find_marker_keys(&content);
    assert_eq!(found.len(), 1);
    assert_eq!(&content[..found[0].0.start], "Let me look.");
    assert_eq!(&content[found[0].0.end..], "Found it.");
    let detail = marker_text(
        "r:0123abcd",
        &RecallArguments::parse(r#"{"query":"","id":"t:s:4"}"#),
    );
    assert!(detail.contains("Fetching detail for t:s:4"));
}

#[test]
fn anthropic_continued_marker_splits_the_message_like_the_followup() {
    let rec = record("r:00000001", true);
    let marker = marker_text(&rec.key, &RecallArguments::parse(&rec.input));
    let original = json!({"model": "m", "messages": [
        {"role": "user", "content": "how do we deploy?"},
    ]});
    let body = serde_json::to_vec(&original).unwrap();
    let prefix = vec![json!({"type": "text", "text": "Checking."})];
    let followup = anthropic_followup(&body, &prefix, std::slice::from_ref(&rec)).unwrap();
    let followup: Value = serde_json::from_slice(&followup).unwrap();

    let resent = json!({"model": "m", "messages": [
        {"role": "user", "content": "how do we deploy?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Checking."},
            {"type": "text", "text": marker},
            {"type": "text", "text": "Run make deploy."},
        ]},
        {"role": "user", "content": "thanks"},
    ]});
    let out = expand_markers(
        Protocol::Anthropic,
        &serde_json::to_vec(&resent).unwrap(),
        &lookup(vec![rec]),
    )
    .unwrap()
    .unwrap();
    let out: Value = serde_json::from_slice(&out).unwrap();
    let messages = out["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    // The first three messages are exactly what the follow-up sent.
    assert_eq!(messages[..3], followup["messages"].as_array().unwrap()[..]);
    assert_eq!(messages[3]["content"][0]["text"], "Run make deploy.");
    assert_eq!(messages[4]["content"], "thanks");
}

#[test]
fn anthropic_mixed_marker_goes_back_in_place_with_its_result_first() {
    let rec = record("r:00000002", false);
    let marker = marker_text(&rec.key, &RecallArguments::parse(&rec.input));
    let resent = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "text", "text": marker},
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
    ]});
    let out = expand_markers(
        Protocol::Anthropic,
        &serde_json::to_vec(&resent).unwrap(),
        &lookup(vec![rec.clone()]),
    )
    .unwrap()
    .unwrap();
    let out: Value = serde_json::from_slice(&out).unwrap();
    let messages = out["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["content"][0]["type"], "tool_use");
    assert_eq!(messages[1]["content"][0]["id"], rec.call_id);
    assert_eq!(messages[1]["content"][1]["id"], "t1");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], rec.call_id);
    assert_eq!(messages[2]["content"][1]["tool_use_id"], "t1");
}

#[test]
fn chat_markers_expand_for_both_kinds_of_call() {
    let continued = record("r:00000003", true);
    let mixed = record("r:00000004", false);
    let m1 = marker_text(&continued.key, &RecallArguments::parse(&continued.input));
    let m2 = marker_text(&mixed.key, &RecallArguments::parse(&mixed.input));
    let content = format!("Looking.{}Found it.{}", chat_marker(&m1), chat_marker(&m2));
    let resent = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": content, "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c9", "content": "ok"},
    ]});
    let out = expand_markers(
        Protocol::OpenAiChat,
        &serde_json::to_vec(&resent).unwrap(),
        &lookup(vec![continued.clone(), mixed.clone()]),
    )
    .unwrap()
    .unwrap();
    let out: Value = serde_json::from_slice(&out).unwrap();
    let m = out["messages"].as_array().unwrap();
    let roles: Vec<&str> = m.iter().map(|x| x["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant", "tool", "tool"]
    );
    assert_eq!(m[1]["content"], "Looking.");
    assert_eq!(m[1]["tool_calls"][0]["id"], continued.call_id);
    assert_eq!(m[3]["content"], "Found it.");
    assert_eq!(m[3]["tool_calls"][0]["id"], mixed.call_id);
    assert_eq!(m[3]["tool_calls"][1]["id"], "c9");
    assert_eq!(m[4]["tool_call_id"], mixed.call_id);
    assert_eq!(m[5]["tool_call_id"], "c9");
}

#[test]
fn unknown_markers_and_plain_bodies_are_left_alone() {
    let escaped = br#"{"messages":[{"role":"assistant","content":"\ud83d\udcda Searching all archives for \"x\"\u2026 [r:deadbeef]"}]}"#;
    assert!(
        expand_markers(Protocol::OpenAiChat, escaped, &|_| None)
            .unwrap()
            .is_none()
    );
    let known = record("r:deadbeef", false);
    let out = expand_markers(Protocol::OpenAiChat, escaped, &lookup(vec![known])).unwrap();
    assert!(out.is_some(), "a JSON-escaped marker is still expanded");
    let plain = br#"{"messages":[{"role":"user","content":"hi"}]}"#;
    assert!(
        expand_markers(Protocol::Anthropic, plain, &|_| None)
            .unwrap()
            .is_none()
    );
}

#[test]
fn responses_marker_becomes_the_call_and_its_output_like_the_followup() {
    let rec = record("r:00000005", true);
    let marker = marker_text(&rec.key, &RecallArguments::parse(&rec.input));
    let body = br#"{"model":"gpt-5","input":"how do we deploy?","tools":[{"type":"function","name":"shell"}]}"#;
    let with_tool: Value = serde_json::from_slice(
        &with_recall_tool(Protocol::OpenAiResponses, body)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(with_tool["tools"][1]["name"], "recall");
    let followup: Value =
        serde_json::from_slice(&responses_followup(body, &[], std::slice::from_ref(&rec)).unwrap())
            .unwrap();
    let sent = followup["input"].as_array().unwrap();
    assert_eq!(
        sent[0],
        json!({"role": "user", "content": "how do we deploy?"})
    );
    assert_eq!(sent[1]["type"], "function_call");
    assert_eq!(sent[2]["type"], "function_call_output");

    let resent = json!({"model": "gpt-5", "input": [
        {"role": "user", "content": "how do we deploy?"},
        {"type": "message", "role": "assistant", "id": "msg_lore_00000005", "content": [{"type": "output_text", "text": marker, "annotations": []}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Run make deploy.", "annotations": []}]},
        {"role": "user", "content": "thanks"},
    ]});
    let out = expand_markers(
        Protocol::OpenAiResponses,
        &serde_json::to_vec(&resent).unwrap(),
        &lookup(vec![rec]),
    )
    .unwrap()
    .unwrap();
    let out: Value = serde_json::from_slice(&out).unwrap();
    let items = out["input"].as_array().unwrap();
    assert_eq!(items.len(), 5);
    assert_eq!(
        items[..3],
        sent[..],
        "expansion rebuilds the follow-up's input"
    );
    let stored = br#"{"previous_response_id":"resp_1","tools":[{"type":"function","name":"f"}],"input":"hi"}"#;
    assert!(
        with_recall_tool(Protocol::OpenAiResponses, stored)
            .unwrap()
            .is_none()
    );
}
