//! The economics of one long session three ways: through Lore, straight to the provider
//! (passthrough, until it overflows) and with the client keeping only the newest messages that
//! fit. Costs are the provider's list prices applied to the prompt-cache oracle's usage (and,
//! for Lore, its own worker calls as its ledger prices them). Beside the whole run: each
//! strategy over exactly the turns passthrough completed before it overflowed (the costs are
//! recorded turn by turn), and the busts by cause ([`crate::busts`]).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use serde_json::Value;

use crate::busts::{self, Cause};
use crate::client::{Played, Player, Strategy, TurnEnd};
use crate::session::{FACTS, Turn};
use lore_test_support::lore_process::LoreProcess;
use lore_test_support::{CacheObservation, FakeConfig, FakeUpstream};

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
    /// The oracle's verdict on each accepted conversation request, in order.
    pub observations: Vec<CacheObservation>,
    /// Where each completed turn ended.
    pub turn_ends: Vec<TurnEnd>,
    /// The cause of each bust (`None`: the requests could not be matched to the observations).
    pub causes: Option<Vec<Cause>>,
    /// Lore's own count from the sessions API: (busts, layer changes).
    pub own_count: Option<(u64, u64)>,
}

/// The figures of one strategy over its first turns.
#[derive(Debug, Default)]
pub struct Span {
    pub requests: usize,
    pub conversation: f64,
    /// What the worker ledger had recorded by the end of the last of those turns.
    pub worker: Option<f64>,
    pub read_share: f64,
    pub busts: usize,
}

/// An observation's prompt at list prices.
fn prompt_cost(o: &CacheObservation) -> f64 {
    let write_5m = o.cache_creation - o.cache_creation_1h;
    (o.input_tokens as f64 * PRICE_INPUT
        + o.cache_read as f64 * PRICE_READ
        + write_5m as f64 * PRICE_WRITE_5M
        + o.cache_creation_1h as f64 * PRICE_WRITE_1H)
        / 1e6
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

    /// The first `turns` turns (`None` when the strategy did not complete them).
    pub fn over_turns(&self, turns: usize) -> Option<Span> {
        let end = *self.turn_ends.get(turns.checked_sub(1)?)?;
        let observed = self.observations.get(..end.observations)?;
        let (mut read, mut all) = (0u64, 0u64);
        for o in observed {
            read += o.cache_read;
            all += o.input_tokens + o.cache_read + o.cache_creation;
        }
        Some(Span {
            requests: observed.len(),
            conversation: observed.iter().map(prompt_cost).sum::<f64>()
                + end.output_tokens as f64 * PRICE_OUTPUT / 1e6,
            worker: end.worker_usd,
            read_share: if all == 0 {
                0.0
            } else {
                read as f64 / all as f64
            },
            busts: observed.iter().filter(|o| busts::is_bust(o)).count(),
        })
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

fn measure(strategy: &str, upstream: &FakeUpstream, played: &Played, window: u64) -> Economics {
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
        if busts::is_bust(&o) {
            out.busts += 1;
        }
        out.observations.push(o);
    }
    out.turn_ends = played.turn_ends.clone();
    out.causes = busts::causes(upstream, played, window);
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
    player.worker_ledger = Some(gateway.base());
    let played = player.play(session);
    let mut lore_figures = measure("Lore", &upstream, &played, window);
    lore_figures.own_count = own_count(&gateway.base());
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
    out.push(measure("passthrough", &upstream, &played, window));
    // The newest messages that fit: the window less the output reserve, the system prompt and
    // the tools (about 2,000 tokens).
    let upstream = fake();
    let budget = window - 8_192 - 2_500;
    let played =
        Player::new(upstream.url(), &upstream, Strategy::Newest, MODEL, budget).play(session);
    out.push(measure("newest that fit", &upstream, &played, window));
    Ok(out)
}

/// Lore's own count of busts and layer changes, over its sessions (`GET /api/v1/sessions`
/// shows each one's context state).
fn own_count(base: &str) -> Option<(u64, u64)> {
    let response =
        lore_test_support::http_client::request(base, "GET", "/api/v1/sessions", &[], b"").ok()?;
    let list: Value = serde_json::from_slice(&response.body).ok()?;
    let mut found = None;
    for session in list["sessions"].as_array()? {
        let context = &session["context"];
        if let (Some(busts), Some(changes)) =
            (context["busts"].as_u64(), context["layer_changes"].as_u64())
        {
            let (b, c) = found.unwrap_or((0, 0));
            found = Some((b + busts, c + changes));
        }
    }
    found
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
            Some(turn) => format!("{} (overflowed in turn {})", f.turns, turn + 1),
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
    out.push_str(&same_turns(figures));
    out.push_str(&bust_causes(figures));
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

/// Every strategy over the turns passthrough completed, from the costs recorded turn by turn.
fn same_turns(figures: &[Economics]) -> String {
    let Some(passthrough) = figures.iter().find(|f| f.strategy == "passthrough") else {
        return String::new();
    };
    let turns = passthrough.turns;
    let mut out = format!(
        "\n| over the {turns} turns passthrough completed | requests | conversation | workers (recorded by the end of turn {turns}) | total | per turn | cache-read share | busts |\n|---|---|---|---|---|---|---|---|\n"
    );
    for f in figures {
        let Some(span) = f.over_turns(turns) else {
            out.push_str(&format!(
                "| {} | did not complete them | | | | | | |\n",
                f.strategy
            ));
            continue;
        };
        let worker = span.worker.unwrap_or(0.0);
        let total = span.conversation + worker;
        out.push_str(&format!(
            "| {} | {} | ${:.3} | {} | ${:.3} | ${:.4} | {:.1} % | {} |\n",
            f.strategy,
            span.requests,
            span.conversation,
            match span.worker {
                Some(usd) => format!("${usd:.3}"),
                None => "—".into(),
            },
            total,
            total / turns.max(1) as f64,
            span.read_share * 100.0,
            span.busts,
        ));
    }
    // The accepted requests of the turn that overflowed are in passthrough's total only.
    if let (Some(turn), Some(span)) = (passthrough.overflow_turn, passthrough.over_turns(turns)) {
        let partial = passthrough.conversation_cost() - span.conversation;
        let requests = passthrough.observations.len() - span.requests;
        out.push_str(&format!(
            "\nPassthrough's turn {} (the one it overflowed in) had {requests} accepted requests (${partial:.3}) before the refusal; they are in its total above and left out here.\n",
            turn + 1
        ));
    }
    out
}

/// The busts by cause: Lore, passthrough and the naive strategy side by side.
fn bust_causes(figures: &[Economics]) -> String {
    let columns: Vec<(&str, Option<&[Cause]>)> = figures
        .iter()
        .map(|f| (f.strategy.as_str(), f.causes.as_deref()))
        .collect();
    let mut out = format!("\n{}", busts::report(&columns));
    for f in figures {
        if let Some((busts, changes)) = f.own_count {
            out.push_str(&format!(
                "\n{}'s own count (`GET /api/v1/sessions`, its context state): busts {busts}, layer changes {changes}.\n",
                f.strategy
            ));
        }
    }
    out
}
