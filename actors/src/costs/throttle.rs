//! The throttle (pure): the spend rate, the budget delay, the quota delay and the sleep that
//! is finally applied, with every constant of reference §20.
//!
//! - Spend rate: an exponential average in US dollars per hour, α = 0.15 at the nominal gap of
//!   two minutes and gap-adjusted, `α = 1 − 0.85^(Δh / (1/30 h))`; each cost `c` after a gap of
//!   `Δh` hours contributes the rate `c / Δh`; the first cost seeds `c × 30`.
//! - Budget delay: 0 while the day's spend (with the request's estimate) is under half the
//!   budget, 60 s from the whole budget on; between the two, 0 while the rate is within the
//!   target `remaining / max(hours left in the UTC day, 0.5)`, else
//!   `60 s × pressure² × tanh(overshoot / 3)` with `pressure = (fraction − 0.5) / 0.5` and
//!   `overshoot = min(rate / target − 1, 10)`.
//! - Quota delay: `60 s × qp²`, `qp = clamp((max(5-hour %, 7-day %) − 80) / 20, 0, 1)`.
//! - Sleep: the larger of the two, capped at `0.5 × (TTL − time since the previous request)` so
//!   the request still lands inside the cache TTL; under 0.5 s nothing is slept. A request
//!   whose cache is already cold (the previous request is older than the TTL, or there was
//!   none) has no cache to keep: only the 60 s maximum applies to it.

use std::time::Duration;

use lore_storage::costs::RateState;

/// The longest delay, seconds.
pub const MAX_DELAY_SECS: f64 = 60.0;
/// Sleeps shorter than this are skipped.
pub const MIN_SLEEP: Duration = Duration::from_millis(500);
/// Average weight of a cost at the nominal gap.
const ALPHA: f64 = 0.15;
/// The nominal gap between turns, hours (two minutes): also the seed factor, 30 turns an hour.
const NOMINAL_GAP_HOURS: f64 = 1.0 / 30.0;
/// The fewest hours left the target rate divides by.
const MIN_HOURS_LEFT: f64 = 0.5;
/// The largest overshoot counted.
const MAX_OVERSHOOT: f64 = 10.0;
/// Quota utilisation (percent) where the quota delay starts.
const QUOTA_KNEE: f64 = 80.0;
/// Percent from the knee to full quota pressure.
const QUOTA_SPAN: f64 = 20.0;
const MS_PER_HOUR: f64 = 3_600_000.0;
const MS_PER_DAY: u64 = 86_400_000;

/// The weight of a cost after a gap of `hours`, divided by the gap (its limit at a zero gap).
fn alpha_over_gap(hours: f64) -> (f64, f64) {
    let keep = 1.0 - ALPHA;
    if hours <= 1e-12 {
        return (0.0, -keep.ln() / NOMINAL_GAP_HOURS);
    }
    let alpha = 1.0 - keep.powf(hours / NOMINAL_GAP_HOURS);
    (alpha, alpha / hours)
}

/// The spend rate after a cost of `cost_usd` at `at_ms`.
pub fn update_rate(previous: Option<RateState>, cost_usd: f64, at_ms: u64) -> RateState {
    let Some(previous) = previous else {
        return RateState {
            usd_per_hour: cost_usd / NOMINAL_GAP_HOURS,
            last_ms: at_ms,
        };
    };
    let hours = at_ms.saturating_sub(previous.last_ms) as f64 / MS_PER_HOUR;
    let (alpha, weight) = alpha_over_gap(hours);
    RateState {
        usd_per_hour: (1.0 - alpha) * previous.usd_per_hour + weight * cost_usd,
        last_ms: at_ms.max(previous.last_ms),
    }
}

/// The spend rate at `now_ms`, with the quiet time since the latest cost counted as spending
/// nothing (a rate read, not stored).
pub fn rate_now(rate: Option<RateState>, now_ms: u64) -> f64 {
    match rate {
        None => 0.0,
        Some(rate) => {
            let hours = now_ms.saturating_sub(rate.last_ms) as f64 / MS_PER_HOUR;
            (1.0 - alpha_over_gap(hours).0) * rate.usd_per_hour
        }
    }
}

/// Hours until the next UTC midnight.
pub fn hours_left_in_utc_day(now_ms: u64) -> f64 {
    (MS_PER_DAY - now_ms % MS_PER_DAY) as f64 / MS_PER_HOUR
}

/// Where the day's spending stands against the budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BudgetView {
    /// The daily budget, US dollars (> 0).
    pub budget_usd: f64,
    /// Spent today plus the request's estimate.
    pub spent_usd: f64,
    /// The spend rate, US dollars per hour.
    pub rate_usd_per_hour: f64,
    /// Hours left in the UTC day.
    pub hours_left: f64,
}

/// The budget's part of the throttle.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BudgetDelay {
    /// Seconds of delay (0–60).
    pub seconds: f64,
    /// Spent fraction of the budget.
    pub fraction: f64,
    /// `(fraction − 0.5) / 0.5`, clamped to 0–1.
    pub pressure: f64,
    /// The rate the rest of the day can afford, US dollars per hour.
    pub target_rate: f64,
    /// `min(rate / target − 1, 10)`, 0 when within the target.
    pub overshoot: f64,
}

/// `60 s × pressure² × tanh(overshoot / 3)`.
pub fn curve(pressure: f64, overshoot: f64) -> f64 {
    let pressure = pressure.clamp(0.0, 1.0);
    let overshoot = overshoot.clamp(0.0, MAX_OVERSHOOT);
    MAX_DELAY_SECS * pressure * pressure * (overshoot / 3.0).tanh()
}

/// The budget delay (see the module documentation).
pub fn budget_delay(view: BudgetView) -> BudgetDelay {
    if view.budget_usd.is_nan() || view.budget_usd <= 0.0 {
        return BudgetDelay::default();
    }
    let fraction = (view.spent_usd / view.budget_usd).max(0.0);
    let remaining = (view.budget_usd - view.spent_usd).max(0.0);
    let target_rate = remaining / view.hours_left.max(MIN_HOURS_LEFT);
    let pressure = ((fraction - 0.5) / 0.5).clamp(0.0, 1.0);
    let mut delay = BudgetDelay {
        fraction,
        pressure,
        target_rate,
        ..Default::default()
    };
    if fraction < 0.5 {
        return delay;
    }
    if fraction >= 1.0 {
        delay.seconds = MAX_DELAY_SECS;
        delay.overshoot = MAX_OVERSHOOT;
        return delay;
    }
    if view.rate_usd_per_hour <= target_rate {
        return delay;
    }
    delay.overshoot = (view.rate_usd_per_hour / target_rate - 1.0).min(MAX_OVERSHOOT);
    delay.seconds = curve(pressure, delay.overshoot);
    delay
}

/// Quota pressure from the utilisation (percent) of the 5-hour and 7-day windows.
pub fn quota_pressure(five_hour: f64, seven_day: f64) -> f64 {
    let used = five_hour.max(seven_day);
    if !used.is_finite() {
        return 0.0;
    }
    ((used - QUOTA_KNEE) / QUOTA_SPAN).clamp(0.0, 1.0)
}

/// `60 s × qp²`.
pub fn quota_delay(pressure: f64) -> f64 {
    let pressure = pressure.clamp(0.0, 1.0);
    MAX_DELAY_SECS * pressure * pressure
}

/// The sleep before forwarding: the larger delay, capped to half of what is left of the cache
/// TTL while the cache is warm, and nothing under [`MIN_SLEEP`].
pub fn final_sleep(
    budget_secs: f64,
    quota_secs: f64,
    ttl: Duration,
    since_last_request: Duration,
) -> Duration {
    let wanted = budget_secs.max(quota_secs);
    if wanted.is_nan() || wanted <= 0.0 {
        return Duration::ZERO;
    }
    // While the cache is warm, the request must still land inside its TTL; once it is cold
    // (or nothing was sent before), there is nothing to keep and only the maximum applies.
    let cap = if since_last_request < ttl {
        (ttl - since_last_request).as_secs_f64() * 0.5
    } else {
        MAX_DELAY_SECS
    };
    let sleep = Duration::from_secs_f64(wanted.min(cap).clamp(0.0, MAX_DELAY_SECS));
    if sleep < MIN_SLEEP {
        Duration::ZERO
    } else {
        sleep
    }
}

#[cfg(test)]
#[path = "throttle_tests.rs"]
mod tests;
