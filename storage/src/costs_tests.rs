#![allow(clippy::unwrap_used)]

use super::*;
use crate::memory::WorkerBucket;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

fn turn(cost: f64, reads: u64) -> CostTotals {
    CostTotals {
        calls: 1,
        input_tokens: 10,
        output_tokens: 5,
        cache_read_tokens: reads,
        cost_usd: cost,
        cache_read_usd: cost / 2.0,
        ..Default::default()
    }
}

fn entry<'a>(
    day: &'a str,
    bucket: &'a str,
    session: Option<&'a str>,
    t: &'a CostTotals,
) -> CostEntry<'a> {
    CostEntry {
        day,
        bucket,
        session_id: session,
        project: Some("/p"),
        model: Some("claude-sonnet-4-5"),
        at_ms: 1_000,
        totals: t,
    }
}

#[test]
fn costs_add_up_per_day_bucket_and_session() {
    let (_dir, store) = store();
    let a = turn(0.25, 100);
    let b = turn(0.5, 0);
    store
        .add_cost(&entry("2026-11-30", CONVERSATION, Some("s1"), &a), None)
        .unwrap();
    store
        .add_cost(&entry("2026-11-30", CONVERSATION, Some("s1"), &b), None)
        .unwrap();
    store
        .add_cost(&entry("2026-12-01", CONVERSATION, Some("s1"), &a), None)
        .unwrap();
    store
        .add_cost(&entry("2026-12-01", "curation", Some("s1"), &b), None)
        .unwrap();
    store
        .add_cost(&entry("2026-12-01", CONVERSATION, None, &b), None)
        .unwrap();

    let days = store.cost_days("2026-11-30").unwrap();
    assert_eq!(days.len(), 3);
    assert_eq!(
        (days[0].0.as_str(), days[0].1.as_str()),
        ("2026-11-30", CONVERSATION)
    );
    assert!((days[0].2.cost_usd - 0.75).abs() < 1e-12);
    assert_eq!(days[0].2.calls, 2);
    assert_eq!(days[0].2.cache_read_tokens, 100);
    assert!((days[1].2.cost_usd - 0.75).abs() < 1e-12, "{days:?}");
    assert_eq!(days[2].1, "curation");
    // A later start day leaves the earlier day out.
    assert_eq!(store.cost_days("2026-12-01").unwrap().len(), 2);

    let session = store.session_costs("s1").unwrap().unwrap();
    assert_eq!(session.project.as_deref(), Some("/p"));
    assert_eq!(session.buckets[CONVERSATION].calls, 3);
    assert_eq!(session.buckets["curation"].calls, 1);
    assert!((session.total().cost_usd - 1.5).abs() < 1e-12);
    assert_eq!(session.recent_cache_read_usd, vec![0.125, 0.25, 0.125]);
    assert_eq!(store.all_session_costs().unwrap().len(), 1);
    assert!(store.session_costs("nope").unwrap().is_none());
}

#[test]
fn recent_cache_reads_keep_the_latest_turns() {
    let (_dir, store) = store();
    for n in 0..(RECENT_TURNS + 3) {
        let t = turn(n as f64, 1);
        store
            .add_cost(&entry("2026-11-30", CONVERSATION, Some("s"), &t), None)
            .unwrap();
    }
    let record = store.session_costs("s").unwrap().unwrap();
    assert_eq!(record.recent_cache_read_usd.len(), RECENT_TURNS);
    assert_eq!(
        record.recent_cache_read_usd.last().copied(),
        Some((RECENT_TURNS + 2) as f64 / 2.0)
    );
}

#[test]
fn throttle_rate_and_budget_are_kept() {
    let (dir, store) = store();
    store.add_throttle("2026-11-30", 1_500).unwrap();
    let counters = store.add_throttle("2026-11-30", 500).unwrap();
    assert_eq!(
        counters,
        ThrottleDay {
            events: 2,
            total_delay_ms: 2_000
        }
    );
    assert_eq!(
        store.throttle_day("2026-12-01").unwrap(),
        ThrottleDay::default()
    );
    let rate = RateState {
        usd_per_hour: 3.5,
        last_ms: 9,
    };
    let t = turn(0.1, 0);
    store
        .add_cost(&entry("2026-11-30", CONVERSATION, None, &t), Some(&rate))
        .unwrap();
    store
        .set_budget_setting(&BudgetSetting {
            daily_usd: Some(20.0),
            set_at_ms: 7,
        })
        .unwrap();
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(store.throttle_day("2026-11-30").unwrap().events, 2);
    assert_eq!(store.cost_rate().unwrap(), Some(rate));
    assert_eq!(store.budget_setting().unwrap().daily_usd, Some(20.0));
}

#[test]
fn the_old_worker_ledger_is_shown_then_folded_in_once() {
    let (_dir, store) = store();
    let old = store.tree(OLD_WORKER_USAGE).unwrap();
    let usage = UsageTotals {
        calls: 2,
        input_tokens: 300,
        cost_usd: 0.3,
        ..Default::default()
    };
    old.insert(
        "2026-11-29/distillation",
        encode("worker usage", &usage).unwrap(),
    )
    .unwrap();
    store
        .record_worker_usage("2026-11-29", WorkerBucket::Distillation, &usage)
        .unwrap();
    // Before the migration, both ledgers are summed in the worker view.
    let before = store.worker_usage().unwrap();
    assert_eq!(before.len(), 1);
    assert_eq!(before[0].2.input_tokens, 600);
    assert_eq!(store.migrate_worker_usage().unwrap(), 1);
    assert_eq!(store.migrate_worker_usage().unwrap(), 0);
    let after = store.worker_usage().unwrap();
    assert_eq!(after, before, "nothing is counted twice or lost");
    assert!(old.is_empty());
    let days = store.cost_days("").unwrap();
    assert_eq!(days[0].2.calls, 4);
}
