//! A 30-turn session while knowledge changes: system[1] and system[2] byte-identical on every
//! turn once pinned (the oracle reads the cache on every turn), the change shown as one delta
//! at one place, replayed after a restart and after the session changed layer.

use super::*;

/// The system blocks Lore added (all after the client's first).
fn added_system(body: &Value) -> Vec<Value> {
    let mut blocks = body["system"].as_array().cloned().unwrap_or_default();
    if !blocks.is_empty() {
        blocks.remove(0);
    }
    for block in &mut blocks {
        block.as_object_mut().unwrap().remove("cache_control");
    }
    blocks
}

/// Index of the delta's user half in the messages, if any.
fn delta_at(body: &Value) -> Option<usize> {
    body["messages"].as_array()?.iter().position(|m| {
        m["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("[Lore: an update of the long-term knowledge"))
    })
}

#[test]
fn thirty_turns_keep_the_knowledge_blocks_byte_identical_and_show_a_change_once() {
    let upstream = curating_upstream();
    let overrides = json!({"claude-ltm-small": {"context": 24_000, "output": 2_048}}).to_string();
    let mut gateway = memory_gateway(&upstream, &[("LORE_MODEL_OVERRIDES", overrides.as_str())]);
    teach_conventions(&gateway, &upstream, "/tmp/ltm-stable");
    let mut chat = Chat::new(&gateway, "ltm-thirty", "/tmp/ltm-stable");
    chat.model = "claude-ltm-small";
    upstream.clear_requests();
    let taught = upstream.cache_observations().len();
    let first = chat.turn(
        &upstream,
        "Run clippy on the invoice exporter and tell me what it says about ledger_sync.rs.",
    );
    let session = first.header("x-lore-session-id").unwrap().to_string();
    // The search for system[2] runs after the first reply.
    slowly("the knowledge search", 20, || {
        (knowledge_state(&gateway, &session)["searched"] == true).then_some(())
    });
    for turn in 1..15 {
        chat.turn(
            &upstream,
            &format!("Step {turn}: rerun clippy on src/export_{turn}.rs and fix what it reports."),
        );
    }
    // Knowledge changes mid-session: a new gotcha about what the session works on.
    let export = gateway
        .get("/api/v1/knowledge/export?project=/tmp/ltm-stable")
        .text();
    let changed = format!(
        "{export}\n## Gotchas\n\n### Clippy on the exporter needs the nightly toolchain\nRun clippy on src/export_*.rs with the nightly toolchain, or the decimal lints fail.\n"
    );
    let headers = [("x-lore-request", "1"), ("content-type", "text/markdown")];
    let response = lore_test_support::http_client::request(
        &gateway.url(),
        "POST",
        "/api/v1/knowledge/import?project=/tmp/ltm-stable",
        &headers,
        changed.as_bytes(),
    )
    .unwrap();
    assert_eq!(response.status, 200, "{}", response.text());
    chat.turn(&upstream, "Step 15: clippy again on the exporter please.");
    slowly("the change to wait for the next turn", 20, || {
        (knowledge_state(&gateway, &session)["pending"].as_u64() > Some(0)
            || knowledge_state(&gateway, &session)["deltas"].as_u64() > Some(0))
        .then_some(())
    });
    for turn in 16..24 {
        chat.turn(
            &upstream,
            &format!("Step {turn}: rerun clippy on src/export_{turn}.rs and fix what it reports."),
        );
    }
    // A restart: the blocks and the delta come back byte for byte.
    let history = chat.history.clone();
    drop(chat);
    gateway.restart();
    let mut chat = Chat::new(&gateway, "ltm-thirty", "/tmp/ltm-stable");
    chat.model = "claude-ltm-small";
    chat.history = history;
    for turn in 24..30 {
        chat.turn(
            &upstream,
            &format!(
                "Step {turn}: {} and fix what it reports.",
                "rerun clippy on the exporter ".repeat(600)
            ),
        );
    }
    let bodies = upstream.conversation_bodies();
    assert_eq!(bodies.len(), 30);
    // From the pin on, the added system blocks never change.
    let pinned_from = bodies
        .iter()
        .position(|b| added_system(b).len() == 2)
        .expect("system[2] was pinned");
    assert!(pinned_from <= 2, "pinned on turn {}", pinned_from + 1);
    let reference = added_system(&bodies[pinned_from]);
    for (n, body) in bodies.iter().enumerate().skip(pinned_from) {
        assert_eq!(
            added_system(body),
            reference,
            "turn {} changed a knowledge block",
            n + 1
        );
    }
    assert!(
        reference[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("## Long-term Knowledge")
    );
    // The change arrived as exactly one delta, the same bytes at the same place every time.
    let with_delta: Vec<&Value> = bodies.iter().filter(|b| delta_at(b).is_some()).collect();
    assert!(!with_delta.is_empty(), "the change was never shown");
    let first = with_delta[0];
    let at = delta_at(first).unwrap();
    let pair = (
        first["messages"][at].clone(),
        first["messages"][at + 1].clone(),
    );
    assert!(
        pair.1.to_string().contains("nightly toolchain"),
        "{}",
        pair.1
    );
    let mut layers_seen = std::collections::BTreeSet::new();
    for body in &with_delta {
        let count = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| {
                m.to_string()
                    .contains("an update of the long-term knowledge")
            })
            .count();
        assert_eq!(count, 1, "one delta, not {count}");
        let here = delta_at(body).unwrap();
        let compressed = body["messages"][0]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("[Lore:"));
        layers_seen.insert(compressed);
        if !compressed {
            assert_eq!(here, at, "the delta moved");
        }
        let mut user = body["messages"][here].clone();
        let mut assistant = body["messages"][here + 1].clone();
        for part in [&mut user, &mut assistant] {
            if let Some(blocks) = part["content"].as_array_mut() {
                for block in blocks {
                    block.as_object_mut().unwrap().remove("cache_control");
                }
            }
        }
        assert_eq!((user, assistant), pair.clone(), "the delta's bytes changed");
    }
    assert!(
        layers_seen.contains(&true),
        "the session never changed layer; the test lost its point"
    );
    // The cache was read on every turn after the pin and before the layer change.
    let observations = upstream.cache_observations().split_off(taught);
    for (n, o) in observations
        .iter()
        .enumerate()
        .skip(pinned_from + 1)
        .take(20)
    {
        assert!(o.cache_read > 0, "turn {} missed the cache: {o:?}", n + 1);
    }
}
