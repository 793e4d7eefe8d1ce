//! The dashboard's costs page and the overview's spend over real HTTP, after real turns through
//! the fake upstream: a priced conversation shows on the page and in its JSON, the budget is
//! set from the page's API (and refused without `x-lore-request`), `LORE_DAILY_BUDGET` wins
//! and says so, and `LORE_COSTS=off` is said instead of faked.

use lore_test_support::FakeUpstream;
use serde_json::{Value, json};

use crate::costs::converse;
use crate::helpers::{Gateway, eventually};
use crate::ui_helpers::{json, page, raw, seeded_gateway, write};

/// Dollars as the dashboard writes them (`$0.0123` under a cent, else `$1.23`).
fn dollars(usd: f64) -> String {
    if usd > 0.0 && usd < 0.01 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// The costs page's JSON once the conversation bucket holds `turns` turns.
fn costs_page_with_turns(gateway: &Gateway, turns: u64) -> Value {
    eventually(
        &format!("{turns} conversation turns on the costs page"),
        || {
            let view = json(gateway, "/api/v1/costs/page", 200);
            let calls = view["report"]["days"][0]["buckets"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|b| b["bucket"] == "conversation")
                .map(|b| b["totals"]["calls"].clone());
            (calls == Some(json!(turns))).then_some(view)
        },
    )
}

#[test]
fn a_priced_conversation_shows_on_the_costs_page_its_json_and_the_overview() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let (expected, usages) = converse(&gateway, &[(false, None), (true, None), (false, None)]);
    assert!(usages[1][2] > 0, "the oracle read the cache: {usages:?}");
    let total: f64 = expected.iter().sum();
    let view = costs_page_with_turns(&gateway, 3);
    let session = gateway.sessions()[0]["id"].as_str().unwrap().to_string();
    // The JSON is the tracker's report with the page's notes.
    assert_eq!(view["tracking"], true);
    assert_eq!(view["days"], 30);
    assert_eq!(view["buckets"], json!(["conversation"]));
    let report = &view["report"];
    assert!(close(
        report["days"][0]["total_usd"].as_f64().unwrap(),
        total
    ));
    assert_eq!(report["top_sessions"][0]["session_id"], session);
    let cache_saved = report["savings"]["cache"]["usd"].as_f64().unwrap();
    assert!(cache_saved > 0.0);

    let html = page(&gateway, "/ui/costs");
    assert_eq!(
        html.matches(r#"<g class="bar">"#).count(),
        1,
        "one day with spend"
    );
    assert!(
        html.contains(&format!(
            "{}: {} conversation",
            &report["today"].as_str().unwrap()[5..],
            dollars(total)
        )),
        "the bar's tooltip"
    );
    assert!(
        html.contains(&format!(r#"href="/ui/sessions/{session}""#)),
        "the dearest session links to its page"
    );
    assert!(html.contains(&dollars(total)), "the session's cost");
    assert!(html.contains(&format!(r#"id="saving-cache">{}<"#, dollars(cache_saved))));
    assert!(
        html.contains("input price minus the cache-read price actually paid"),
        "how the cache saving was computed"
    );
    assert!(html.contains(r#"id="budget-amount">No budget"#));
    assert!(html.contains(r#"id="throttle-events">0<"#));
    assert!(
        html.contains(r#"data-url="/api/v1/costs/budget""#) && !html.contains("<fieldset disabled"),
        "the budget form"
    );

    // The overview's spend is the same report's.
    let stats = json(&gateway, "/api/v1/stats", 200);
    assert!(
        close(stats["today"]["spent_usd"].as_f64().unwrap(), total),
        "{stats}"
    );
    assert!(close(
        stats["today"]["conversation_usd"].as_f64().unwrap(),
        total
    ));
    assert!(close(
        stats["today"]["cache_savings_usd"].as_f64().unwrap(),
        cache_saved
    ));
    let overview = page(&gateway, "/ui");
    assert!(
        overview.contains(&format!(
            r#"id="stat-spend"><a href="/ui/costs">{}<"#,
            dollars(total)
        )),
        "{overview}"
    );
    assert!(overview.contains(r#"id="stat-savings""#));
}

#[test]
fn the_budget_is_set_from_the_pages_api_and_refused_without_the_write_header() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    // What the page's form sends (app.js: the number field as a number, x-lore-request: 1).
    let set = write(
        &gateway,
        "POST",
        "/api/v1/costs/budget",
        Some(&json!({"daily_usd": 12.5})),
    );
    assert_eq!(set.status, 200, "{}", set.text());
    let html = page(&gateway, "/ui/costs");
    assert!(html.contains(r#"id="budget-amount">$12.50<"#), "{html}");
    assert!(html.contains("set here (stored)"));
    assert!(
        html.contains(r#"value="12.5""#),
        "the form shows the stored budget"
    );
    let view = json(&gateway, "/api/v1/costs/page", 200);
    assert_eq!(view["report"]["budget"]["daily_usd"], 12.5);
    assert_eq!(view["report"]["budget"]["source"], "api");
    let overview = page(&gateway, "/ui");
    assert!(overview.contains("spent today of $12.50"), "{overview}");

    // A plain cross-site form cannot send the header: refused, and nothing changes.
    let port = gateway.port.to_string();
    let host = format!("127.0.0.1:{port}");
    let refused = raw(
        &gateway,
        "POST",
        "/api/v1/costs/budget",
        &[("host", &host), ("content-type", "application/json")],
        br#"{"daily_usd": 1}"#,
    );
    assert_eq!(refused.status, 403, "{}", refused.text());
    assert!(refused.text().contains("x-lore-request"));
    assert_eq!(
        json(&gateway, "/api/v1/costs/page", 200)["report"]["budget"]["daily_usd"],
        12.5
    );

    // The form's "Remove" button: null removes it.
    let removed = write(
        &gateway,
        "POST",
        "/api/v1/costs/budget",
        Some(&json!({"daily_usd": null})),
    );
    assert_eq!(removed.status, 200, "{}", removed.text());
    assert!(page(&gateway, "/ui/costs").contains(r#"id="budget-amount">No budget"#));
    // A bad amount is refused with what to send.
    let bad = write(
        &gateway,
        "POST",
        "/api/v1/costs/budget",
        Some(&json!({"daily_usd": "twenty"})),
    );
    assert_eq!(bad.status, 400);
    assert!(bad.text().contains("daily_usd"), "{}", bad.text());
}

#[test]
fn the_environments_budget_wins_and_the_page_says_so() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start_with(&upstream.url(), &[("LORE_DAILY_BUDGET", "5")]);
    let set = write(
        &gateway,
        "POST",
        "/api/v1/costs/budget",
        Some(&json!({"daily_usd": 12.5})),
    );
    assert_eq!(set.status, 200, "{}", set.text());
    assert!(set.json()["note"].as_str().unwrap().contains("wins"));
    let html = page(&gateway, "/ui/costs");
    assert!(html.contains(r#"id="budget-amount">$5.00<"#), "{html}");
    assert!(html.contains("from <span class=\"mono\">LORE_DAILY_BUDGET</span>"));
    assert!(html.contains("LORE_DAILY_BUDGET is set and wins over the stored budget"));
    assert!(html.contains("A budget of $12.50 set here is stored"));
    let view = json(&gateway, "/api/v1/costs/page", 200);
    assert_eq!(view["budget_env_usd"], 5.0);
    assert_eq!(view["report"]["budget"]["stored_usd"], 12.5);
}

#[test]
fn with_costs_off_the_page_says_so_and_the_budget_cannot_be_set() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway_with_costs_off(&upstream);
    let html = page(&gateway, "/ui/costs");
    assert!(
        html.contains("Cost tracking is off (LORE_COSTS=off)"),
        "{html}"
    );
    assert!(html.contains("<fieldset disabled>"));
    // What earlier runs recorded is still shown: the seeded ledger.
    assert!(html.contains(&format!(r#"href="/ui/sessions/{}""#, seeded.sessions[0])));
    let view = json(&gateway, "/api/v1/costs/page", 200);
    assert_eq!(view["tracking"], false);
    assert_eq!(view["budget_settable"], false);
    let set = write(
        &gateway,
        "POST",
        "/api/v1/costs/budget",
        Some(&json!({"daily_usd": 3})),
    );
    assert_eq!(set.status, 409);
    assert!(set.text().contains("LORE_COSTS=off"));
    assert!(page(&gateway, "/ui").contains(r#"id="costs-off""#));
}

fn seeded_gateway_with_costs_off(
    upstream: &FakeUpstream,
) -> (Gateway, lore_test_support::ui_seed::Seeded) {
    crate::ui_helpers::seeded_gateway_with(upstream, &[("LORE_COSTS", "off")])
}

#[test]
fn the_seeded_ledger_draws_every_bucket_and_the_throttle_counters() {
    let upstream = FakeUpstream::start();
    let (gateway, _) = seeded_gateway(&upstream);
    let view = json(&gateway, "/api/v1/costs/page", 200);
    assert_eq!(
        view["buckets"],
        json!(["conversation", "curation", "distillation"])
    );
    let html = page(&gateway, "/ui/costs");
    assert_eq!(
        html.matches(r#"<g class="bar">"#).count(),
        5,
        "five seeded days"
    );
    assert_eq!(
        view["report"]["budget"]["throttle"],
        json!({"events": 2, "total_delay_ms": 3500})
    );
    assert!(html.contains(r#"id="throttle-events">2<"#));
    assert!(html.contains(r#"id="throttle-delay">3.5 s<"#));
    assert_eq!(
        html.matches(r#"<a class="mono" href="/ui/sessions/"#)
            .count(),
        6,
        "every seeded session spent"
    );
}
