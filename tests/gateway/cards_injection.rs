//! Lore cards injected by the gateway, cache-stably: a block stays byte-identical at its place
//! on every later turn, so the provider's prompt cache keeps hitting.

use std::path::Path;

use lore_test_support::FakeUpstream;
use lore_test_support::cache_oracle::strip_cache_control;
use serde_json::{Value, json};

use crate::helpers::*;

const MIRA: &str = "---\ntitle: Mira Okafor\nkeywords: [Mira]\n---\n## who\nMira runs the payments team and owns the ledger migration.\n## stance\nPrefers small reviewed changes.\n## recent\n\n## impression\n\n## correspondence\nprivate notes that must never reach a model\n";
const DEPLOY: &str = "---\ntitle: The Friday deploy\nkeywords: [Friday deploy]\nrefs: [mira]\n---\n## when\nEvery Friday before noon.\n## who\nMira\n## what\nShip the week's payment changes behind flags.\n## stance\n\n## followup\n\n";
const LEDGER: &str = "---\ntitle: Ledger service\nkeywords: [ledger service]\n---\n## what\nThe double-entry ledger in services/ledger, written in Rust.\n## usage\nAll balance changes go through it.\n## recent\n\n";

fn write_vault(root: &Path) {
    for (path, text) in [
        ("people/mira.md", MIRA),
        ("events/friday-deploy.md", DEPLOY),
        ("things/ledger.md", LEDGER),
    ] {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
}

fn start_with_cards(upstream: &FakeUpstream) -> (Gateway, tempfile::TempDir) {
    let vault = tempfile::tempdir().unwrap();
    write_vault(vault.path());
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_CARDS_VAULT", vault.path().to_str().unwrap())],
    );
    eventually("the card book to load", || {
        (gateway.get("/health").json()["cards"]["loaded"] == 3).then_some(())
    });
    (gateway, vault)
}

#[test]
fn a_thirty_turn_conversation_keeps_every_earlier_byte_and_the_cache() {
    let upstream = FakeUpstream::start();
    let (gateway, _vault) = start_with_cards(&upstream);
    let headers = anthropic_headers("sk-cards");
    let mut history: Vec<Value> = Vec::new();
    let mut injected_on = Vec::new();
    for turn in 1..=30 {
        let text = match turn {
            3 => "Can you ask Mira whether the migration is ready?".to_string(),
            7 => "Is this going out with the Friday deploy?".to_string(),
            20 => "How does the ledger service record refunds?".to_string(),
            other => format!("Step {other}: keep refactoring the parser module."),
        };
        for message in history.iter_mut() {
            strip_cache_control(message);
        }
        history.push(json!({"role": "user", "content": [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]}));
        let mut body = anthropic_body(Value::Array(history.clone()), turn % 3 == 0);
        body["system"] = json!([{"type": "text", "text": "You are a careful engineer.", "cache_control": {"type": "ephemeral"}}]);
        let response = gateway.post("/v1/messages", &view(&headers), &body);
        assert_eq!(response.status, 200, "turn {turn}: {}", response.text());
        if let Some(keys) = response.header("x-lore-cards-injected") {
            injected_on.push((turn, keys.to_string()));
        }
        let reply = if turn % 3 == 0 {
            response
                .sse()
                .iter()
                .filter(|e| e.event.as_deref() == Some("content_block_delta"))
                .filter_map(|e| e.json()["delta"]["text"].as_str().map(String::from))
                .collect::<String>()
        } else {
            response.json()["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        };
        history.push(json!({"role": "assistant", "content": [{"type": "text", "text": reply}]}));
    }
    assert_eq!(
        injected_on,
        vec![
            (3, "mira".to_string()),
            (7, "friday-deploy".to_string()),
            (20, "ledger".to_string())
        ],
        "each card fires once, on its turn"
    );

    // Every upstream body starts with the whole previous one (cache markers aside).
    let bodies: Vec<Value> = upstream
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/v1/messages"))
        .map(|r| r.json())
        .collect();
    assert_eq!(bodies.len(), 30);
    for (index, pair) in bodies.windows(2).enumerate() {
        let (mut before, mut after) = (pair[0]["messages"].clone(), pair[1]["messages"].clone());
        strip_cache_control(&mut before);
        strip_cache_control(&mut after);
        let before = before.as_array().unwrap();
        assert_eq!(
            &after.as_array().unwrap()[..before.len()],
            &before[..],
            "turn {}: an earlier message changed",
            index + 2
        );
    }
    // The blocks sit where they were first put, and private sections never reach the model.
    let last = serde_json::to_string(&bodies[29]).unwrap();
    assert!(!last.contains("private notes"), "a private section leaked");
    for (position, needle) in [
        (4, "Mira runs the payments team"),
        (12, "Ship the week's payment changes"),
        (38, "double-entry ledger"),
    ] {
        let text = bodies[29]["messages"][position]["content"][0]["text"]
            .as_str()
            .unwrap();
        assert!(
            text.contains(needle) && text.contains("<!-- lore:cards:"),
            "message {position}: {text}"
        );
    }
    // The deploy card refers to Mira, already in the context: no "see also" line for her.
    assert!(
        !bodies[6]["messages"][12]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("see also")
    );

    // The prompt-cache oracle: from turn 2 on, everything the previous turn cached is read back.
    let observations = upstream.cache_observations();
    for (index, pair) in observations.windows(2).enumerate() {
        let written = pair[0].cache_read + pair[0].cache_creation;
        assert!(
            pair[1].cache_read >= written,
            "turn {}: the cache was busted: {:?} → {:?}",
            index + 2,
            pair[0],
            pair[1]
        );
    }
}

#[test]
fn cards_work_for_openai_chat_and_a_vault_edit_is_picked_up() {
    let upstream = FakeUpstream::start();
    let (gateway, vault) = start_with_cards(&upstream);
    let auth = [("authorization", "Bearer k")];
    let body = chat_body(
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "ping Mira please"}]),
        true,
    );
    let response = gateway.post("/v1/chat/completions", &auth, &body);
    assert_eq!(response.header("x-lore-cards-injected"), Some("mira"));
    let sent = upstream.requests().pop().unwrap().json();
    let content = sent["messages"][1]["content"].as_str().unwrap();
    assert!(
        content.contains("Mira runs the payments team") && content.ends_with("ping Mira please"),
        "{content}"
    );
    assert_eq!(
        sent["messages"][0]["content"], "be brief",
        "the system prompt is never touched"
    );

    // A new card written while the gateway runs fires on the next request.
    std::fs::write(
        vault.path().join("people/tomas.md"),
        "---\nkeywords: [Tomás]\n---\n## who\nTomás owns the mobile app.\n",
    )
    .unwrap();
    eventually("the new card", || {
        (gateway.get("/health").json()["cards"]["loaded"] == 4).then_some(())
    });
    let response = gateway.post(
        "/v1/chat/completions",
        &auth,
        &chat_body(
            json!([{"role": "user", "content": "what does Tomás think?"}]),
            false,
        ),
    );
    assert_eq!(response.header("x-lore-cards-injected"), Some("tomas"));

    // The Responses API: the block becomes the first input_text part of the user's item.
    let responses = json!({"model": "gpt-5", "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "does Mira approve?"}]}]});
    let response = gateway.post("/v1/responses", &auth, &responses);
    assert_eq!(response.header("x-lore-cards-injected"), Some("mira"));
    let sent = upstream.requests().pop().unwrap().json();
    assert_eq!(sent["input"][0]["content"][0]["type"], "input_text");
    assert!(
        sent["input"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Mira runs the payments team")
    );
    assert_eq!(sent["input"][0]["content"][1]["text"], "does Mira approve?");

    // Nothing matches: the body goes upstream byte for byte.
    let plain = chat_body(json!([{"role": "user", "content": "hello there"}]), false);
    gateway.post("/v1/chat/completions", &auth, &plain);
    assert_eq!(
        upstream.requests().pop().unwrap().body,
        serde_json::to_vec(&plain).unwrap()
    );
}

#[test]
fn the_ledger_survives_a_restart() {
    let upstream = FakeUpstream::start();
    let (mut gateway, _vault) = start_with_cards(&upstream);
    let headers = anthropic_headers("sk-restart-cards");
    let first = json!([{"role": "user", "content": "Mira, are you there?"}]);
    let response = gateway.post(
        "/v1/messages",
        &view(&headers),
        &anthropic_body(first.clone(), false),
    );
    assert_eq!(response.header("x-lore-cards-injected"), Some("mira"));
    let reply = response.json()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    let before = upstream.requests().pop().unwrap().json()["messages"][0].clone();
    std::thread::sleep(std::time::Duration::from_millis(300));
    gateway.stop();
    gateway.restart();
    eventually("the card book to load", || {
        (gateway.get("/health").json()["cards"]["loaded"] == 3).then_some(())
    });
    let second = json!([first[0], {"role": "assistant", "content": reply}, {"role": "user", "content": "Mira again?"}]);
    let response = gateway.post(
        "/v1/messages",
        &view(&headers),
        &anthropic_body(second, false),
    );
    assert!(
        response.header("x-lore-cards-injected").is_none(),
        "Mira is still in the context"
    );
    let after = upstream.requests().pop().unwrap().json()["messages"][0].clone();
    assert_eq!(
        after, before,
        "the block is replayed byte for byte after a restart"
    );
}
