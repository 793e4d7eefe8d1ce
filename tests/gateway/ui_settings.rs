//! The settings page over real HTTP: the model catalogue in force (the one `lore models`
//! prints, overrides marked as such) and the context manager's and cost tracker's settings,
//! each with where its value came from.

use lore_test_support::FakeUpstream;
use serde_json::Value;

use crate::helpers::Gateway;
use crate::ui_helpers::{json, page};

const OVERRIDES: &str = r#"{"claude-sonnet-4-5":{"context":64000,"output":8192},"my-local-model":{"context":32000,"output":4096,"cost":{"input":0.5,"output":1.5}}}"#;

fn row<'a>(rows: &'a Value, key: &str, value: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r[key] == value)
        .unwrap_or_else(|| panic!("no row with {key} = {value} in {rows}"))
}

#[test]
fn the_catalogue_in_force_shows_overrides_as_such_and_matches_lore_models() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[
            ("LORE_MODEL_OVERRIDES", OVERRIDES),
            ("LORE_DAILY_BUDGET", "7"),
            ("LORE_CACHE_TTL", "1h"),
        ],
    );
    let settings = json(&gateway, "/api/v1/settings", 200);
    let catalogue = &settings["model_catalogue"];
    let sonnet = row(catalogue, "model", "claude-sonnet-4-5");
    assert_eq!(sonnet["context"], 64_000);
    assert_eq!(sonnet["output"], 8_192);
    assert_eq!(sonnet["source"], "override");
    assert_eq!(sonnet["overridden"], true);
    assert_eq!(
        sonnet["input_per_mtok"], 3.0,
        "prices kept from the catalogue"
    );
    let local = row(catalogue, "model", "my-local-model");
    assert_eq!(
        (local["context"].as_u64(), local["input_per_mtok"].as_f64()),
        (Some(32_000), Some(0.5))
    );
    let opus = row(catalogue, "model", "claude-opus-4-5");
    assert_eq!(opus["source"], "catalogue");
    assert_eq!(opus["context_1m"], 1_000_000);
    assert_eq!(settings["overridden"], 2);
    let rows = &settings["settings"];
    for (name, value, source) in [
        ("LORE_MODEL_OVERRIDES", "2 catalogue entries", "environment"),
        ("LORE_DAILY_BUDGET", "$7 a day", "environment"),
        ("LORE_CACHE_TTL", "1h", "environment"),
        ("LORE_CONTEXT", "on", "default"),
        ("LORE_TARGET_CACHE_READ_COST", "$0.1 per turn", "default"),
        ("LORE_LTM", "on", "default"),
        ("LORE_COSTS", "on", "default"),
        ("LORE_QUOTA", "on", "default"),
    ] {
        let found = row(rows, "name", name);
        assert_eq!(
            (found["value"].as_str(), found["source"].as_str()),
            (Some(value), Some(source)),
            "{name}"
        );
    }

    // `lore models --json` with the same environment prints the same rows.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(["models", "--json"])
        .env("LORE_MODEL_OVERRIDES", OVERRIDES)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let models: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(&models["models"], catalogue);

    let html = page(&gateway, "/ui/settings");
    let sonnet_row = html
        .split("<tr")
        .find(|r| r.contains(">claude-sonnet-4-5<"))
        .unwrap();
    assert!(
        sonnet_row.contains(r#" class="overridden""#),
        "{sonnet_row}"
    );
    assert!(sonnet_row.contains("LORE_MODEL_OVERRIDES") && sonnet_row.contains("64K"));
    let opus_row = html
        .split("<tr")
        .find(|r| r.contains(">claude-opus-4-5<"))
        .unwrap();
    assert!(
        opus_row.contains("1M beta: 1M") && opus_row.contains(">catalogue<"),
        "{opus_row}"
    );
    assert!(html.contains("(any other model)"));
    assert!(html.contains("2 entries come from"));
    assert!(!html.contains("not built yet"));
}
