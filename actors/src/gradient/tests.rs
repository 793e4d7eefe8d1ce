//! Tests of the gradient planner: layer choice, budgets, pins, prefix freezing, replacements,
//! floors, and (property-tested) tool pairing after every layer on random histories.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;

use super::pairing::validate;
use super::*;
use crate::catalogue::{Catalogue, parse_overrides};

fn id(n: usize) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..8].copy_from_slice(&(n as u64).to_be_bytes());
    out
}

/// Builds conversations: user turns with tool exchanges.
#[derive(Default)]
struct Talk {
    units: Vec<Unit>,
    calls: usize,
}

impl Talk {
    fn unit(&mut self, role: Role, tokens: u64) -> &mut Unit {
        let n = self.units.len();
        self.units.push(Unit {
            role,
            tokens,
            identity: id(n),
            seq: Some(n as u64),
            user_text: false,
            text_only_assistant: false,
            calls: Vec::new(),
            results: Vec::new(),
        });
        self.units.last_mut().unwrap()
    }

    fn user(&mut self, tokens: u64) -> &mut Self {
        self.unit(Role::User, tokens).user_text = true;
        self
    }

    fn answer(&mut self, tokens: u64) -> &mut Self {
        self.unit(Role::Assistant, tokens).text_only_assistant = true;
        self
    }

    /// An assistant call and the user message carrying its output of `tokens`.
    fn tool(&mut self, tokens: u64) -> &mut Self {
        self.calls += 1;
        let call = format!("call{}", self.calls);
        self.unit(Role::Assistant, 30).calls.push(call.clone());
        let hash = 1000 + self.calls as u64;
        let unit = self.unit(Role::User, tokens + 10);
        unit.results.push(ResultView {
            call_id: call,
            tokens,
            hash,
            chars: tokens as usize * 4,
        });
        self
    }

    /// `turns` turns of a question, `tools` tool exchanges of `each` tokens, an answer.
    fn turns(&mut self, turns: usize, tools: usize, each: u64) -> &mut Self {
        for _ in 0..turns {
            self.user(60);
            for _ in 0..tools {
                self.tool(each);
            }
            self.answer(120);
        }
        self
    }
}

fn logs(count: u64, tokens: u64) -> Vec<LogView> {
    (0..count)
        .map(|n| LogView {
            n,
            generation: 0,
            tokens,
            text: format!("observations {n}"),
            id: format!("d:s:{n}"),
        })
        .collect()
}

fn model_64k() -> ModelInfo {
    let overrides = parse_overrides(r#"{"test-model":{"context":64000,"output":8192}}"#).unwrap();
    Catalogue::with_overrides(overrides).lookup("test-model")
}

struct Case {
    model: ModelInfo,
    settings: ContextSettings,
    logs: Vec<LogView>,
    distilled_through: u64,
    now_ms: u64,
}

impl Case {
    fn new() -> Self {
        Self {
            model: model_64k(),
            settings: ContextSettings::default(),
            logs: Vec::new(),
            distilled_through: 0,
            now_ms: 1_000_000,
        }
    }

    fn input<'a>(&'a self, units: &'a [Unit]) -> PlanInput<'a> {
        PlanInput {
            units,
            model: &self.model,
            long_context: false,
            settings: &self.settings,
            logs: &self.logs,
            distilled_through: self.distilled_through,
            fixed_tokens: 2_000,
            ltm_tokens: 0,
            provider_managed: None,
            rewritten: false,
            budget_pressure: 0.0,
            now_ms: self.now_ms,
            retry_floor: 0,
        }
    }

    fn plan(&mut self, units: &[Unit], state: &mut ContextRecord) -> Plan {
        self.now_ms += 10_000;
        let plan = plan(&self.input(units), state);
        validate(units, &plan).unwrap();
        plan
    }
}

fn calibrated(overhead: f64) -> ContextRecord {
    ContextRecord {
        calibrated: true,
        overhead,
        ..ContextRecord::default()
    }
}

#[test]
fn a_short_session_goes_unchanged() {
    let mut case = Case::new();
    let mut talk = Talk::default();
    talk.turns(3, 2, 500);
    let mut state = ContextRecord::default();
    let plan = case.plan(&talk.units, &mut state);
    assert_eq!(plan.layer, 0, "{}", plan.reason);
    assert_eq!(plan.start, 0);
    assert!(plan.prefix.is_empty() && plan.strip.is_empty());
    assert_eq!(state.last_layer, 0);
    assert_eq!(state.turns_planned, 1);
}

#[test]
fn past_the_window_layer_one_sends_the_prefix_and_a_recent_window() {
    let mut case = Case::new();
    case.logs = logs(6, 800);
    case.distilled_through = 60;
    let mut talk = Talk::default();
    talk.turns(20, 2, 1_200);
    let mut state = calibrated(2_000.0);
    let plan = case.plan(&talk.units, &mut state);
    assert_eq!(plan.layer, 1, "{}", plan.reason);
    assert!(plan.start > 0);
    assert!(talk.units[plan.start].user_text || talk.units[plan.start].role == Role::User);
    assert_eq!(plan.prefix, vec![0, 1, 2, 3, 4, 5]);
    assert!(plan.total_tokens <= 64_000 - 8_192);
    assert_eq!(state.window_start, Some(talk.units[plan.start].identity));
    assert!(state.prefix_present);
}

#[test]
fn the_window_stays_pinned_and_the_prefix_frozen_while_the_session_grows() {
    let mut case = Case::new();
    case.logs = logs(4, 800);
    case.distilled_through = 40;
    let mut talk = Talk::default();
    talk.turns(20, 2, 1_200);
    let mut state = calibrated(2_000.0);
    let first = case.plan(&talk.units, &mut state);
    assert_eq!(first.layer, 1);
    // Two more turns and a new log: same start, same prefix (the new log waits).
    talk.turns(1, 1, 300);
    case.logs = logs(5, 800);
    let second = case.plan(&talk.units, &mut state);
    assert_eq!(second.layer, 1, "{}", second.reason);
    assert_eq!(second.start, first.start);
    assert_eq!(second.prefix, first.prefix);
    assert!(!second.prefix_changed);
    // Past 1.15 × its budget the window is re-pinned, and only then the new log shows, appended.
    for _ in 0..12 {
        talk.turns(1, 2, 1_200);
    }
    let third = case.plan(&talk.units, &mut state);
    assert!(third.layer >= 1);
    if third.layer == 1 {
        assert!(third.start > first.start, "re-pinned: {}", third.reason);
        assert!(third.reason.contains("re-pinned"), "{}", third.reason);
        assert_eq!(third.prefix, vec![0, 1, 2, 3, 4]);
        assert!(third.prefix.starts_with(&first.prefix));
    }
}

#[test]
fn escalation_replaces_old_outputs_but_keeps_the_last_turns() {
    let mut case = Case::new();
    case.logs = logs(2, 500);
    case.distilled_through = 500;
    let mut talk = Talk::default();
    talk.turns(12, 3, 2_500);
    let mut state = ContextRecord {
        force_min_layer: 2,
        ..calibrated(2_000.0)
    };
    let plan = case.plan(&talk.units, &mut state);
    assert!(plan.layer >= 2, "{}", plan.reason);
    let n = talk.units.len();
    let protected: Vec<&str> = talk.units[n - 4..]
        .iter()
        .flat_map(|u| u.results.iter().map(|r| r.call_id.as_str()))
        .collect();
    assert!(!plan.strip.is_empty());
    for id in &plan.strip {
        assert!(
            !protected.contains(&id.as_str()),
            "{id} is in the last turns"
        );
    }
    assert_eq!(state.stripped_calls, plan.strip);
    // The decision is remembered: the same outputs stay replaced on the next turn.
    talk.user(50);
    let next = case.plan(&talk.units, &mut state);
    for id in &plan.strip {
        if talk.units[next.start..]
            .iter()
            .any(|u| u.results.iter().any(|r| &r.call_id == id))
        {
            assert!(next.strip.contains(id), "{id} flipped back");
        }
    }
}

#[test]
fn layer_four_keeps_two_logs_and_the_current_turn_whole() {
    let mut case = Case::new();
    case.logs = logs(8, 300);
    case.distilled_through = 10_000;
    let mut talk = Talk::default();
    talk.turns(6, 2, 3_000);
    talk.user(60);
    talk.tool(20_000);
    talk.tool(20_000);
    let mut state = ContextRecord {
        force_min_layer: 4,
        ..calibrated(3_000.0)
    };
    let plan = case.plan(&talk.units, &mut state);
    assert_eq!(plan.layer, 4, "{}", plan.reason);
    assert_eq!(plan.prefix.len(), 2);
    let turn_start = talk.units.iter().rposition(|u| u.user_text).unwrap();
    assert!(plan.start <= turn_start);
    assert!(plan.strip.is_empty(), "layer 4 replaces nothing");
}

#[test]
fn a_floor_from_a_prompt_too_long_answer_holds() {
    let mut case = Case::new();
    case.logs = logs(3, 400);
    case.distilled_through = 1_000;
    let mut talk = Talk::default();
    talk.turns(4, 1, 500);
    let mut state = ContextRecord {
        force_min_layer: 3,
        ..ContextRecord::default()
    };
    let plan = case.plan(&talk.units, &mut state);
    assert!(plan.layer >= 3, "{}", plan.reason);
    assert!(plan.reason.contains("floor 3"), "{}", plan.reason);
}

#[test]
fn a_large_first_sight_is_compressed_on_the_cold_turn() {
    let mut case = Case::new();
    case.logs = logs(4, 500);
    case.distilled_through = 1_000;
    let mut talk = Talk::default();
    talk.turns(16, 2, 1_500);
    let mut state = ContextRecord::default();
    let plan = case.plan(&talk.units, &mut state);
    assert!(plan.layer >= 1, "{}", plan.reason);
}

#[test]
fn the_cold_turn_and_free_write_branches_lower_the_ceiling() {
    let mut case = Case::new();
    case.settings.max_layer0_tokens = Some(40_000);
    let talk = Talk::default();
    let input = case.input(&talk.units);
    let cold = budget::Budgets::new(&input, &ContextRecord::default());
    let warm = budget::Budgets::new(&input, &calibrated(2_000.0));
    let free = budget::Budgets::new(
        &input,
        &ContextRecord {
            zero_write_turns: 3,
            ..calibrated(2_000.0)
        },
    );
    assert_eq!(warm.l0_cap, 40_000, "pinned");
    assert!(cold.layer0_ceiling() < warm.layer0_ceiling());
    assert_eq!(
        cold.layer0_ceiling(),
        (warm.layer0_ceiling() as f64 * 0.70) as u64
    );
    assert!(free.free_write);
    assert_eq!(
        free.layer0_ceiling(),
        ((64_000 - 8_192) as f64 * 0.65) as u64
    );
}

#[test]
fn the_cap_follows_the_target_and_the_pin() {
    let mut case = Case::new();
    case.model = Catalogue::builtin().lookup("claude-sonnet-4-5");
    let talk = Talk::default();
    let state = calibrated(5_000.0);
    let b = budget::Budgets::new(&case.input(&talk.units), &state);
    // $0.10 / $0.30 per million = 333K tokens: the 200K window bounds it.
    assert_eq!(b.l0_cap, 200_000);
    case.model = Catalogue::builtin().lookup("claude-opus-4-1");
    let b = budget::Budgets::new(&case.input(&talk.units), &state);
    assert_eq!(b.l0_cap, 66_666, "$0.10 / $1.50 per million");
    case.model = Catalogue::builtin().lookup("gpt-4o");
    case.settings.target_cache_read_cost = 0.02;
    let b = budget::Budgets::new(&case.input(&talk.units), &state);
    assert_eq!(
        b.l0_cap, 40_000,
        "$0.02 / $1.25 per million is 16K, under the floor"
    );
    case.model = Catalogue::builtin().lookup("claude-sonnet-4-5");
    case.settings.target_cache_read_cost = 0.10;
    case.settings.target_cache_read_cost = 0.0;
    let b = budget::Budgets::new(&case.input(&talk.units), &state);
    assert_eq!(b.l0_cap, 200_000, "a target of 0 disables the cap");
    case.settings.max_layer0_tokens = Some(25_000);
    let b = budget::Budgets::new(&case.input(&talk.units), &state);
    assert_eq!(b.l0_cap, 25_000);
}

#[test]
fn a_provider_managed_context_stays_at_layer_zero() {
    let mut case = Case::new();
    case.logs = logs(4, 500);
    let mut talk = Talk::default();
    talk.turns(30, 2, 1_500);
    let mut state = calibrated(2_000.0);
    let units = talk.units.clone();
    let mut input = case.input(&units);
    input.provider_managed = Some("previous_response_id");
    let plan = plan(&input, &mut state);
    assert_eq!(plan.layer, 0);
    assert!(plan.reason.contains("previous_response_id"));
    assert_eq!(
        state.provider_managed.as_deref(),
        Some("previous_response_id")
    );
}

#[test]
fn over_the_cap_the_gate_weighs_a_bust_against_continuing() {
    let mut case = Case::new();
    // $1.50 per million cache reads: a 66K cap in a 200K window.
    case.model = Catalogue::builtin().lookup("claude-opus-4-1");
    case.logs = logs(4, 500);
    let mut talk = Talk::default();
    talk.turns(30, 2, 1_500);
    let total: u64 = talk.units.iter().map(|u| u.tokens).sum();
    assert!((70_000..150_000).contains(&total), "{total}");
    // Writing the compressed prompt once costs more than re-reading this one: continue.
    let mut state = calibrated(5_000.0);
    let plan = case.plan(&talk.units, &mut state);
    assert_eq!(plan.layer, 0, "{}", plan.reason);
    assert!(
        plan.reason.contains("compressing costs more"),
        "{}",
        plan.reason
    );
    // A free-write provider compresses (until two busts in a row).
    let mut free = ContextRecord {
        zero_write_turns: 3,
        ..calibrated(5_000.0)
    };
    assert!(case.plan(&talk.units, &mut free).layer >= 1);
    let mut busting = ContextRecord {
        zero_write_turns: 3,
        consecutive_busts: 2,
        ..calibrated(5_000.0)
    };
    assert_eq!(case.plan(&talk.units, &mut busting).layer, 0);
    // Past the quality knee continuing gets dearer than a bust.
    talk.turns(25, 2, 1_500);
    let mut state = calibrated(5_000.0);
    let plan = case.plan(&talk.units, &mut state);
    assert!(plan.layer >= 1, "{}", plan.reason);
}

#[test]
fn dropped_messages_no_log_covers_are_reported() {
    let mut case = Case::new();
    let mut talk = Talk::default();
    talk.turns(20, 2, 1_200);
    let mut state = calibrated(2_000.0);
    let plan = case.plan(&talk.units, &mut state);
    assert!(plan.layer >= 1);
    assert!(plan.uncovered_tokens > 0);
    assert!(plan.urgent_distillation);
    assert!(
        plan.reason.contains("no observation log"),
        "{}",
        plan.reason
    );
}

#[test]
fn a_shrunk_history_may_go_back_to_layer_zero() {
    let mut case = Case::new();
    case.logs = logs(4, 800);
    let mut talk = Talk::default();
    talk.turns(20, 2, 1_200);
    let mut state = calibrated(2_000.0);
    assert!(case.plan(&talk.units, &mut state).layer >= 1);
    // The client compacted: a short new history.
    let mut short = Talk::default();
    short.turns(2, 1, 300);
    for (n, unit) in short.units.iter_mut().enumerate() {
        unit.identity = id(10_000 + n);
    }
    let plan = case.plan(&short.units, &mut state);
    assert_eq!(plan.layer, 0, "{}", plan.reason);
}

/// Random conversations: user turns, tool exchanges (some parallel), answers.
fn conversation() -> impl Strategy<Value = Vec<Unit>> {
    prop::collection::vec((1u64..4_000, 0usize..4, 1usize..3, any::<bool>()), 1..30).prop_map(
        |turns| {
            let mut talk = Talk::default();
            for (size, tools, parallel, answer) in turns {
                talk.user(size.min(400));
                for _ in 0..tools {
                    if parallel == 2 {
                        talk.calls += 2;
                        let (a, b) = (
                            format!("call{}", talk.calls - 1),
                            format!("call{}", talk.calls),
                        );
                        talk.unit(Role::Assistant, 40)
                            .calls
                            .extend([a.clone(), b.clone()]);
                        let unit = talk.unit(Role::User, size * 2 + 20);
                        for (k, call) in [a, b].into_iter().enumerate() {
                            unit.results.push(ResultView {
                                call_id: call,
                                tokens: size,
                                hash: size + k as u64,
                                chars: size as usize * 4,
                            });
                        }
                    } else {
                        talk.tool(size);
                    }
                }
                if answer {
                    talk.answer(100);
                }
            }
            talk.units
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn every_layer_keeps_tool_pairing_and_escalation_shrinks(
        units in conversation(),
        log_count in 0u64..12,
        floor in 0u8..5,
    ) {
        let mut case = Case::new();
        case.logs = logs(log_count, 300);
        case.distilled_through = units.len() as u64 / 2;
        let mut state = ContextRecord { force_min_layer: floor, ..calibrated(1_500.0) };
        let input = case.input(&units);
        let plan = plan(&input, &mut state);
        prop_assert!(validate(&units, &plan).is_ok(), "{:?}", validate(&units, &plan));
        prop_assert!(plan.layer >= floor.min(4));
        prop_assert!(plan.start < units.len());
        if plan.layer > 0 {
            prop_assert!(plan.start <= units.iter().rposition(|u| u.user_text).unwrap_or(0));
        }
        // The same state and input plan the same thing again (deterministic).
        let mut again = ContextRecord { force_min_layer: floor, ..calibrated(1_500.0) };
        prop_assert_eq!(super::plan(&input, &mut again), plan.clone());
        // Escalation shrinks: every layer tried and refused needed more than what is sent,
        // unless the current turn alone is what is sent.
        let turn_start = units.iter().rposition(|u| u.user_text).unwrap_or(0);
        for needed in plan.reason.split("; ").filter_map(|part| {
            part.strip_prefix("layer ")?.split(" needs ").nth(1)?.strip_suffix(" tokens")?.parse::<u64>().ok()
        }) {
            prop_assert!(plan.total_tokens < needed || plan.start == turn_start,
                "sent {} after a layer needed {needed}: {}", plan.total_tokens, plan.reason);
        }
        let max_input = 64_000 - 8_192;
        prop_assert!(plan.total_tokens <= max_input || plan.layer == 4,
            "layer {} over the window: {}", plan.layer, plan.total_tokens);
    }
}
