//! The benchmark's client: a Claude-Code-like harness that resends its whole history each turn
//! with a breakpoint on the last message, runs the scripted tool calls (the fake upstream plays
//! the model), and sends either everything (through Lore, or straight to the provider), or only
//! the newest messages that fit the window (the naive strategy).

use std::time::Duration;

use serde_json::{Value, json};

use crate::session::{Turn, request_head};
use lore_test_support::http_client;
use lore_test_support::{FakeUpstream, Script};

/// How the client keeps its prompt inside the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// The whole history, through Lore.
    Lore,
    /// The whole history, straight to the provider, until it refuses.
    Passthrough,
    /// The newest messages that fit the window, straight to the provider.
    Newest,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Played {
    /// Turns completed.
    pub turns: usize,
    /// The turn the provider refused as too long, as a 0-based index (passthrough only).
    pub overflow_turn: Option<usize>,
    /// Output tokens the client was sent.
    pub output_tokens: u64,
    /// Client requests.
    pub requests: usize,
    /// Responses that were not 200.
    pub errors: usize,
    /// The layers Lore reported.
    pub layers: Vec<u8>,
    /// The layer reported with each accepted (200) reply, in order (`None` without the header).
    pub accepted_layers: Vec<Option<u8>>,
    /// Where each completed turn ended, in order.
    pub turn_ends: Vec<TurnEnd>,
}

/// The counters at the end of one completed turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnEnd {
    /// The fake upstream's cache observations so far (one per accepted conversation request).
    pub observations: usize,
    /// Output tokens the client was sent so far.
    pub output_tokens: u64,
    /// What the gateway's worker ledger had recorded so far (`GET /api/v1/worker-usage`), when
    /// the player reads one.
    pub worker_usd: Option<f64>,
}

/// The fake's token count of one message as a prompt block (a token per four characters).
fn tokens(message: &Value) -> u64 {
    (message.to_string().len() as u64).div_ceil(4)
}

/// The newest messages that fit `budget` tokens, starting at a message the user wrote.
fn newest(history: &[Value], budget: u64) -> Vec<Value> {
    let mut start = history.len();
    let mut used = 0;
    while start > 0 && used + tokens(&history[start - 1]) <= budget {
        start -= 1;
        used += tokens(&history[start]);
    }
    while start < history.len() {
        let first = &history[start];
        let user_text = first["role"] == "user"
            && first["content"]
                .as_array()
                .is_some_and(|blocks| blocks.iter().all(|b| b["type"] == "text"));
        if user_text {
            break;
        }
        start += 1;
    }
    history[start..].to_vec()
}

/// Plays `session` against `base` (Lore or the fake itself) with the fake `upstream` as the
/// model, until it ends or the provider refuses a prompt.
pub struct Player<'a> {
    pub base: String,
    pub upstream: &'a FakeUpstream,
    pub strategy: Strategy,
    pub model: &'a str,
    /// For the naive strategy: the most prompt tokens it sends.
    pub budget: u64,
    /// Pause after each tool exchange (the tool's own run time).
    pub tool_time: Duration,
    /// A gateway whose worker ledger is read at the end of each turn.
    pub worker_ledger: Option<String>,
    history: Vec<Value>,
    calls: usize,
    played: Played,
}

impl<'a> Player<'a> {
    pub fn new(
        base: String,
        upstream: &'a FakeUpstream,
        strategy: Strategy,
        model: &'a str,
        budget: u64,
    ) -> Self {
        Self {
            base,
            upstream,
            strategy,
            model,
            budget,
            tool_time: Duration::from_millis(150),
            worker_ledger: None,
            history: Vec::new(),
            calls: 0,
            played: Played::default(),
        }
    }

    fn send(&mut self) -> Option<Value> {
        let messages = match self.strategy {
            Strategy::Newest => newest(&self.history, self.budget),
            _ => self.history.clone(),
        };
        let mut messages = messages;
        if let Some(Value::Array(blocks)) = messages.last_mut().map(|m| &mut m["content"])
            && let Some(Value::Object(last)) = blocks.last_mut()
        {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        let mut body = request_head(self.model);
        body["messages"] = Value::Array(messages);
        let headers = [
            ("content-type", "application/json"),
            ("x-api-key", "sk-context-bench"),
            ("anthropic-version", "2023-06-01"),
            ("x-claude-code-session-id", "context-bench-session"),
            ("x-lore-project", "/home/dev/acme"),
        ];
        let bytes = serde_json::to_vec(&body).ok()?;
        self.played.requests += 1;
        let response =
            http_client::request(&self.base, "POST", "/v1/messages", &headers, &bytes).ok()?;
        if let Some(layer) = response
            .header("x-lore-context-layer")
            .and_then(|l| l.parse().ok())
        {
            self.played.layers.push(layer);
        }
        if response.status != 200 {
            self.played.errors += 1;
            return None;
        }
        self.played.accepted_layers.push(
            response
                .header("x-lore-context-layer")
                .and_then(|l| l.parse().ok()),
        );
        let reply = response.json();
        self.played.output_tokens += reply["usage"]["output_tokens"].as_u64().unwrap_or(0);
        self.history
            .push(json!({"role": "assistant", "content": reply["content"].clone()}));
        Some(reply)
    }

    /// Plays every turn; answers what happened.
    pub fn play(mut self, session: &[Turn]) -> Played {
        for (t, turn) in session.iter().enumerate() {
            self.history.push(
                json!({"role": "user", "content": [{"type": "text", "text": turn.question}]}),
            );
            for output in &turn.outputs {
                self.calls += 1;
                let id = format!("toolu_bench_{:05}", self.calls);
                self.upstream.push(Script::ToolCall {
                    name: "Bash".into(),
                    id: id.clone(),
                    arguments: json!({"command": format!("cargo test -p service_{t}")}),
                    text: None,
                });
                if self.send().is_none() {
                    self.played.overflow_turn = Some(t);
                    return self.played;
                }
                std::thread::sleep(self.tool_time);
                self.history.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": output}]}));
            }
            self.upstream.push(Script::Text(format!(
                "Fixed step {t}: the total now adds the refunds once."
            )));
            if self.send().is_none() {
                self.played.overflow_turn = Some(t);
                return self.played;
            }
            self.played.turns = t + 1;
            let end = TurnEnd {
                observations: self.upstream.cache_observations().len(),
                output_tokens: self.played.output_tokens,
                worker_usd: self.worker_ledger.as_deref().and_then(worker_usd),
            };
            self.played.turn_ends.push(end);
        }
        self.played
    }
}

/// The worker cost the gateway at `base` has recorded so far.
fn worker_usd(base: &str) -> Option<f64> {
    let response = http_client::request(base, "GET", "/api/v1/worker-usage", &[], b"").ok()?;
    if response.status != 200 {
        return None;
    }
    let report: Value = serde_json::from_slice(&response.body).ok()?;
    report["total_cost_usd"].as_f64()
}
