//! The memory workers through the real gateway, with the fake upstream answering the worker
//! calls, and what their tests share: a gateway with short idle timeouts and fast worker
//! retries, a conversation that resends its history as a harness does, and readers of the
//! session memory API and the actors' counters.
//!
//! - [`distill`]: thresholds over a 60-turn session, consolidation keeping the five newest logs,
//!   archived logs found by `lore recall`, no worker call while a request is in flight.
//! - [`curate`]: the curator updates a changed preference instead of adding a second.
//! - [`safety`]: bad worker output leaves storage consistent; the credential never reaches the
//!   disk.

mod curate;
mod distill;
mod safety;

use std::time::{Duration, Instant};

use lore_test_support::{FakeUpstream, WorkerScript};
use serde_json::{Value, json};

use crate::helpers::*;

const SESSION_HEADER: &str = "x-claude-code-session-id";

pub fn memory_gateway(upstream: &FakeUpstream, extra: &[(&str, &str)]) -> Gateway {
    let mut env = vec![
        ("LORE_MEMORY", "on"),
        ("LORE_IDLE_TIMEOUT", "0.3"),
        ("LORE_CURATE_AFTER_TURNS", "1000"),
        ("LORE_MEMORY_RETRY_AFTER", "0.3"),
        ("LORE_WORKER_MAX_ATTEMPTS", "2"),
        ("LORE_WORKER_RETRY_BASE_MS", "10"),
    ];
    env.extend_from_slice(extra);
    Gateway::start_with(&upstream.url(), &env)
}

/// A conversation of one session, resent in full every turn as a harness does.
pub struct Conversation<'a> {
    pub gateway: &'a Gateway,
    pub session_header: &'static str,
    pub key: &'static str,
    pub project: &'static str,
    history: Vec<Value>,
    session: Option<String>,
}

impl<'a> Conversation<'a> {
    pub fn new(gateway: &'a Gateway, session_header: &'static str) -> Self {
        Self {
            gateway,
            session_header,
            key: "k-memory",
            project: "/tmp/lore-memory-test",
            history: Vec::new(),
            session: None,
        }
    }

    pub fn send(
        &mut self,
        content: Value,
        stream: bool,
    ) -> lore_test_support::http_client::Response {
        self.history
            .push(json!({"role": "user", "content": content}));
        let headers = vec![
            ("x-api-key", self.key),
            ("anthropic-version", "2023-06-01"),
            (SESSION_HEADER, self.session_header),
            ("x-lore-project", self.project),
        ];
        let body = anthropic_body(Value::Array(self.history.clone()), stream);
        let response = self.gateway.post("/v1/messages", &headers, &body);
        assert_eq!(
            response.status,
            200,
            "{}",
            String::from_utf8_lossy(&response.body)
        );
        if let Some((_, id)) = response
            .headers
            .iter()
            .find(|(name, _)| name == "x-lore-session-id")
        {
            self.session = Some(id.clone());
        }
        response
    }

    /// One turn with a JSON reply; the reply joins the history.
    pub fn turn(&mut self, text: &str) -> Value {
        let response = self.send(json!(text), false);
        let reply: Value = serde_json::from_slice(&response.body).expect("JSON reply");
        self.history
            .push(json!({"role": "assistant", "content": reply["content"].clone()}));
        reply
    }

    /// The session id the gateway reported on the latest reply.
    pub fn session_id(&self) -> String {
        self.session.clone().expect("a reply named the session")
    }
}

pub fn memory(gateway: &Gateway, session: &str) -> Value {
    gateway
        .get(&format!("/api/v1/sessions/{session}/memory"))
        .json()
}

pub fn distillations(gateway: &Gateway, session: &str) -> Vec<Value> {
    memory(gateway, session)["distillations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

pub fn actors(gateway: &Gateway) -> Value {
    gateway.get("/api/v1/actors").json()
}

/// Waits longer than [`eventually`]: worker calls follow idle timeouts and retries.
pub fn slowly<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn worker_calls(upstream: &FakeUpstream, bucket: &str) -> usize {
    upstream
        .worker_calls()
        .iter()
        .filter(|call| call.bucket == bucket)
        .count()
}

pub fn observer(text: &str) -> WorkerScript {
    WorkerScript::Text(format!(
        "<observations>\nDate: 2026-11-30\n* 🔴 (10:00) {text}\n</observations>"
    ))
}
