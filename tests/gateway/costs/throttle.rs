//! The daily-budget throttle, measured from outside: a request past half the budget while
//! spending fast is held before it is forwarded, the delay is counted, and after UTC midnight
//! (the gateway's clock moved by `LORE_TEST_CLOCK_OFFSET_MS`) nothing is held any more.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use super::*;

const DAY_MS: i64 = 86_400_000;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// One request of a one-shot conversation; returns how long the client waited.
fn timed_request(gateway: &Gateway, text: &str) -> Duration {
    let body = anthropic_body(json!([{"role": "user", "content": text}]), false);
    let started = Instant::now();
    let response = gateway.post("/v1/messages", &anthropic_headers("sk-throttle"), &body);
    let waited = started.elapsed();
    assert_eq!(response.status, 200, "{}", response.text());
    waited
}

fn set_budget(gateway: &Gateway, usd: f64) {
    let response = gateway.post(
        "/api/v1/costs/budget",
        &[("x-lore-request", "1")],
        &json!({"daily_usd": usd}),
    );
    assert_eq!(response.status, 200, "{}", response.text());
}

#[test]
fn a_budget_throttles_fast_spending_and_stops_after_utc_midnight() {
    let upstream = FakeUpstream::start();
    // The gateway's clock stands 14 s before the next UTC midnight.
    let now = now_ms();
    let midnight = (now / DAY_MS + 1) * DAY_MS;
    let offset = midnight - 14_000 - now;
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_TEST_CLOCK_OFFSET_MS", &offset.to_string())],
    );
    let gateway_now = || now_ms() + offset;
    let first_day = costs(&gateway, 1)["today"].as_str().unwrap().to_string();
    // Unthrottled: no budget yet. Long replies make each turn cost far more than the
    // throttle's estimate of a small request, so the budget below sets the spent fraction.
    let mut unthrottled = Vec::new();
    for n in 0..3 {
        upstream.push(Script::Text(format!(
            "answer {n}: {}",
            "the throttle waits. ".repeat(200)
        )));
        unthrottled.push(timed_request(
            &gateway,
            &format!("request {n}: a long enough question about the cost tracker and its throttle"),
        ));
    }
    let spent = eventually("three turns recorded", || {
        let report = costs(&gateway, 1);
        (today_bucket(&report, "conversation")["calls"] == 3)
            .then(|| report["budget"]["spent_today_usd"].as_f64().unwrap())
    });
    assert!(spent > 0.0);
    // 60 % of the budget is spent, at a rate far above what the rest of the day affords:
    // 60 s × 0.2² × tanh(10 / 3) ≈ 2.4 s.
    set_budget(&gateway, spent / 0.6);
    let report = costs(&gateway, 1);
    assert!(
        report["budget"]["delay_now_secs"].as_f64().unwrap() > 2.0,
        "{}",
        report["budget"]
    );
    let held = timed_request(&gateway, "request 3: held by the throttle");
    assert!(
        midnight - gateway_now() > 1_000,
        "the machine was too slow: midnight passed before the throttled request was measured"
    );
    let fastest = unthrottled.iter().min().copied().unwrap_or_default();
    assert!(
        held >= Duration::from_millis(2_000) && held < Duration::from_secs(10),
        "held {held:?}, unthrottled {unthrottled:?}"
    );
    assert!(held > fastest + Duration::from_millis(1_900));
    let report = eventually("the held request counted", || {
        let report = costs(&gateway, 1);
        (report["budget"]["throttle"]["events"] == 1).then_some(report)
    });
    let throttle = &report["budget"]["throttle"];
    assert!(throttle["total_delay_ms"].as_u64().unwrap() >= 2_000);
    assert_eq!(report["today"], first_day);

    // Past midnight the day's spend starts again and nothing is held.
    let report = crate::memory::slowly("the gateway's UTC midnight", || {
        let report = costs(&gateway, 2);
        (report["today"] != first_day).then_some(report)
    });
    assert_eq!(report["budget"]["spent_today_usd"], 0.0);
    assert_eq!(report["budget"]["throttle"]["events"], 0);
    let after = timed_request(&gateway, "request 4: a new day");
    assert!(
        after < Duration::from_millis(1_500),
        "held {after:?} after midnight"
    );
    let report = eventually("the new day's first turn", || {
        let report = costs(&gateway, 2);
        (today_bucket(&report, "conversation")["calls"] == 1).then_some(report)
    });
    assert_eq!(report["budget"]["throttle"]["events"], 0);
    // Yesterday is still there, with its four turns and its throttle event.
    let days: Vec<&Value> = report["days"].as_array().unwrap().iter().collect();
    assert_eq!(days.len(), 2);
    assert_eq!(days[1]["day"], first_day.as_str());
    assert_eq!(days[1]["buckets"][0]["totals"]["calls"], 4);
}
