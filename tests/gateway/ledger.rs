//! Cards and knowledge deltas share one ledger of insertions: a card that fires and a delta
//! that arrives on the same turn are both in every later prompt, in the same order, across a
//! layer change (L0 → L1, where the message that carried the card is no longer sent) and a
//! restart; within a layer the bytes before the newest message stay identical (the prompt-cache
//! oracle reads them back) and neither ever sits between a tool call and its result.

use std::path::Path;

use lore_test_support::cache_oracle::strip_cache_control;
use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;
use crate::ltm::{knowledge_state, slowly};

const MIRA: &str = "---\ntitle: Mira Okafor\nkeywords: [Mira]\n---\n## who\nMira runs the payments team and owns the ledger migration.\n## stance\nPrefers small reviewed changes.\n";
/// What proves the card is in a prompt.
const CARD_TEXT: &str = "Mira runs the payments team";
/// What proves the delta is in a prompt.
const DELTA_TEXT: &str = "an update of the long-term knowledge";
const PROJECT: &str = "/tmp/ledger-project";
const MODEL: &str = "claude-ledger-small";

fn write_vault(root: &Path) {
    let file = root.join("people/mira.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, MIRA).unwrap();
}

/// A Claude-Code-like client: each turn a question, one tool round, an answer.
struct Client<'a> {
    gateway: &'a Gateway,
    upstream: &'a FakeUpstream,
    history: Vec<Value>,
    calls: usize,
    /// The layer of every request sent.
    layers: Vec<u8>,
}

impl Client<'_> {
    fn send(&mut self) -> Value {
        let mut messages = self.history.clone();
        if let Some(Value::Array(blocks)) = messages.last_mut().map(|m| &mut m["content"])
            && let Some(Value::Object(last)) = blocks.last_mut()
        {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        let body = json!({
            "model": MODEL,
            "max_tokens": 512,
            "system": [{"type": "text", "text": "You are a coding agent working in this repository.", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "bash", "description": "Run a shell command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}],
            "messages": messages,
        });
        let headers = [
            ("x-api-key", "sk-ledger-test"),
            ("anthropic-version", "2023-06-01"),
            ("x-claude-code-session-id", "ledger-session"),
            ("x-lore-project", PROJECT),
        ];
        let response = self.gateway.post("/v1/messages", &headers, &body);
        assert_eq!(response.status, 200, "{}", response.text());
        self.layers.push(
            response
                .header("x-lore-context-layer")
                .and_then(|l| l.parse().ok())
                .unwrap_or(0),
        );
        let reply = response.json();
        self.history
            .push(json!({"role": "assistant", "content": reply["content"].clone()}));
        reply
    }

    /// A question, one tool call with `output`, and the closing answer.
    fn turn(&mut self, question: &str, output: &str) {
        self.history
            .push(json!({"role": "user", "content": [{"type": "text", "text": question}]}));
        self.calls += 1;
        let id = format!("toolu_{:04}", self.calls);
        self.upstream.push(Script::ToolCall {
            name: "bash".into(),
            id: id.clone(),
            arguments: json!({"command": format!("cargo test -p exporter_{}", self.calls)}),
            text: None,
        });
        self.send();
        self.history.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": output}
        ]}));
        self.upstream
            .push(Script::Text("Done; the exporter tests pass.".into()));
        self.send();
    }
}

/// Every tool call is answered by the very next message.
fn assert_paired(body: &Value, n: usize) {
    let messages = body["messages"].as_array().unwrap();
    for (i, message) in messages.iter().enumerate() {
        let calls: Vec<&str> = message["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_use")
            .filter_map(|b| b["id"].as_str())
            .collect();
        if calls.is_empty() || i + 1 == messages.len() {
            continue;
        }
        let next = messages[i + 1].to_string();
        for id in calls {
            assert!(
                next.contains(&format!("\"tool_use_id\":\"{id}\"")),
                "request {n}: the call {id} at message {i} is not answered by the next message: {next}"
            );
        }
    }
}

/// Index of the first message of the client's in a body (after Lore's prefix and pairs).
fn raw_start(messages: &[Value]) -> usize {
    let mut at = 0;
    while messages
        .get(at)
        .and_then(|m| m["content"][0]["text"].as_str())
        .is_some_and(|t| t.starts_with("[Lore:"))
    {
        at += 2;
    }
    at
}

/// Imports `markdown` into the project's knowledge.
fn import(gateway: &Gateway, markdown: &str) {
    let response = lore_test_support::http_client::request(
        &gateway.url(),
        "POST",
        &format!("/api/v1/knowledge/import?project={PROJECT}"),
        &[("x-lore-request", "1"), ("content-type", "text/markdown")],
        markdown.as_bytes(),
    )
    .unwrap();
    assert_eq!(response.status, 200, "{}", response.text());
}

/// The messages of a body, one short line each.
fn outline(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = m["content"].to_string();
            let cut: String = text.chars().take(90).collect();
            format!("\n  {}: {cut}", m["role"].as_str().unwrap_or("?"))
        })
        .collect()
}

fn tool_output(n: usize, chars: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    while out.len() < chars {
        out.push_str(&format!(
            "src/export_{n}/totals_{line}.rs:{}: decimal rounding checked ({} ms)\n",
            line + 10,
            line * 7 + n
        ));
        line += 1;
    }
    out
}

#[test]
fn a_card_and_a_delta_of_the_same_turn_stay_in_every_prompt_in_one_order() {
    let upstream = FakeUpstream::start();
    let overrides = json!({MODEL: {"context": 24_000, "output": 2_048}}).to_string();
    let vault = tempfile::tempdir().unwrap();
    write_vault(vault.path());
    let mut gateway = Gateway::start_with(
        &upstream.url(),
        &[
            ("LORE_MODEL_OVERRIDES", overrides.as_str()),
            ("LORE_CARDS_VAULT", vault.path().to_str().unwrap()),
        ],
    );
    eventually("the card book to load", || {
        (gateway.get("/health").json()["cards"]["loaded"] == 1).then_some(())
    });
    import(
        &gateway,
        "## Gotchas\n\n### The invoice exporter writes its totals with a header row\nThe invoice exporter's CSV of decimal totals starts with a header row.\n",
    );
    let mut client = Client {
        gateway: &gateway,
        upstream: &upstream,
        history: Vec::new(),
        calls: 0,
        layers: Vec::new(),
    };
    client.turn(
        "Refactor the invoice exporter so the totals use decimal math.",
        &tool_output(1, 800),
    );
    let session = eventually("the session", || {
        gateway.sessions().first()?["id"].as_str().map(String::from)
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while knowledge_state(&gateway, &session)["searched"] != true {
        assert!(
            std::time::Instant::now() < deadline,
            "the knowledge search never answered: {}\n{}",
            gateway.get(&format!("/api/v1/sessions/{session}")).text(),
            gateway.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The next request pins system[2].
    client.turn(
        "Keep the invoice exporter totals in decimal math everywhere.",
        &tool_output(2, 800),
    );
    let state = knowledge_state(&gateway, &session);
    assert_eq!(state["pinned"], true, "{state}");
    // Knowledge changes: a gotcha about what the session works on waits for the next boundary.
    let export = gateway
        .get(&format!("/api/v1/knowledge/export?project={PROJECT}"))
        .text();
    import(
        &gateway,
        &format!(
            "{export}\n### The invoice exporter's decimal totals need the nightly toolchain\nRun the invoice exporter tests with the nightly toolchain, or the decimal totals fail.\n"
        ),
    );
    client.turn(
        "Now check the invoice exporter decimal totals once more.",
        &tool_output(3, 800),
    );
    slowly("the change to wait for the next turn", 60, || {
        (knowledge_state(&gateway, &session)["pending"].as_u64() > Some(0)).then_some(())
    });
    let first = client.layers.len();
    // The same turn: the card fires on the user's text and the delta arrives at the boundary.
    client.turn(
        "Ask Mira whether the invoice exporter change can ship.",
        &tool_output(4, 800),
    );
    let state = knowledge_state(&gateway, &session);
    assert_eq!(state["deltas"], 1, "{state}");
    // Grow until the session leaves layer 0 and has spent a few requests at layer 1.
    let mut n = 5;
    while client.layers.iter().filter(|l| **l >= 1).count() < 6 {
        assert!(
            n < 40,
            "the session never changed layer: {:?}",
            client.layers
        );
        client.turn(
            &format!("Step {n}: rerun the invoice exporter tests and fix what fails."),
            &tool_output(n, 6_000),
        );
        n += 1;
    }
    let (history, calls, mut layers) = (client.history, client.calls, client.layers);
    // A restart: the ledger comes back from storage.
    gateway.restart();
    eventually("the card book to load", || {
        (gateway.get("/health").json()["cards"]["loaded"] == 1).then_some(())
    });
    let mut client = Client {
        gateway: &gateway,
        upstream: &upstream,
        history,
        calls,
        layers: Vec::new(),
    };
    for step in n..n + 2 {
        client.turn(
            &format!("Step {step}: rerun the invoice exporter tests after the restart."),
            &tool_output(step, 1_000),
        );
    }
    layers.extend(client.layers);

    let bodies: Vec<Value> = upstream
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.starts_with("/v1/messages"))
        .map(|r| r.json())
        .collect();
    let observations = upstream.cache_observations();
    assert_eq!(bodies.len(), layers.len());
    assert_eq!(observations.len(), layers.len());
    assert!(
        layers.contains(&0) && layers.iter().any(|l| *l >= 1),
        "{layers:?}"
    );
    for (n, body) in bodies.iter().enumerate() {
        assert_paired(body, n + 1);
        if n < first {
            continue;
        }
        let text = body["messages"].to_string();
        assert_eq!(
            text.matches(CARD_TEXT).count(),
            1,
            "request {} (layer {}): the card is not there once: {}",
            n + 1,
            layers[n],
            outline(body)
        );
        assert_eq!(
            text.matches(DELTA_TEXT).count(),
            1,
            "request {} (layer {}): the delta is not there once: {}",
            n + 1,
            layers[n],
            outline(body)
        );
        let card = text.find(CARD_TEXT).unwrap();
        let delta = text.find(DELTA_TEXT).unwrap();
        assert!(
            delta < card,
            "request {} (layer {}): the delta and the card changed order",
            n + 1,
            layers[n]
        );
    }
    // Within a layer, while the raw window stays where it was, every byte before the newest
    // message is the same and the oracle reads back what the previous request cached.
    let mut compared = [0usize; 2];
    for n in first + 1..bodies.len() {
        if layers[n] != layers[n - 1] {
            continue;
        }
        let (mut before, mut after) = (bodies[n - 1].clone(), bodies[n].clone());
        strip_cache_control(&mut before);
        strip_cache_control(&mut after);
        let before = before["messages"].as_array().unwrap().clone();
        let after = after["messages"].as_array().unwrap().clone();
        let (from, to) = (raw_start(&before), raw_start(&after));
        if layers[n] >= 1 && (from != to || before.get(from) != after.get(to)) {
            // The window moved on (an expected bust at layer 1).
            continue;
        }
        let kept = before.len() - 1;
        assert!(after.len() > kept, "request {}: fewer messages", n + 1);
        assert_eq!(
            &after[..kept],
            &before[..kept],
            "request {} (layer {}): a byte before the newest message changed",
            n + 1,
            layers[n]
        );
        let written = observations[n - 1].cache_read + observations[n - 1].cache_creation;
        assert!(
            observations[n].cache_read >= written,
            "request {} (layer {}): the cache was busted: {:?} → {:?}",
            n + 1,
            layers[n],
            observations[n - 1],
            observations[n]
        );
        compared[usize::from(layers[n] >= 1)] += 1;
    }
    assert!(
        compared[0] >= 3 && compared[1] >= 2,
        "too few comparable requests per layer: {compared:?} ({layers:?})"
    );
}
