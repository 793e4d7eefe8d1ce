//! The context manager's speed on a session the size of the original's own benchmark (5,580
//! messages, about 435K tokens) with a 200K window: the time from the client sending a turn to
//! the upstream having it, through the gateway and straight to the upstream, interleaved turn by
//! turn; warm (the session actor live), on the first sight of the session, and on the first
//! turn after each restart; and the gateway's RSS.

use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::session::{request_head, tool_output};
use lore_test_support::http_client;
use lore_test_support::lore_process::LoreProcess;
use lore_test_support::{FakeConfig, FakeUpstream, Script};

/// The figures of the run.
#[derive(Debug, Default)]
pub struct Speed {
    pub messages: usize,
    pub body_bytes: usize,
    pub prompt_tokens: u64,
    pub first_sight: Duration,
    pub first_sight_direct: Duration,
    /// (gateway, direct) per warm turn.
    pub warm: Vec<(Duration, Duration)>,
    /// (gateway, direct) of the first turn after each restart.
    pub restarted: Vec<(Duration, Duration)>,
    pub layer: String,
    pub rss_warm_mb: f64,
    pub rss_restarted_mb: f64,
}

/// A history of about `messages` messages: turns of a question, three tool exchanges and an
/// answer.
fn history(messages: usize) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages + 8);
    let mut t = 0;
    while out.len() + 8 <= messages {
        out.push(json!({"role": "user", "content": [{"type": "text", "text": format!("Step {t}: look at the handler of service {t} again and check the totals against the ledger rows, then run its tests.")}]}));
        for k in 0..3 {
            let id = format!("toolu_speed_{t}_{k}");
            out.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": format!("cargo test -p service_{t} case_{k}")}}]}));
            out.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": tool_output(t * 3 + k, 480)}]}));
        }
        out.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("Service {t} now adds each refund once; its tests pass and the ledger totals match.")}]}));
        t += 1;
    }
    while out.len() < messages {
        out.push(json!({"role": "user", "content": [{"type": "text", "text": format!("note {}", out.len())}]}));
        out.push(json!({"role": "assistant", "content": [{"type": "text", "text": "noted"}]}));
    }
    out.truncate(messages);
    if out.last().is_some_and(|m| m["role"] == "assistant") {
        out.pop();
    }
    out
}

fn body(model: &str, messages: &[Value]) -> Vec<u8> {
    let mut body = request_head(model);
    let mut messages = messages.to_vec();
    if let Some(Value::Array(blocks)) = messages.last_mut().map(|m| &mut m["content"])
        && let Some(Value::Object(last)) = blocks.last_mut()
    {
        last.insert("cache_control".into(), json!({"type": "ephemeral"}));
    }
    body["messages"] = Value::Array(messages);
    serde_json::to_vec(&body).unwrap_or_default()
}

/// Sends `bytes` to `base`; answers the time until the upstream had it, the response and the
/// context layer the gateway reported.
fn timed(
    base: &str,
    upstream: &FakeUpstream,
    bytes: &[u8],
) -> anyhow::Result<(Duration, Value, Option<String>)> {
    upstream.clear_requests();
    upstream.push(Script::Text("The totals match now.".into()));
    let headers = [
        ("content-type", "application/json"),
        ("x-api-key", "sk-speed-bench"),
        ("anthropic-version", "2023-06-01"),
        ("x-claude-code-session-id", "speed-bench-session"),
    ];
    let sent = SystemTime::now();
    let response = http_client::request(base, "POST", "/v1/messages", &headers, bytes)?;
    if response.status != 200 {
        bail!("{base} answered {}: {}", response.status, response.text());
    }
    let arrived = upstream
        .requests()
        .iter()
        .find(|r| r.path.starts_with("/v1/messages"))
        .map(|r| r.received_at)
        .context("the upstream saw no request")?;
    let layer = response.header("x-lore-context-layer").map(str::to_string);
    Ok((
        arrived.duration_since(sent).unwrap_or_default(),
        response.json(),
        layer,
    ))
}

fn wait_ready(base: &str) -> anyhow::Result<()> {
    for _ in 0..400 {
        if http_client::request(base, "GET", "/health", &[], b"").is_ok_and(|r| r.status == 200) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    bail!("the gateway at {base} did not answer /health")
}

/// Runs the speed benchmark.
pub fn run(
    lore: &Path,
    work: &Path,
    messages: usize,
    warm_turns: usize,
    restarts: usize,
) -> anyhow::Result<Speed> {
    let model = "claude-sonnet-4-5";
    let upstream = FakeUpstream::start_with(FakeConfig::default());
    let dir = work.join("speed");
    std::fs::create_dir_all(&dir)?;
    let url = upstream.url();
    let env = [
        ("LORE_UPSTREAM_ANTHROPIC", url.as_str()),
        ("LORE_MEMORY", "off"),
        ("LORE_EMBEDDINGS", "off"),
        ("LORE_CARDS", "off"),
        ("LORE_MAX_BODY_MB", "256"),
    ];
    let mut history = history(messages);
    let mut out = Speed {
        messages: history.len(),
        ..Speed::default()
    };
    let bytes = body(model, &history);
    out.body_bytes = bytes.len();
    out.prompt_tokens = (bytes.len() as u64).div_ceil(4);
    let mut gateway = LoreProcess::spawn(lore, &dir, "gateway.log", &env)?;
    wait_ready(&gateway.base())?;
    let (direct, _, _) = timed(&url, &upstream, &bytes)?;
    let (first, reply, layer) = timed(&gateway.base(), &upstream, &bytes)?;
    out.first_sight = first;
    out.first_sight_direct = direct;
    out.layer = layer.unwrap_or_default();
    let next_turn = |history: &mut Vec<Value>, reply: &Value, n: usize| {
        history.push(json!({"role": "assistant", "content": reply["content"].clone()}));
        history.push(json!({"role": "user", "content": [{"type": "text", "text": format!("And the next service, number {n}?")}]}));
    };
    let mut reply = reply;
    for n in 0..warm_turns {
        next_turn(&mut history, &reply, n);
        let bytes = body(model, &history);
        let (direct, _, _) = timed(&url, &upstream, &bytes)?;
        let (through, answer, _) = timed(&gateway.base(), &upstream, &bytes)?;
        out.warm.push((through, direct));
        reply = answer;
    }
    out.rss_warm_mb = gateway.rss_mb();
    for n in 0..restarts {
        gateway.stop().context("stop the gateway")?;
        gateway = LoreProcess::spawn(lore, &dir, "gateway.log", &env)?;
        wait_ready(&gateway.base())?;
        next_turn(&mut history, &reply, warm_turns + n);
        let bytes = body(model, &history);
        let (direct, _, _) = timed(&url, &upstream, &bytes)?;
        let (through, answer, _) = timed(&gateway.base(), &upstream, &bytes)?;
        out.restarted.push((through, direct));
        reply = answer;
    }
    out.rss_restarted_mb = gateway.rss_mb();
    gateway.stop().context("stop the gateway")?;
    Ok(out)
}

fn percentile(mut values: Vec<f64>, p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * (values.len() - 1) as f64).round() as usize;
    values[rank.min(values.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The Markdown report.
pub fn report(s: &Speed) -> String {
    let added = |pairs: &[(Duration, Duration)]| -> Vec<f64> {
        pairs.iter().map(|(g, d)| ms(*g) - ms(*d)).collect()
    };
    let gateway = |pairs: &[(Duration, Duration)]| -> Vec<f64> {
        pairs.iter().map(|(g, _)| ms(*g)).collect()
    };
    let direct = |pairs: &[(Duration, Duration)]| -> Vec<f64> {
        pairs.iter().map(|(_, d)| ms(*d)).collect()
    };
    let row = |label: &str, pairs: &[(Duration, Duration)]| {
        format!(
            "| {label} | {} | {:.1} / {:.1} ms | {:.1} / {:.1} ms | **{:.1} / {:.1} ms** |\n",
            pairs.len(),
            percentile(direct(pairs), 50.0),
            percentile(direct(pairs), 95.0),
            percentile(gateway(pairs), 50.0),
            percentile(gateway(pairs), 95.0),
            percentile(added(pairs), 50.0),
            percentile(added(pairs), 95.0),
        )
    };
    let mut out = format!(
        "Session: {} messages, {:.2} MB request body, about {}K tokens (a token per four characters), claude-sonnet-4-5 (200K window); the gateway sent it at layer {}.\n\n| turns | n | straight to the upstream p50 / p95 | through Lore p50 / p95 | added p50 / p95 |\n|---|---|---|---|---|\n",
        s.messages,
        s.body_bytes as f64 / 1e6,
        s.prompt_tokens / 1000,
        s.layer
    );
    out.push_str(&row("warm (session actor live)", &s.warm));
    out.push_str(&row("first turn after a restart", &s.restarted));
    out.push_str(&row(
        "first sight of the session (all 5,580 messages new)",
        &[(s.first_sight, s.first_sight_direct)],
    ));
    out.push_str(&format!(
        "\nGateway RSS: {:.1} MB after the warm turns, {:.1} MB after the restarts.\n",
        s.rss_warm_mb, s.rss_restarted_mb
    ));
    out
}
