//! The `lore-fake-upstream` binary: announces its address and serves paced default replies.

use lore_test_support::http_client::{SseEvent, post_json};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// Kills the child on drop so a failing assertion never leaks the process.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn binary_prints_address_and_streams_n_events() {
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_lore-fake-upstream"))
            .args([
                "--port",
                "0",
                "--stream-events",
                "8",
                "--event-interval-ms",
                "1",
                "--text",
                "bench",
            ])
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn lore-fake-upstream"),
    );
    let stdout = child.0.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read line");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    assert!(url.starts_with("http://127.0.0.1:"));
    let body =
        json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "x"}]});
    let r = post_json(&url, "/v1/messages", &[], &body);
    assert!(r.complete);
    let deltas: Vec<String> = r
        .sse()
        .iter()
        .map(SseEvent::json)
        .filter(|v| v["type"] == "content_block_delta")
        .map(|v| v["delta"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(deltas.len(), 8);
    assert!(deltas.concat().starts_with("bench"));
    let r = post_json(&url, "/v1/chat/completions", &[], &body);
    assert_eq!(r.sse().last().unwrap().data, "[DONE]");
}

#[test]
fn binary_answers_worker_calls_by_bucket() {
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_lore-fake-upstream"))
            .args(["--port", "0", "--text", "bench"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn lore-fake-upstream"),
    );
    let stdout = child.0.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("read line");
    let url = line.trim().trim_start_matches("listening on ").to_string();
    let body = json!({"model": "m", "max_tokens": 64, "system": "s",
                      "messages": [{"role": "user", "content": "rephrase: build"}]});
    let worker = [("user-agent", "lore-worker/0.1.0 (query_expansion)")];
    let r = post_json(&url, "/v1/messages", &worker, &body);
    assert_eq!(r.json()["content"][0]["text"], "[]");
    // Conversations keep the configured text.
    let r = post_json(&url, "/v1/messages", &[], &body);
    assert_eq!(r.json()["content"][0]["text"], "bench");
}
