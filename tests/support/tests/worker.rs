//! Worker calls against a live fake upstream: recognition by `User-Agent`, their own script
//! queue, their record, the default answers per bucket, and the conversation requests in flight
//! each one saw.

#![allow(clippy::unwrap_used)]

use lore_test_support::http_client::{Response, post_json};
use lore_test_support::{FakeUpstream, Script, WorkerScript};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const UA_DISTILL: &str = "lore-worker/0.1.0 (distillation)";
const UA_CURATE: &str = "lore-worker/0.1.0 (curation)";
const UA_EXPAND: &str = "lore-worker/0.1.0 (query_expansion)";

fn anthropic(user: &str) -> Value {
    json!({"model": "claude-haiku-4-5", "max_tokens": 512, "system": "s",
           "messages": [{"role": "user", "content": user}]})
}

fn worker(up: &FakeUpstream, agent: &str, user: &str) -> Response {
    post_json(
        &up.url(),
        "/v1/messages",
        &[("user-agent", agent), ("x-api-key", "k")],
        &anthropic(user),
    )
}

fn text(r: &Response) -> String {
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["content"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn worker_calls_and_conversations_have_separate_queues() {
    let up = FakeUpstream::start();
    up.push(Script::Text("for the conversation".into()));
    up.push_worker(WorkerScript::Text("for the worker".into()));
    assert_eq!(text(&worker(&up, UA_CURATE, "x")), "for the worker");
    assert_eq!(up.pending_scripts(), 1);
    let conversation = post_json(&up.url(), "/v1/messages", &[], &anthropic("hi"));
    assert_eq!(text(&conversation), "for the conversation");
    // Both queues are empty now: each side gets its own default.
    assert_eq!(
        text(&worker(&up, UA_CURATE, "x")),
        r#"{"ops": [], "entities": [], "relations": []}"#
    );
    let conversation = post_json(&up.url(), "/v1/messages", &[], &anthropic("hi"));
    assert_eq!(text(&conversation), "ok: hi");
    // A conversation never consumes a worker script.
    up.push_worker(WorkerScript::Empty);
    post_json(&up.url(), "/v1/messages", &[], &anthropic("hi"));
    assert_eq!(up.pending_worker_scripts(), 1);

    let calls = up.worker_calls();
    assert_eq!(calls.len(), 2);
    assert!(calls.iter().all(|c| c.bucket == "curation"));
    assert_eq!(calls[0].path, "/v1/messages");
    assert_eq!(calls[0].body["messages"][0]["content"], "x");
    assert_eq!(calls[0].conversation_in_flight, 0);
    assert!(calls[0].received_at <= calls[1].received_at);
    assert_eq!(
        up.requests().len(),
        5,
        "worker calls are recorded as requests too"
    );
    assert_eq!(
        up.cache_observations().len(),
        3,
        "only conversations reach the cache oracle"
    );
    // Something that merely looks similar is a conversation.
    post_json(
        &up.url(),
        "/v1/messages",
        &[("user-agent", "lore/0.1.0")],
        &anthropic("hi"),
    );
    assert_eq!(up.worker_calls().len(), 2);
}

#[test]
fn worker_scripts_error_empty_and_slow() {
    let up = FakeUpstream::start();
    up.push_worker(WorkerScript::Error {
        status: 503,
        body: json!({"error": {"message": "overloaded"}}),
    });
    up.push_worker(WorkerScript::Empty);
    up.push_worker(WorkerScript::Slow {
        delay: Duration::from_millis(200),
        text: "late".into(),
    });
    let r = worker(&up, UA_DISTILL, "x");
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["error"]["message"], "overloaded");
    assert_eq!(text(&worker(&up, UA_DISTILL, "x")), "");
    let started = Instant::now();
    assert_eq!(text(&worker(&up, UA_DISTILL, "x")), "late");
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[test]
fn worker_replies_speak_each_protocol_with_usage() {
    let up = FakeUpstream::start();
    let long = "word ".repeat(200);
    let headers = [("user-agent", UA_EXPAND)];
    let chat = post_json(
        &up.url(),
        "/v1/chat/completions",
        &headers,
        &json!({"model": "gpt-4o-mini", "messages": [
            {"role": "system", "content": "s"}, {"role": "user", "content": long}]}),
    )
    .json();
    assert_eq!(chat["choices"][0]["message"]["content"], "[]");
    assert!(chat["usage"]["prompt_tokens"].as_u64().unwrap() >= 250);
    assert!(chat["usage"]["completion_tokens"].as_u64().unwrap() >= 1);
    let responses = post_json(
        &up.url(),
        "/v1/responses",
        &headers,
        &json!({"model": "gpt-5-mini", "instructions": "s",
                "input": [{"role": "user", "content": long}], "store": false}),
    )
    .json();
    assert_eq!(responses["output"][0]["content"][0]["text"], "[]");
    assert!(responses["usage"]["input_tokens"].as_u64().unwrap() >= 250);
    let anthropic = worker(&up, UA_EXPAND, &long).json();
    assert_eq!(anthropic["content"][0]["text"], "[]");
    assert!(anthropic["usage"]["input_tokens"].as_u64().unwrap() >= 250);
    assert_eq!(anthropic["model"], "claude-haiku-4-5");
    // Another bucket, or none, gets `ok`.
    assert_eq!(text(&worker(&up, "lore-worker/0.1.0 (other)", "x")), "ok");
    assert_eq!(text(&worker(&up, "lore-worker/0.1.0", "x")), "ok");
    assert_eq!(up.worker_calls()[4].bucket, "");
}

const TRANSCRIPT: &str = "Session date: 2025-06-01
Summarise the messages below.
<messages>
[user] (14:05) The build fails in src/gateway/forward.rs with E_UPSTREAM_CLOSED. Can you look at `cargo test -p lore` output and fix it? I think the retry loop in lore::gateway::forward is wrong, since it never
stops when the upstream keeps closing the connection, and the logs grow without end.
[assistant] (14:06) I looked at the retry loop. It retried every status, so I limited it to 502/503/504 and added a cap in ./config/retry.toml.
The tests in tests/gateway/errors.rs pass now and the logs stay small.
[user] (14:07)
[tool] (14:08) ok
</messages>";

#[test]
fn the_default_observer_compresses_and_keeps_paths() {
    let up = FakeUpstream::start();
    let out = text(&worker(&up, UA_DISTILL, TRANSCRIPT));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "<observations>");
    assert_eq!(lines[1], "Date: 2025-06-01");
    assert!(
        lines[2].starts_with(
            "* 🔴 (14:05) The build fails in src/gateway/forward.rs with E_UPSTREAM_CLOSED."
        ),
        "{out}"
    );
    assert!(
        lines[2].ends_with(
            "[keeps: src/gateway/forward.rs, E_UPSTREAM_CLOSED, `cargo test -p lore`, lore::gateway::forward]"
        ),
        "{out}"
    );
    assert!(
        lines[3].starts_with("* 🟢 (14:06) I looked at the retry loop. [keeps: "),
        "{out}"
    );
    assert!(lines[3].contains("./config/retry.toml"), "{out}");
    assert!(lines[3].contains("tests/gateway/errors.rs"), "{out}");
    assert!(lines[4].starts_with("* 🟢 (14:08) ok"), "{out}");
    assert_eq!(lines[5], "</observations>");
    assert_eq!(lines.len(), 6, "the empty message is skipped: {out}");
    let source = TRANSCRIPT.split("<messages>").nth(1).unwrap();
    assert!(
        out.chars().count() < source.chars().count(),
        "the observer must compress"
    );
}

#[test]
fn the_default_consolidation_keeps_headings_and_recent_bullets() {
    let up = FakeUpstream::start();
    // What the user asserted (🔴) stays whatever its age; of the other bullets the newest
    // 60 % stay (a repeated one counts at its newest place).
    let mut logs =
        String::from("Consolidate.\n<observation-logs>\n* 🔴 (09:00) The port is 6543.\n");
    for i in 0..10 {
        logs.push_str(&format!(
            "Date: 2025-06-0{}\n* 🟢 (10:{i:02}) step {i}\n",
            i % 3 + 1
        ));
    }
    logs.push_str("* 🟢 (10:09) step 9\n</observation-logs>");
    let out = text(&worker(&up, UA_DISTILL, &logs));
    for heading in [
        "## Current State",
        "## Key Decisions",
        "## Technical Changes",
        "## Session Timeline",
    ] {
        assert!(out.contains(heading), "{out}");
    }
    let bullets: Vec<&str> = out.lines().filter(|l| l.starts_with("* ")).collect();
    assert_eq!(bullets.len(), 7, "{out}");
    assert_eq!(bullets[0], "* 🔴 (09:00) The port is 6543.");
    assert_eq!(bullets[1], "* 🟢 (10:04) step 4");
    assert_eq!(bullets[6], "* 🟢 (10:09) step 9");
    assert!(out.find("## Session Timeline").unwrap() < out.find("step 4").unwrap());

    let one = text(&worker(
        &up,
        UA_DISTILL,
        "<observation-logs>\n* only\n</observation-logs>",
    ));
    assert!(one.ends_with("* only\n"), "{one}");
}

#[test]
fn worker_calls_count_conversations_in_flight() {
    let up = FakeUpstream::start();
    up.push(Script::SlowStream {
        text: "abcdefgh".into(),
        chunks: 4,
        interval: Duration::from_millis(150),
    });
    let url = up.url();
    let conversation = std::thread::spawn(move || {
        let mut body = anthropic("long answer please");
        body["stream"] = json!(true);
        post_json(&url, "/v1/messages", &[], &body)
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while up.conversation_requests_in_flight() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(up.conversation_requests_in_flight(), 1);
    // The worker call itself is not counted.
    worker(&up, UA_CURATE, "x");
    assert_eq!(up.worker_calls()[0].conversation_in_flight, 1);
    assert!(conversation.join().unwrap().complete);
    let deadline = Instant::now() + Duration::from_secs(2);
    while up.conversation_requests_in_flight() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(up.conversation_requests_in_flight(), 0);
    worker(&up, UA_CURATE, "x");
    assert_eq!(up.worker_calls()[1].conversation_in_flight, 0);
    // A JSON conversation is counted until its handler has answered.
    post_json(&up.url(), "/v1/messages", &[], &anthropic("hi"));
    let deadline = Instant::now() + Duration::from_secs(2);
    while up.conversation_requests_in_flight() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(up.conversation_requests_in_flight(), 0);
}
