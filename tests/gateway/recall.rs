//! Recall over captured messages: found within a second of the turn, through the API and the
//! CLI, with and without the gateway running, and rebuilt by `lore reindex`.

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

#[test]
fn a_captured_message_is_searchable_within_a_few_index_commits() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    upstream.push(Script::Text(
        "The flaky test was caused by a race in the refund ledger.".into(),
    ));
    let response = gateway.post(
        "/v1/messages",
        &view(&anthropic_headers("k")),
        &anthropic_body(
            json!([{"role": "user", "content": "why does test_refunds fail on CI?"}]),
            false,
        ),
    );
    let session = response.header("x-lore-session-id").unwrap().to_string();
    let started = std::time::Instant::now();
    let results: Vec<Value> = eventually("the reply to be searchable", || {
        let found = gateway
            .get("/api/v1/recall?q=refund%20ledger%20race")
            .json()["results"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        (!found.is_empty()).then_some(found)
    });
    assert!(
        // The indexer commits every 250 ms; the bound is loose for a loaded test machine and
        // only catches a message that waits for something other than a commit.
        started.elapsed() < std::time::Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(results[0]["session"], session.as_str());
    assert_eq!(results[0]["role"], "assistant");
    assert!(results[0]["id"].as_str().unwrap().starts_with("t:"));
    let scoped = gateway
        .get(&format!(
            "/api/v1/recall?q=test_refunds&scope=session&session={session}"
        ))
        .json();
    assert_eq!(scoped["results"][0]["role"], "user");
    assert_eq!(gateway.get("/api/v1/recall?q=x&scope=session").status, 400);

    let dir = gateway.data_dir().to_path_buf();
    let (code, out, err) = lore(&["recall", "refund ledger", "--json"], &dir, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("refund ledger"), "{out}");
    gateway.stop();
    // Without the gateway: the index is read directly, and `lore reindex` rebuilds it.
    let (code, out, err) = lore(&["reindex"], &dir, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("2 messages"), "{out}");
    let (code, out, err) = lore(&["recall", "refund ledger"], &dir, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("race in the refund ledger") && out.contains("(t:"),
        "{out}"
    );
}
