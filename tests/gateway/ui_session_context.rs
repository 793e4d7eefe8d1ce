//! A session's page after the context manager took it past layer 0 (a small window with the
//! fake upstream's context limits, as in `context/`): each turn's recorded layer is the layer
//! the gateway sent it at, each turn is priced from its usage, and the page shows the context
//! state and the knowledge block. Seeded replies stored before layers were kept say so.

use lore_test_support::FakeUpstream;
use serde_json::Value;

use crate::context::{
    Coder, MODEL, context_of, only_session, tool_output, upstream_with_window, window_override,
};
use crate::helpers::{Gateway, eventually};
use crate::ui_helpers::{json, page, seeded_gateway};

const WINDOW: u64 = 16_000;
/// What the catalogue's unknown-model default costs (the override sets windows only), US
/// dollars per million tokens: input, output, cache read, 5-minute cache write.
const PRICE: [f64; 4] = [3.0, 15.0, 0.3, 3.75];

#[test]
fn a_session_past_layer_0_shows_each_turns_layer_and_cost_and_its_context_state() {
    let upstream = upstream_with_window(MODEL, WINDOW);
    let overrides = window_override(MODEL, WINDOW, 2_048);
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[("LORE_MODEL_OVERRIDES", overrides.as_str())],
    );
    let mut coder = Coder::new(&gateway, &upstream, "ui-layers");
    let mut turn = 0;
    while coder.layers.iter().filter(|layer| **layer > 0).count() < 2 {
        assert!(
            turn < 40,
            "the session never left layer 0: {:?}",
            coder.layers
        );
        coder.turn(
            &format!("step {turn}: fix module {turn}"),
            &[
                tool_output(turn * 2, 3_000),
                tool_output(turn * 2 + 1, 2_000),
            ],
        );
        turn += 1;
    }
    let sent = coder.layers.clone();
    let session = only_session(&gateway);
    let turns: Vec<Value> = eventually("every reply stored with its turn", || {
        let turns = json(&gateway, &format!("/api/v1/sessions/{session}/turns"), 200)["turns"]
            .as_array()
            .cloned()
            .unwrap();
        (turns.len() == sent.len()).then_some(turns)
    });
    // The layer recorded per turn is the one the gateway sent it at (its response header).
    let recorded: Vec<u8> = turns
        .iter()
        .map(|t| {
            t["context_layer"]
                .as_u64()
                .expect("a managed turn records its layer") as u8
        })
        .collect();
    assert_eq!(recorded, sent);
    for t in &turns {
        let [input, output, read, write] = PRICE;
        let expected = (t["input_tokens"].as_f64().unwrap() * input
            + t["output_tokens"].as_f64().unwrap() * output
            + t["cache_read_tokens"].as_f64().unwrap() * read
            + t["cache_write_tokens"].as_f64().unwrap() * write)
            / 1e6;
        assert!(
            (t["cost_usd"].as_f64().unwrap() - expected).abs() < 1e-12,
            "{t}"
        );
        assert_eq!(t["priced_as"], MODEL, "the override's entry");
    }
    eventually("the cost tracker to record every turn", || {
        let costs = gateway.get(&format!("/api/v1/sessions/{session}/costs"));
        (costs.status == 200 && costs.json()["total"]["calls"] == sent.len()).then_some(())
    });
    let context = context_of(&gateway, &session);
    let html = page(&gateway, &format!("/ui/sessions/{session}"));
    let highest = sent.iter().max().unwrap();
    assert!(
        html.contains(&format!(
            r#"<span class="badge good">layer {highest}</span>"#
        )),
        "the turns table"
    );
    assert!(html.contains(r#"<span class="badge">layer 0</span>"#));
    assert_eq!(
        html.matches(r#"<g class="bar">"#).count(),
        2 * sent.len(),
        "a token bar and a cost bar per turn"
    );
    let state = html.split(r#"id="context-state""#).nth(1).unwrap();
    let state = state.split("</div>").next().unwrap();
    assert!(
        state.contains(&format!(
            r#"<tr><th>layer</th><td class="mono small">{}</td>"#,
            context["layer"]
        )),
        "{state}"
    );
    assert!(
        state.contains("<th>floor</th>")
            && state.contains("<th>pinned window</th>")
            && state.contains("<th>calibrated</th>")
    );
    assert!(html.contains(r#"id="knowledge-block""#) && html.contains("<th>baseline tokens</th>"));
    assert!(
        html.contains("The cost tracker recorded"),
        "the ledger's figure beside the turns'"
    );
    assert!(
        !html.contains("not recorded</span>"),
        "every turn of this session has its layer"
    );
}

#[test]
fn seeded_replies_stored_before_layers_say_not_recorded() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let turns = json(
        &gateway,
        &format!("/api/v1/sessions/{}/turns", seeded.sessions[1]),
        200,
    );
    let layers: Vec<Value> = turns["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["context_layer"].clone())
        .collect();
    assert_eq!(
        layers,
        serde_json::json!([null, null, 0, 0, 1, 1])
            .as_array()
            .unwrap()
            .clone()
    );
    let html = page(&gateway, &format!("/ui/sessions/{}", seeded.sessions[1]));
    let table = html.split(r#"id="turns-table""#).nth(1).unwrap();
    assert_eq!(
        table
            .matches(r#"<span class="muted small">not recorded</span>"#)
            .count(),
        2
    );
    assert!(table.contains(r#"<span class="badge good">layer 1</span>"#));
}
