//! Tests of the tracker actor: the ledger it writes, the throttle it plans, and its restart.

#![allow(clippy::unwrap_used)]

use super::*;
use lore_storage::costs::CONVERSATION;

/// $3 / $15 per million; 100,000 input tokens cost $0.30.
const MODEL: &str = "claude-sonnet-4-5";

fn turn(session: &str, input: u64) -> RecordTurn {
    RecordTurn {
        session_id: session.into(),
        project: Some("/p".into()),
        model: MODEL.into(),
        usage: Usage {
            input_tokens: input,
            ..Default::default()
        },
        one_hour_writes: false,
        passthrough_tokens: input,
        sent_tokens: input,
        layer_changed: false,
        follow_up: false,
        at_ms: lore_storage::now_ms(),
    }
}

fn plan() -> PlanThrottle {
    PlanThrottle {
        session_id: "s".into(),
        bearer: None,
        ttl: Duration::from_secs(10),
        since_last_request: Duration::ZERO,
        estimated_cost_usd: 0.0,
    }
}

fn start(store: &Store, settings: CostSettings) -> CostTrackerHandle {
    CostTrackerHandle::start(store.clone(), settings, &actix::Arbiter::current())
}

/// The handle's plan once the tracker has handled everything sent before.
async fn planned(handle: &CostTrackerHandle) -> Throttle {
    handle.addr().send(Observe).await.unwrap();
    handle.plan(plan())
}

async fn report(handle: &CostTrackerHandle) -> CostsReport {
    handle
        .addr()
        .send(CostsQuery { days: 1 })
        .await
        .unwrap()
        .unwrap()
}

#[actix_rt::test]
async fn turns_and_worker_calls_are_summed_per_day_bucket_and_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let handle = start(&store, CostSettings::default());
    handle.record_turn(turn("s1", 100_000));
    handle.record_turn(turn("s1", 200_000));
    handle.record_turn(turn("s2", 100_000));
    handle.record_worker(RecordWorker {
        session_id: Some("s1".into()),
        bucket: WorkerBucket::Curation,
        model: Some("claude-haiku-4-5".into()),
        usage: UsageTotals {
            calls: 1,
            cost_usd: 0.05,
            ..Default::default()
        },
        at_ms: lore_storage::now_ms(),
    });
    let report = report(&handle).await;
    let today = &report.days[0];
    assert_eq!(today.day, report.today);
    assert_eq!(today.buckets[0].bucket, CONVERSATION);
    assert_eq!(today.buckets[0].totals.calls, 3);
    assert!(
        (today.buckets[0].totals.cost_usd - 1.2).abs() < 1e-9,
        "{today:?}"
    );
    assert_eq!(today.buckets[1].bucket, "curation");
    assert!((today.total_usd - 1.25).abs() < 1e-9);
    assert_eq!(report.top_sessions[0].session_id, "s1");
    assert!((report.top_sessions[0].cost_usd - 0.95).abs() < 1e-9);
    assert!((report.savings.lore_costs.worker_usd - 0.05).abs() < 1e-9);
    let counters = handle.addr().send(Observe).await.unwrap();
    assert_eq!((counters.turns, counters.worker_calls), (3, 1));
    let session = handle
        .addr()
        .send(SessionCost {
            session_id: "s1".into(),
        })
        .await
        .unwrap()
        .unwrap();
    assert!(session.found);
    assert_eq!(session.cache_read_usd_per_turn, Some(0.0));
    // The worker view of the same ledger (what `lore status` shows).
    let workers = store.worker_usage().unwrap();
    assert_eq!(workers.len(), 1);
    assert_eq!(workers[0].1, "curation");
}

#[actix_rt::test]
async fn a_budget_set_through_the_tracker_throttles_within_the_ttl_cap() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let handle = start(&store, CostSettings::default());
    assert!(!handle.active());
    assert!(!handle.wants_plan(false));
    assert!(handle.wants_plan(true), "an OAuth bearer's quota is polled");
    assert_eq!(planned(&handle).await.delay, Duration::ZERO);
    let status = handle
        .addr()
        .send(SetBudget {
            daily_usd: Some(0.5),
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.source.as_deref(), Some("api"));
    assert!(handle.active());
    // $0.60 spent against $0.50: the maximum delay, capped at half the 10 s TTL.
    handle.record_turn(turn("s", 200_000));
    let throttle = planned(&handle).await;
    assert_eq!(throttle.delay, Duration::from_secs(5), "{throttle:?}");
    assert_eq!(throttle.pressure, 1.0);
    // Asked by message, the tracker plans the same.
    let by_message = handle.addr().send(plan()).await.unwrap();
    assert_eq!(by_message.delay, throttle.delay);
    let report = report(&handle).await;
    assert_eq!(report.budget.throttle.events, 2);
    assert_eq!(report.budget.throttle.total_delay_ms, 10_000);
    let bad = handle
        .addr()
        .send(SetBudget {
            daily_usd: Some(-1.0),
        })
        .await
        .unwrap();
    assert!(bad.is_err());
    handle
        .addr()
        .send(SetBudget { daily_usd: None })
        .await
        .unwrap()
        .unwrap();
    assert!(!handle.active());
}

#[actix_rt::test]
async fn the_environment_budget_beats_the_stored_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let settings = CostSettings {
        budget_env: Some(20.0),
        ..Default::default()
    };
    let handle = start(&store, settings);
    assert!(handle.active());
    let status = handle
        .addr()
        .send(SetBudget {
            daily_usd: Some(1.0),
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.daily_usd, Some(20.0));
    assert_eq!(status.stored_usd, Some(1.0));
    assert_eq!(status.source.as_deref(), Some("LORE_DAILY_BUDGET"));
}

#[actix_rt::test]
async fn a_panic_restarts_the_tracker_with_its_state_reloaded() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // Budget $1.20: three $0.30 turns are 75 % of it (pressure 0.5); two would be 50 % (0).
    store
        .set_budget_setting(&lore_storage::costs::BudgetSetting {
            daily_usd: Some(1.2),
            set_at_ms: 0,
        })
        .unwrap();
    let settings = CostSettings {
        fault: Some(Fault::PanicAfterTurn(2)),
        ..Default::default()
    };
    let handle = start(&store, settings);
    for _ in 0..3 {
        handle.record_turn(turn("s", 100_000));
    }
    let throttle = planned(&handle).await;
    let counters = handle.addr().send(Observe).await.unwrap();
    assert_eq!(counters.restarts, 1, "{counters:?}");
    // The turn whose handler panicked was stored first, and the restart reloaded it.
    assert!((throttle.pressure - 0.5).abs() < 1e-9, "{throttle:?}");
    let report = report(&handle).await;
    assert_eq!(report.days[0].buckets[0].totals.calls, 3);
    // A fault injected by message restarts it again; nothing is lost.
    handle.addr().send(InjectFault).await.unwrap();
    handle.record_turn(turn("s", 100_000));
    let report = handle
        .addr()
        .send(CostsQuery { days: 1 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.days[0].buckets[0].totals.calls, 4);
    assert_eq!(report.tracker.unwrap().restarts, 2);
}

#[actix_rt::test]
async fn a_turn_of_an_earlier_day_does_not_count_today() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let handle = start(
        &store,
        CostSettings {
            budget_env: Some(0.5),
            ..Default::default()
        },
    );
    let mut old = turn("s", 1_000_000);
    old.at_ms -= 2 * 86_400_000;
    handle.record_turn(old);
    let throttle = planned(&handle).await;
    assert_eq!(throttle.delay, Duration::ZERO, "{throttle:?}");
    let report = handle
        .addr()
        .send(CostsQuery { days: 3 })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.days.len(), 1);
    assert_ne!(report.days[0].day, report.today);
    assert_eq!(report.budget.spent_today_usd, 0.0);
}
