#![allow(clippy::unwrap_used)]

use super::*;
use lore_storage::costs::{BudgetSetting, CostEntry};

const DAY_MS: u64 = 86_400_000;
/// 2026-11-30 12:00 UTC.
const NOON: u64 = 1_796_040_000_000;

fn add(store: &Store, day: &str, bucket: &str, session: &str, totals: &CostTotals, at_ms: u64) {
    store
        .add_cost(
            &CostEntry {
                day,
                bucket,
                session_id: Some(session),
                project: None,
                model: Some("m"),
                at_ms,
                totals,
            },
            None,
        )
        .unwrap();
}

#[test]
fn days_buckets_savings_and_sessions_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(day_of(NOON), "2026-11-30");
    let turn = CostTotals {
        calls: 1,
        cost_usd: 1.0,
        cache_read_tokens: 1_000,
        cache_savings_usd: 0.25,
        passthrough_tokens: 5_000,
        sent_tokens: 3_000,
        gradient_savings_usd: 0.5,
        layer_changes: 1,
        layer_change_write_usd: 0.1,
        ..Default::default()
    };
    let worker = CostTotals {
        calls: 1,
        cost_usd: 0.2,
        ..Default::default()
    };
    add(
        &store,
        "2026-11-29",
        CONVERSATION,
        "a",
        &turn,
        NOON - DAY_MS,
    );
    add(&store, "2026-11-30", CONVERSATION, "a", &turn, NOON);
    add(&store, "2026-11-30", "distillation", "a", &worker, NOON);
    add(&store, "2026-11-30", CONVERSATION, "b", &turn, NOON);
    add(
        &store,
        "2026-11-27",
        CONVERSATION,
        "old",
        &turn,
        NOON - 3 * DAY_MS,
    );
    store
        .set_budget_setting(&BudgetSetting {
            daily_usd: Some(4.0),
            set_at_ms: 0,
        })
        .unwrap();
    let inputs = ReportInputs {
        now_ms: NOON,
        days: 2,
        rate_usd_per_hour: 1.0,
        ..Default::default()
    };
    let report = build(&store, &inputs).unwrap();
    assert_eq!(report.today, "2026-11-30");
    let days: Vec<&str> = report.days.iter().map(|d| d.day.as_str()).collect();
    assert_eq!(days, ["2026-11-30", "2026-11-29"], "newest first, two days");
    assert!((report.days[0].total_usd - 2.2).abs() < 1e-9);
    assert_eq!(report.days[0].buckets[0].bucket, CONVERSATION);
    assert_eq!(report.days[0].buckets[0].totals.calls, 2);
    assert!((report.budget.spent_today_usd - 2.2).abs() < 1e-9);
    assert_eq!(report.budget.source.as_deref(), Some("api"));
    assert!((report.budget.fraction.unwrap() - 0.55).abs() < 1e-9);
    assert!((report.budget.remaining_usd.unwrap() - 1.8).abs() < 1e-9);
    // Three conversation turns in the two days.
    let savings = &report.savings;
    assert!((savings.cache.usd - 0.75).abs() < 1e-9);
    assert_eq!(savings.cache.tokens, 3_000);
    assert!((savings.gradient.usd - 1.5).abs() < 1e-9);
    assert_eq!(savings.gradient.tokens, 6_000);
    assert!(
        savings.gradient.how.contains("15000"),
        "{}",
        savings.gradient.how
    );
    assert!((savings.lore_costs.worker_usd - 0.2).abs() < 1e-9);
    assert!((savings.lore_costs.layer_change_writes_usd - 0.3).abs() < 1e-9);
    assert!((savings.net_usd - (1.5 - 0.2 - 0.3)).abs() < 1e-9);
    let top: Vec<&str> = report
        .top_sessions
        .iter()
        .map(|s| s.session_id.as_str())
        .collect();
    assert_eq!(top, ["a", "b"], "the old session is outside the days shown");
    assert_eq!(report.top_sessions[0].turns, 2);
    assert!((report.top_sessions[0].worker_usd - 0.2).abs() < 1e-9);
    // One day: yesterday drops out.
    let one = build(
        &store,
        &ReportInputs {
            days: 1,
            ..inputs.clone()
        },
    )
    .unwrap();
    assert_eq!(one.days.len(), 1);
}

#[test]
fn an_unknown_session_is_reported_as_not_found() {
    let costs = SessionCosts::from_record("x", None);
    assert!(!costs.found);
    assert_eq!(costs.session_id, "x");
    assert_eq!(costs.cache_read_usd_per_turn, None);
}
