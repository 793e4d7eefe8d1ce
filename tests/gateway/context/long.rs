//! A tool-heavy session growing past 4× a 32K window: no client error, every prompt inside the
//! window, the cache read on every turn but the layer changes, the distilled prefix rewritten
//! only where the window after it moves anyway or by a consolidation, and a usage under the
//! auto-compaction threshold shown to the client.

use std::time::Duration;

use serde_json::Value;

use super::*;

const WINDOW: u64 = 32_000;

#[test]
fn a_long_tool_heavy_session_stays_inside_a_32k_window() {
    let upstream = upstream_with_window(MODEL, WINDOW);
    let overrides = window_override(MODEL, WINDOW, 4_096);
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[
            ("LORE_MODEL_OVERRIDES", overrides.as_str()),
            ("LORE_MEMORY", "on"),
            ("LORE_IDLE_TIMEOUT", "0.3"),
            ("LORE_MEMORY_RETRY_AFTER", "0.3"),
        ],
    );
    let mut coder = Coder::new(&gateway, &upstream, "ctx-long-session");
    coder.stream = true;
    let mut sent_chars = 0usize;
    let mut turn = 0;
    // Past four windows of history (the fake counts a token per four characters).
    while sent_chars < (4 * WINDOW as usize + 8_000) * 4 {
        let outputs = [
            tool_output(turn * 2, 5_200),
            tool_output(turn * 2 + 1, 3_600),
        ];
        sent_chars += outputs.iter().map(String::len).sum::<usize>() + 400;
        coder.turn(
            &format!("Step {turn}: fix the failing handler in module {turn} and rerun its tests"),
            &outputs,
        );
        turn += 1;
        // The harness runs its tools between requests: the memory workers get their turn.
        std::thread::sleep(Duration::from_millis(150));
    }
    let session = only_session(&gateway);
    let bodies = upstream.conversation_bodies();
    let observations = upstream.cache_observations();
    assert_eq!(
        bodies.len(),
        observations.len(),
        "one observation per accepted request"
    );
    // Every prompt the upstream accepted was inside the window, and the client never saw a 400
    // (Coder::request asserts 200 on every response).
    let largest = observations
        .iter()
        .map(|o| o.input_tokens + o.cache_read + o.cache_creation)
        .max()
        .unwrap();
    assert!(largest <= WINDOW, "largest prompt {largest}");
    let refused = upstream.overflows();
    assert!(
        refused.len() <= 3,
        "Lore should rarely overshoot: {refused:?}"
    );
    // The session left layer 0 and never went back.
    let first_managed = coder
        .layers
        .iter()
        .position(|layer| *layer > 0)
        .expect("the session was compressed");
    assert!(
        coder.layers[first_managed..].iter().all(|layer| *layer > 0),
        "{:?}",
        coder.layers
    );
    // The cache is read on every turn but those that change layer (or follow a refusal).
    let changes = coder.layers.windows(2).filter(|w| w[0] != w[1]).count();
    let cold: Vec<usize> = observations
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, o)| o.cache_read == 0)
        .map(|(i, _)| i)
        .collect();
    assert!(
        cold.len() <= changes + refused.len(),
        "cold turns {cold:?}, layers {:?}",
        coder.layers
    );
    let read: u64 = observations.iter().map(|o| o.cache_read).sum();
    let total: u64 = observations
        .iter()
        .map(|o| o.input_tokens + o.cache_read + o.cache_creation)
        .sum();
    let share = read as f64 / total as f64;
    assert!(share > 0.6, "cache-read share {share:.3}");
    // The distilled prefix changes only where the bytes after it change anyway: when the raw
    // window after it starts somewhere else (re-pinned, or a layer change).
    let with_prefix: Vec<&Value> = bodies
        .iter()
        .filter(|body| {
            body["messages"][0]["content"][0]["text"]
                .as_str()
                .is_some_and(|text| text.starts_with("[Lore:"))
        })
        .collect();
    assert!(
        !with_prefix.is_empty(),
        "the session got a distilled prefix"
    );
    let bare = |value: &Value| {
        let mut value = value.clone();
        if let Some(blocks) = value["content"].as_array_mut() {
            for block in blocks {
                block.as_object_mut().unwrap().remove("cache_control");
            }
        }
        value
    };
    // A consolidation is the one deliberate rewrite: it folds logs the prefix had to leave out
    // for its budget back in (the fake reflector's output opens with "## Current State").
    let consolidation = |value: &Value| {
        let text: String = value["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|block| block["text"].as_str())
            .collect();
        text.find("## Current State")
            .map(|at| text[at..].to_string())
    };
    let mut rerendered = 0;
    for pair in with_prefix.windows(2) {
        let (before, after) = (pair[0], pair[1]);
        if bare(&before["messages"][1]) != bare(&after["messages"][1]) {
            rerendered += 1;
            let consolidated = consolidation(&after["messages"][1]).is_some()
                && consolidation(&before["messages"][1]) != consolidation(&after["messages"][1]);
            if consolidated {
                continue;
            }
            assert_ne!(
                bare(&before["messages"][2]),
                bare(&after["messages"][2]),
                "the prefix changed while the raw window stayed where it was"
            );
        }
    }
    assert!(
        rerendered < with_prefix.len() / 2,
        "the prefix is re-rendered on most turns: {rerendered} of {}",
        with_prefix.len()
    );
    // The client is shown a usage under its own auto-compaction threshold.
    let cap = ((WINDOW - 4_096 - 13_000) as f64 * 0.9) as u64 - 8_192;
    for usage in &coder.shown_usage {
        let shown = [
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ]
        .iter()
        .map(|key| usage[*key].as_u64().unwrap_or(0))
        .sum::<u64>();
        assert!(shown <= cap, "shown {shown} > {cap}: {usage}");
    }
    // The status says what happened.
    let context = context_of(&gateway, &session);
    assert!(context["layer"].as_u64().unwrap() >= 1, "{context}");
    assert_eq!(context["calibrated"], true);
    assert!(
        context["cache_read_share"].as_f64().unwrap() > 0.5,
        "{context}"
    );
    assert!(
        gateway.log().contains("context layer changed"),
        "layer changes are logged"
    );
}
