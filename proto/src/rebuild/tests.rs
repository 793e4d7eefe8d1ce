//! Tests of body rebuilding: layout, rendering, element transformations, usage scaling.
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use serde_json::{Value, json};

use super::items::*;
use super::usage::*;
use super::*;

fn body(value: Value) -> Vec<u8> {
    serde_json::to_vec(&value).unwrap()
}

#[test]
fn only_the_array_and_the_named_edits_change() {
    let raw = br#"{"model":"m", "system" : "S", "tools":[{"name":"a"},{"name":"b"}], "messages": [ {"role":"user","content":"one"} , {"role":"assistant","content":"two"},{"role":"user","content":"three"}], "stream":true}"#;
    let layout = BodyLayout::read(Protocol::Anthropic, raw).unwrap();
    assert_eq!(layout.items.len(), 3);
    assert_eq!(
        &raw[layout.items[1].clone()],
        br#"{"role":"assistant","content":"two"}"#
    );
    assert_eq!(&raw[layout.last_tool.clone().unwrap()], br#"{"name":"b"}"#);
    let out = render(
        raw,
        &layout,
        &[
            Piece::Json(r#"{"role":"user","content":"P"}"#.into()),
            Piece::Item(2),
        ],
        &HeadEdits::default(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"model":"m", "system" : "S", "tools":[{"name":"a"},{"name":"b"}], "messages": [{"role":"user","content":"P"},{"role":"user","content":"three"}], "stream":true}"#
    );
    let edits = HeadEdits {
        system: Some(r#"[{"type":"text","text":"S"}]"#.into()),
        last_tool: Some(r#"{"name":"b","x":1}"#.into()),
    };
    let out = render(raw, &layout, &[Piece::Item(0)], &edits).unwrap();
    let value: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(value["system"][0]["text"], "S");
    assert_eq!(value["tools"][1]["x"], 1);
    assert_eq!(value["messages"].as_array().unwrap().len(), 1);
    let missing = render(raw, &layout, &[Piece::Item(9)], &HeadEdits::default());
    assert!(missing.is_err());
}

#[test]
fn responses_use_the_input_array() {
    let raw = body(
        json!({"model": "m", "input": [{"type": "message", "role": "user", "content": "hi"}]}),
    );
    let layout = BodyLayout::read(Protocol::OpenAiResponses, &raw).unwrap();
    assert_eq!(layout.items.len(), 1);
    let text = body(json!({"input": "just text"}));
    assert!(
        BodyLayout::read(Protocol::OpenAiResponses, &text)
            .unwrap()
            .array
            .is_none()
    );
}

#[test]
fn breakpoints_come_off_and_go_on() {
    let item = br#"{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]}"#;
    let bare = without_cache_control(item).unwrap().unwrap();
    assert_eq!(
        bare,
        r#"{"role":"user","content":[{"type":"text","text":"a"}]}"#
    );
    assert!(without_cache_control(bare.as_bytes()).unwrap().is_none());
    let marked = with_cache_control(bare.as_bytes(), Ttl::OneHour)
        .unwrap()
        .unwrap();
    let value: Value = serde_json::from_str(&marked).unwrap();
    assert_eq!(
        value["content"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    let string = with_cache_control(br#"{"role":"user","content":"s"}"#, Ttl::FiveMinutes)
        .unwrap()
        .unwrap();
    let value: Value = serde_json::from_str(&string).unwrap();
    assert_eq!(
        value["content"][0],
        json!({"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}})
    );
    // Thinking blocks cannot carry a breakpoint: the last other block does.
    let thinking = br#"{"role":"assistant","content":[{"type":"text","text":"t"},{"type":"thinking","thinking":"x","signature":"s"}]}"#;
    let value: Value = serde_json::from_str(
        &with_cache_control(thinking, Ttl::FiveMinutes)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert!(value["content"][0].get("cache_control").is_some());
    assert_eq!(value["content"][1]["signature"], "s");
    assert_eq!(
        cache_control_count(br#"[{"text":"a","cache_control":{"type":"ephemeral"}},{"text":"b"}]"#),
        1
    );
    assert_eq!(cache_control_count(br#""plain""#), 0);
}

#[test]
fn system_and_tools_take_one_breakpoint() {
    let out = system_with_cache_control(br#""be brief""#, Ttl::OneHour)
        .unwrap()
        .unwrap();
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value[0]["text"], "be brief");
    assert_eq!(value[0]["cache_control"]["ttl"], "1h");
    let marked = br#"[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]"#;
    assert!(
        system_with_cache_control(marked, Ttl::OneHour)
            .unwrap()
            .is_none()
    );
    let tool = tool_with_cache_control(br#"{"name":"recall"}"#, Ttl::OneHour)
        .unwrap()
        .unwrap();
    assert!(tool.contains("\"ttl\":\"1h\""));
    assert!(
        tool_with_cache_control(tool.as_bytes(), Ttl::OneHour)
            .unwrap()
            .is_none()
    );
}

#[test]
fn tool_outputs_are_replaced_in_every_protocol() {
    let notes: HashMap<String, String> = [("c1".to_string(), "[omitted]".to_string())].into();
    let anthropic = br#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"long"}],"is_error":true},{"type":"tool_result","tool_use_id":"c2","content":"keep"}]}"#;
    let value: Value = serde_json::from_str(
        &with_outputs_replaced(Protocol::Anthropic, anthropic, &notes)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(value["content"][0]["content"], "[omitted]");
    assert_eq!(value["content"][0]["is_error"], true);
    assert_eq!(value["content"][1]["content"], "keep");
    let chat = br#"{"role":"tool","tool_call_id":"c1","content":"long"}"#;
    let value: Value = serde_json::from_str(
        &with_outputs_replaced(Protocol::OpenAiChat, chat, &notes)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(value["content"], "[omitted]");
    let responses = br#"{"type":"function_call_output","call_id":"c1","output":"long"}"#;
    let value: Value = serde_json::from_str(
        &with_outputs_replaced(Protocol::OpenAiResponses, responses, &notes)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(value["output"], "[omitted]");
    let other = br#"{"type":"function_call_output","call_id":"c9","output":"x"}"#;
    assert!(
        with_outputs_replaced(Protocol::OpenAiResponses, other, &notes)
            .unwrap()
            .is_none()
    );
}

#[test]
fn the_prefix_grows_by_appending() {
    let one = prefix_items(Protocol::Anthropic, "N", &["A".into()], Some(Ttl::OneHour)).unwrap();
    let two = prefix_items(
        Protocol::Anthropic,
        "N",
        &["A".into(), "B".into()],
        Some(Ttl::OneHour),
    )
    .unwrap();
    assert_eq!(one[0], two[0]);
    let a: Value = serde_json::from_str(&one[1]).unwrap();
    let b: Value = serde_json::from_str(&two[1]).unwrap();
    assert_eq!(a["content"][0]["text"], b["content"][0]["text"]);
    assert!(b["content"][1].get("cache_control").is_some());
    for protocol in [Protocol::OpenAiChat, Protocol::OpenAiResponses] {
        let short = prefix_items(protocol, "N", &["A".into()], None).unwrap();
        let long = prefix_items(protocol, "N", &["A".into(), "B".into()], None).unwrap();
        assert!(!short[1].contains("cache_control"));
        let cut = short[1].find("A").unwrap() + 1;
        assert_eq!(short[1][..cut], long[1][..cut]);
    }
}

#[test]
fn reported_usage_stays_under_the_auto_compaction_threshold() {
    let cap = reported_input_cap(200_000, 64_000, false);
    assert_eq!(
        cap,
        ((200_000.0 - 20_000.0 - 13_000.0) * 0.9) as u64 - 8_192
    );
    assert_eq!(
        reported_input_cap(1_000_000, 64_000, false),
        cap,
        "clamped without the beta"
    );
    assert!(reported_input_cap(1_000_000, 64_000, true) > cap);
    let reply = body(
        json!({"id": "m", "usage": {"input_tokens": 10, "cache_read_input_tokens": 180_000, "cache_creation_input_tokens": 10_000, "output_tokens": 50}}),
    );
    let scaled: Value =
        serde_json::from_slice(&scaled_reply(Protocol::Anthropic, &reply, cap).unwrap()).unwrap();
    let usage = &scaled["usage"];
    let total = usage["input_tokens"].as_u64().unwrap()
        + usage["cache_read_input_tokens"].as_u64().unwrap()
        + usage["cache_creation_input_tokens"].as_u64().unwrap();
    assert!(total <= cap, "{total} > {cap}");
    assert_eq!(usage["output_tokens"], 50);
    let small = body(json!({"usage": {"input_tokens": 10, "output_tokens": 5}}));
    assert!(scaled_reply(Protocol::Anthropic, &small, cap).is_none());
    let start = r#"{"type":"message_start","message":{"id":"m","usage":{"input_tokens":5,"cache_read_input_tokens":190000,"output_tokens":1}}}"#;
    let data = scaled_event_data(Protocol::Anthropic, start, cap)
        .unwrap()
        .unwrap();
    let value: Value = serde_json::from_str(&data).unwrap();
    assert!(
        value["message"]["usage"]["cache_read_input_tokens"]
            .as_u64()
            .unwrap()
            < cap
    );
    let completed = r#"{"type":"response.completed","response":{"usage":{"input_tokens":300000,"input_tokens_details":{"cached_tokens":200000},"output_tokens":10,"total_tokens":300010}}}"#;
    let data = scaled_event_data(Protocol::OpenAiResponses, completed, cap)
        .unwrap()
        .unwrap();
    let value: Value = serde_json::from_str(&data).unwrap();
    let usage = &value["response"]["usage"];
    assert_eq!(usage["input_tokens"].as_u64().unwrap(), cap);
    assert_eq!(usage["total_tokens"].as_u64().unwrap(), cap + 10);
    assert!(
        usage["input_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap()
            < cap
    );
    assert!(
        scaled_event_data(Protocol::OpenAiChat, r#"{"choices":[]}"#, cap)
            .unwrap()
            .is_none()
    );
}
