//! The gradient context manager (pure): on every turn, which layer (0–4) of the conversation
//! goes to the model, so the prompt stays inside a cost-aware budget and the provider's prompt
//! cache keeps hitting (reference §9; seed "Gradient context manager").
//!
//! | layer | what is sent |
//! |---|---|
//! | 0 | the client's messages, unchanged |
//! | 1 | the distilled prefix + a recent raw window |
//! | 2 | as 1, old tool outputs replaced by annotations (the last 2 turns and the current one kept) |
//! | 3 | as 2, every tool output but the current turn's replaced; only the 5 newest logs |
//! | 4 | the 2 most important logs + a raw tail of clamp(0.25 × usable, 2K, 8K), the current turn whole |
//!
//! No actix, no IO: [`plan`] reads the conversation as [`Unit`]s, the model's figures, the
//! session's observation logs and its persisted [`ContextRecord`], and answers a [`Plan`] (and
//! updates the record); [`calibrate::after_reply`] folds the upstream's usage back in. The
//! `SessionActor` holds the record, persists it, and renders the plan into bytes.
//!
//! - [`budget`]: budgets, the layer-0 cap and its side branches, the bust-or-continue gate.
//! - [`window`]: the current turn, the raw window, its pin and its boundaries.
//! - [`prefix`]: which logs the distilled prefix holds, and its text.
//! - [`strip`]: which tool outputs become annotations, and the annotation.
//! - [`calibrate`]: calibration, busts, free-write and the conversation cache lifetime.
//! - [`pairing`]: the validator every plan passes.

pub mod budget;
pub mod calibrate;
pub mod pairing;
pub mod prefix;
pub mod strip;
pub mod window;

use std::time::Duration;

use lore_proto::Role;
use lore_storage::ContextRecord;

use crate::catalogue::ModelInfo;
use budget::{Budgets, should_compress};
pub use prefix::LogView;
pub use window::PinUpdate;
use window::{Shape, Window};

/// Estimated tokens of one replaced tool output (the annotation and its framing).
pub const ANNOTATION_TOKENS: u64 = 40;
/// Estimated tokens of the two prefix messages' framing.
const PREFIX_FRAMING_TOKENS: u64 = 40;

/// The context manager's settings (`LORE_CONTEXT`, `LORE_TARGET_CACHE_READ_COST`,
/// `LORE_MAX_LAYER0_TOKENS`, `LORE_CACHE_TTL`, `LORE_IDLE_RESUME_MINUTES`).
#[derive(Debug, Clone, PartialEq)]
pub struct ContextSettings {
    /// False with `LORE_CONTEXT=off`: every turn goes at layer 0.
    pub enabled: bool,
    /// Dollars of cache reads one layer-0 turn may cost (0 disables the cap).
    pub target_cache_read_cost: f64,
    /// Pins the layer-0 cap instead of the formula.
    pub max_layer0_tokens: Option<u64>,
    /// The conversation breakpoint's lifetime.
    pub ttl: TtlMode,
    /// Quiet time after which a cold cache lets the session compact (5 minutes).
    pub idle_resume: Duration,
}

impl Default for ContextSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            target_cache_read_cost: 0.10,
            max_layer0_tokens: None,
            ttl: TtlMode::Auto,
            idle_resume: Duration::from_secs(300),
        }
    }
}

/// How the conversation breakpoint's cache lifetime is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TtlMode {
    /// Five minutes, one hour when most recent turns found the cache cold (reference §11.1).
    Auto,
    /// Always five minutes.
    FiveMinutes,
    /// Always one hour.
    OneHour,
}

/// A tool output in a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultView {
    /// The call it answers.
    pub call_id: String,
    /// Estimated tokens of the output.
    pub tokens: u64,
    /// Hash of the output (duplicates).
    pub hash: u64,
    /// Characters of the output.
    pub chars: usize,
}

/// One message of the conversation as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Who wrote it.
    pub role: Role,
    /// Estimated prompt tokens.
    pub tokens: u64,
    /// Lenient identity (pins and ledgers refer to messages by it).
    pub identity: [u8; 16],
    /// Sequence number in the stored log, when stored.
    pub seq: Option<u64>,
    /// A user message with text of its own (a turn starts here).
    pub user_text: bool,
    /// An assistant message with text and no tool call.
    pub text_only_assistant: bool,
    /// Tool calls it makes.
    pub calls: Vec<String>,
    /// Tool outputs it carries.
    pub results: Vec<ResultView>,
}

/// Everything one turn's plan depends on.
#[derive(Debug, Clone)]
pub struct PlanInput<'a> {
    /// The conversation, in order.
    pub units: &'a [Unit],
    /// The model's figures.
    pub model: &'a ModelInfo,
    /// Whether the request asked for the 1M-context beta.
    pub long_context: bool,
    /// Settings.
    pub settings: &'a ContextSettings,
    /// The session's live observation logs (not archived), oldest first.
    pub logs: &'a [LogView],
    /// Messages with a lower `seq` are covered by a log (the Distiller's cursor).
    pub distilled_through: u64,
    /// Estimated tokens of the system prompt and tools (used until calibrated).
    pub fixed_tokens: u64,
    /// Tokens of long-term knowledge added to the system prompt.
    pub ltm_tokens: u64,
    /// Why the provider manages the context itself, when it does.
    pub provider_managed: Option<&'a str>,
    /// The client rewrote its history this turn (a fork).
    pub rewritten: bool,
    /// Budget pressure from the cost tracker, 0–1 (compress earlier).
    pub budget_pressure: f64,
    /// Now, ms since the epoch.
    pub now_ms: u64,
    /// A floor raised for this turn only (a prompt-too-long retry).
    pub retry_floor: u8,
}

/// What to send this turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The layer, 0–4.
    pub layer: u8,
    /// Why, in a few words (logged on a change, shown in the status).
    pub reason: String,
    /// First unit of the raw window (0 at layer 0).
    pub start: usize,
    /// The logs of the distilled prefix, by `n`, in order (empty: no prefix).
    pub prefix: Vec<u64>,
    /// Tool call ids whose outputs become annotations.
    pub strip: Vec<String>,
    /// Tool call ids whose outputs are collapsed as duplicates of a later one.
    pub duplicates: Vec<String>,
    /// Whether the conversation breakpoint uses the 1-hour lifetime.
    pub ttl_1h: bool,
    /// Estimated tokens of the messages sent (prefix and window).
    pub message_tokens: u64,
    /// Estimated tokens of the whole request.
    pub total_tokens: u64,
    /// Estimated tokens of the client's request as it came (what a passthrough proxy sends).
    pub client_tokens: u64,
    /// The layer-0 cap in force.
    pub l0_cap: u64,
    /// Tokens of dropped context that no observation log covers (recall still has them).
    pub uncovered_tokens: u64,
    /// The session should be distilled as soon as it is quiet.
    pub urgent_distillation: bool,
    /// The prefix was re-rendered this turn (a cache write the planner chose).
    pub prefix_changed: bool,
    /// The pin state this plan leaves behind.
    pub pin: PinUpdate,
}

impl Plan {
    fn passthrough(
        reason: impl Into<String>,
        messages: u64,
        total: u64,
        l0_cap: u64,
        ttl_1h: bool,
    ) -> Self {
        Self {
            layer: 0,
            reason: reason.into(),
            start: 0,
            prefix: Vec::new(),
            strip: Vec::new(),
            duplicates: Vec::new(),
            ttl_1h,
            message_tokens: messages,
            total_tokens: total,
            client_tokens: total,
            l0_cap,
            uncovered_tokens: 0,
            urgent_distillation: false,
            prefix_changed: false,
            pin: PinUpdate::default(),
        }
    }
}

/// Plans one turn and records it in `state`.
pub fn plan(input: &PlanInput<'_>, state: &mut ContextRecord) -> Plan {
    let units = input.units;
    let all: u64 = units.iter().map(|unit| unit.tokens).sum();
    let shrank = input.rewritten
        || (units.len() as u32) < state.last_message_count.saturating_sub(2)
        || state.window_start.is_some_and(|start| {
            state.last_layer > 0 && !units.iter().any(|u| u.identity == start)
        });
    let budgets = Budgets::new(input, state);
    let cold = state.last_request_ms > 0
        && input.now_ms.saturating_sub(state.last_request_ms) >= cache_lifetime_ms(state, input);
    let idle = state.last_request_ms > 0
        && input.now_ms.saturating_sub(state.last_request_ms)
            >= idle_resume_ms(state, input.settings);
    let ttl_1h = match input.settings.ttl {
        TtlMode::Auto => state.ttl_1h,
        TtlMode::FiveMinutes => false,
        TtlMode::OneHour => true,
    };
    let l0_total = budgets.layer0_input(all);
    let decided = if !input.settings.enabled {
        Some(Plan::passthrough(
            "context management is off",
            all,
            l0_total,
            budgets.l0_cap,
            ttl_1h,
        ))
    } else if let Some(why) = input.provider_managed {
        Some(Plan::passthrough(
            format!("the provider manages this context ({why})"),
            all,
            l0_total,
            budgets.l0_cap,
            ttl_1h,
        ))
    } else if units.is_empty() {
        Some(Plan::passthrough(
            "no messages",
            all,
            l0_total,
            budgets.l0_cap,
            ttl_1h,
        ))
    } else {
        None
    };
    let mut plan = match decided {
        Some(plan) => plan,
        None => choose(
            input,
            state,
            &budgets,
            Facts {
                all,
                l0_total,
                shrank,
                cold,
                idle,
                ttl_1h,
            },
        ),
    };
    plan.client_tokens = all + budgets.overhead;
    record(input, state, &plan, shrank);
    plan
}

/// What the turn looks like before a layer is chosen.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts {
    all: u64,
    l0_total: u64,
    shrank: bool,
    cold: bool,
    idle: bool,
    ttl_1h: bool,
}

fn cache_lifetime_ms(state: &ContextRecord, input: &PlanInput<'_>) -> u64 {
    let one_hour = match input.settings.ttl {
        TtlMode::Auto => state.ttl_1h,
        TtlMode::FiveMinutes => false,
        TtlMode::OneHour => true,
    };
    if one_hour { 3_600_000 } else { 300_000 }
}

fn idle_resume_ms(state: &ContextRecord, settings: &ContextSettings) -> u64 {
    let base = settings.idle_resume.as_millis() as u64;
    if state.ttl_1h {
        base.max(3_600_000)
    } else {
        base
    }
}

fn choose(input: &PlanInput<'_>, state: &ContextRecord, budgets: &Budgets, facts: Facts) -> Plan {
    let shape = Shape::of(input.units);
    let floor_kept = if facts.shrank {
        0
    } else {
        state.force_min_layer
    };
    let mut floor: u8 = input.retry_floor.max(floor_kept);
    let mut reasons: Vec<String> = Vec::new();
    if floor_kept > 0 {
        reasons.push(format!("floor {floor_kept} after a prompt-too-long answer"));
    }
    if !facts.shrank {
        if state.calibrated && (1..=3).contains(&state.last_layer) {
            floor = floor.max(state.last_layer);
        }
        if state.prefix_present {
            floor = floor.max(1);
        }
    }
    // After a quiet spell the cache is cold anyway: a rewrite costs nothing extra.
    let post_idle = facts.idle
        && facts.cold
        && (state.last_layer >= 1 || facts.l0_total * 2 >= budgets.layer0_ceiling())
        && !input.logs.is_empty();
    if post_idle {
        floor = floor.max(1);
        reasons.push("cold cache after an idle spell".into());
    }
    if input.budget_pressure > 0.0
        && facts.l0_total > budgets.pressure_ceiling(input.budget_pressure)
    {
        floor = floor.max(2);
        reasons.push(format!(
            "daily budget pressure {:.2}",
            input.budget_pressure
        ));
    }
    if floor == 0 {
        if budgets.layer0_fits(facts.l0_total) {
            return Plan::passthrough(
                format!(
                    "{} tokens fit the layer-0 cap of {}",
                    facts.l0_total,
                    budgets.layer0_ceiling()
                ),
                facts.all,
                facts.l0_total,
                budgets.l0_cap,
                facts.ttl_1h,
            );
        }
        let must = facts.l0_total > budgets.max_input * 95 / 100;
        let first_sight = !state.calibrated && state.turns_planned == 0;
        if !must && !first_sight && !should_compress(budgets, facts.l0_total, state) {
            return Plan::passthrough(
                format!(
                    "over the cap ({} > {}) but compressing costs more than continuing{}",
                    facts.l0_total,
                    budgets.layer0_ceiling(),
                    tier_note(facts.l0_total)
                ),
                facts.all,
                facts.l0_total,
                budgets.l0_cap,
                facts.ttl_1h,
            );
        }
        reasons.push(format!(
            "{} tokens over the layer-0 cap of {}{}",
            facts.l0_total,
            budgets.layer0_ceiling(),
            if must { " and near the window" } else { "" }
        ));
        floor = 1;
    }
    let mut limit: Option<u64> = None;
    for layer in floor.max(1)..=3 {
        let window = Window::build(
            input, state, budgets, &shape, layer, post_idle, limit, facts,
        );
        if window.total <= budgets.max_input {
            return window.into_plan(layer, reasons, budgets, facts.ttl_1h);
        }
        reasons.push(format!("layer {layer} needs {} tokens", window.total));
        limit = Some(window.window_tokens);
    }
    let window = Window::build(input, state, budgets, &shape, 4, post_idle, limit, facts);
    window.into_plan(4, reasons, budgets, facts.ttl_1h)
}

fn tier_note(tokens: u64) -> &'static str {
    match tokens {
        0..200_000 => "",
        200_000..500_000 => " (tier 2)",
        _ => " (tier 3)",
    }
}

fn record(input: &PlanInput<'_>, state: &mut ContextRecord, plan: &Plan, shrank: bool) {
    if plan.layer != state.last_layer && state.turns_planned > 0 {
        state.layer_changes += 1;
    }
    if shrank {
        // A shorter history (the client compacted or rewrote it) starts over: the floor a
        // prompt-too-long answer raised applied to the longer one.
        state.force_min_layer = 0;
        if plan.layer == 0 {
            state.prefix_present = false;
        }
    }
    if plan.layer >= 1 {
        state.prefix_present = true;
        state.window_start = input.units.get(plan.start).map(|unit| unit.identity);
        state.window_budget = plan.pin.budget;
        state.prefix_logs = plan.prefix.clone();
        state.prefix_kind = plan.pin.kind.clone();
        if plan.layer == 1 {
            state.distilled_high_water = state.distilled_high_water.max(plan.pin.distilled_budget);
        }
    } else {
        state.window_start = None;
        state.window_budget = 0;
    }
    state.last_layer = plan.layer;
    state.last_reason = plan.reason.clone();
    state.last_request_ms = input.now_ms;
    state.last_message_count = input.units.len() as u32;
    state.turns_planned += 1;
    state.last_estimate = plan.message_tokens;
    state.last_total_estimate = plan.total_tokens;
    state.last_cap = plan.l0_cap;
    state.provider_managed = input.provider_managed.map(str::to_string);
    // Decisions stay made while their outputs are in the conversation.
    let live: std::collections::HashSet<&str> = input
        .units
        .iter()
        .flat_map(|unit| unit.results.iter().map(|r| r.call_id.as_str()))
        .collect();
    state.stripped_calls = plan
        .strip
        .iter()
        .filter(|id| live.contains(id.as_str()))
        .cloned()
        .collect();
    state.duplicate_calls = plan
        .duplicates
        .iter()
        .filter(|id| live.contains(id.as_str()))
        .cloned()
        .collect();
}

pub use prefix::render_prefix;

#[cfg(test)]
mod tests;
