//! Streams are relayed as they arrive, kept alive through upstream silence, and captured even
//! when they break or the client leaves.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

/// Sends a request over a raw socket and returns every chunk read with its arrival time.
fn read_timed(
    gateway: &Gateway,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
    stop_after: Option<&str>,
) -> (Instant, Vec<(Instant, String)>) {
    let mut stream = TcpStream::connect(("127.0.0.1", gateway.port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let body = serde_json::to_vec(body).unwrap();
    let mut head = format!(
        "POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let sent_at = Instant::now();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(&body).unwrap();
    let mut chunks = Vec::new();
    let mut buffer = [0u8; 65536];
    let mut seen = String::new();
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let text = String::from_utf8_lossy(&buffer[..n]).into_owned();
                seen.push_str(&text);
                chunks.push((Instant::now(), text));
                if stop_after.is_some_and(|marker| seen.contains(marker)) {
                    break;
                }
                if seen.contains("message_stop")
                    || seen.contains("[DONE]")
                    || seen.contains("response.completed")
                {
                    break;
                }
            }
        }
    }
    (sent_at, chunks)
}

#[test]
fn every_protocol_streams_event_by_event() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    type Case = (&'static str, Vec<(&'static str, &'static str)>, Value);
    let cases: Vec<Case> = vec![
        (
            "/v1/messages",
            vec![("x-api-key", "k"), ("anthropic-version", "2023-06-01")],
            anthropic_body(json!([{"role": "user", "content": "slow please"}]), true),
        ),
        (
            "/v1/chat/completions",
            vec![("authorization", "Bearer k")],
            chat_body(json!([{"role": "user", "content": "slow please"}]), true),
        ),
        (
            "/v1/responses",
            vec![("authorization", "Bearer k")],
            json!({"model": "gpt-5", "input": "slow please", "stream": true}),
        ),
    ];
    for (path, headers, body) in cases {
        upstream.push(Script::SlowStream {
            text: "one two three four five".into(),
            chunks: 5,
            interval: Duration::from_millis(300),
        });
        let (_, chunks) = read_timed(&gateway, path, &headers, &body, None);
        let first_delta = chunks
            .iter()
            .find(|(_, text)| text.contains("one"))
            .expect("first delta")
            .0;
        let last = chunks.last().unwrap().0;
        // Five deltas 300 ms apart: a relay that buffers would deliver them all at once.
        assert!(
            last.duration_since(first_delta) >= Duration::from_millis(900),
            "{path}: deltas arrived together, the stream was buffered"
        );
        assert!(chunks.len() >= 5, "{path}: {} chunks", chunks.len());
    }
}

#[test]
fn a_silent_upstream_gets_keepalives_between_events() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start_with(&upstream.url(), &[("LORE_KEEPALIVE_SECS", "1")]);
    upstream.push(Script::Stall {
        first_events: 2,
        stall: Duration::from_millis(2600),
        text: "after the pause".into(),
    });
    let headers = [("x-api-key", "k"), ("anthropic-version", "2023-06-01")];
    let (_, chunks) = read_timed(
        &gateway,
        "/v1/messages",
        &headers,
        &anthropic_body(json!([{"role": "user", "content": "think long"}]), true),
        None,
    );
    let all: String = chunks.iter().map(|(_, text)| text.as_str()).collect();
    let pings = all.matches("event: ping").count();
    assert!(
        pings >= 2,
        "expected keepalive pings during 2.6 s of silence, got {pings}:\n{all}"
    );
    assert!(all.contains("message_stop"));

    upstream.push(Script::Stall {
        first_events: 2,
        stall: Duration::from_millis(1600),
        text: "openai pause".into(),
    });
    let (_, chunks) = read_timed(
        &gateway,
        "/v1/chat/completions",
        &[("authorization", "Bearer k")],
        &chat_body(json!([{"role": "user", "content": "think"}]), true),
        None,
    );
    let all: String = chunks.iter().map(|(_, text)| text.as_str()).collect();
    assert!(
        all.contains(": keepalive"),
        "OpenAI streams get SSE comments:\n{all}"
    );
}

#[test]
fn a_client_that_leaves_cancels_the_upstream_and_the_partial_reply_is_kept() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    upstream.push(Script::SlowStream {
        text: "alpha beta gamma delta epsilon zeta eta theta".into(),
        chunks: 8,
        interval: Duration::from_millis(250),
    });
    let headers = [("x-api-key", "k"), ("anthropic-version", "2023-06-01")];
    let (_, chunks) = read_timed(
        &gateway,
        "/v1/messages",
        &headers,
        &anthropic_body(json!([{"role": "user", "content": "long answer"}]), true),
        Some("beta"),
    );
    assert!(!chunks.is_empty());
    // The socket is closed here. The partial reply must be stored, marked partial.
    let session = single_session_with(&gateway, 2);
    let detail = gateway.session(session["id"].as_str().unwrap());
    let reply = &detail["messages"][1];
    assert_eq!(reply["partial"], true);
    let text = reply["text"].as_str().unwrap();
    assert!(text.starts_with("alpha"), "{text}");
    assert!(
        !text.contains("theta"),
        "the reply was cut, not completed: {text}"
    );
}

#[test]
fn a_broken_upstream_stream_ends_with_an_error_event_and_keeps_the_partial_reply() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    upstream.push(Script::BrokenStream {
        text: "never finished sentence".into(),
        after_events: 4,
    });
    let headers = [("x-api-key", "k"), ("anthropic-version", "2023-06-01")];
    let response = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(json!([{"role": "user", "content": "go"}]), true),
    );
    let events = response.sse();
    assert!(
        events
            .iter()
            .all(|e| e.event.as_deref() != Some("message_stop"))
    );
    let last = events.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("error"), "{events:?}");
    let session = single_session_with(&gateway, 2);
    let detail = gateway.session(session["id"].as_str().unwrap());
    assert_eq!(detail["messages"][1]["partial"], true);
}
