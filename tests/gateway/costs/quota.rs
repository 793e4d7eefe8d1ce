//! OAuth quota pressure of Claude Code subscription sessions against the fake usage endpoint:
//! polled with the session's own bearer at most once per five minutes, a delay of
//! `60 s × qp²` on the requests, background work paused at 95 %, and the bearer never on disk.

use std::time::{Duration, Instant};

use lore_test_support::{FakeUpstream, QUOTA_PATH};
use serde_json::{Value, json};

use super::*;
use crate::memory::{actors, memory_gateway, slowly};

const BEARER: &str = "Bearer sk-ant-oat01-costs-test-token";
const TOKEN: &str = "sk-ant-oat01-costs-test-token";

fn oauth_headers() -> Vec<(&'static str, &'static str)> {
    vec![
        ("authorization", BEARER),
        ("anthropic-version", "2023-06-01"),
        ("x-claude-code-session-id", "quota-session"),
    ]
}

fn quota_url(upstream: &FakeUpstream) -> String {
    format!("{}{QUOTA_PATH}", upstream.url())
}

fn timed(gateway: &Gateway, body: &Value) -> Duration {
    let started = Instant::now();
    let response = gateway.post("/v1/messages", &oauth_headers(), body);
    let waited = started.elapsed();
    assert_eq!(response.status, 200, "{}", response.text());
    waited
}

/// Every file under `dir`, read as bytes.
fn files_contain(dir: &std::path::Path, needle: &[u8]) -> Vec<String> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap().flatten() {
                stack.push(entry.path());
            }
        } else if let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(needle.len()).any(|w| w == needle)
        {
            hits.push(path.display().to_string());
        }
    }
    hits
}

#[test]
fn the_quota_is_polled_once_per_five_minutes_and_its_pressure_delays_requests() {
    let upstream = FakeUpstream::start();
    // 82 % of the 5-hour window: qp = (82 − 80) / 20 = 0.1, a delay of 60 s × 0.01 = 0.6 s.
    upstream.set_quota(82.0, 10.0);
    let url = quota_url(&upstream);
    let mut gateway = Gateway::start_with(&upstream.url(), &[("LORE_QUOTA_URL", url.as_str())]);
    let mut history = vec![json!({"role": "user", "content": "first question"})];
    // The first request starts the poll; it is not held for it.
    let first = timed(
        &gateway,
        &anthropic_body(Value::Array(history.clone()), false),
    );
    let report = eventually("the quota reading", || {
        let report = costs(&gateway, 1);
        (report["quota"]["accounts"][0]["five_hour_percent"] == 82.0).then_some(report)
    });
    let account = &report["quota"]["accounts"][0];
    assert!((account["pressure"].as_f64().unwrap() - 0.1).abs() < 1e-9);
    assert!(!account["account"].as_str().unwrap().contains("oat01"));
    assert_eq!(report["quota"]["background_paused"], false);
    let calls = upstream.quota_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].authorization.as_deref(), Some(BEARER));
    assert_eq!(calls[0].beta.as_deref(), Some("oauth-2025-04-20"));
    // The next requests are held about 0.6 s each, and the endpoint is not asked again.
    let mut held = Vec::new();
    for n in 0..2 {
        history.push(json!({"role": "assistant", "content": format!("answer {n}")}));
        history.push(json!({"role": "user", "content": format!("follow-up {n}")}));
        held.push(timed(
            &gateway,
            &anthropic_body(Value::Array(history.clone()), false),
        ));
    }
    for wait in &held {
        assert!(
            *wait >= Duration::from_millis(550) && *wait < Duration::from_secs(5),
            "held {held:?}, first {first:?}"
        );
    }
    assert_eq!(
        upstream.quota_calls().len(),
        1,
        "at most one poll per 5 minutes"
    );
    // Counted by the tracker beside the request (the plan itself is not a message).
    let report = eventually("two held requests counted", || {
        let report = costs(&gateway, 1);
        (report["budget"]["throttle"]["events"] == 2).then_some(report)
    });
    assert!(
        report["budget"]["throttle"]["total_delay_ms"]
            .as_u64()
            .unwrap()
            >= 1_100
    );
    // A request with an API key is never delayed by the subscription's quota.
    let body = anthropic_body(json!([{"role": "user", "content": "api key user"}]), false);
    let started = Instant::now();
    let response = gateway.post("/v1/messages", &anthropic_headers("sk-ant-api03-x"), &body);
    assert_eq!(response.status, 200);
    assert!(started.elapsed() < Duration::from_millis(500));
    // The bearer is in memory only: not in the database, not in the log.
    gateway.stop();
    let hits = files_contain(gateway.data_dir(), TOKEN.as_bytes());
    assert!(hits.is_empty(), "the bearer reached the disk: {hits:?}");
}

#[test]
fn a_failed_poll_is_counted_and_delays_nothing() {
    let upstream = FakeUpstream::start();
    upstream.set_quota_status(503);
    let url = quota_url(&upstream);
    let gateway = Gateway::start_with(&upstream.url(), &[("LORE_QUOTA_URL", url.as_str())]);
    let body = anthropic_body(json!([{"role": "user", "content": "hello"}]), false);
    timed(&gateway, &body);
    let report = eventually("the failed poll", || {
        let report = costs(&gateway, 1);
        (report["quota"]["accounts"][0]["failures"] == 1).then_some(report)
    });
    let error = report["quota"]["accounts"][0]["last_error"]
        .as_str()
        .unwrap();
    assert!(error.contains("503"), "{error}");
    assert!(!error.contains("oat01"), "{error}");
    assert!(timed(&gateway, &body) < Duration::from_millis(500));
    // Retried after 30 s, not on the next request.
    assert_eq!(upstream.quota_calls().len(), 1);
}

#[test]
fn background_work_pauses_at_ninety_five_percent() {
    let upstream = FakeUpstream::start();
    upstream.set_quota(97.0, 40.0);
    let url = quota_url(&upstream);
    let gateway = memory_gateway(
        &upstream,
        &[
            ("LORE_QUOTA_URL", url.as_str()),
            ("LORE_IDLE_TIMEOUT", "1.5"),
        ],
    );
    // One request with enough history to be distilled once the session is idle.
    let mut history = Vec::new();
    for n in 0..3 {
        history.push(json!({"role": "user", "content": format!("step {n}: we moved the quota poll into actors/src/costs/quota.rs and kept awc for it")}));
        history.push(json!({"role": "assistant", "content": format!("done with step {n}, the poll runs at most once per five minutes")}));
    }
    history.push(json!({"role": "user", "content": "now write the tests for the pause"}));
    timed(&gateway, &anthropic_body(Value::Array(history), false));
    eventually("the quota reading", || {
        (costs(&gateway, 1)["quota"]["background_paused"] == true).then_some(())
    });
    // Well past the idle timeout (1.5 s), the Distiller keeps skipping its polls.
    slowly("the Distiller waiting for quota", || {
        let paused = actors(&gateway)["distiller"]["quota_paused"]
            .as_u64()
            .unwrap_or(0);
        (paused >= 10).then_some(())
    });
    assert!(
        upstream.worker_calls().is_empty(),
        "a worker call was made while the quota was at 97%: {:?}",
        upstream.worker_calls()
    );
    assert_eq!(actors(&gateway)["distiller"]["jobs"], 0);
}
