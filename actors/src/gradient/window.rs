//! The raw window of layers 1–4: where the current turn starts, where a window may start
//! without orphaning a tool result, the pin that keeps the start in place while the window
//! grows (until 1.15 × its budget, then it is evicted to 75 %), which tool outputs are replaced,
//! and what the chosen layer costs.

use std::collections::HashMap;

use lore_proto::Role;
use lore_storage::ContextRecord;

use super::budget::Budgets;
use super::prefix::{self, PrefixKind};
use super::{ANNOTATION_TOKENS, Facts, PREFIX_FRAMING_TOKENS, Plan, PlanInput, Unit};

/// The window may grow to this multiple of its budget before it is re-pinned.
const PIN_GROWTH: f64 = 1.15;
/// A re-pinned window is evicted down to this share of its budget.
const REPIN_SHARE: f64 = 0.75;
/// Duplicate tool outputs shorter than this are left alone.
const DUPLICATE_MIN_CHARS: usize = 600;
/// Messages protected from stripping at layer 2 besides the current turn (the last 2 turns).
const PROTECTED_TAIL: usize = 4;

/// Where turns start and where a window may start.
#[derive(Debug, Clone)]
pub(crate) struct Shape {
    /// First message of the current turn (the last message the user wrote, with the tool
    /// exchanges after it).
    pub turn_start: usize,
    /// `valid[i]`: a window may start at message `i` (a user message, and no tool output from
    /// `i` on answers a call before `i`).
    pub valid: Vec<bool>,
}

impl Shape {
    /// The shape of a conversation.
    pub(crate) fn of(units: &[Unit]) -> Self {
        let n = units.len();
        let mut call_at: HashMap<&str, usize> = HashMap::new();
        for (i, unit) in units.iter().enumerate() {
            for call in &unit.calls {
                call_at.entry(call.as_str()).or_insert(i);
            }
        }
        // Earliest call answered by an output at or after `i`.
        let mut earliest = vec![usize::MAX; n + 1];
        for i in (0..n).rev() {
            let mut here = earliest[i + 1];
            for result in &units[i].results {
                let at = call_at.get(result.call_id.as_str()).copied().unwrap_or(i);
                here = here.min(at);
            }
            earliest[i] = here;
        }
        let valid = (0..n)
            .map(|i| units[i].role == Role::User && earliest[i] >= i)
            .collect();
        let turn_start = units.iter().rposition(|unit| unit.user_text).unwrap_or(0);
        Self { turn_start, valid }
    }

    /// The latest valid start at or before `at`; 0 when there is none.
    fn valid_at_or_before(&self, at: usize) -> usize {
        (0..=at.min(self.valid.len().saturating_sub(1)))
            .rev()
            .find(|&i| self.valid[i])
            .unwrap_or(0)
    }

    /// The first valid start in `from..=to`, else the latest one before `from`.
    fn valid_from(&self, from: usize, to: usize) -> usize {
        (from..=to)
            .find(|&i| self.valid.get(i).copied().unwrap_or(false))
            .unwrap_or_else(|| self.valid_at_or_before(from))
    }
}

/// One layer's candidate window and what it costs.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    layer: u8,
    start: usize,
    prefix: Vec<u64>,
    prefix_kind: PrefixKind,
    prefix_changed: bool,
    strip: Vec<String>,
    duplicates: Vec<String>,
    /// Estimated tokens of the raw window after replacements.
    pub window_tokens: u64,
    prefix_tokens: u64,
    /// Estimated tokens of the whole request.
    pub total: u64,
    uncovered: u64,
    pin_budget: u64,
    repinned: bool,
    distilled_budget: u64,
}

/// Which outputs a layer replaces, and each message's tokens afterwards.
fn replacements(
    units: &[Unit],
    shape: &Shape,
    layer: u8,
    raw_budget: u64,
    state: &ContextRecord,
) -> (Vec<String>, Vec<String>, Vec<u64>) {
    let n = units.len();
    let turn_tokens: u64 = units[shape.turn_start..].iter().map(|u| u.tokens).sum();
    // The messages whose outputs this layer replaces.
    let last_exchanges = n.saturating_sub(PROTECTED_TAIL);
    let oversized_turn = turn_tokens > raw_budget;
    let replaced = match layer {
        2 => 0..shape.turn_start.min(last_exchanges),
        // A current turn bigger than the whole budget keeps only its last exchanges whole.
        3 if oversized_turn => 0..last_exchanges,
        3 => 0..shape.turn_start,
        4 if oversized_turn => shape.turn_start.min(last_exchanges)..last_exchanges,
        _ => 0..0,
    };
    let memo: std::collections::HashSet<&str> =
        state.stripped_calls.iter().map(String::as_str).collect();
    let dup_memo: std::collections::HashSet<&str> =
        state.duplicate_calls.iter().map(String::as_str).collect();
    // The latest copy of each output (by hash) outside the protected tail.
    let mut latest: HashMap<u64, &str> = HashMap::new();
    if !replaced.is_empty() {
        for unit in &units[replaced.clone()] {
            for result in &unit.results {
                if result.chars >= DUPLICATE_MIN_CHARS {
                    latest.insert(result.hash, result.call_id.as_str());
                }
            }
        }
    }
    let mut strip = Vec::new();
    let mut duplicates = Vec::new();
    let mut tokens = Vec::with_capacity(n);
    for (i, unit) in units.iter().enumerate() {
        let mut t = unit.tokens;
        if replaced.contains(&i) {
            for result in &unit.results {
                let id = result.call_id.as_str();
                let duplicate = dup_memo.contains(id)
                    || (result.chars >= DUPLICATE_MIN_CHARS
                        && latest.get(&result.hash).is_some_and(|last| *last != id));
                if duplicate {
                    duplicates.push(result.call_id.clone());
                } else if memo.contains(id) || result.tokens > ANNOTATION_TOKENS {
                    strip.push(result.call_id.clone());
                } else {
                    continue;
                }
                t = t.saturating_sub(result.tokens) + ANNOTATION_TOKENS;
            }
        }
        tokens.push(t);
    }
    (strip, duplicates, tokens)
}

/// The newest start whose window fits `budget` (never after the current turn, always at a
/// valid boundary).
fn select_start(tokens: &[u64], budget: u64, shape: &Shape) -> usize {
    let n = tokens.len();
    let mut start = n;
    let mut used = 0u64;
    while start > 0 && used + tokens[start - 1] <= budget {
        start -= 1;
        used += tokens[start];
    }
    let start = start.min(shape.turn_start);
    shape.valid_from(start, shape.turn_start)
}

impl Window {
    /// Builds the candidate of `layer`. `limit` bounds its raw window below the previous
    /// layer's (escalation always shrinks).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        input: &PlanInput<'_>,
        state: &ContextRecord,
        budgets: &Budgets,
        shape: &Shape,
        layer: u8,
        post_idle: bool,
        limit: Option<u64>,
        facts: Facts,
    ) -> Self {
        let units = input.units;
        let n = units.len();
        let mut raw_budget = budgets.raw_budget(layer, post_idle && layer == 1);
        if let Some(limit) = limit {
            raw_budget = raw_budget.min(limit.saturating_sub(1));
        }
        let (strip, duplicates, tokens) = replacements(units, shape, layer, raw_budget, state);
        let window_from = |start: usize| -> u64 { tokens[start..].iter().sum() };
        // The pin: same layer, its message still there, and the window not grown too far.
        let same_layer = state.last_layer == layer && !facts.shrank && !post_idle;
        let pinned = state
            .window_start
            .filter(|_| same_layer)
            .and_then(|identity| {
                (0..=shape.turn_start.min(n.saturating_sub(1)))
                    .find(|&i| units[i].identity == identity && shape.valid[i])
            });
        let (start, pin_budget, repinned) = match pinned {
            Some(at)
                if (window_from(at) as f64)
                    <= PIN_GROWTH * state.window_budget.max(raw_budget) as f64 =>
            {
                (at, state.window_budget.max(raw_budget), false)
            }
            Some(_) => {
                let target = (raw_budget as f64 * REPIN_SHARE) as u64;
                (select_start(&tokens, target, shape), raw_budget, true)
            }
            None => (select_start(&tokens, raw_budget, shape), raw_budget, false),
        };
        let kind = PrefixKind::for_layer(layer);
        let distilled_budget = budgets.distilled_budget(layer);
        let frozen_ok = state.prefix_kind == kind.as_str()
            && !state.prefix_logs.is_empty()
            && state
                .prefix_logs
                .iter()
                .all(|n| input.logs.iter().any(|log| log.n == *n));
        let may_rerender = facts.cold || repinned || !same_layer || !frozen_ok;
        // Nothing dropped, nothing to stand in for it.
        let (prefix_logs, prefix_changed) = if start == 0 {
            (Vec::new(), !state.prefix_logs.is_empty())
        } else if may_rerender {
            let chosen = prefix::select(input.logs, kind, distilled_budget);
            let changed = chosen != state.prefix_logs || state.prefix_kind != kind.as_str();
            (chosen, changed)
        } else {
            (state.prefix_logs.clone(), false)
        };
        let prefix_tokens = if prefix_logs.is_empty() {
            0
        } else {
            PREFIX_FRAMING_TOKENS
                + input
                    .logs
                    .iter()
                    .filter(|log| prefix_logs.contains(&log.n))
                    .map(|log| log.tokens)
                    .sum::<u64>()
        };
        let uncovered = units[..start]
            .iter()
            .filter(|unit| unit.seq.is_none_or(|seq| seq >= input.distilled_through))
            .map(|unit| unit.tokens)
            .sum();
        let window_tokens = window_from(start);
        let total = budgets.overhead + budgets.ltm + prefix_tokens + window_tokens;
        let in_window = |id: &String| {
            units[start..]
                .iter()
                .any(|unit| unit.results.iter().any(|r| &r.call_id == id))
        };
        Self {
            layer,
            start,
            prefix: prefix_logs,
            prefix_kind: kind,
            prefix_changed,
            strip: strip.into_iter().filter(in_window).collect(),
            duplicates: duplicates.into_iter().filter(in_window).collect(),
            window_tokens,
            prefix_tokens,
            total,
            uncovered,
            pin_budget,
            repinned,
            distilled_budget,
        }
    }

    /// The plan of this candidate; `reasons` say how the layer was reached.
    pub(crate) fn into_plan(
        self,
        layer: u8,
        mut reasons: Vec<String>,
        budgets: &Budgets,
        ttl_1h: bool,
    ) -> Plan {
        if self.repinned {
            reasons.push("raw window re-pinned".into());
        }
        if self.uncovered > 0 {
            reasons.push(format!(
                "{} tokens of dropped messages are in no observation log yet (recall has them)",
                self.uncovered
            ));
        }
        debug_assert_eq!(layer, self.layer);
        Plan {
            layer,
            reason: reasons.join("; "),
            start: self.start,
            prefix: self.prefix,
            strip: self.strip,
            duplicates: self.duplicates,
            ttl_1h,
            message_tokens: self.prefix_tokens + self.window_tokens,
            total_tokens: self.total,
            client_tokens: 0,
            l0_cap: budgets.l0_cap,
            uncovered_tokens: self.uncovered,
            urgent_distillation: self.uncovered > 0 || layer >= 2,
            prefix_changed: self.prefix_changed,
            pin: PinUpdate {
                kind: self.prefix_kind.as_str().to_string(),
                budget: self.pin_budget,
                distilled_budget: self.distilled_budget,
            },
        }
    }
}

/// What the plan changes in the pin state besides the window start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PinUpdate {
    /// Which selection the prefix holds.
    pub kind: String,
    /// The raw budget the window is pinned with.
    pub budget: u64,
    /// The distilled budget used (layer 1 keeps its high-water mark).
    pub distilled_budget: u64,
}
