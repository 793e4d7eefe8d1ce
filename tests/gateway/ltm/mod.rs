//! Long-term knowledge in the prompt, end to end over the real binary: conventions stated in
//! passing in one session reach a fresh session of the same project on its first request (and
//! not a session of another project); system[1] and system[2] stay byte-identical over a long
//! session while knowledge changes, the change arriving as one delta that survives a restart
//! and a layer change.
//!
//! The fake upstream's extractive curator turns standing rules into preferences, so the whole
//! pipeline (capture → observation logs → curation → prompt) runs without a model.

mod push;
mod stability;

use std::time::{Duration, Instant};

use lore_test_support::{FakeConfig, FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

/// The five conventions of the first session, each with the token that proves it arrived.
pub const CONVENTIONS: [(&str, &str); 5] = [
    (
        "We always run cargo clippy with -D warnings before pushing.",
        "clippy with -D warnings",
    ),
    (
        "Convention: snake_case module names like ledger_sync.rs everywhere.",
        "ledger_sync.rs",
    ),
    (
        "We never commit directly to the release-2026 branch.",
        "release-2026",
    ),
    (
        "We prefer thiserror enums over anyhow in library crates.",
        "thiserror enums",
    ),
    (
        "We use port 6543 for the staging database, always.",
        "port 6543",
    ),
];

/// A fake upstream whose curator extracts standing rules.
pub fn curating_upstream() -> FakeUpstream {
    FakeUpstream::start_with(FakeConfig {
        extractive_curator: true,
        ..FakeConfig::default()
    })
}

/// A gateway whose memory workers run as soon as a session is quiet.
pub fn memory_gateway(upstream: &FakeUpstream, extra: &[(&str, &str)]) -> Gateway {
    let mut env = vec![
        ("LORE_MEMORY", "on"),
        ("LORE_IDLE_TIMEOUT", "0.3"),
        ("LORE_MEMORY_RETRY_AFTER", "0.3"),
        ("LORE_WORKER_RETRY_BASE_MS", "10"),
    ];
    env.extend_from_slice(extra);
    Gateway::start_with(&upstream.url(), &env)
}

/// One conversation of a project, resent in full every turn.
pub struct Chat<'a> {
    pub gateway: &'a Gateway,
    pub session: &'static str,
    pub project: &'static str,
    pub history: Vec<Value>,
    pub model: &'static str,
}

impl<'a> Chat<'a> {
    pub fn new(gateway: &'a Gateway, session: &'static str, project: &'static str) -> Self {
        Self {
            gateway,
            session,
            project,
            history: Vec::new(),
            model: "claude-sonnet-4-5",
        }
    }

    /// One turn; the response must succeed.
    pub fn turn(
        &mut self,
        upstream: &FakeUpstream,
        text: &str,
    ) -> lore_test_support::http_client::Response {
        self.history
            .push(json!({"role": "user", "content": [{"type": "text", "text": text}]}));
        let mut messages = self.history.clone();
        if let Some(Value::Object(last)) = messages
            .last_mut()
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|b| b.last_mut())
        {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        upstream.push(Script::Text(
            "Done; the change is in and the tests pass.".into(),
        ));
        let body = json!({
            "model": self.model,
            "max_tokens": 512,
            "system": [{"type": "text", "text": "You are a coding agent working in this repository.", "cache_control": {"type": "ephemeral"}}],
            "messages": messages,
        });
        let headers = [
            ("x-api-key", "sk-ltm-test"),
            ("anthropic-version", "2023-06-01"),
            ("x-claude-code-session-id", self.session),
            ("x-lore-project", self.project),
        ];
        let response = self.gateway.post("/v1/messages", &headers, &body);
        assert_eq!(response.status, 200, "{}", response.text());
        let reply = response.json();
        self.history
            .push(json!({"role": "assistant", "content": reply["content"].clone()}));
        response
    }
}

/// Waits up to `seconds` for `check` (memory work takes a few idle ticks).
pub fn slowly<T>(what: &str, seconds: u64, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The project's knowledge entries.
pub fn knowledge(gateway: &Gateway, project: &str) -> Vec<Value> {
    let response = gateway.get(&format!("/api/v1/knowledge?project={project}"));
    assert_eq!(response.status, 200, "{}", response.text());
    let value = response.json();
    value["entries"]
        .as_array()
        .or_else(|| value.as_array())
        .cloned()
        .unwrap_or_default()
}

/// The session's knowledge state from `GET /api/v1/sessions/{id}`.
pub fn knowledge_state(gateway: &Gateway, session: &str) -> Value {
    gateway.get(&format!("/api/v1/sessions/{session}")).json()["knowledge"].clone()
}

/// Session one of a project: the five conventions in passing among unrelated work, then quiet
/// until all five are curated.
pub fn teach_conventions(gateway: &Gateway, upstream: &FakeUpstream, project: &'static str) {
    let mut chat = Chat::new(gateway, "ltm-teacher", project);
    for (n, (rule, _)) in CONVENTIONS.iter().enumerate() {
        chat.turn(
            upstream,
            &format!(
                "Refactor the invoice exporter in src/export_{n}.rs so the totals use decimal math."
            ),
        );
        chat.turn(
            upstream,
            &format!("{rule} Also look at the flaky test in tests/export_{n}.rs."),
        );
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let entries = knowledge(gateway, project);
        if CONVENTIONS
            .iter()
            .all(|(_, token)| entries.iter().any(|e| e.to_string().contains(token)))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the five conventions were not curated: {entries:?}\nactors: {}\nworker calls: {:?}",
            gateway.get("/api/v1/actors").text(),
            upstream
                .worker_calls()
                .iter()
                .map(|c| c.bucket.clone())
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
