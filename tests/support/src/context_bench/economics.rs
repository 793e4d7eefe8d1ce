//! The economics of one long session three ways: through Lore, straight to the provider
//! (passthrough, until it overflows) and with the client keeping only the newest messages that
//! fit. Costs are the provider's list prices applied to the prompt-cache oracle's usage (and,
//! for Lore, its own worker calls as its ledger prices them).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use serde_json::Value;

use crate::client::{Played, Player, Strategy};
use crate::session::{FACTS, Turn};
use lore_test_support::lore_process::LoreProcess;
use lore_test_support::{FakeConfig, FakeUpstream};

/// Sonnet 4.x list prices, dollars per million tokens.
const PRICE_INPUT: f64 = 3.0;
const PRICE_OUTPUT: f64 = 15.0;
const PRICE_READ: f64 = 0.30;
const PRICE_WRITE_5M: f64 = 3.75;
const PRICE_WRITE_1H: f64 = 6.0;

/// The model of the run.
pub const MODEL: &str = "claude-sonnet-4-5";

/// The figures of one strategy.
#[derive(Debug, Default)]
pub struct Economics {
    pub strategy: String,
    pub turns: usize,
    pub overflow_turn: Option<usize>,
    pub requests: usize,
    pub errors: usize,
    pub input: u64,
    pub cache_read: u64,
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
    pub output: u64,
    pub worker_cost: f64,
    pub busts: usize,
    pub largest_prompt: u64,
    pub facts_in_view: usize,
    pub layers: String,
    /// What the gateway's `CostTracker` reported (Lore only).
    pub tracker: Option<TrackerFigures>,
}

/// The `CostTracker`'s view of the conversation (`GET /api/v1/costs`), to set beside the
/// benchmark's own computation from the oracle's usage.
#[derive(Debug, Default)]
pub struct TrackerFigures {
    pub calls: u64,
    pub conversation_usd: f64,
    pub cache_read_tokens: u64,
    pub cache_saved_usd: f64,
    pub gradient_saved_usd: f64,
    pub worker_usd: f64,
}

/// Reads the tracker's report once it has every conversation reply (it records them on its
/// own thread).
fn tracker_figures(base: &str, requests: usize) -> Option<TrackerFigures> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let report: Value =
            lore_test_support::http_client::request(base, "GET", "/api/v1/costs?days=1", &[], b"")
                .ok()?
                .json();
        let conversation = report["days"][0]["buckets"]
            .as_array()?
            .iter()
            .find(|b| b["bucket"] == "conversation")?
            .clone();
        let totals = &conversation["totals"];
        let calls = totals["calls"].as_u64().unwrap_or(0);
        if calls >= requests as u64 || std::time::Instant::now() > deadline {
            return Some(TrackerFigures {
                calls,
                conversation_usd: totals["cost_usd"].as_f64().unwrap_or(0.0),
                cache_read_tokens: totals["cache_read_tokens"].as_u64().unwrap_or(0),
                cache_saved_usd: totals["cache_savings_usd"].as_f64().unwrap_or(0.0),
                gradient_saved_usd: report["savings"]["gradient"]["usd"].as_f64().unwrap_or(0.0),
                worker_usd: report["savings"]["lore_costs"]["worker_usd"]
                    .as_f64()
                    .unwrap_or(0.0),
            });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Economics {
    /// Conversation cost at list prices.
    pub fn conversation_cost(&self) -> f64 {
        (self.input as f64 * PRICE_INPUT
            + self.cache_read as f64 * PRICE_READ
            + self.cache_write_5m as f64 * PRICE_WRITE_5M
            + self.cache_write_1h as f64 * PRICE_WRITE_1H
            + self.output as f64 * PRICE_OUTPUT)
            / 1e6
    }

    /// Conversation and worker cost.
    pub fn total_cost(&self) -> f64 {
        self.conversation_cost() + self.worker_cost
    }

    /// Cache reads over all input tokens.
    pub fn read_share(&self) -> f64 {
        let all = self.input + self.cache_read + self.cache_write_5m + self.cache_write_1h;
        if all == 0 {
            0.0
        } else {
            self.cache_read as f64 / all as f64
        }
    }
}

fn measure(strategy: &str, upstream: &FakeUpstream, played: &Played) -> Economics {
    let mut out = Economics {
        strategy: strategy.into(),
        turns: played.turns,
        overflow_turn: played.overflow_turn,
        requests: played.requests,
        errors: played.errors,
        output: played.output_tokens,
        ..Economics::default()
    };
    for o in upstream.cache_observations() {
        out.input += o.input_tokens;
        out.cache_read += o.cache_read;
        out.cache_write_1h += o.cache_creation_1h;
        out.cache_write_5m += o.cache_creation - o.cache_creation_1h;
        let prompt = o.input_tokens + o.cache_read + o.cache_creation;
        out.largest_prompt = out.largest_prompt.max(prompt);
        if o.cache_creation * 2 > prompt {
            out.busts += 1;
        }
    }
    // What the model saw on the last accepted request.
    let last = upstream
        .requests()
        .iter()
        .rev()
        .find(|r| {
            r.method == "POST"
                && r.path.starts_with("/v1/messages")
                && !r
                    .header("user-agent")
                    .is_some_and(|ua| ua.starts_with("lore-worker"))
        })
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .unwrap_or_default();
    out.facts_in_view = FACTS
        .iter()
        .filter(|fact| last.contains(fact.token))
        .count();
    out.layers = summarise_layers(&played.layers);
    out
}

/// "0×12, 1×30, 2×8": how many responses went at each layer.
fn summarise_layers(layers: &[u8]) -> String {
    let mut counts = [0usize; 5];
    for layer in layers {
        counts[usize::from((*layer).min(4))] += 1;
    }
    counts
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(layer, n)| format!("L{layer}×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs the three strategies on `session` with a `window`-token window.
pub fn run(
    lore: &Path,
    work: &Path,
    session: &[Turn],
    window: u64,
    tool_time: Duration,
) -> anyhow::Result<Vec<Economics>> {
    let fake = || {
        FakeUpstream::start_with(FakeConfig {
            context_limits: vec![(MODEL.to_string(), window)],
            ..FakeConfig::default()
        })
    };
    let mut out = Vec::new();
    // Through Lore.
    let upstream = fake();
    let dir = work.join("lore");
    std::fs::create_dir_all(&dir)?;
    let overrides = serde_json::json!({MODEL: {"context": window, "output": 8192}}).to_string();
    let url = upstream.url();
    let gateway = LoreProcess::spawn(
        lore,
        &dir,
        "gateway.log",
        &[
            ("LORE_UPSTREAM_ANTHROPIC", url.as_str()),
            ("LORE_MODEL_OVERRIDES", overrides.as_str()),
            ("LORE_MEMORY", "on"),
            ("LORE_IDLE_TIMEOUT", "0.3"),
            ("LORE_EMBEDDINGS", "off"),
            ("LORE_CARDS", "off"),
        ],
    )?;
    wait_ready(&gateway.base())?;
    let mut player = Player::new(gateway.base(), &upstream, Strategy::Lore, MODEL, 0);
    player.tool_time = tool_time;
    let played = player.play(session);
    let mut lore_figures = measure("Lore", &upstream, &played);
    let actors: Value =
        lore_test_support::http_client::request(&gateway.base(), "GET", "/api/v1/actors", &[], b"")
            .map(|r| r.json())
            .unwrap_or(Value::Null);
    lore_figures.worker_cost = actors["worker_usage"]
        .as_array()
        .map(|rows| rows.iter().filter_map(|r| r["cost_usd"].as_f64()).sum())
        .unwrap_or(0.0);
    lore_figures.tracker = tracker_figures(&gateway.base(), played.requests);
    gateway.stop().context("stop the gateway")?;
    out.push(lore_figures);
    // Straight to the provider.
    let upstream = fake();
    let played =
        Player::new(upstream.url(), &upstream, Strategy::Passthrough, MODEL, 0).play(session);
    out.push(measure("passthrough", &upstream, &played));
    // The newest messages that fit: the window less the output reserve, the system prompt and
    // the tools (about 2,000 tokens).
    let upstream = fake();
    let budget = window - 8_192 - 2_500;
    let played =
        Player::new(upstream.url(), &upstream, Strategy::Newest, MODEL, budget).play(session);
    out.push(measure("newest that fit", &upstream, &played));
    Ok(out)
}

fn wait_ready(base: &str) -> anyhow::Result<()> {
    for _ in 0..200 {
        if lore_test_support::http_client::request(base, "GET", "/health", &[], b"")
            .is_ok_and(|r| r.status == 200)
        {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    anyhow::bail!("the gateway at {base} did not answer /health")
}

/// The Markdown table of the figures.
pub fn report(figures: &[Economics], window: u64, turns: usize) -> String {
    let mut out = format!(
        "| strategy ({turns}-turn session, {window}-token window) | turns done | requests (client errors) | cost (conversation + workers) | cost per turn | cache-read share | busts | largest prompt | facts in view at the end | layers |\n|---|---|---|---|---|---|---|---|---|---|\n"
    );
    for f in figures {
        let turns = match f.overflow_turn {
            Some(turn) => format!("{} (overflowed at turn {turn})", f.turns),
            None => f.turns.to_string(),
        };
        out.push_str(&format!(
            "| {} | {turns} | {} ({}) | ${:.3} (${:.3} + ${:.3}) | ${:.4} | {:.1} % | {} | {} | {}/{} | {} |\n",
            f.strategy,
            f.requests,
            f.errors,
            f.total_cost(),
            f.conversation_cost(),
            f.worker_cost,
            f.total_cost() / f.turns.max(1) as f64,
            f.read_share() * 100.0,
            f.busts,
            f.largest_prompt,
            f.facts_in_view,
            FACTS.len(),
            if f.layers.is_empty() { "—".into() } else { f.layers.clone() },
        ));
    }
    for f in figures {
        let Some(t) = &f.tracker else { continue };
        let own_saved = f.cache_read as f64 * (PRICE_INPUT - PRICE_READ) / 1e6;
        out.push_str(&format!(
            "\n| {} as counted by | conversation replies | conversation cost | cache-read tokens | cache saved | gradient saved vs passthrough | worker calls |\n|---|---|---|---|---|---|---|\n\
             | the benchmark (the oracle's usage at list prices) | {} | ${:.3} | {} | ${:.3} | — | ${:.3} |\n\
             | Lore's `CostTracker` (`GET /api/v1/costs`) | {} | ${:.3} | {} | ${:.3} | ${:.3} | ${:.3} |\n",
            f.strategy,
            f.requests,
            f.conversation_cost(),
            f.cache_read,
            own_saved,
            f.worker_cost,
            t.calls,
            t.conversation_usd,
            t.cache_read_tokens,
            t.cache_saved_usd,
            t.gradient_saved_usd,
            t.worker_usd,
        ));
    }
    out
}
