//! What recall shows of a long message, and the reranker switch: a fact in the middle of a
//! long tool output appears in the snippet and in the recall tool's answer (not the output's
//! first lines); `rerank` is checked; without the reranker model recall answers unreranked and
//! says why; with it, the cross-encoder reorders BM25's candidates.

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

const FACT: &str = "WARN HikariPool-1 - Connection is not available, request timed out after 30000ms (total=37, active=37, idle=0, waiting=112)";

/// A 12 KB service log with [`FACT`] two thirds of the way down.
fn long_log() -> String {
    let mut lines: Vec<String> = (0..240)
        .map(|n| {
            format!(
                "2026-03-02T06:{:02}:{:02}.118Z INFO  berth-planner: request req_{n:05} completed in {} ms",
                n / 60,
                n % 60,
                10 + n % 90
            )
        })
        .collect();
    lines.insert(160, format!("2026-03-02T06:40:00.000Z {FACT}"));
    lines.join("\n")
}

/// One conversation whose history holds a `bash` call and its long output.
fn capture_long_output(gateway: &Gateway, upstream: &FakeUpstream) {
    upstream.push(Script::Text("The pool ran dry during the slowdown.".into()));
    let messages = json!([
        {"role": "user", "content": "why was the planner slow yesterday afternoon?"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "bash",
             "input": {"command": "kubectl logs deploy/berth-planner --since=2h"}}
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": long_log()}
        ]}
    ]);
    let response = gateway.post(
        "/v1/messages",
        &view(&anthropic_headers("k")),
        &anthropic_body(messages, false),
    );
    assert_eq!(response.status, 200, "{}", response.text());
}

fn encode(text: &str) -> String {
    text.replace(' ', "%20")
}

#[test]
fn a_fact_deep_in_a_long_tool_output_is_in_the_snippet() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    capture_long_output(&gateway, &upstream);
    let log = long_log();
    let at = log.find(FACT).unwrap_or(0);
    assert!(
        at > 8_000,
        "the fact is {at} bytes in: far past any start-of-text snippet"
    );
    let query = encode("HikariPool connection not available timed out");
    let results: Vec<Value> = eventually("the log to be searchable", || {
        let found = gateway.get(&format!("/api/v1/recall?q={query}")).json()["results"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        (!found.is_empty()).then_some(found)
    });
    let first = &results[0];
    assert_eq!(
        first["role"], "user",
        "the tool result comes first: {results:?}"
    );
    let snippet = first["snippet"].as_str().unwrap_or_default();
    assert!(snippet.contains("total=37, active=37"), "{snippet}");
    assert!(
        snippet.starts_with('…'),
        "it says it starts mid-text: {snippet}"
    );
    assert!(
        snippet.chars().count() <= 300,
        "{}",
        snippet.chars().count()
    );
    // The recall tool's Markdown answer shows the same place.
    let markdown = gateway
        .get(&format!("/api/v1/recall?q={query}&format=markdown"))
        .text();
    assert!(markdown.contains("total=37, active=37"), "{markdown}");
    assert!(
        !markdown.contains("req_00000"),
        "not the log's first line: {markdown}"
    );
}

#[test]
fn rerank_is_checked_and_without_the_model_recall_answers_unreranked() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[
            ("LORE_RERANK", "auto"),
            ("LORE_MODELS_DIR", "/nonexistent/lore-models"),
        ],
    );
    capture_long_output(&gateway, &upstream);
    let bad = gateway.get("/api/v1/recall?q=pool&rerank=sometimes");
    assert_eq!(bad.status, 400);
    assert!(
        bad.text().contains("rerank must be on or off"),
        "{}",
        bad.text()
    );
    let bad = gateway.get("/api/v1/recall?q=pool&rerank=on&rerank_weight=-1");
    assert_eq!(bad.status, 400);
    let answer = eventually("the log to be searchable", || {
        let answer = gateway.get("/api/v1/recall?q=HikariPool").json();
        answer["results"]
            .as_array()
            .is_some_and(|r| !r.is_empty())
            .then_some(answer)
    });
    assert_eq!(answer["reranked"], false);
    assert_eq!(answer["reranker"]["state"], "off", "{answer}");
    let asked = gateway.get("/api/v1/recall?q=HikariPool&rerank=on").json();
    assert_eq!(asked["reranked"], false);
    assert_eq!(
        asked["results"][0]["id"], answer["results"][0]["id"],
        "fail open"
    );
    assert!(
        asked["notes"].to_string().contains("not reranked"),
        "{asked}"
    );
    // A malformed setting is refused at start.
    let fresh = tempfile::tempdir().unwrap();
    let (code, _, err) = lore(
        &["start", "--port", "0"],
        fresh.path(),
        &[("LORE_RERANK", "sometimes")],
    );
    assert_ne!(code, 0);
    assert!(err.contains("LORE_RERANK must be on, off or auto"), "{err}");
}
