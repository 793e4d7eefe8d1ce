use super::*;
use proptest::prelude::*;

fn view(budget: f64, spent: f64, rate: f64, hours_left: f64) -> BudgetView {
    BudgetView {
        budget_usd: budget,
        spent_usd: spent,
        rate_usd_per_hour: rate,
        hours_left,
    }
}

#[test]
fn the_first_cost_seeds_thirty_turns_an_hour() {
    let rate = update_rate(None, 0.1, 1_000);
    assert!((rate.usd_per_hour - 3.0).abs() < 1e-12);
    assert_eq!(rate.last_ms, 1_000);
}

#[test]
fn steady_two_minute_turns_converge_to_their_rate() {
    // $0.20 every two minutes is $6 an hour; seeded far off, the average gets there.
    let mut rate = RateState {
        usd_per_hour: 100.0,
        last_ms: 0,
    };
    for turn in 1..200u64 {
        rate = update_rate(Some(rate), 0.2, turn * 120_000);
    }
    assert!((rate.usd_per_hour - 6.0).abs() < 1e-3, "{rate:?}");
}

#[test]
fn the_gap_adjusted_weight_is_the_reference_s() {
    // At the nominal gap α = 0.15; after an hour of quiet a new cost almost replaces the
    // average.
    let (alpha, _) = alpha_over_gap(NOMINAL_GAP_HOURS);
    assert!((alpha - 0.15).abs() < 1e-12);
    let (alpha, _) = alpha_over_gap(1.0);
    assert!(alpha > 0.99);
    // A zero gap stays finite: the limit of α / Δh.
    let zero = update_rate(
        Some(RateState {
            usd_per_hour: 1.0,
            last_ms: 5,
        }),
        1.0,
        5,
    );
    assert!(zero.usd_per_hour.is_finite() && zero.usd_per_hour > 1.0);
}

#[test]
fn quiet_time_lowers_the_rate_read_now() {
    let rate = Some(RateState {
        usd_per_hour: 10.0,
        last_ms: 0,
    });
    assert!((rate_now(rate, 0) - 10.0).abs() < 1e-12);
    assert!((rate_now(rate, 120_000) - 8.5).abs() < 1e-9);
    assert!((rate_now(rate, 3_600_000) - 10.0 * 0.85f64.powi(30)).abs() < 1e-9);
    assert_eq!(rate_now(None, 9), 0.0);
}

#[test]
fn hours_left_count_to_utc_midnight() {
    assert!((hours_left_in_utc_day(0) - 24.0).abs() < 1e-12);
    assert!((hours_left_in_utc_day(86_400_000 - 1_800_000) - 0.5).abs() < 1e-12);
}

#[test]
fn the_budget_delay_follows_the_reference() {
    // Under half the budget: nothing, whatever the rate.
    assert_eq!(budget_delay(view(20.0, 9.99, 1e6, 1.0)).seconds, 0.0);
    // Over the whole budget: the maximum.
    assert_eq!(budget_delay(view(20.0, 20.0, 0.0, 10.0)).seconds, 60.0);
    // Within the target rate: nothing.
    let within = budget_delay(view(20.0, 15.0, 0.5, 10.0));
    assert_eq!(within.seconds, 0.0);
    assert!((within.target_rate - 0.5).abs() < 1e-12);
    // 75 % spent (pressure 0.5), burning at three times the target (overshoot 2).
    let fast = budget_delay(view(20.0, 15.0, 1.5, 10.0));
    assert!((fast.pressure - 0.5).abs() < 1e-12);
    assert!((fast.overshoot - 2.0).abs() < 1e-12);
    let expected = 60.0 * 0.25 * (2.0f64 / 3.0).tanh();
    assert!((fast.seconds - expected).abs() < 1e-9, "{fast:?}");
    // The last half hour divides by 0.5 hours, not by what is left.
    let late = budget_delay(view(20.0, 15.0, 0.0, 0.1));
    assert!((late.target_rate - 10.0).abs() < 1e-12);
    // No budget: no delay.
    assert_eq!(
        budget_delay(view(0.0, 5.0, 100.0, 1.0)),
        BudgetDelay::default()
    );
}

#[test]
fn quota_pressure_takes_the_fuller_window() {
    assert_eq!(quota_pressure(80.0, 10.0), 0.0);
    assert!((quota_pressure(10.0, 90.0) - 0.5).abs() < 1e-12);
    assert_eq!(quota_pressure(100.0, 0.0), 1.0);
    assert_eq!(quota_pressure(120.0, 0.0), 1.0);
    assert_eq!(quota_pressure(f64::NAN, 0.0), 0.0);
    assert!((quota_delay(0.5) - 15.0).abs() < 1e-12);
    assert!((quota_delay(quota_pressure(82.0, 0.0)) - 0.6).abs() < 1e-9);
}

#[test]
fn the_sleep_is_the_larger_delay_capped_and_skipped_when_short() {
    let ttl = Duration::from_secs(300);
    assert_eq!(
        final_sleep(2.0, 3.0, ttl, Duration::ZERO),
        Duration::from_secs(3)
    );
    // 60 s wanted, 290 s since the last request: half of the 10 s left.
    assert_eq!(
        final_sleep(60.0, 0.0, ttl, Duration::from_secs(290)),
        Duration::from_secs(5)
    );
    assert_eq!(final_sleep(0.4, 0.0, ttl, Duration::ZERO), Duration::ZERO);
    // A cold cache (the TTL has passed, or no request before) has nothing to keep.
    assert_eq!(
        final_sleep(60.0, 0.0, ttl, Duration::from_secs(400)),
        Duration::from_secs(60)
    );
    assert_eq!(
        final_sleep(2.0, 0.0, ttl, Duration::MAX),
        Duration::from_secs(2)
    );
    assert_eq!(
        final_sleep(60.0, 0.0, ttl, Duration::from_millis(299_500)),
        Duration::ZERO,
        "a quarter second of warm cache left: under the minimum sleep"
    );
    assert_eq!(
        final_sleep(f64::NAN, 0.0, ttl, Duration::ZERO),
        Duration::ZERO
    );
}

proptest! {
    #[test]
    fn the_curve_is_monotone_in_pressure_and_overshoot(
        p1 in 0.0f64..1.0, p2 in 0.0f64..1.0, o1 in 0.0f64..10.0, o2 in 0.0f64..10.0,
    ) {
        let (plo, phi) = if p1 <= p2 { (p1, p2) } else { (p2, p1) };
        let (olo, ohi) = if o1 <= o2 { (o1, o2) } else { (o2, o1) };
        prop_assert!(curve(plo, o1) <= curve(phi, o1));
        prop_assert!(curve(p1, olo) <= curve(p1, ohi));
        prop_assert!(curve(p1, o1) <= MAX_DELAY_SECS);
        prop_assert!(curve(p1, o1) >= 0.0);
    }

    #[test]
    fn the_budget_delay_is_monotone_in_spend_and_rate(
        budget in 0.5f64..500.0,
        s1 in 0.0f64..1.5, s2 in 0.0f64..1.5,
        r1 in 0.0f64..1_000.0, r2 in 0.0f64..1_000.0,
        hours in 0.0f64..24.0,
    ) {
        let (slo, shi) = if s1 <= s2 { (s1, s2) } else { (s2, s1) };
        let (rlo, rhi) = if r1 <= r2 { (r1, r2) } else { (r2, r1) };
        let at = |spent: f64, rate: f64| budget_delay(view(budget, spent * budget, rate, hours)).seconds;
        prop_assert!(at(slo, r1) <= at(shi, r1) + 1e-9);
        prop_assert!(at(s1, rlo) <= at(s1, rhi) + 1e-9);
    }

    #[test]
    fn nothing_under_half_the_budget(
        budget in 0.01f64..1_000.0, fraction in 0.0f64..0.5, rate in 0.0f64..1e9, hours in 0.0f64..24.0,
    ) {
        let delay = budget_delay(view(budget, fraction * budget * 0.999_999, rate, hours));
        prop_assert_eq!(delay.seconds, 0.0);
        prop_assert_eq!(delay.pressure, 0.0);
    }

    #[test]
    fn the_sleep_never_passes_the_ttl_cap(
        budget_secs in 0.0f64..100.0, quota_secs in 0.0f64..100.0,
        ttl_secs in 0u64..7_200, since_ms in 0u64..8_000_000,
    ) {
        let ttl = Duration::from_secs(ttl_secs);
        let since = Duration::from_millis(since_ms);
        let sleep = final_sleep(budget_secs, quota_secs, ttl, since);
        if since < ttl {
            // The request still lands inside the TTL, with half of what was left to spare.
            let cap = (ttl - since).as_secs_f64() * 0.5;
            prop_assert!(sleep.as_secs_f64() <= cap + 1e-9);
            prop_assert!(since + sleep < ttl || sleep.is_zero());
        }
        prop_assert!(sleep.as_secs_f64() <= MAX_DELAY_SECS);
        prop_assert!(sleep.is_zero() || sleep >= MIN_SLEEP);
        prop_assert!(sleep.as_secs_f64() <= budget_secs.max(quota_secs) + 1e-9);
    }
}
