//! Retention and the size cap over the real binary: old sessions' raw data goes, the newest
//! stays, the space is given back, and requests pass while the pruner works.

use lore_test_support::FakeUpstream;
use serde_json::{Value, json};

use crate::helpers::*;

/// How long low-priority work may take on a loaded machine.
const LOW_PRIORITY: std::time::Duration = std::time::Duration::from_secs(90);

fn converse(gateway: &Gateway, n: usize, padding: &str) {
    let response = gateway.post(
        "/v1/messages",
        &anthropic_headers("sk-retention"),
        &anthropic_body(
            json!([{"role": "user", "content": format!("conversation {n}: {padding}")}]),
            false,
        ),
    );
    assert_eq!(response.status, 200, "{}", response.text());
}

fn retention(gateway: &Gateway) -> Value {
    gateway.get("/health").json()["retention"].clone()
}

#[test]
fn over_the_size_cap_the_oldest_sessions_are_pruned_and_the_space_returns() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[
            ("LORE_MAX_STORAGE_MB", "3"),
            ("LORE_RETENTION_DAYS", "0"),
            ("LORE_PRUNE_INTERVAL_SECS", "1"),
            ("LORE_PRUNE_KEEP_RECENT_SECS", "0"),
        ],
    );
    // About 9 MB of conversation text, each one its own session.
    let padding = "The build log repeats itself while the cache warms up. ".repeat(1400);
    for n in 0..120 {
        converse(&gateway, n, &padding);
    }
    let sent_at_pass = retention(&gateway)["runs"].as_u64().unwrap_or(0);
    // The pruner runs at the lowest priority: on a busy machine a pass can take a while.
    let counters = eventually_within(
        LOW_PRIORITY,
        "a pass after the sends to bring the data under the cap",
        || {
            let counters = retention(&gateway);
            (counters["runs"].as_u64().unwrap_or(0) > sent_at_pass + 1
                && counters["sessions_pruned"].as_u64().unwrap_or(0) > 0
                && counters["over_cap"] == false
                && counters["bytes_now"].as_u64().unwrap_or(u64::MAX) <= 3 * 1024 * 1024)
                .then_some(counters)
        },
    );
    eprintln!("retention after pruning: {counters}");
    // Requests still pass, and the newest conversations are still there.
    converse(&gateway, 999, "after the pruning");
    let (listed, texts) = eventually_within(
        LOW_PRIORITY,
        "the kept sessions read between two prune passes",
        || kept_texts(&gateway),
    );
    assert!(listed < 121, "{listed} sessions left");
    assert!(
        texts.iter().any(|t| t.contains("conversation 119:")),
        "the newest is kept"
    );
    assert!(
        !texts.iter().any(|t| t.contains("conversation 0:")),
        "the oldest is gone"
    );
}

/// How many sessions are listed, and the texts of their messages; `None` while the database
/// is being compacted (the pruner runs every second). A session pruned after the list was
/// read is left out.
fn kept_texts(gateway: &Gateway) -> Option<(usize, Vec<String>)> {
    let listed = gateway.get("/api/v1/sessions");
    if listed.status != 200 {
        return None;
    }
    let sessions = listed.json()["sessions"].as_array().cloned()?;
    let mut texts = Vec::new();
    for session in &sessions {
        let id = session["id"].as_str()?;
        let read = gateway.get(&format!("/api/v1/sessions/{id}/messages"));
        match read.status {
            200 => {}
            404 => continue,
            _ => return None,
        }
        let messages = read.json()["messages"].as_array().cloned()?;
        texts.extend(
            messages
                .iter()
                .filter_map(|m| m["text"].as_str().map(str::to_string)),
        );
    }
    Some((sessions.len(), texts))
}

#[test]
fn sessions_past_the_retention_are_pruned() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[
            // A second and a bit.
            ("LORE_RETENTION_DAYS", "0.000015"),
            ("LORE_PRUNE_INTERVAL_SECS", "1"),
            ("LORE_PRUNE_KEEP_RECENT_SECS", "0"),
        ],
    );
    converse(&gateway, 1, "soon too old");
    eventually("the session stored", || {
        (!gateway.sessions().is_empty()).then_some(())
    });
    // Wait for the pruner's own account (the sessions list is unreadable while the database
    // is being compacted), then for the list.
    eventually_within(LOW_PRIORITY, "the old session pruned", || {
        (retention(&gateway)["compactions"].as_u64().unwrap_or(0) >= 1).then_some(())
    });
    assert_eq!(retention(&gateway)["sessions_pruned"], 1);
    eventually("the sessions list empty", || {
        gateway.sessions().is_empty().then_some(())
    });
}
