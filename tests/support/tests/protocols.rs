//! Wire-shape tests: JSON and SSE replies of every protocol, against a live server.

use lore_test_support::http_client::{SseEvent, get, post_json};
use lore_test_support::{FakeConfig, FakeUpstream, Script};
use serde_json::{Value, json};

const ANTHROPIC: &[(&str, &str)] = &[
    ("x-api-key", "sk-ant-test"),
    ("anthropic-version", "2023-06-01"),
];
const OPENAI: &[(&str, &str)] = &[("authorization", "Bearer sk-test")];

fn anthropic_body(stream: bool) -> Value {
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "stream": stream,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hello there"}]}],
    })
}

fn types(events: &[SseEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| e.json()["type"].as_str().expect("type").to_string())
        .collect()
}

/// Reassembles text deltas of an Anthropic stream.
fn anthropic_text(events: &[SseEvent]) -> String {
    events
        .iter()
        .map(SseEvent::json)
        .filter(|v| v["delta"]["type"] == "text_delta")
        .map(|v| v["delta"]["text"].as_str().expect("text").to_string())
        .collect()
}

#[test]
fn anthropic_json_default_reply() {
    let up = FakeUpstream::start();
    let r = post_json(&up.url(), "/v1/messages", ANTHROPIC, &anthropic_body(false));
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
    assert_eq!(r.header("request-id"), Some("req_fake_1"));
    assert_eq!(
        r.header("anthropic-ratelimit-requests-remaining"),
        Some("99")
    );
    let v = r.json();
    assert_eq!(v["type"], "message");
    assert_eq!(v["role"], "assistant");
    assert_eq!(v["model"], "claude-sonnet-4-5");
    assert!(v["id"].as_str().unwrap().starts_with("msg_"));
    assert_eq!(
        v["content"],
        json!([{"type": "text", "text": "ok: hello there"}])
    );
    assert_eq!(v["stop_reason"], "end_turn");
    assert!(v["stop_sequence"].is_null());
    for k in [
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ] {
        assert!(v["usage"][k].is_u64(), "{k}");
    }
}

#[test]
fn anthropic_sse_text() {
    let up = FakeUpstream::start_with(FakeConfig {
        default_text: Some("The quick brown fox jumps over the lazy dog".into()),
        ..FakeConfig::default()
    });
    let r = post_json(&up.url(), "/v1/messages", ANTHROPIC, &anthropic_body(true));
    assert_eq!(r.status, 200);
    assert!(r.complete);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let ev = r.sse();
    for e in &ev {
        assert_eq!(
            e.event.as_deref(),
            e.json()["type"].as_str(),
            "event name matches type"
        );
    }
    let t = types(&ev);
    assert_eq!(t[0], "message_start");
    assert_eq!(t[1], "content_block_start");
    assert_eq!(t[2], "ping");
    assert_eq!(
        &t[t.len() - 3..],
        ["content_block_stop", "message_delta", "message_stop"]
    );
    assert!(t.iter().filter(|x| *x == "content_block_delta").count() >= 2);
    let start = ev[0].json();
    assert_eq!(start["message"]["content"], json!([]));
    assert!(start["message"]["usage"]["cache_read_input_tokens"].is_u64());
    assert!(start["message"]["usage"]["cache_creation_input_tokens"].is_u64());
    assert_eq!(
        anthropic_text(&ev),
        "The quick brown fox jumps over the lazy dog"
    );
    let delta = ev[ev.len() - 2].json();
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert!(delta["usage"]["output_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn anthropic_tool_call_json_and_sse() {
    let up = FakeUpstream::start();
    let call = Script::ToolCall {
        name: "get_weather".into(),
        id: "toolu_01".into(),
        arguments: json!({"city": "Paris", "days": 3}),
        text: Some("Let me check.".into()),
    };
    up.push(call.clone());
    up.push(call);
    let v = post_json(&up.url(), "/v1/messages", ANTHROPIC, &anthropic_body(false)).json();
    assert_eq!(v["stop_reason"], "tool_use");
    assert_eq!(
        v["content"][0],
        json!({"type": "text", "text": "Let me check."})
    );
    assert_eq!(
        v["content"][1],
        json!({"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris", "days": 3}})
    );
    let ev = post_json(&up.url(), "/v1/messages", ANTHROPIC, &anthropic_body(true)).sse();
    let parsed: Vec<Value> = ev.iter().map(SseEvent::json).collect();
    let start = parsed
        .iter()
        .find(|v| v["type"] == "content_block_start" && v["content_block"]["type"] == "tool_use")
        .unwrap();
    assert_eq!(start["index"], 1);
    assert_eq!(start["content_block"]["input"], json!({}));
    let fragments: Vec<&str> = parsed
        .iter()
        .filter(|v| v["delta"]["type"] == "input_json_delta")
        .map(|v| v["delta"]["partial_json"].as_str().unwrap())
        .collect();
    assert!(fragments.len() >= 2);
    let args: Value = serde_json::from_str(&fragments.concat()).unwrap();
    assert_eq!(args, json!({"city": "Paris", "days": 3}));
    let md = parsed
        .iter()
        .find(|v| v["type"] == "message_delta")
        .unwrap();
    assert_eq!(md["delta"]["stop_reason"], "tool_use");
}

#[test]
fn anthropic_thinking_stream() {
    let up = FakeUpstream::start();
    up.push(Script::Thinking {
        thinking: "Let me reason about this carefully.".into(),
        signature: "sig_abc".into(),
        text: "Answer.".into(),
    });
    let ev = post_json(&up.url(), "/v1/messages", ANTHROPIC, &anthropic_body(true)).sse();
    let parsed: Vec<Value> = ev.iter().map(SseEvent::json).collect();
    assert_eq!(
        parsed[1]["content_block"],
        json!({"type": "thinking", "thinking": "", "signature": ""})
    );
    let thinking: String = parsed
        .iter()
        .filter(|v| v["delta"]["type"] == "thinking_delta")
        .map(|v| v["delta"]["thinking"].as_str().unwrap())
        .collect();
    assert_eq!(thinking, "Let me reason about this carefully.");
    let sig = parsed
        .iter()
        .find(|v| v["delta"]["type"] == "signature_delta")
        .unwrap();
    assert_eq!(sig["index"], 0);
    assert_eq!(sig["delta"]["signature"], "sig_abc");
    assert_eq!(anthropic_text(&ev), "Answer.");
    up.push(Script::Thinking {
        thinking: "t".into(),
        signature: "s".into(),
        text: "a".into(),
    });
    let v = post_json(&up.url(), "/v1/messages", ANTHROPIC, &anthropic_body(false)).json();
    assert_eq!(
        v["content"],
        json!([{"type": "thinking", "thinking": "t", "signature": "s"}, {"type": "text", "text": "a"}])
    );
}

fn chat_body(stream: bool, include_usage: bool) -> Value {
    let mut b = json!({
        "model": "gpt-4.1",
        "stream": stream,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "what is up"},
        ],
    });
    if include_usage {
        b["stream_options"] = json!({"include_usage": true});
    }
    b
}

#[test]
fn openai_chat_json_and_both_paths() {
    let up = FakeUpstream::start();
    for path in ["/v1/chat/completions", "/chat/completions"] {
        let r = post_json(&up.url(), path, OPENAI, &chat_body(false, false));
        assert_eq!(r.status, 200);
        assert!(r.header("x-request-id").unwrap().starts_with("req_fake_"));
        let v = r.json();
        assert_eq!(v["object"], "chat.completion");
        assert!(v["id"].as_str().unwrap().starts_with("chatcmpl-"));
        assert!(v["created"].is_u64());
        assert_eq!(v["choices"][0]["message"]["content"], "ok: what is up");
        assert_eq!(v["choices"][0]["message"]["role"], "assistant");
        assert_eq!(v["choices"][0]["finish_reason"], "stop");
        let u = &v["usage"];
        assert_eq!(
            u["total_tokens"].as_u64().unwrap(),
            u["prompt_tokens"].as_u64().unwrap() + u["completion_tokens"].as_u64().unwrap()
        );
        assert_eq!(u["prompt_tokens_details"]["cached_tokens"], 0);
    }
}

#[test]
fn openai_chat_stream_with_usage_and_tool_call() {
    let up = FakeUpstream::start();
    let r = post_json(
        &up.url(),
        "/v1/chat/completions",
        OPENAI,
        &chat_body(true, true),
    );
    assert!(r.complete);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let ev = r.sse();
    assert!(ev.iter().all(|e| e.event.is_none()));
    assert_eq!(ev.last().unwrap().data, "[DONE]");
    let chunks: Vec<Value> = ev[..ev.len() - 1].iter().map(SseEvent::json).collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "ok: what is up");
    let usage_chunk = chunks.last().unwrap();
    assert_eq!(usage_chunk["choices"], json!([]));
    assert!(usage_chunk["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    assert!(finish["usage"].is_null());

    // Without include_usage: no usage chunk, no usage key.
    let ev = post_json(
        &up.url(),
        "/v1/chat/completions",
        OPENAI,
        &chat_body(true, false),
    )
    .sse();
    let last_chunk = ev[ev.len() - 2].json();
    assert_eq!(last_chunk["choices"][0]["finish_reason"], "stop");
    assert!(last_chunk.get("usage").is_none());

    let call = Script::ToolCall {
        name: "run".into(),
        id: "call_1".into(),
        arguments: json!({"cmd": "ls -la"}),
        text: None,
    };
    up.push(call.clone());
    up.push(call);
    let ev = post_json(
        &up.url(),
        "/chat/completions",
        OPENAI,
        &chat_body(true, false),
    )
    .sse();
    let chunks: Vec<Value> = ev[..ev.len() - 1].iter().map(SseEvent::json).collect();
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert_eq!(calls[0]["id"], "call_1");
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[0]["function"]["name"], "run");
    assert!(calls.len() >= 3);
    let args: String = calls
        .iter()
        .map(|c| c["function"]["arguments"].as_str().unwrap())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"cmd": "ls -la"})
    );
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );
    let v = post_json(
        &up.url(),
        "/chat/completions",
        OPENAI,
        &chat_body(false, false),
    )
    .json();
    let m = &v["choices"][0]["message"];
    assert!(m["content"].is_null());
    assert_eq!(
        m["tool_calls"][0]["function"]["arguments"],
        "{\"cmd\":\"ls -la\"}"
    );
    assert_eq!(v["choices"][0]["finish_reason"], "tool_calls");
}

fn responses_body(stream: bool) -> Value {
    json!({
        "model": "gpt-5-codex",
        "instructions": "You are Codex.",
        "stream": stream,
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}],
    })
}

#[test]
fn openai_responses_json_and_sse() {
    let up = FakeUpstream::start();
    let v = post_json(&up.url(), "/v1/responses", OPENAI, &responses_body(false)).json();
    assert_eq!(v["object"], "response");
    assert_eq!(v["status"], "completed");
    assert!(v["created_at"].is_u64());
    assert_eq!(v["instructions"], "You are Codex.");
    assert_eq!(v["output"][0]["type"], "message");
    assert_eq!(v["output"][0]["content"][0]["type"], "output_text");
    assert_eq!(v["output"][0]["content"][0]["text"], "ok: fix it");
    assert!(v["usage"]["input_tokens_details"]["cached_tokens"].is_u64());

    let r = post_json(
        &up.url(),
        "/backend-api/codex/responses",
        OPENAI,
        &responses_body(true),
    );
    assert!(r.complete);
    let ev = r.sse();
    let parsed: Vec<Value> = ev.iter().map(SseEvent::json).collect();
    for (i, (e, v)) in ev.iter().zip(&parsed).enumerate() {
        assert_eq!(e.event.as_deref(), v["type"].as_str());
        assert_eq!(v["sequence_number"], i as u64);
    }
    let t = types(&ev);
    assert_eq!(
        t.iter()
            .filter(|x| *x != "response.output_text.delta")
            .collect::<Vec<_>>(),
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let deltas: String = parsed
        .iter()
        .filter(|v| v["type"] == "response.output_text.delta")
        .map(|v| v["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "ok: fix it");
    assert_eq!(parsed[0]["response"]["status"], "in_progress");
    let done = parsed.last().unwrap();
    assert_eq!(done["response"]["status"], "completed");
    assert!(done["response"]["usage"]["total_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn openai_responses_function_call() {
    let up = FakeUpstream::start();
    let call = Script::ToolCall {
        name: "shell".into(),
        id: "call_9".into(),
        arguments: json!({"command": ["ls"]}),
        text: Some("Running.".into()),
    };
    up.push(call.clone());
    up.push(call);
    let v = post_json(&up.url(), "/v1/responses", OPENAI, &responses_body(false)).json();
    assert_eq!(v["output"][1]["type"], "function_call");
    assert_eq!(v["output"][1]["call_id"], "call_9");
    assert_eq!(v["output"][1]["arguments"], "{\"command\":[\"ls\"]}");
    let parsed: Vec<Value> = post_json(&up.url(), "/v1/responses", OPENAI, &responses_body(true))
        .sse()
        .iter()
        .map(SseEvent::json)
        .collect();
    let added: Vec<&Value> = parsed
        .iter()
        .filter(|v| v["type"] == "response.output_item.added")
        .collect();
    assert_eq!(added[1]["output_index"], 1);
    assert_eq!(added[1]["item"]["type"], "function_call");
    assert_eq!(added[1]["item"]["arguments"], "");
    let args: String = parsed
        .iter()
        .filter(|v| v["type"] == "response.function_call_arguments.delta")
        .map(|v| v["delta"].as_str().unwrap())
        .collect();
    let done = parsed
        .iter()
        .find(|v| v["type"] == "response.function_call_arguments.done")
        .unwrap();
    assert_eq!(done["arguments"], args);
    assert_eq!(done["item_id"], added[1]["item"]["id"]);
    let completed = parsed.last().unwrap();
    assert_eq!(completed["response"]["output"][1]["name"], "shell");
}

#[test]
fn models_and_echo() {
    let up = FakeUpstream::start();
    let a = get(
        &up.url(),
        "/v1/models",
        &[("anthropic-version", "2023-06-01")],
    )
    .json();
    assert_eq!(a["data"][0]["type"], "model");
    assert_eq!(a["has_more"], false);
    let o = get(&up.url(), "/v1/models", &[]).json();
    assert_eq!(o["object"], "list");
    assert_eq!(o["data"][0]["object"], "model");
    let e = get(&up.url(), "/anything/else?x=1", &[]).json();
    assert_eq!(
        e,
        json!({"echo": true, "method": "GET", "path": "/anything/else?x=1"})
    );
    // Non-LLM routes consume no script.
    up.push(Script::Text("kept".into()));
    get(&up.url(), "/v1/models", &[]);
    assert_eq!(up.pending_scripts(), 1);
}
