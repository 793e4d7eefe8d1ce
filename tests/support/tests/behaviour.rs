//! Behaviour tests: scripts (errors, faults, pacing), recording and the cache oracle,
//! against a live server.

use lore_test_support::http_client::{SseEvent, post_json, request};
use lore_test_support::{CacheObservation, FakeConfig, FakeUpstream, Script};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const KEY: &[(&str, &str)] = &[
    ("x-api-key", "sk-ant-test"),
    ("anthropic-version", "2023-06-01"),
];

fn msg(stream: bool, text: &str) -> Value {
    json!({"model": "claude-x", "stream": stream, "messages": [{"role": "user", "content": text}]})
}

#[test]
fn error_script_with_headers() {
    let up = FakeUpstream::start();
    up.push(Script::Error {
        status: 429,
        body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        headers: vec![("retry-after".into(), "7".into())],
    });
    let r = post_json(&up.url(), "/v1/messages", KEY, &msg(true, "hi"));
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("7"));
    assert_eq!(r.header("request-id"), Some("req_fake_1"));
    assert_eq!(r.json()["error"]["type"], "rate_limit_error");
    // Queue drained: next request is the default reply.
    let r = post_json(&up.url(), "/v1/messages", KEY, &msg(false, "again"));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["content"][0]["text"], "ok: again");
}

#[test]
fn scripts_are_fifo_and_default_resumes() {
    let up = FakeUpstream::start();
    up.push(Script::Text("one".into()));
    up.push(Script::Text("two".into()));
    let texts: Vec<Value> = (0..3)
        .map(|_| {
            post_json(&up.url(), "/v1/messages", KEY, &msg(false, "x")).json()["content"][0]["text"]
                .clone()
        })
        .collect();
    assert_eq!(texts, [json!("one"), json!("two"), json!("ok: x")]);
}

#[test]
fn broken_stream_aborts_without_terminal_event() {
    let up = FakeUpstream::start();
    up.push(Script::BrokenStream {
        text: "this will never finish properly".into(),
        after_events: 3,
    });
    let r = post_json(&up.url(), "/v1/messages", KEY, &msg(true, "x"));
    assert_eq!(r.status, 200);
    assert!(!r.complete, "chunked body must not be terminated");
    let ev = r.sse();
    assert_eq!(ev.len(), 3);
    assert!(
        ev.iter()
            .all(|e| e.event.as_deref() != Some("message_stop"))
    );
    // Huge after_events still never sends the terminal event.
    up.push(Script::BrokenStream {
        text: "abc".into(),
        after_events: 1000,
    });
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "x"}]});
    let r = post_json(&up.url(), "/v1/chat/completions", &[], &body);
    assert!(!r.complete);
    assert!(r.sse().iter().all(|e| e.data != "[DONE]"));
    // On a JSON request: half the body, then the connection drops.
    up.push(Script::BrokenStream {
        text: "abc".into(),
        after_events: 1,
    });
    let r = post_json(&up.url(), "/v1/messages", KEY, &msg(false, "x"));
    assert!(!r.complete);
    assert!(serde_json::from_slice::<Value>(&r.body).is_err());
    // The server survives.
    assert_eq!(
        post_json(&up.url(), "/v1/messages", KEY, &msg(false, "x")).status,
        200
    );
}

#[test]
fn slow_stream_stall_and_delayed_headers_are_paced() {
    let up = FakeUpstream::start();
    up.push(Script::SlowStream {
        text: "abcdefgh".into(),
        chunks: 4,
        interval: Duration::from_millis(50),
    });
    let t = Instant::now();
    let r = post_json(&up.url(), "/v1/messages", KEY, &msg(true, "x"));
    assert!(t.elapsed() >= Duration::from_millis(200));
    let deltas = r
        .sse()
        .iter()
        .filter(|e| e.event.as_deref() == Some("content_block_delta"))
        .count();
    assert_eq!(deltas, 4);

    up.push(Script::Stall {
        first_events: 2,
        stall: Duration::from_millis(300),
        text: "hi".into(),
    });
    let t = Instant::now();
    let r = post_json(&up.url(), "/v1/messages", KEY, &msg(true, "x"));
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert!(r.complete);

    up.push(Script::DelayHeaders(
        Duration::from_millis(250),
        Box::new(Script::Text("late".into())),
    ));
    let t = Instant::now();
    let v = post_json(&up.url(), "/v1/messages", KEY, &msg(false, "x")).json();
    assert!(t.elapsed() >= Duration::from_millis(250));
    assert_eq!(v["content"][0]["text"], "late");
}

#[test]
fn event_interval_paces_every_event() {
    let up = FakeUpstream::start_with(FakeConfig {
        event_interval: Duration::from_millis(20),
        ..FakeConfig::default()
    });
    let t = Instant::now();
    let ev = post_json(&up.url(), "/v1/messages", KEY, &msg(true, "x")).sse();
    assert!(t.elapsed() >= Duration::from_millis(20) * (ev.len() as u32 - 1));
}

#[test]
fn records_every_request_byte_for_byte() {
    let up = FakeUpstream::start();
    let raw = b"{\"model\":  \"m\", \"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    let r = request(
        &up.url(),
        "POST",
        "/v1/messages?beta=true",
        &[
            ("X-Api-Key", "secret"),
            ("content-type", "application/json"),
        ],
        raw,
    )
    .unwrap();
    assert_eq!(r.status, 200);
    // Compressed bodies are recorded as sent (no decompression) and ignored otherwise.
    request(
        &up.url(),
        "POST",
        "/other",
        &[("content-encoding", "gzip")],
        b"\x1f\x8bnot-really",
    )
    .unwrap();
    let reqs = up.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/v1/messages?beta=true");
    assert_eq!(reqs[0].header("x-api-key"), Some("secret"));
    assert!(
        reqs[0]
            .headers
            .iter()
            .all(|(k, _)| *k == k.to_ascii_lowercase())
    );
    assert_eq!(&reqs[0].body[..], raw);
    assert_eq!(reqs[0].json()["model"], "m");
    assert_eq!(&reqs[1].body[..], b"\x1f\x8bnot-really");
    up.clear_requests();
    assert!(up.requests().is_empty());
    assert_eq!(up.cache_observations().len(), 1);
}

fn cached_request(messages: Value) -> Value {
    json!({
        "model": "claude-x",
        "stream": true,
        "system": [{"type": "text", "text": "S".repeat(4000), "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
    })
}

fn start_usage(ev: &[SseEvent]) -> Value {
    ev[0].json()["message"]["usage"].clone()
}

#[test]
fn cache_oracle_numbers_reach_usage_and_observations() {
    let up = FakeUpstream::start();
    let turn1 = json!([{"role": "user", "content": [
        {"type": "text", "text": "U".repeat(2000), "cache_control": {"type": "ephemeral"}}
    ]}]);
    let a = start_usage(
        &post_json(
            &up.url(),
            "/v1/messages",
            KEY,
            &cached_request(turn1.clone()),
        )
        .sse(),
    );
    let b = start_usage(&post_json(&up.url(), "/v1/messages", KEY, &cached_request(turn1)).sse());
    assert_eq!(a["cache_read_input_tokens"], 0);
    assert_eq!(
        b["cache_read_input_tokens"],
        a["cache_creation_input_tokens"]
    );
    assert_eq!(b["cache_creation_input_tokens"], 0);
    let turn2 = json!([
        {"role": "user", "content": [{"type": "text", "text": "U".repeat(2000)}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A".repeat(400)}]},
        {"role": "user", "content": [{"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}]},
    ]);
    let c = start_usage(&post_json(&up.url(), "/v1/messages", KEY, &cached_request(turn2)).sse());
    assert_eq!(
        c["cache_read_input_tokens"],
        a["cache_creation_input_tokens"]
    );
    assert!(c["cache_creation_input_tokens"].as_u64().unwrap() > 100);
    let obs = up.cache_observations();
    assert_eq!(obs.len(), 3);
    assert_eq!(
        obs[1],
        CacheObservation {
            path: "/v1/messages".into(),
            input_tokens: 0,
            cache_read: a["cache_creation_input_tokens"].as_u64().unwrap(),
            cache_creation: 0,
        }
    );
    // A different credential shares no cache.
    let other = [("x-api-key", "sk-other")];
    let turn1 = json!([{"role": "user", "content": "x"}]);
    let d =
        start_usage(&post_json(&up.url(), "/v1/messages", &other, &cached_request(turn1)).sse());
    assert_eq!(d["cache_read_input_tokens"], 0);
}

#[test]
fn openai_cached_tokens_reported() {
    let up = FakeUpstream::start();
    let auth = [("authorization", "Bearer sk-1")];
    let body = json!({
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": "P".repeat(8000)}, {"role": "user", "content": "q"}],
    });
    let first = post_json(&up.url(), "/v1/chat/completions", &auth, &body).json();
    assert_eq!(first["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
    let second = post_json(&up.url(), "/v1/chat/completions", &auth, &body).json();
    let cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap();
    assert!(cached >= 1920 && cached.is_multiple_of(128), "{cached}");
    let resp =
        json!({"model": "gpt-5", "instructions": "I".repeat(8000), "input": "go", "stream": true});
    post_json(&up.url(), "/v1/responses", &auth, &resp);
    let ev = post_json(&up.url(), "/v1/responses", &auth, &resp).sse();
    let usage = &ev.last().unwrap().json()["response"]["usage"];
    assert!(
        usage["input_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap()
            >= 1920
    );
    let obs = up.cache_observations();
    assert_eq!(obs.len(), 4);
    assert_eq!(obs[3].path, "/v1/responses");
    assert_eq!(obs[3].cache_creation, 0);
}

#[test]
fn concurrent_streams_and_drop_stops_server() {
    let up = FakeUpstream::start_with(FakeConfig {
        event_interval: Duration::from_millis(10),
        ..FakeConfig::default()
    });
    let url = up.url();
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                post_json(&url, "/v1/messages", KEY, &msg(true, &format!("n{i}")))
            })
        })
        .collect();
    for h in handles {
        assert!(h.join().unwrap().complete);
    }
    assert_eq!(up.requests().len(), 8);
    let port = up.port();
    drop(up);
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
}

/// CRC-32 (IEEE) for the hand-made gzip member below.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A valid gzip stream using one stored (uncompressed) deflate block.
fn gzip_stored(data: &[u8]) -> Vec<u8> {
    let len = u16::try_from(data.len()).expect("stored block fits 64 KiB");
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 1];
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(data);
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

#[test]
fn gzip_request_bodies_are_decoded_for_replies_but_recorded_raw() {
    let up = FakeUpstream::start();
    let plain = serde_json::to_vec(&msg(false, "zipped hello")).unwrap();
    let gz = gzip_stored(&plain);
    let r = request(
        &up.url(),
        "POST",
        "/v1/messages",
        &[
            ("content-encoding", "gzip"),
            ("content-type", "application/json"),
        ],
        &gz,
    )
    .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["content"][0]["text"], "ok: zipped hello");
    assert_eq!(&up.requests()[0].body[..], &gz[..]);
}

#[test]
fn drop_during_a_stalled_stream_does_not_hang() {
    let up = FakeUpstream::start();
    up.push(Script::Stall {
        first_events: 1,
        stall: Duration::from_secs(30),
        text: "never".into(),
    });
    let url = up.url();
    let client = std::thread::spawn(move || {
        request(
            &url,
            "POST",
            "/v1/messages",
            &[],
            &serde_json::to_vec(&msg(true, "x")).unwrap(),
        )
    });
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    drop(up);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "drop took {:?}",
        t.elapsed()
    );
    let r = client.join().unwrap();
    assert!(r.map(|r| !r.complete).unwrap_or(true));
}

#[test]
fn handle_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<FakeUpstream>();
}

#[test]
fn a_prompt_over_the_model_window_gets_the_providers_too_long_answer() {
    let up = FakeUpstream::start_with(FakeConfig {
        context_limits: vec![("small-".into(), 50)],
        ..FakeConfig::default()
    });
    let long = "word ".repeat(400);
    let anthropic = serde_json::json!({"model": "small-model", "max_tokens": 10,
        "messages": [{"role": "user", "content": long}]});
    let r = post_json(&up.url(), "/v1/messages", KEY, &anthropic);
    assert_eq!(r.status, 400);
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.starts_with("prompt is too long: "), "{message}");
    assert!(message.ends_with("tokens > 50 maximum"), "{message}");
    let chat = serde_json::json!({"model": "small-model",
        "messages": [{"role": "user", "content": long}]});
    let r = post_json(&up.url(), "/v1/chat/completions", KEY, &chat);
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], "context_length_exceeded");
    // Other models and short prompts pass; refusals are listed and cache nothing.
    let other = serde_json::json!({"model": "big-model", "max_tokens": 10,
        "messages": [{"role": "user", "content": long}]});
    assert_eq!(
        post_json(&up.url(), "/v1/messages", KEY, &other).status,
        200
    );
    let short = serde_json::json!({"model": "small-model", "max_tokens": 10,
        "messages": [{"role": "user", "content": "hi"}]});
    assert_eq!(
        post_json(&up.url(), "/v1/messages", KEY, &short).status,
        200
    );
    let overflows = up.overflows();
    assert_eq!(overflows.len(), 2);
    assert!(
        overflows
            .iter()
            .all(|(model, tokens, limit)| model == "small-model" && *tokens > *limit)
    );
}
