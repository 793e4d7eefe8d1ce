//! Embeddings through the real binary and the real ONNX model: captured messages get vectors,
//! a paraphrase with no word in common is found by vectors and hybrid recall, `lore reindex`
//! backfills with progress, and without the model the service runs on BM25 and says why.
//!
//! These tests need `scripts/setup` to have installed the model (`scripts/test` does).

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

const FACT: &str =
    "Schema migrations for the production database run through Flyway every Tuesday night.";
const PARAPHRASE: &str = "how do we evolve the SQL tables";

fn with_embeddings(upstream: &FakeUpstream) -> Gateway {
    Gateway::start_with(&upstream.url(), &[("LORE_EMBEDDINGS", "on")])
}

/// Unrelated facts the paraphrase must not prefer.
const DISTRACTORS: [&str; 5] = [
    "The CSS theme uses #ff6600 as the accent colour on every page.",
    "Lunch today: two margherita pizzas from the place on Elm Street.",
    "The CI runner has 4 cores and 8 GB of memory.",
    "Alice reviews every pull request that touches the billing module.",
    "The logo file lives in assets/brand/logo.svg.",
];

/// Six conversations (twelve messages): the distractors, then the fact.
fn capture_fact(gateway: &Gateway, upstream: &FakeUpstream) {
    for (n, fact) in DISTRACTORS.iter().chain([&FACT]).enumerate() {
        upstream.push(Script::Text(fact.to_string()));
        let response = gateway.post(
            "/v1/messages",
            &view(&anthropic_headers("k")),
            &anthropic_body(
                json!([{"role": "user", "content": format!("note {n} for later")}]),
                false,
            ),
        );
        assert_eq!(response.status, 200);
    }
}

fn top_snippets(gateway: &Gateway, mode: &str) -> Vec<String> {
    let path = format!(
        "/api/v1/recall?q={}&mode={mode}&limit=3",
        PARAPHRASE.replace(' ', "%20")
    );
    let answer = gateway.get(&path).json();
    answer["results"]
        .as_array()
        .map(|results| {
            results
                .iter()
                .filter_map(|r| r["snippet"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_paraphrase_is_found_by_vectors_and_hybrid_but_not_bm25() {
    let upstream = FakeUpstream::start();
    let gateway = with_embeddings(&upstream);
    capture_fact(&gateway, &upstream);
    let health = eventually(
        "the model to load and all twelve messages to be embedded",
        || {
            let health = gateway.get("/health").json();
            (health["embeddings"]["state"] == "ready"
                && health["vectors"]["stored"].as_u64() >= Some(12))
            .then_some(health)
        },
    );
    assert_eq!(health["embeddings"]["model"], "bge-small-en-v1.5");
    assert_eq!(health["embeddings"]["dim"], 384);
    // Every stored vector must be answerable, committed to the index or not: wait until vector
    // recall answers at all (it has three of twelve to give), then check what comes first.
    let vector = eventually("vector recall to answer", || {
        let snippets = top_snippets(&gateway, "vector");
        (snippets.len() == 3).then_some(snippets)
    });
    assert!(
        vector.first().is_some_and(|s| s.contains("Flyway")),
        "{vector:?}"
    );
    let hybrid = top_snippets(&gateway, "hybrid");
    assert!(
        hybrid.first().is_some_and(|s| s.contains("Flyway")),
        "{hybrid:?}"
    );
    assert!(
        top_snippets(&gateway, "bm25")
            .iter()
            .all(|s| !s.contains("Flyway")),
        "no shared word"
    );
    let answer = gateway
        .get(&format!(
            "/api/v1/recall?q={}",
            PARAPHRASE.replace(' ', "%20")
        ))
        .json();
    assert_eq!(answer["vectors"], true);
}

#[test]
fn reindex_backfills_vectors_with_progress() {
    let upstream = FakeUpstream::start();
    // Captured while embeddings are off: no vectors yet.
    let mut gateway = Gateway::start(&upstream);
    capture_fact(&gateway, &upstream);
    eventually("all turns stored", || {
        (gateway
            .sessions()
            .iter()
            .map(|s| s["messages"].as_u64().unwrap_or(0))
            .sum::<u64>()
            == 12)
            .then_some(())
    });
    gateway.stop();
    let dir = gateway.data_dir().to_path_buf();
    let (code, out, err) = lore(&["reindex"], &dir, &[("LORE_EMBEDDINGS", "on")]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("embeddings: 12 messages embedded"),
        "{out}\n{err}"
    );
    assert!(err.contains("embedding: 12/12"), "{err}");
    // A second run finds nothing left to embed.
    let (_, out, _) = lore(&["reindex"], &dir, &[]);
    assert!(out.contains("embeddings: 0 messages embedded"), "{out}");
    gateway.restart_with(&[("LORE_EMBEDDINGS", "on")]);
    let found = eventually("vector recall after the backfill", || {
        let ids = top_snippets(&gateway, "vector");
        ids.first()
            .is_some_and(|s| s.contains("Flyway"))
            .then_some(ids)
    });
    assert!(!found.is_empty());
}

#[test]
fn without_the_model_recall_runs_on_bm25_and_health_says_why() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[
            ("LORE_EMBEDDINGS", "on"),
            ("LORE_MODELS_DIR", "/nonexistent/lore-models"),
            ("ORT_DYLIB_PATH", ""),
        ],
    );
    capture_fact(&gateway, &upstream);
    let health: Value = eventually("the embedder to report", || {
        let health = gateway.get("/health").json();
        (health["embeddings"]["state"] == "unavailable"
            && !health["embeddings"]["missing"]
                .as_str()
                .unwrap_or("")
                .contains("loading"))
        .then_some(health)
    });
    assert!(
        health["embeddings"]["fix"]
            .as_str()
            .unwrap()
            .contains("scripts/setup"),
        "{health}"
    );
    let results = eventually("BM25 recall", || {
        let answer = gateway.get("/api/v1/recall?q=Flyway%20migrations").json();
        answer["results"]
            .as_array()
            .filter(|r| !r.is_empty())
            .cloned()
    });
    assert!(results[0]["snippet"].as_str().unwrap().contains("Flyway"));
    for _ in 0..3 {
        gateway.get("/api/v1/recall?q=Flyway");
    }
    let warnings = gateway.log().matches("embeddings unavailable").count();
    assert_eq!(
        warnings,
        1,
        "one log line, not one per request:\n{}",
        gateway.log()
    );
}

#[test]
fn reindex_through_the_running_gateway_follows_the_backfill() {
    let upstream = FakeUpstream::start();
    let gateway = with_embeddings(&upstream);
    capture_fact(&gateway, &upstream);
    eventually("the model to load", || {
        (gateway.get("/health").json()["embeddings"]["state"] == "ready").then_some(())
    });
    let (code, out, err) = lore(&["reindex"], gateway.data_dir(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("search index rebuilt by the running gateway: 12 messages"),
        "{out}"
    );
    assert!(
        out.contains("embeddings: 12 vectors stored"),
        "{out}\n{err}"
    );
}

/// Three messages sharing the word "database"; only one says when the backup runs.
const DATABASE_NOTES: [&str; 3] = [
    "The database backup runs at 2am and is kept for thirty days on the database host.",
    "The database is named ledger_prod; ask Dana for database credentials.",
    "Schema migrations for the database run through Flyway every Tuesday night.",
];

#[test]
fn the_reranker_reorders_bm25_candidates_with_the_real_model() {
    let upstream = FakeUpstream::start();
    // No embeddings: BM25 finds the three, the cross-encoder (loaded on first use) orders them.
    let gateway = Gateway::start_with(&upstream.url(), &[("LORE_RERANK", "on")]);
    for (n, note) in DATABASE_NOTES.iter().enumerate() {
        upstream.push(Script::Text(note.to_string()));
        let response = gateway.post(
            "/v1/messages",
            &view(&anthropic_headers("k")),
            &anthropic_body(
                json!([{"role": "user", "content": format!("note {n} for later")}]),
                false,
            ),
        );
        assert_eq!(response.status, 200);
    }
    let query = "when does the database backup run".replace(' ', "%20");
    let bm25 = eventually("the notes to be searchable", || {
        let answer = gateway
            .get(&format!("/api/v1/recall?q={query}&mode=bm25&rerank=off"))
            .json();
        (answer["results"].as_array().map(Vec::len) == Some(3)).then_some(answer)
    });
    assert_eq!(bm25["reranked"], false);
    assert!(
        !bm25["results"][0]["snippet"]
            .as_str()
            .unwrap_or_default()
            .contains("backup runs at 2am"),
        "BM25 alone is misled by `run`: {bm25}"
    );
    // LORE_RERANK=on: reranked without asking; the first call loads the model.
    let reranked = gateway
        .get(&format!("/api/v1/recall?q={query}&mode=bm25"))
        .json();
    assert_eq!(reranked["reranked"], true, "{reranked}");
    assert_eq!(reranked["reranker"]["state"], "ready");
    assert!(
        reranked["results"][0]["snippet"]
            .as_str()
            .unwrap_or_default()
            .contains("backup runs at 2am"),
        "{reranked}"
    );
}
