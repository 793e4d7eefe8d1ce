//! A throttle plan computed on the request path from what the tracker last published, so
//! asking costs a read lock instead of a message to another thread (pure).
//!
//! The tracker publishes a [`Snapshot`] after every change (a cost recorded, the budget set, a
//! quota reading, a new day); [`plan_from`] turns it and the request into a [`Throttle`] with
//! the curves of [`super::throttle`]. A snapshot of an earlier UTC day counts as nothing spent.

use std::collections::HashMap;

use lore_storage::costs::RateState;

use super::throttle::{
    BudgetDelay, BudgetView, budget_delay, final_sleep, hours_left_in_utc_day, quota_delay,
    rate_now,
};
use super::{PlanThrottle, Throttle};

const MS_PER_DAY: u64 = 86_400_000;

/// What a plan needs of the tracker's state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// The budget in force, US dollars per UTC day.
    pub budget_usd: Option<f64>,
    /// The UTC day `spent_today_usd` belongs to (days since the epoch).
    pub day: u64,
    /// Spent that day, every bucket.
    pub spent_today_usd: f64,
    /// The spend rate at the latest cost.
    pub rate: Option<RateState>,
    /// Quota pressure per account, from readings still valid.
    pub quota: HashMap<String, f64>,
}

/// The day index of a time, ms since the epoch.
pub fn day_index(ms: u64) -> u64 {
    ms / MS_PER_DAY
}

/// The plan of one request at `now_ms` (the tracker's clock); `account` is the fingerprint of
/// its OAuth bearer when quota is polled.
pub fn plan_from(
    snapshot: &Snapshot,
    plan: &PlanThrottle,
    account: Option<&str>,
    now_ms: u64,
) -> Throttle {
    let spent = if snapshot.day == day_index(now_ms) {
        snapshot.spent_today_usd
    } else {
        0.0
    };
    let budget = snapshot
        .budget_usd
        .map(|budget_usd| {
            budget_delay(BudgetView {
                budget_usd,
                spent_usd: spent + plan.estimated_cost_usd.max(0.0),
                rate_usd_per_hour: rate_now(snapshot.rate, now_ms),
                hours_left: hours_left_in_utc_day(now_ms),
            })
        })
        .unwrap_or_default();
    let quota_pressure = account
        .and_then(|account| snapshot.quota.get(account).copied())
        .unwrap_or(0.0);
    let quota_secs = quota_delay(quota_pressure);
    let delay = final_sleep(
        budget.seconds,
        quota_secs,
        plan.ttl,
        plan.since_last_request,
    );
    let reason = if delay.is_zero() {
        String::new()
    } else {
        reason(&budget, snapshot.budget_usd, quota_pressure, quota_secs)
    };
    Throttle {
        delay,
        pressure: budget.pressure,
        quota_pressure,
        reason,
    }
}

/// Why a request is held, for the log.
fn reason(
    budget: &BudgetDelay,
    daily: Option<f64>,
    quota_pressure: f64,
    quota_secs: f64,
) -> String {
    let mut parts = Vec::new();
    if let Some(daily) = daily {
        parts.push(format!(
            "budget: {:.0}% of ${daily:.2} spent, overshoot {:.2}, {:.1}s",
            budget.fraction * 100.0,
            budget.overshoot,
            budget.seconds
        ));
    }
    if quota_pressure > 0.0 {
        parts.push(format!(
            "quota pressure {quota_pressure:.2}, {quota_secs:.1}s"
        ));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// 2026-11-30 23:45 UTC.
    const LATE: u64 = 1_796_082_300_000;

    fn request(estimate: f64) -> PlanThrottle {
        PlanThrottle {
            session_id: "s".into(),
            bearer: None,
            ttl: Duration::from_secs(300),
            since_last_request: Duration::from_secs(1),
            estimated_cost_usd: estimate,
        }
    }

    fn snapshot(spent: f64) -> Snapshot {
        Snapshot {
            budget_usd: Some(10.0),
            day: day_index(LATE),
            spent_today_usd: spent,
            rate: Some(RateState {
                usd_per_hour: 100.0,
                last_ms: LATE,
            }),
            quota: HashMap::new(),
        }
    }

    #[test]
    fn spending_fast_past_half_the_budget_is_held() {
        // 60 % with the estimate, far above the affordable rate: 60 × 0.2² × tanh(10/3).
        let throttle = plan_from(&snapshot(5.5), &request(0.5), None, LATE);
        let expected = 60.0 * 0.04 * (10.0f64 / 3.0).tanh();
        assert!(
            (throttle.delay.as_secs_f64() - expected).abs() < 1e-3,
            "{throttle:?}"
        );
        assert!((throttle.pressure - 0.2).abs() < 1e-9);
        assert!(
            throttle.reason.contains("60% of $10.00"),
            "{}",
            throttle.reason
        );
        // Under half: nothing, and no reason to format.
        let calm = plan_from(&snapshot(4.0), &request(0.5), None, LATE);
        assert_eq!(calm.delay, Duration::ZERO);
        assert!(calm.reason.is_empty());
    }

    #[test]
    fn a_snapshot_of_yesterday_counts_as_nothing_spent() {
        let after_midnight = LATE + 20 * 60_000;
        let throttle = plan_from(&snapshot(9.9), &request(0.0), None, after_midnight);
        assert_eq!(throttle.delay, Duration::ZERO);
        assert_eq!(throttle.pressure, 0.0);
    }

    #[test]
    fn the_account_s_quota_pressure_applies_without_a_budget() {
        let mut snap = Snapshot::default();
        snap.quota.insert("acct".into(), 0.5);
        let throttle = plan_from(&snap, &request(0.0), Some("acct"), LATE);
        assert_eq!(throttle.delay, Duration::from_secs(15));
        assert_eq!(throttle.quota_pressure, 0.5);
        let other = plan_from(&snap, &request(0.0), Some("other"), LATE);
        assert_eq!(other.delay, Duration::ZERO);
    }
}
