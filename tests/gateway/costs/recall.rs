//! A turn in which the model calls `recall` is two upstream calls (the client's request and
//! the gateway's follow-up); the provider bills both, so the cost ledger prices both, as one
//! turn.

use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

use super::{costs, price, reply_usage, today_bucket};
use crate::helpers::*;

#[test]
fn a_recall_follow_up_is_priced_into_its_turn() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    upstream.push(Script::ToolCall {
        name: "recall".into(),
        id: "toolu_cost".into(),
        arguments: json!({"query": "how the relay retries"}),
        text: Some("Let me look that up.".into()),
    });
    upstream.push(Script::Text("It retries twice.".into()));
    let mut body = anthropic_body(
        json!([{"role": "user", "content": "how does the relay retry? ".repeat(40)}]),
        true,
    );
    body["tools"] = json!([{"name": "bash", "description": "run a command", "input_schema": {"type": "object", "properties": {}}}]);
    let mut headers = anthropic_headers("sk-recall-costs");
    headers.push(("x-claude-code-session-id", "recall-costs"));
    let response = gateway.post("/v1/messages", &headers, &body);
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(
        upstream.requests().len(),
        2,
        "the request and one follow-up"
    );
    // What the client saw: the first leg's prompt and both legs' output.
    let seen = reply_usage(&response);
    let first_leg = seen[0] + seen[2] + seen[3];
    let prompt = |v: &serde_json::Value| {
        ["input_tokens", "cache_read_tokens", "cache_write_tokens"]
            .iter()
            .map(|k| v[k].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    // Both legs priced: one turn, and a prompt larger than the first leg's alone.
    let report = eventually(
        "the follow-up priced into today's conversation bucket",
        || {
            let report = costs(&gateway, 1);
            let bucket = today_bucket(&report, "conversation");
            (bucket["calls"] == 1 && prompt(&bucket) > first_leg).then_some(report)
        },
    );
    let bucket = today_bucket(&report, "conversation");
    assert_eq!(
        bucket["output_tokens"], seen[1],
        "each leg's output counted once"
    );
    assert!(bucket["cost_usd"].as_f64().unwrap() > price(seen, false));
    // The follow-up belongs to the session and is not another turn; it claims no savings.
    let session = response.header("x-lore-session-id").unwrap().to_string();
    let per_session = gateway
        .get(&format!("/api/v1/sessions/{session}/costs"))
        .json();
    assert_eq!(per_session["total"]["calls"], 1, "{per_session}");
    assert!(prompt(&per_session["total"]) > first_leg, "{per_session}");
    assert_eq!(report["top_sessions"][0]["turns"], 1);
    assert_eq!(report["savings"]["gradient"]["usd"], 0.0);
}
