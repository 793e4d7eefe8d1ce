//! Plays the session through the gateway as a harness would: before each turn the scripted
//! reply is queued in the fake upstream, then the full history goes to `POST /v1/messages`
//! (Anthropic, session header, project header, the harness's tools), the reply joins the
//! history, and a tool call's result goes up with the next request. At each pause of the
//! session the driver waits, like a user reading the answer, until the gateway's idle
//! distillation has caught up.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use super::gateway::Gateway;
use super::session::{Reply, Session};

/// The project the session belongs to.
pub const PROJECT: &str = "/work/demo/billing";
/// The conversation model.
const MODEL: &str = "claude-sonnet-4-5";
/// The Distiller's threshold: fewer undistilled messages wait for more.
const MIN_MESSAGES: u64 = 5;
/// Longest wait at one pause.
const PAUSE_TIMEOUT: Duration = Duration::from_secs(60);

/// What driving the session took.
#[derive(Debug, Default)]
pub struct Drive {
    /// The gateway's id of the session.
    pub session_id: String,
    /// Messages in the final history.
    pub messages: usize,
    /// Wall time of the requests alone.
    pub requests_time: Duration,
    /// Wall time spent waiting at pauses.
    pub pause_time: Duration,
    /// Pauses waited at.
    pub pauses: usize,
    /// Pauses that ended on the timeout instead of a caught-up distiller.
    pub pause_timeouts: usize,
}

fn tools() -> Value {
    json!([
        {"name": "bash", "description": "Run a shell command in the repository.", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}},
        {"name": "read_file", "description": "Read a file of the repository.", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
        {"name": "edit", "description": "Replace text in a file.", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}}, "required": ["path", "old", "new"]}}
    ])
}

fn script(reply: &Reply) -> Script {
    match reply {
        Reply::Text(text) => Script::Text(text.clone()),
        Reply::ToolCall {
            text,
            name,
            id,
            input,
        } => Script::ToolCall {
            name: name.clone(),
            id: id.clone(),
            arguments: input.clone(),
            text: text.clone(),
        },
    }
}

/// Sends every turn of `session`; waits at pauses when `pause` is set (memory on).
pub fn drive(
    session: &Session,
    gateway: &Gateway,
    upstream: &FakeUpstream,
    header: &str,
    pause: bool,
) -> anyhow::Result<Drive> {
    let mut out = Drive::default();
    let mut history: Vec<Value> = Vec::new();
    let tools = tools();
    for (i, turn) in session.turns.iter().enumerate() {
        history.extend(turn.sent.iter().cloned());
        upstream.push(script(&turn.reply));
        let body = json!({
            "model": MODEL,
            "max_tokens": 8192,
            "stream": false,
            "system": "You are a coding agent working in the billing repository. Use the tools to read, edit, build and test.",
            "tools": tools,
            "messages": history,
        });
        let bytes = serde_json::to_vec(&body)?;
        let started = Instant::now();
        let response = gateway.post(
            "/v1/messages",
            &[
                ("x-api-key", "sk-bench-memory"),
                ("anthropic-version", "2023-06-01"),
                ("x-claude-code-session-id", header),
                ("x-lore-project", PROJECT),
            ],
            &bytes,
        )?;
        out.requests_time += started.elapsed();
        if response.status != 200 {
            bail!(
                "turn {i}: the gateway answered {}: {}",
                response.status,
                response.text()
            );
        }
        if let Some(id) = response.header("x-lore-session-id") {
            out.session_id = id.to_string();
        }
        let reply: Value = serde_json::from_slice(&response.body)
            .with_context(|| format!("turn {i}: reply is not JSON"))?;
        history.push(json!({"role": "assistant", "content": reply["content"].clone()}));
        // The fake keeps every request body; the benchmark needs only the worker calls.
        upstream.clear_requests();
        if pause && turn.pause_after {
            let started = Instant::now();
            out.pauses += 1;
            if !caught_up(gateway, &out.session_id, history.len() as u64)? {
                out.pause_timeouts += 1;
                eprintln!("turn {i}: the distiller did not catch up within {PAUSE_TIMEOUT:?}");
            }
            out.pause_time += started.elapsed();
        }
        if (i + 1) % 50 == 0 {
            eprintln!("  {} / {} turns", i + 1, session.turns.len());
        }
    }
    out.messages = history.len();
    Ok(out)
}

/// Waits until the Distiller has no job running or queued (the consolidation and the curation
/// that follow a distillation included) and the session is distilled through its `messages`
/// messages, or fewer than [`MIN_MESSAGES`] remain undistilled (below the threshold nothing is
/// distilled until more arrive), seen on two polls in a row; `false` after [`PAUSE_TIMEOUT`].
pub fn caught_up(gateway: &Gateway, session: &str, messages: u64) -> anyhow::Result<bool> {
    let deadline = Instant::now() + PAUSE_TIMEOUT;
    let mut calm = 0;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        let memory = gateway.get(&format!("/api/v1/sessions/{session}/memory"))?;
        let cursor = memory["distilled_through_seq"].as_u64().unwrap_or(0);
        let actors = gateway.get("/api/v1/actors")?;
        let distiller = &actors["distiller"];
        let idle = distiller["running"].is_null() && distiller["queued"].as_u64().unwrap_or(0) == 0;
        if idle && cursor + MIN_MESSAGES > messages {
            calm += 1;
            if calm == 2 {
                return Ok(true);
            }
        } else {
            calm = 0;
        }
    }
    Ok(false)
}
