//! Every layer keeps tool pairing on every protocol (the fake upstream refuses unpaired calls
//! and results as the providers do), and every protocol's client is shown a usage under its
//! auto-compaction threshold.

use serde_json::{Value, json};

use super::*;

const WINDOW: u64 = 16_000;

fn gateway_for(upstream: &FakeUpstream, model: &str) -> Gateway {
    let overrides = window_override(model, WINDOW, 2_048);
    Gateway::start_with(
        &upstream.url(),
        &[("LORE_MODEL_OVERRIDES", overrides.as_str())],
    )
}

/// Sends `body` and checks what came back; answers the layer.
fn send(gateway: &Gateway, path: &str, headers: &[(&str, &str)], body: &Value) -> (u8, Value) {
    let response = gateway.post(path, headers, body);
    assert_eq!(response.status, 200, "{}", response.text());
    let layer = response
        .header("x-lore-context-layer")
        .unwrap()
        .parse()
        .unwrap();
    (layer, response.json())
}

#[test]
fn openai_chat_tool_exchanges_stay_paired_at_every_layer() {
    let model = "gpt-ctx-pairing";
    let upstream = upstream_with_window(model, WINDOW);
    let gateway = gateway_for(&upstream, model);
    let headers = vec![
        ("authorization", "Bearer sk-chat-pairing"),
        ("x-session-id", "ctx-chat"),
    ];
    let tools = json!([{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]);
    let mut messages = vec![json!({"role": "system", "content": "You are a coding agent."})];
    let mut layers = Vec::new();
    for turn in 0..24 {
        messages.push(json!({"role": "user", "content": format!("task {turn}")}));
        let id = format!("call_{turn}");
        upstream.push(Script::ToolCall {
            name: "bash".into(),
            id: id.clone(),
            arguments: json!({"cmd": "ls"}),
            text: None,
        });
        let (layer, reply) = send(
            &gateway,
            "/v1/chat/completions",
            &headers,
            &json!({"model": model, "tools": tools, "messages": messages}),
        );
        layers.push(layer);
        messages.push(reply["choices"][0]["message"].clone());
        messages
            .push(json!({"role": "tool", "tool_call_id": id, "content": tool_output(turn, 2_400)}));
        upstream.push(Script::Text(format!("done {turn}")));
        let (layer, reply) = send(
            &gateway,
            "/v1/chat/completions",
            &headers,
            &json!({"model": model, "tools": tools, "messages": messages}),
        );
        layers.push(layer);
        // A 16K window leaves no room under the harness's threshold: the usage shown is 0.
        let prompt = reply["usage"]["prompt_tokens"].as_u64().unwrap();
        assert_eq!(prompt, 0, "shown {prompt}");
        messages.push(reply["choices"][0]["message"].clone());
    }
    assert!(layers.iter().any(|layer| *layer >= 1), "{layers:?}");
    assert!(
        upstream.overflows().len() <= 2,
        "{:?}",
        upstream.overflows()
    );
}

#[test]
fn responses_tool_exchanges_stay_paired_at_every_layer() {
    let model = "gpt-ctx-items";
    let upstream = upstream_with_window(model, WINDOW);
    let gateway = gateway_for(&upstream, model);
    let headers = vec![
        ("authorization", "Bearer sk-responses-pairing"),
        ("x-session-id", "ctx-responses"),
    ];
    let tools = json!([{"type": "function", "name": "bash", "parameters": {"type": "object"}}]);
    let mut input =
        vec![json!({"type": "message", "role": "developer", "content": "You are Codex."})];
    let mut layers = Vec::new();
    for turn in 0..24 {
        input.push(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": format!("task {turn}")}]}));
        let id = format!("call_{turn}");
        upstream.push(Script::ToolCall {
            name: "bash".into(),
            id: id.clone(),
            arguments: json!({"cmd": "ls"}),
            text: None,
        });
        let (layer, reply) = send(
            &gateway,
            "/v1/responses",
            &headers,
            &json!({"model": model, "tools": tools, "input": input}),
        );
        layers.push(layer);
        for item in reply["output"].as_array().unwrap() {
            input.push(item.clone());
        }
        input.push(json!({"type": "function_call_output", "call_id": id, "output": tool_output(turn, 2_400)}));
        upstream.push(Script::Text(format!("done {turn}")));
        let (layer, reply) = send(
            &gateway,
            "/v1/responses",
            &headers,
            &json!({"model": model, "tools": tools, "input": input}),
        );
        layers.push(layer);
        for item in reply["output"].as_array().unwrap() {
            input.push(item.clone());
        }
    }
    assert!(layers.iter().any(|layer| *layer >= 1), "{layers:?}");
    // The developer instructions stay first in every request.
    for body in upstream.conversation_bodies() {
        assert_eq!(body["input"][0]["role"], "developer");
    }
}

#[test]
fn anthropic_tool_exchanges_stay_paired_streamed_and_not() {
    let upstream = upstream_with_window(MODEL, WINDOW);
    let gateway = gateway_for(&upstream, MODEL);
    let mut coder = Coder::new(&gateway, &upstream, "ctx-anthropic-pairing");
    coder.stream = true;
    for turn in 0..16 {
        coder.turn(
            &format!("task {turn}"),
            &[tool_output(turn, 1_800), tool_output(turn + 50, 1_200)],
        );
    }
    assert!(
        coder.layers.iter().any(|layer| *layer >= 1),
        "{:?}",
        coder.layers
    );
    // Once layers replace outputs, what the model reads says so and names the tool.
    let bodies = upstream.conversation_bodies();
    let annotated = bodies
        .iter()
        .any(|body| body.to_string().contains("[output omitted — bash:"));
    let compressed = coder.layers.iter().any(|layer| *layer >= 2);
    assert!(!compressed || annotated, "layer 2 replaced no output");
}
