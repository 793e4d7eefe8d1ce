//! The recall tool through the gateway: injected into tool-bearing requests, answered inside the
//! same response when the model calls only recall (streamed and not, Anthropic and OpenAI Chat),
//! kept as a marker beside client tools and expanded on the next turn, after a restart too.

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

/// Stores a conversation the recall tool can find, and waits until it is searchable.
fn remember(gateway: &Gateway, upstream: &FakeUpstream, fact: &str, probe: &str) {
    upstream.push(Script::Text(fact.to_string()));
    gateway.post(
        "/v1/messages",
        &view(&anthropic_headers("k-memory")),
        &anthropic_body(
            json!([{"role": "user", "content": "remind me later"}]),
            false,
        ),
    );
    eventually("the fact to be searchable", || {
        let answer = gateway
            .get(&format!("/api/v1/recall?q={probe}&mode=bm25"))
            .json();
        let found = answer["results"].as_array().is_some_and(|results| {
            results
                .iter()
                .any(|r| r["snippet"].as_str().is_some_and(|s| s.contains(probe)))
        });
        found.then_some(())
    });
}

fn bash_tool_anthropic() -> Value {
    json!({"name": "bash", "description": "run a command", "input_schema": {"type": "object", "properties": {"cmd": {"type": "string"}}}})
}

fn bash_tool_chat() -> Value {
    json!({"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}})
}

fn upstream_bodies(upstream: &FakeUpstream) -> Vec<Value> {
    upstream
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/v1/messages") || r.path.starts_with("/v1/chat"))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

#[test]
fn anthropic_stream_answers_recall_inside_the_same_response() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    remember(
        &gateway,
        &upstream,
        "The deploy command is make ship-prod with the blue-green flag.",
        "ship-prod",
    );
    upstream.clear_requests();
    upstream.push(Script::ToolCall {
        name: "recall".into(),
        id: "toolu_r1".into(),
        arguments: json!({"query": "deploy command ship-prod"}),
        text: Some("Let me check my notes.".into()),
    });
    upstream.push(Script::Text("We deploy with make ship-prod.".into()));
    let mut body = anthropic_body(
        json!([{"role": "user", "content": "how do we deploy?"}]),
        true,
    );
    body["tools"] = json!([bash_tool_anthropic()]);
    let response = gateway.post("/v1/messages", &view(&anthropic_headers("k-user")), &body);
    assert_eq!(response.status, 200, "{}", response.text());
    let events = response.sse();
    let data: Vec<Value> = events
        .iter()
        .filter_map(|e| serde_json::from_str(&e.data).ok())
        .collect();
    let kinds: Vec<&str> = data.iter().filter_map(|d| d["type"].as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "message_start").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "message_stop").count(),
        1,
        "{kinds:?}"
    );
    assert!(
        !response.text().contains("tool_use"),
        "the client never sees the recall call"
    );
    // Blocks: 0 the model's text, 1 the marker, 2 the continuation; each opened and closed once.
    let starts: Vec<u64> = data
        .iter()
        .filter(|d| d["type"] == "content_block_start")
        .map(|d| d["index"].as_u64().unwrap())
        .collect();
    let stops: Vec<u64> = data
        .iter()
        .filter(|d| d["type"] == "content_block_stop")
        .map(|d| d["index"].as_u64().unwrap())
        .collect();
    assert_eq!(starts, [0, 1, 2]);
    assert_eq!(stops, [0, 1, 2]);
    let mut texts = vec![String::new(); 3];
    for d in data.iter().filter(|d| d["type"] == "content_block_delta") {
        texts[d["index"].as_u64().unwrap() as usize]
            .push_str(d["delta"]["text"].as_str().unwrap_or(""));
    }
    assert_eq!(texts[0], "Let me check my notes.");
    assert!(
        texts[1].starts_with("📚 Searching all archives for \"deploy command ship-prod\""),
        "{}",
        texts[1]
    );
    assert_eq!(texts[2], "We deploy with make ship-prod.");
    let last_delta = data.iter().rfind(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(last_delta["delta"]["stop_reason"], "end_turn");

    let bodies = upstream_bodies(&upstream);
    assert_eq!(bodies.len(), 2, "one follow-up");
    let tools = bodies[0]["tools"].as_array().unwrap();
    assert_eq!(
        tools.last().unwrap()["name"],
        "recall",
        "recall is the last tool"
    );
    let followup = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(followup[1]["content"][1]["type"], "tool_use");
    assert_eq!(followup[1]["content"][1]["id"], "toolu_r1");
    let result = followup[2]["content"][0]["content"].as_str().unwrap();
    assert!(
        result.contains("ship-prod"),
        "the recall result reached the model: {result}"
    );

    // Next turn: the client resends what it saw; the model gets exactly the follow-up's history.
    upstream.clear_requests();
    upstream.push(Script::Text("You're welcome.".into()));
    let mut next = body.clone();
    next["messages"] = json!([
        {"role": "user", "content": "how do we deploy?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": texts[0]},
            {"type": "text", "text": texts[1]},
            {"type": "text", "text": texts[2]},
        ]},
        {"role": "user", "content": "thanks"},
    ]);
    next["stream"] = json!(false);
    let response = gateway.post("/v1/messages", &view(&anthropic_headers("k-user")), &next);
    assert_eq!(response.status, 200);
    let sent = upstream_bodies(&upstream);
    let messages = sent[0]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    assert_eq!(
        messages[..3],
        followup[..],
        "expansion rebuilds the follow-up's history"
    );
    assert_eq!(
        messages[3]["content"][0]["text"],
        "We deploy with make ship-prod."
    );
    // One conversation that the follow-up and the next turn extend, never a fork.
    let session = response.header("x-lore-session-id").unwrap().to_string();
    let record = eventually("the next turn captured", || {
        gateway
            .sessions()
            .into_iter()
            .find(|s| s["id"] == session.as_str() && s["messages"] == 6)
    });
    assert_eq!(record["forks"], 0, "{record}");
}

#[test]
fn chat_json_recall_only_is_answered_and_merged() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    remember(
        &gateway,
        &upstream,
        "Our staging database is postgres on port 6543.",
        "staging",
    );
    upstream.clear_requests();
    upstream.push(Script::ToolCall {
        name: "recall".into(),
        id: "call_r1".into(),
        arguments: json!({"query": "staging database port"}),
        text: None,
    });
    upstream.push(Script::Text("Staging postgres listens on 6543.".into()));
    // A long system prompt makes the prompt cacheable (≥ 1,024 fake tokens).
    let system = "You are a careful coding assistant. ".repeat(150);
    let mut body = chat_body(
        json!([{"role": "system", "content": system}, {"role": "user", "content": "what port is staging db?"}]),
        false,
    );
    body["tools"] = json!([bash_tool_chat()]);
    let response = gateway.post(
        "/v1/chat/completions",
        &[("authorization", "Bearer sk-user")],
        &body,
    );
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.header("x-lore-recall-invoked"), Some("true"));
    let reply = response.json();
    let message = &reply["choices"][0]["message"];
    assert!(message.get("tool_calls").is_none(), "{reply}");
    assert_eq!(reply["choices"][0]["finish_reason"], "stop");
    let content = message["content"].as_str().unwrap();
    assert!(
        content.contains("📚 Searching all archives for \"staging database port\""),
        "{content}"
    );
    assert!(
        content.ends_with("Staging postgres listens on 6543."),
        "{content}"
    );
    let bodies = upstream_bodies(&upstream);
    assert_eq!(bodies.len(), 2);
    let first_usage = reply["usage"]["prompt_tokens"].as_u64().unwrap();
    assert!(
        first_usage > 1000,
        "usage is summed over both calls: {first_usage}"
    );
    let followup = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(followup[2]["tool_calls"][0]["function"]["name"], "recall");
    assert_eq!(followup[3]["role"], "tool");
    assert!(followup[3]["content"].as_str().unwrap().contains("6543"));

    // The next turn reuses the whole follow-up prompt from the provider's cache.
    upstream.clear_requests();
    upstream.push(Script::Text("Sure.".into()));
    let mut next = body.clone();
    next["messages"] = json!([
        {"role": "system", "content": system},
        {"role": "user", "content": "what port is staging db?"},
        {"role": "assistant", "content": content},
        {"role": "user", "content": "and prod?"},
    ]);
    let before = upstream.cache_observations().len();
    let response = gateway.post(
        "/v1/chat/completions",
        &[("authorization", "Bearer sk-user")],
        &next,
    );
    assert_eq!(response.status, 200);
    let sent = upstream_bodies(&upstream);
    let messages = sent[0]["messages"].as_array().unwrap();
    assert_eq!(
        messages[..4],
        followup[..],
        "expansion rebuilds the follow-up's history"
    );
    let observations = upstream.cache_observations();
    let followup_prompt = observations[before - 1].input_tokens;
    let cached = observations[before].cache_read;
    assert!(
        cached + 128 > followup_prompt,
        "cached {cached} of a {followup_prompt}-token follow-up"
    );
}

#[test]
fn recall_beside_a_client_tool_becomes_a_marker_expanded_after_a_restart() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    remember(
        &gateway,
        &upstream,
        "The flaky test is test_refund_race in billing.",
        "test_refund_race",
    );
    upstream.clear_requests();
    upstream.push(Script::ToolCalls {
        calls: vec![
            (
                "recall".into(),
                "toolu_rec".into(),
                json!({"query": "flaky test", "scope": "all"}),
            ),
            (
                "bash".into(),
                "toolu_bash".into(),
                json!({"cmd": "pytest -x"}),
            ),
        ],
        text: None,
    });
    let mut body = anthropic_body(
        json!([{"role": "user", "content": "fix the flaky test"}]),
        true,
    );
    body["tools"] = json!([bash_tool_anthropic()]);
    let response = gateway.post("/v1/messages", &view(&anthropic_headers("k-user")), &body);
    let data: Vec<Value> = response
        .sse()
        .iter()
        .filter_map(|e| serde_json::from_str(&e.data).ok())
        .collect();
    let blocks: Vec<&Value> = data
        .iter()
        .filter(|d| d["type"] == "content_block_start")
        .map(|d| &d["content_block"])
        .collect();
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0]["type"], "text");
    assert_eq!(blocks[1]["name"], "bash");
    let marker: String = data
        .iter()
        .filter(|d| d["type"] == "content_block_delta" && d["index"] == 0)
        .filter_map(|d| d["delta"]["text"].as_str())
        .collect();
    assert!(marker.contains("[r:"), "{marker}");
    let stop = data.iter().rfind(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(
        stop["delta"]["stop_reason"], "tool_use",
        "the client still runs its tool"
    );
    assert_eq!(
        upstream_bodies(&upstream).len(),
        1,
        "no follow-up beside client tools"
    );

    // The record outlives the process.
    gateway.restart();
    upstream.clear_requests();
    upstream.push(Script::Text("Fixed.".into()));
    let mut next = body.clone();
    next["stream"] = json!(false);
    next["messages"] = json!([
        {"role": "user", "content": "fix the flaky test"},
        {"role": "assistant", "content": [
            {"type": "text", "text": marker},
            {"type": "tool_use", "id": "toolu_bash", "name": "bash", "input": {"cmd": "pytest -x"}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_bash", "content": "1 failed"}]},
    ]);
    let response = gateway.post("/v1/messages", &view(&anthropic_headers("k-user")), &next);
    assert_eq!(response.status, 200, "{}", response.text());
    let sent = upstream_bodies(&upstream);
    let messages = sent[0]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["content"][0]["type"], "tool_use");
    assert_eq!(messages[1]["content"][0]["id"], "toolu_rec");
    assert_eq!(messages[1]["content"][1]["id"], "toolu_bash");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_rec");
    assert!(
        messages[2]["content"][0]["content"]
            .as_str()
            .unwrap()
            .contains("test_refund_race")
    );
    assert_eq!(messages[2]["content"][1]["tool_use_id"], "toolu_bash");
}

#[test]
fn chat_stream_recall_only_continues_in_one_stream() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    remember(
        &gateway,
        &upstream,
        "The cache TTL for sessions is 45 minutes.",
        "TTL",
    );
    upstream.clear_requests();
    upstream.push(Script::ToolCall {
        name: "recall".into(),
        id: "call_r9".into(),
        arguments: json!({"query": "session cache TTL"}),
        text: Some("Checking.".into()),
    });
    upstream.push(Script::Text("It is 45 minutes.".into()));
    let mut body = chat_body(
        json!([{"role": "user", "content": "what's the session TTL?"}]),
        true,
    );
    body["tools"] = json!([bash_tool_chat()]);
    body["stream_options"] = json!({"include_usage": true});
    let response = gateway.post(
        "/v1/chat/completions",
        &[("authorization", "Bearer sk-user")],
        &body,
    );
    assert_eq!(response.status, 200);
    let events = response.sse();
    assert_eq!(
        events.iter().filter(|e| e.data.trim() == "[DONE]").count(),
        1
    );
    assert_eq!(events.last().unwrap().data.trim(), "[DONE]");
    let chunks: Vec<Value> = events
        .iter()
        .filter_map(|e| serde_json::from_str(&e.data).ok())
        .collect();
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert!(
        content.starts_with("Checking.\n\n📚 Searching all archives for \"session cache TTL\""),
        "{content}"
    );
    assert!(content.ends_with("It is 45 minutes."), "{content}");
    assert!(
        chunks
            .iter()
            .all(|c| c["choices"][0]["delta"].get("tool_calls").is_none())
    );
    let finishes: Vec<&str> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["finish_reason"].as_str())
        .collect();
    assert_eq!(finishes, ["stop"]);
    let usage: Vec<&Value> = chunks
        .iter()
        .filter(|c| c["usage"].is_object())
        .map(|c| &c["usage"])
        .collect();
    assert_eq!(usage.len(), 1, "one usage chunk for the whole response");
    assert_eq!(upstream_bodies(&upstream).len(), 2);
}

#[test]
fn requests_without_tools_or_with_recall_off_are_forwarded_untouched() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let body = anthropic_body(json!([{"role": "user", "content": "hello"}]), false);
    gateway.post("/v1/messages", &view(&anthropic_headers("k")), &body);
    let sent = upstream.requests();
    assert_eq!(
        sent.last().unwrap().body,
        serde_json::to_vec(&body).unwrap()
    );

    let upstream = FakeUpstream::start();
    let gateway = Gateway::start_with(&upstream.url(), &[("LORE_RECALL_TOOL", "off")]);
    let mut body = anthropic_body(json!([{"role": "user", "content": "hello"}]), false);
    body["tools"] = json!([bash_tool_anthropic()]);
    gateway.post("/v1/messages", &view(&anthropic_headers("k")), &body);
    assert_eq!(
        upstream.requests().last().unwrap().body,
        serde_json::to_vec(&body).unwrap()
    );
}

#[test]
fn responses_stream_answers_recall_inside_the_same_response() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    remember(
        &gateway,
        &upstream,
        "The nightly backup bucket is s3://acme-backups-eu.",
        "acme-backups-eu",
    );
    upstream.clear_requests();
    upstream.push(Script::ToolCall {
        name: "recall".into(),
        id: "call_resp_1".into(),
        arguments: json!({"query": "backup bucket"}),
        text: Some("Looking it up.".into()),
    });
    upstream.push(Script::Text("It is s3://acme-backups-eu.".into()));
    let body = json!({
        "model": "gpt-5",
        "input": "where do backups go?",
        "stream": true,
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}}],
    });
    let response = gateway.post(
        "/v1/responses",
        &[("authorization", "Bearer sk-user")],
        &body,
    );
    assert_eq!(response.status, 200, "{}", response.text());
    let events: Vec<Value> = response
        .sse()
        .iter()
        .filter_map(|e| serde_json::from_str(&e.data).ok())
        .collect();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "response.created").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(kinds.last(), Some(&"response.completed"), "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| **k == "response.completed").count(),
        1
    );
    assert!(
        !response.text().contains("function_call"),
        "the client never sees the recall call"
    );
    let sequence: Vec<u64> = events
        .iter()
        .filter_map(|e| e["sequence_number"].as_u64())
        .collect();
    assert!(
        sequence.windows(2).all(|w| w[1] == w[0] + 1),
        "{sequence:?}"
    );
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert!(
        text.starts_with("Looking it up.📚 Searching all archives for \"backup bucket\""),
        "{text}"
    );
    assert!(text.ends_with("It is s3://acme-backups-eu."), "{text}");
    let completed = events.last().unwrap();
    let output = completed["response"]["output"].as_array().unwrap();
    assert_eq!(output.len(), 3, "{output:?}");
    assert!(output.iter().all(|item| item["type"] == "message"));

    let bodies = upstream_bodies_at(&upstream, "/v1/responses");
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["tools"][1]["name"], "recall");
    let followup = bodies[1]["input"].as_array().unwrap();
    let n = followup.len();
    assert_eq!(followup[n - 2]["type"], "function_call");
    assert_eq!(followup[n - 1]["type"], "function_call_output");
    assert!(
        followup[n - 1]["output"]
            .as_str()
            .unwrap()
            .contains("acme-backups-eu")
    );

    // Next turn: the client sends the output items back; the model gets the follow-up's input.
    upstream.clear_requests();
    upstream.push(Script::Text("Sure.".into()));
    let mut input = vec![json!({"role": "user", "content": "where do backups go?"})];
    input.extend(output.iter().cloned());
    input.push(json!({"role": "user", "content": "thanks"}));
    let next = json!({"model": "gpt-5", "input": input, "tools": body["tools"].clone()});
    let response = gateway.post(
        "/v1/responses",
        &[("authorization", "Bearer sk-user")],
        &next,
    );
    assert_eq!(response.status, 200, "{}", response.text());
    let sent = upstream_bodies_at(&upstream, "/v1/responses");
    let items = sent[0]["input"].as_array().unwrap();
    assert_eq!(items[n - 2]["type"], "function_call", "{items:?}");
    assert_eq!(
        items[n - 1],
        followup[n - 1],
        "expansion rebuilds the call and its output"
    );
    assert_eq!(items.last().unwrap()["content"], "thanks");
}

fn upstream_bodies_at(upstream: &FakeUpstream, path: &str) -> Vec<Value> {
    upstream
        .requests()
        .iter()
        .filter(|r| r.path.starts_with(path))
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect()
}

#[test]
fn responses_json_recall_only_is_answered_and_merged() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    remember(
        &gateway,
        &upstream,
        "The on-call rota lives in ops/rota.yaml.",
        "rota",
    );
    upstream.clear_requests();
    upstream.push(Script::ToolCall {
        name: "recall".into(),
        id: "call_resp_2".into(),
        arguments: json!({"query": "on-call rota file"}),
        text: None,
    });
    upstream.push(Script::Text("See ops/rota.yaml.".into()));
    let body = json!({
        "model": "gpt-5",
        "input": [{"role": "user", "content": "where is the rota?"}],
        "tools": [{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {}}}],
    });
    let response = gateway.post(
        "/v1/responses",
        &[("authorization", "Bearer sk-user")],
        &body,
    );
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.header("x-lore-recall-invoked"), Some("true"));
    let reply = response.json();
    let output = reply["output"].as_array().unwrap();
    assert!(
        output.iter().all(|item| item["type"] == "message"),
        "{reply}"
    );
    assert!(
        output[0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("📚 Searching all archives")
    );
    assert_eq!(
        output.last().unwrap()["content"][0]["text"],
        "See ops/rota.yaml."
    );
    assert_eq!(reply["status"], "completed");
    let bodies = upstream_bodies_at(&upstream, "/v1/responses");
    assert_eq!(bodies.len(), 2);
    let followup = bodies[1]["input"].as_array().unwrap();
    assert!(
        followup.last().unwrap()["output"]
            .as_str()
            .unwrap()
            .contains("rota.yaml")
    );
}
