//! The cost tracker through the real gateway: turns priced from the fake upstream's usage and
//! summed per day, bucket and session; the budget API; a crash of the tracker and a restart of
//! the gateway that lose nothing. The throttle and the OAuth quota are in [`throttle`] and
//! [`quota`].
//!
//! Prices are written here, independently of the catalogue: claude-sonnet-4-5 costs $3 input,
//! $15 output, $0.30 cache read, $3.75 5-minute and $6 1-hour cache write per million tokens.

mod quota;
mod recall;
mod throttle;

use lore_test_support::FakeUpstream;
use serde_json::{Value, json};

use crate::helpers::*;

const INPUT: f64 = 3.0;
const OUTPUT: f64 = 15.0;
const READ: f64 = 0.3;
const WRITE_5M: f64 = 3.75;
const WRITE_1H: f64 = 6.0;

/// The usage a client saw in a reply (JSON or SSE), as the four Anthropic counts.
pub fn reply_usage(response: &lore_test_support::http_client::Response) -> [u64; 4] {
    let count = |v: &Value, name: &str| v[name].as_u64().unwrap_or(0);
    if response
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/event-stream"))
    {
        let mut usage = [0; 4];
        for event in response.sse() {
            let data = event.json();
            match data["type"].as_str() {
                Some("message_start") => {
                    let u = &data["message"]["usage"];
                    usage = [
                        count(u, "input_tokens"),
                        count(u, "output_tokens"),
                        count(u, "cache_read_input_tokens"),
                        count(u, "cache_creation_input_tokens"),
                    ];
                }
                Some("message_delta") => usage[1] = count(&data["usage"], "output_tokens"),
                _ => {}
            }
        }
        return usage;
    }
    let u = &response.json()["usage"];
    [
        count(u, "input_tokens"),
        count(u, "output_tokens"),
        count(u, "cache_read_input_tokens"),
        count(u, "cache_creation_input_tokens"),
    ]
}

/// What a turn with this usage costs at the prices above.
pub fn price(usage: [u64; 4], one_hour: bool) -> f64 {
    let [input, output, read, write] = usage.map(|n| n as f64);
    let write_price = if one_hour { WRITE_1H } else { WRITE_5M };
    (input * INPUT + output * OUTPUT + read * READ + write * write_price) / 1e6
}

/// A user message with a cache breakpoint on its text.
pub fn cached_user(text: &str, ttl: Option<&str>) -> Value {
    let mut control = json!({"type": "ephemeral"});
    if let Some(ttl) = ttl {
        control["ttl"] = json!(ttl);
    }
    json!({"role": "user", "content": [{"type": "text", "text": text, "cache_control": control}]})
}

/// `GET /api/v1/costs?days=N`.
pub fn costs(gateway: &Gateway, days: u32) -> Value {
    let response = gateway.get(&format!("/api/v1/costs?days={days}"));
    assert_eq!(response.status, 200, "{}", response.text());
    response.json()
}

/// Today's totals of one bucket (null when nothing was spent in it).
pub fn today_bucket(report: &Value, bucket: &str) -> Value {
    report["days"][0]["buckets"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|b| b["bucket"] == bucket)
        .map(|b| b["totals"].clone())
        .unwrap_or(Value::Null)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// A conversation with cache breakpoints, resent in full each turn; returns what each turn
/// should cost.
pub fn converse(gateway: &Gateway, turns: &[(bool, Option<&str>)]) -> (Vec<f64>, Vec<[u64; 4]>) {
    let mut history: Vec<Value> = Vec::new();
    let (mut costs, mut usages) = (Vec::new(), Vec::new());
    for (index, (stream, ttl)) in turns.iter().enumerate() {
        let text = format!(
            "turn {index}: please review src/gateway/costs_hook.rs and explain the throttle in detail, with the numbers"
        );
        history.push(cached_user(&text, *ttl));
        let body = anthropic_body(Value::Array(history.clone()), *stream);
        let mut headers = anthropic_headers("sk-costs");
        headers.push(("x-claude-code-session-id", "costs-session"));
        let response = gateway.post("/v1/messages", &headers, &body);
        assert_eq!(response.status, 200, "{}", response.text());
        let usage = reply_usage(&response);
        usages.push(usage);
        costs.push(price(usage, ttl.is_some()));
        history.push(json!({"role": "assistant", "content": format!("reply {index}")}));
    }
    (costs, usages)
}

#[test]
fn a_session_s_turns_are_priced_from_the_upstream_usage_and_summed_per_day_and_bucket() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let (expected, usages) = converse(
        &gateway,
        &[(false, None), (true, None), (false, Some("1h"))],
    );
    assert!(
        usages[1][2] > 0 && usages[0][3] > 0,
        "the oracle wrote and read the cache: {usages:?}"
    );
    let total: f64 = expected.iter().sum();
    let report = eventually("three turns in today's conversation bucket", || {
        let report = costs(&gateway, 7);
        (today_bucket(&report, "conversation")["calls"] == 3).then_some(report)
    });
    let bucket = today_bucket(&report, "conversation");
    assert!(
        close(bucket["cost_usd"].as_f64().unwrap(), total),
        "{bucket} vs {total}"
    );
    let reads: u64 = usages.iter().map(|u| u[2]).sum();
    assert_eq!(bucket["cache_read_tokens"], reads);
    assert_eq!(bucket["cache_write_1h_tokens"], usages[2][3]);
    assert_eq!(
        bucket["cache_write_tokens"].as_u64().unwrap(),
        usages[0][3] + usages[1][3]
    );
    assert_eq!(report["days"][0]["day"], report["today"]);
    assert!(close(
        report["days"][0]["total_usd"].as_f64().unwrap(),
        total
    ));
    // Cache savings: reads at the input price minus the cache-read price paid.
    let saved = reads as f64 * (INPUT - READ) / 1e6;
    assert!(close(
        report["savings"]["cache"]["usd"].as_f64().unwrap(),
        saved
    ));
    assert!(
        report["savings"]["cache"]["how"]
            .as_str()
            .unwrap()
            .contains("input price"),
        "{}",
        report["savings"]
    );
    assert_eq!(report["savings"]["gradient"]["usd"], 0.0);
    // Per session, through the API and the top sessions.
    let session = gateway.sessions()[0]["id"].as_str().unwrap().to_string();
    let per_session = gateway.get(&format!("/api/v1/sessions/{session}/costs"));
    assert_eq!(per_session.status, 200, "{}", per_session.text());
    let per_session = per_session.json();
    assert!(close(
        per_session["total"]["cost_usd"].as_f64().unwrap(),
        total
    ));
    assert_eq!(per_session["total"]["calls"], 3);
    assert_eq!(report["top_sessions"][0]["session_id"], session);
    assert_eq!(report["top_sessions"][0]["turns"], 3);
    assert_eq!(gateway.get("/api/v1/sessions/nope/costs").status, 404);

    // The CLI asks the running gateway.
    let (code, out, err) = lore(&["costs", "--days", "3"], gateway.data_dir(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("conversation"), "{out}");
    assert!(out.contains(&format!("${total:.4}")), "{out}");
    assert!(out.contains(&session), "{out}");
    let (code, out, _) = lore(&["costs", "--json"], gateway.data_dir(), &[]);
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["today"], report["today"]);
}

#[test]
fn the_budget_is_set_through_the_api_kept_and_beaten_by_the_environment() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    let set = |gateway: &Gateway, body: Value, with_header: bool| {
        let mut headers = vec![("content-type", "application/json")];
        if with_header {
            headers.push(("x-lore-request", "1"));
        }
        gateway.post("/api/v1/costs/budget", &headers, &body)
    };
    assert_eq!(set(&gateway, json!({"daily_usd": 20}), false).status, 403);
    let bad = set(&gateway, json!({"daily_usd": -3}), true);
    assert_eq!(bad.status, 400);
    assert!(bad.text().contains("positive"), "{}", bad.text());
    let bad = set(&gateway, json!({"daily": "lots"}), true);
    assert_eq!(bad.status, 400, "{}", bad.text());
    let ok = set(&gateway, json!({"daily_usd": 20}), true);
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert_eq!(ok.json()["budget"]["daily_usd"], 20.0);
    assert_eq!(costs(&gateway, 1)["budget"]["source"], "api");
    // Kept across a restart.
    gateway.stop();
    gateway.restart();
    assert_eq!(costs(&gateway, 1)["budget"]["daily_usd"], 20.0);
    // The environment variable wins, and the API says so.
    gateway.restart_with(&[("LORE_DAILY_BUDGET", "5")]);
    let report = costs(&gateway, 1);
    assert_eq!(report["budget"]["daily_usd"], 5.0);
    assert_eq!(report["budget"]["source"], "LORE_DAILY_BUDGET");
    assert_eq!(report["budget"]["stored_usd"], 20.0);
    let ok = set(&gateway, json!({"daily_usd": 30}), true);
    assert!(
        ok.json()["note"]
            .as_str()
            .unwrap()
            .contains("LORE_DAILY_BUDGET")
    );
    // The CLI sets it too.
    gateway.restart_with(&[("LORE_DAILY_BUDGET", "")]);
    let (code, out, err) = lore(&["costs", "--set-budget", "12.5"], gateway.data_dir(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("of $12.50"), "{out}");
}

#[test]
fn a_cost_tracker_crash_restarts_it_with_nothing_lost() {
    let upstream = FakeUpstream::start();
    // The tracker panics while recording the second turn, after storing it.
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_TEST_COSTS_FAULT", "panic_after_turn:2")],
    );
    let (expected, _) = converse(
        &gateway,
        &[(false, None), (false, None), (true, None), (false, None)],
    );
    let total: f64 = expected.iter().sum();
    let report = eventually("four turns recorded", || {
        let report = costs(&gateway, 1);
        (today_bucket(&report, "conversation")["calls"] == 4).then_some(report)
    });
    assert!(close(
        today_bucket(&report, "conversation")["cost_usd"]
            .as_f64()
            .unwrap(),
        total
    ));
    assert_eq!(report["tracker"]["restarts"], 1, "{}", report["tracker"]);
    let actors = gateway.get("/api/v1/actors").json();
    assert_eq!(actors["cost_tracker"]["restarts"], 1);
    assert!(
        actors["cost_tracker"]["last_error"]
            .as_str()
            .unwrap()
            .contains("injected fault"),
        "{actors}"
    );
    assert!(gateway.log().contains("the cost tracker failed"));
}

#[test]
fn a_restart_of_the_gateway_keeps_the_day_s_spend() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    let (expected, _) = converse(&gateway, &[(false, None), (true, None)]);
    let total: f64 = expected.iter().sum();
    eventually("two turns recorded", || {
        (today_bucket(&costs(&gateway, 1), "conversation")["calls"] == 2).then_some(())
    });
    gateway.stop();
    gateway.restart();
    let report = costs(&gateway, 1);
    let bucket = today_bucket(&report, "conversation");
    assert_eq!(bucket["calls"], 2);
    assert!(close(bucket["cost_usd"].as_f64().unwrap(), total));
    assert!(close(
        report["budget"]["spent_today_usd"].as_f64().unwrap(),
        total
    ));
    // Offline, `lore costs` reads the same ledger.
    gateway.stop();
    let (code, out, err) = lore(&["costs", "--json"], gateway.data_dir(), &[]);
    assert_eq!(code, 0, "{err}");
    let offline: Value = serde_json::from_str(&out).unwrap();
    assert!(close(
        offline["budget"]["spent_today_usd"].as_f64().unwrap(),
        total
    ));
}
