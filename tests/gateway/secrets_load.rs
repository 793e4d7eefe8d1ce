//! Secrets under load: 2,400 requests from 8 threads, each with its own provider key, bearer
//! token, gateway token-looking header and custom auth header, through every route (Anthropic,
//! OpenAI Chat, Responses, the Codex backend, passthrough), streamed and not, with the memory
//! workers on; then no byte of any of them is in the data directory or the log. Every secret
//! holds the marker `LEAKCHECK`, which nothing else contains, so even a partial copy is found.

use lore_test_support::FakeUpstream;
use lore_test_support::http_client;
use serde_json::json;

use crate::helpers::*;

const THREADS: usize = 8;
const PER_THREAD: usize = 300;
const MARKER: &[u8] = b"LEAKCHECK";

#[test]
fn thousands_of_distinct_keys_never_reach_the_disk_or_the_log() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_MEMORY", "on"), ("LORE_IDLE_TIMEOUT", "0.2")],
    );
    let base = gateway.url();
    let workers: Vec<_> = (0..THREADS)
        .map(|thread| {
            let base = base.clone();
            std::thread::spawn(move || {
                let mut answered = 0usize;
                for i in 0..PER_THREAD {
                    let n = thread * PER_THREAD + i;
                    let key = format!("sk-ant-LEAKCHECK-{n:05}-a9f3e1");
                    let bearer = format!("Bearer sk-proj-LEAKCHECK-{n:05}-77c2");
                    let custom = format!("tok-LEAKCHECK-{n:05}");
                    let stream = n.is_multiple_of(2);
                    let text = format!("question {n}");
                    let (path, headers, body) = match n % 5 {
                        0 => (
                            "/v1/messages",
                            vec![("x-api-key", key.as_str()), ("anthropic-version", "2023-06-01")],
                            anthropic_body(json!([{"role": "user", "content": text}]), stream),
                        ),
                        1 => (
                            "/v1/chat/completions",
                            vec![("authorization", bearer.as_str())],
                            chat_body(json!([{"role": "user", "content": text}]), stream),
                        ),
                        2 => (
                            "/v1/responses",
                            vec![("authorization", bearer.as_str())],
                            json!({"model": "gpt-5", "stream": stream, "input": text}),
                        ),
                        3 => (
                            "/v1/codex/responses",
                            vec![("authorization", bearer.as_str()), ("chatgpt-account-id", custom.as_str())],
                            json!({"model": "gpt-5-codex", "stream": true, "input": [{"role": "user", "content": [{"type": "input_text", "text": text}]}]}),
                        ),
                        _ => (
                            "/v1/models",
                            vec![("x-api-key", key.as_str()), ("authorization", bearer.as_str())],
                            json!({}),
                        ),
                    };
                    let mut all = headers;
                    all.push(("x-custom-auth", custom.as_str()));
                    all.push(("content-type", "application/json"));
                    let method = if path == "/v1/models" { "GET" } else { "POST" };
                    let payload = if method == "GET" { Vec::new() } else { body.to_string().into_bytes() };
                    let response = http_client::request(&base, method, path, &all, &payload)
                        .unwrap_or_else(|err| panic!("{path}: {err}"));
                    assert!(response.status < 500, "{path}: {} {}", response.status, response.text());
                    answered += 1;
                }
                answered
            })
        })
        .collect();
    let answered: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(answered, THREADS * PER_THREAD);
    eventually("the conversations stored", || {
        (gateway.sessions().len() >= THREADS * PER_THREAD * 3 / 5).then_some(())
    });
    // Let idle work (distillation attempts with the sessions' routes) run, then stop cleanly so
    // everything is flushed.
    std::thread::sleep(std::time::Duration::from_millis(800));
    gateway.stop();
    let mut found = Vec::new();
    let mut scanned = 0u64;
    let mut stack = vec![gateway.data_dir().to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(
                std::fs::read_dir(&path)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path()),
            );
        } else {
            let bytes = std::fs::read(&path).unwrap_or_default();
            scanned += bytes.len() as u64;
            if bytes.windows(MARKER.len()).any(|window| window == MARKER) {
                found.push(path);
            }
        }
    }
    eprintln!("scanned {scanned} bytes of the data directory and the log");
    assert!(scanned > 0);
    assert!(found.is_empty(), "a secret was written to {found:?}");
}
