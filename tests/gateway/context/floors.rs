//! Floors and branches: a prompt-too-long answer retried at a higher layer inside the same
//! request and its floor kept across a restart; a large first sight compressed on the cold
//! turn; a free-write provider compressed earlier; a `previous_response_id` left at layer 0.

use serde_json::json;

use super::*;

#[test]
fn a_too_long_answer_is_retried_inside_the_request_and_the_floor_survives_a_restart() {
    // Lore believes 64K; the provider's window is really 12K.
    let upstream = upstream_with_window(MODEL, 12_000);
    let overrides = window_override(MODEL, 64_000, 4_096);
    let mut gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_MODEL_OVERRIDES", overrides.as_str())],
    );
    let mut coder = Coder::new(&gateway, &upstream, "ctx-floor");
    let mut turn = 0;
    while upstream.overflows().is_empty() {
        assert!(turn < 40, "the session never reached the provider's window");
        coder.turn(&format!("step {turn}"), &[tool_output(turn, 6_000)]);
        turn += 1;
    }
    // The client saw only successes (Coder asserts it); the refused request was sent again,
    // smaller, inside the same request.
    let refused = upstream.overflows();
    assert_eq!(refused.len(), 1, "{refused:?}");
    let session = only_session(&gateway);
    let context = context_of(&gateway, &session);
    assert!(context["floor"].as_u64().unwrap() >= 2, "{context}");
    assert!(context["layer"].as_u64().unwrap() >= 2, "{context}");
    assert!(*coder.layers.last().unwrap() >= 2, "{:?}", coder.layers);
    // After a restart the floor still holds: the next turn goes straight to a fitting layer.
    let (history, calls) = (std::mem::take(&mut coder.history), coder.calls);
    drop(coder);
    gateway.restart();
    let mut coder = Coder::new(&gateway, &upstream, "ctx-floor");
    coder.history = history;
    coder.calls = calls;
    coder.turn("after the restart", &[tool_output(99, 2_000)]);
    assert_eq!(
        upstream.overflows().len(),
        1,
        "no new refusal after the restart"
    );
    let context = context_of(&gateway, &session);
    assert!(context["floor"].as_u64().unwrap() >= 2, "{context}");
    assert!(
        coder.layers.iter().rev().take(2).all(|layer| *layer >= 2),
        "{:?}",
        coder.layers
    );
}

#[test]
fn when_nothing_fits_the_client_gets_the_providers_error_and_what_lore_tried() {
    let upstream = upstream_with_window(MODEL, 2_000);
    let overrides = window_override(MODEL, 64_000, 4_096);
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_MODEL_OVERRIDES", overrides.as_str())],
    );
    // One message far over the real window: no layer can shrink the current turn.
    let body = json!({"model": MODEL, "max_tokens": 100, "messages": [
        {"role": "user", "content": tool_output(1, 20_000)}
    ]});
    let response = gateway.post(
        "/v1/messages",
        &view(&anthropic_headers("k-nothing-fits")),
        &body,
    );
    assert_eq!(response.status, 400);
    let message = response.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.starts_with("prompt is too long"), "{message}");
    assert!(
        message.contains("Lore sent this request at layer"),
        "{message}"
    );
    assert!(
        message.contains(", 4"),
        "the last try was the smallest layer: {message}"
    );
    let attempts = upstream.overflows().len();
    assert!(
        (2..=3).contains(&attempts),
        "at most two retries: {attempts}"
    );
}

#[test]
fn a_large_first_sight_is_compressed_on_its_cold_turn() {
    let upstream = upstream_with_window(MODEL, 100_000);
    // $2 per million cache reads: a 50K cap, 35K on an uncalibrated turn.
    let overrides = json!({MODEL: {"context": 100_000, "output": 4_096, "cost": {"input": 20.0, "output": 60.0, "cache_read": 2.0}}}).to_string();
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_MODEL_OVERRIDES", overrides.as_str())],
    );
    let mut coder = Coder::new(&gateway, &upstream, "ctx-first-sight");
    // The whole history arrives at once, as when Lore joins a long session.
    for turn in 0..12 {
        coder.history.push(json!({"role": "user", "content": [{"type": "text", "text": format!("question {turn}")}]}));
        coder.history.push(json!({"role": "assistant", "content": [{"type": "text", "text": tool_output(turn, 14_000)}]}));
    }
    coder
        .history
        .push(json!({"role": "user", "content": [{"type": "text", "text": "and now?"}]}));
    upstream.push(Script::Text("ok".into()));
    coder.request();
    assert!(
        coder.layers[0] >= 1,
        "compressed on the first, uncalibrated turn: {:?}",
        coder.layers
    );
    let body = &upstream.conversation_bodies()[0];
    assert!(body["messages"].as_array().unwrap().len() < coder.history.len());
}

/// Plain sentences: the fake's count (a token per four characters) and Lore's estimate agree
/// closely on these.
fn prose(seed: usize, chars: usize) -> String {
    let words = [
        "the", "parser", "reads", "each", "token", "and", "keeps", "its", "position", "for",
        "later", "errors",
    ];
    let mut out = String::with_capacity(chars + 16);
    let mut n = seed;
    while out.len() < chars {
        out.push_str(words[n % words.len()]);
        out.push(' ');
        n = (n * 7 + 3) % 1_000_003;
    }
    out
}

/// Layers of six turns of a conversation growing by about 5K tokens a turn from 15K, through
/// the Anthropic or the OpenAI Chat protocol, with a 60K window.
fn growing_session(chat: bool) -> Vec<String> {
    let model = if chat {
        "gpt-ctx-free"
    } else {
        "claude-ctx-free"
    };
    let upstream = upstream_with_window(model, 60_000);
    let overrides = window_override(model, 60_000, 4_096);
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_MODEL_OVERRIDES", overrides.as_str())],
    );
    let mut history: Vec<serde_json::Value> = Vec::new();
    for turn in 0..3 {
        history.push(
            json!({"role": "user", "content": [{"type": "text", "text": prose(turn, 10_000)}]}),
        );
        history.push(json!({"role": "assistant", "content": [{"type": "text", "text": prose(turn + 10, 10_000)}]}));
    }
    let mut layers = Vec::new();
    for turn in 0..6 {
        history.push(json!({"role": "user", "content": [{"type": "text", "text": prose(turn + 20, 20_000), "cache_control": {"type": "ephemeral"}}]}));
        upstream.push(Script::Text(format!("answer {turn}")));
        let response = if chat {
            let messages: Vec<serde_json::Value> = history
                .iter()
                .map(|m| json!({"role": m["role"], "content": m["content"][0]["text"]}))
                .collect();
            let headers = vec![
                ("authorization", "Bearer sk-free-write"),
                ("x-session-id", "ctx-free-chat"),
            ];
            gateway.post(
                "/v1/chat/completions",
                &headers,
                &json!({"model": model, "messages": messages}),
            )
        } else {
            let headers = vec![
                ("x-api-key", "sk-writes"),
                ("anthropic-version", "2023-06-01"),
                ("x-claude-code-session-id", "ctx-free-anthropic"),
            ];
            let system = json!([{"type": "text", "text": "You are a coding agent.", "cache_control": {"type": "ephemeral"}}]);
            gateway.post(
                "/v1/messages",
                &headers,
                &json!({"model": model, "max_tokens": 100, "system": system, "messages": history}),
            )
        };
        assert_eq!(response.status, 200, "{}", response.text());
        layers.push(response.header("x-lore-context-layer").unwrap().to_string());
        if let Some(last) = history.last_mut() {
            last["content"][0]
                .as_object_mut()
                .unwrap()
                .remove("cache_control");
        }
        history.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {turn}")}]}));
    }
    layers
}

#[test]
fn a_free_write_provider_is_compressed_earlier() {
    // Anthropic reports cache writes: layer 0 holds up to the quality ceiling (80 % of 60K).
    let anthropic = growing_session(false);
    assert!(anthropic.iter().all(|layer| layer == "0"), "{anthropic:?}");
    // OpenAI reports none: after three turns the provider counts as free-write, and layer 0
    // may only use 65 % of the input window, so the same conversation is compressed.
    let chat = growing_session(true);
    assert_eq!(&chat[..3], ["0", "0", "0"], "{chat:?}");
    assert_ne!(chat[5], "0", "{chat:?}");
}

#[test]
fn a_previous_response_id_stays_at_layer_zero_and_says_why() {
    let upstream = upstream_with_window("gpt-ctx-test", 8_000);
    let overrides = window_override("gpt-ctx-test", 8_000, 1_024);
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_MODEL_OVERRIDES", overrides.as_str())],
    );
    let headers = vec![("authorization", "Bearer sk-responses")];
    upstream.push(Script::Text("first".into()));
    let first = json!({"model": "gpt-ctx-test", "input": [{"type": "message", "role": "user", "content": "hello"}]});
    let response = gateway.post("/v1/responses", &headers, &first);
    assert_eq!(response.status, 200, "{}", response.text());
    let id = response.json()["id"].as_str().unwrap().to_string();
    upstream.push(Script::Text("second".into()));
    // The provider holds the earlier turns; a long new input is still the provider's to manage.
    let next = json!({"model": "gpt-ctx-test", "previous_response_id": id, "input": [
        {"type": "message", "role": "user", "content": tool_output(3, 6_000)}
    ]});
    let response = gateway.post("/v1/responses", &headers, &next);
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.header("x-lore-context-layer"), Some("0"));
    let sent = upstream.conversation_bodies();
    assert_eq!(sent.last().unwrap()["previous_response_id"], id.as_str());
    let session = response.header("x-lore-session-id").unwrap().to_string();
    let context = context_of(&gateway, &session);
    assert_eq!(
        context["provider_managed"], "previous_response_id",
        "{context}"
    );
    assert!(
        context["reason"]
            .as_str()
            .unwrap()
            .contains("provider manages"),
        "{context}"
    );
}
