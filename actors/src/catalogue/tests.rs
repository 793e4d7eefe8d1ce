//! Tests of the model catalogue and its overrides.
#![allow(clippy::unwrap_used)]

use super::*;
use lore_storage::memory::UsageTotals;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn the_compiled_in_file_parses() {
    let file: FileJson = serde_json::from_str(MODELS_JSON).unwrap();
    assert!(file.models.len() > 30);
    for entry in &file.models {
        assert!(entry.output < entry.context, "{}", entry.prefix);
        assert_eq!(normalise(&entry.prefix), entry.prefix, "{}", entry.prefix);
    }
}

#[test]
fn known_models_match_their_longest_prefix() {
    let c = Catalogue::builtin();
    assert_eq!(c.lookup("claude-sonnet-4-5-20250929").price.input, 3.0);
    assert_eq!(c.lookup("claude-sonnet-4-6").context, 200_000);
    assert_eq!(c.lookup("claude-sonnet-4-6").context_1m, Some(1_000_000));
    assert_eq!(c.lookup("claude-opus-4-1").price.output, 75.0);
    assert_eq!(c.lookup("claude-opus-4-5").price.output, 25.0);
    assert_eq!(c.lookup("claude-haiku-4-5").price.cache_write, 1.25);
    assert_eq!(c.lookup("claude-3-5-haiku-20241022").price.input, 0.8);
    assert_eq!(c.lookup("gpt-5-nano").price.input, 0.05);
    assert_eq!(c.lookup("gpt-5-mini-2025-08-07").price.input, 0.25);
    assert_eq!(c.lookup("gpt-5").price.output, 10.0);
    assert_eq!(c.lookup("gpt-5.1-codex").context, 400_000);
    assert_eq!(c.lookup("gpt-4.1-mini").price.input, 0.4);
    assert_eq!(c.lookup("gpt-4o-2024-08-06").price.input, 2.5);
    assert_eq!(c.lookup("deepseek-chat").context, 128_000);
    assert_eq!(c.lookup("claude-sonnet-4-6").source, Source::Catalogue);
}

#[test]
fn openrouter_names_and_free_models() {
    let c = Catalogue::builtin();
    assert_eq!(c.lookup("anthropic/claude-3.5-haiku").price.input, 0.8);
    assert_eq!(c.lookup("openai/gpt-4.1-mini").price.output, 1.6);
    assert_eq!(c.lookup("openai/gpt-5-mini:nitro").price.input, 0.25);
    let free = c.lookup("meta-llama/llama-3.3-70b-instruct:free");
    assert_eq!(free.price, Price::FREE);
    assert_eq!(free.context, 131_072);
}

#[test]
fn unknown_models_get_the_reference_default() {
    let info = Catalogue::builtin().lookup("mystery-model");
    assert_eq!(info.source, Source::Unknown);
    assert_eq!((info.context, info.output), (200_000, 8_192));
    assert_eq!(info.price.input, 3.0);
    assert_eq!(info.price.output, 15.0);
    assert!(close(info.price.cache_read, 0.3));
    assert!(close(info.price.cache_write, 3.75));
    assert!(close(info.quality_knee, 0.4));
}

#[test]
fn quality_knees_follow_the_model_family() {
    let c = Catalogue::builtin();
    assert!(close(c.lookup("claude-sonnet-4-6").quality_knee, 0.5));
    assert!(close(c.lookup("claude-haiku-4-5").quality_knee, 0.45));
    assert!(close(c.lookup("gpt-4o").quality_knee, 0.45));
    assert!(close(c.lookup("gpt-5-mini").quality_knee, 0.5));
    assert!(close(c.lookup("deepseek-chat").quality_knee, 0.35));
    assert!(close(c.lookup("something-else").quality_knee, 0.4));
}

#[test]
fn dates_are_stripped_but_not_version_numbers() {
    assert_eq!(normalise("claude-sonnet-4-5-20250929"), "claude-sonnet-4-5");
    assert_eq!(normalise("gpt-4o-2024-08-06"), "gpt-4o");
    assert_eq!(normalise("openai/GPT-4.1"), "gpt-4-1");
    assert_eq!(normalise("claude-3-5-haiku"), "claude-3-5-haiku");
}

#[test]
fn an_override_changes_only_what_it_names() {
    let overrides =
        parse_overrides(r#"{"claude-sonnet-4-6":{"context":64000,"output":8192}}"#).unwrap();
    let c = Catalogue::with_overrides(overrides);
    let info = c.lookup("claude-sonnet-4-6");
    assert_eq!(info.source, Source::Override);
    assert_eq!((info.context, info.output), (64_000, 8_192));
    assert_eq!(info.price.input, 3.0, "prices stay the catalogue's");
    // Another sonnet keeps the catalogue entry.
    assert_eq!(c.lookup("claude-sonnet-4-5").context, 200_000);
}

#[test]
fn an_override_can_add_a_model_with_prices() {
    let overrides = parse_overrides(
        r#"{"my-local":{"context":32000,"output":4096,"cost":{"input":0.5,"output":1.5,"cache_read":0.05}}}"#,
    )
    .unwrap();
    let c = Catalogue::with_overrides(overrides);
    let info = c.lookup("my-local-7b");
    assert_eq!((info.context, info.output), (32_000, 4_096));
    assert_eq!(info.price.input, 0.5);
    assert_eq!(info.price.output, 1.5);
    assert_eq!(info.price.cache_read, 0.05);
    let table = c.table();
    assert!(table.iter().any(|row| row.matched == "my-local"));
    assert_eq!(table.last().unwrap().matched, "(any other model)");
    assert!(table.iter().any(|row| row.matched == "claude-sonnet-4"));
}

#[test]
fn a_narrower_override_than_an_entry_shows_in_the_table() {
    let overrides =
        parse_overrides(r#"{"claude-sonnet-4-5":{"context":64000,"output":8192}}"#).unwrap();
    let c = Catalogue::with_overrides(overrides);
    let table = c.table();
    let narrow = table
        .iter()
        .find(|row| row.matched == "claude-sonnet-4-5")
        .unwrap();
    assert_eq!((narrow.context, narrow.output), (64_000, 8_192));
    assert_eq!(narrow.source, Source::Override);
    assert_eq!(narrow.price.input, 3.0, "prices kept from claude-sonnet-4");
    let broad = table
        .iter()
        .find(|row| row.matched == "claude-sonnet-4")
        .unwrap();
    assert_eq!((broad.context, broad.source), (200_000, Source::Catalogue));
    assert_eq!(
        table
            .iter()
            .filter(|row| row.matched == "claude-sonnet-4-5")
            .count(),
        1
    );
}

#[test]
fn malformed_overrides_are_refused_with_the_entry_named() {
    for (text, needle) in [
        ("not json", "not valid JSON"),
        ("[1]", "must be a JSON object"),
        (r#"{"m":5}"#, "entry \"m\""),
        (r#"{"m":{"contxt":5}}"#, "unknown key \"contxt\""),
        (r#"{"m":{"context":-1}}"#, "whole number"),
        (r#"{"m":{"context":0}}"#, "above zero"),
        (
            r#"{"m":{"context":100,"output":200}}"#,
            "smaller than context",
        ),
        (r#"{"m":{"cost":{"input":"cheap"}}}"#, "cost.input"),
        (r#"{"m":{"cost":{"inputs":1}}}"#, "cost.\"inputs\""),
        (r#"{"m":{"cost":5}}"#, "cost must be an object"),
        (r#"{"":{"context":5}}"#, "empty"),
    ] {
        let err = parse_overrides(text).unwrap_err().to_string();
        assert!(err.contains(needle), "{text}: {err}");
        assert!(err.contains("LORE_MODEL_OVERRIDES"), "{err}");
    }
    assert!(parse_overrides("  ").unwrap().is_empty());
}

#[test]
fn missing_cache_prices_follow_the_reference() {
    let price = Price::from_input_output(2.0, 8.0);
    assert!(close(price.cache_read, 0.2));
    assert!(close(price.cache_write, 2.5));
    assert!(close(price.cache_write_1h, 4.0));
    // OpenAI-style: writes cost the input price, and so does the 1-hour lifetime.
    let openai = Price::from_parts(1.25, 10.0, Some(0.125), Some(1.25), None);
    assert!(close(openai.cache_write_1h, 1.25));
}

#[test]
fn cost_sums_every_kind_of_token() {
    let usage = UsageTotals {
        calls: 1,
        input_tokens: 1_000_000,
        output_tokens: 100_000,
        cache_read_tokens: 2_000_000,
        cache_write_tokens: 400_000,
        ..UsageTotals::default()
    };
    let price = Catalogue::builtin().lookup("claude-sonnet-4-5").price;
    assert!(close(cost(&usage, price), 3.0 + 1.5 + 0.6 + 1.5));
    assert!(close(cost(&UsageTotals::default(), price), 0.0));
}

#[test]
fn worker_price_overrides_parse_with_derived_cache_prices() {
    let price = Price::parse(" 0.8 , 4 ").unwrap();
    assert_eq!(price.input, 0.8);
    assert_eq!(price.output, 4.0);
    assert!(close(price.cache_read, 0.08));
    assert!(close(price.cache_write, 1.0));
    for bad in ["", "1", "a,b", "1,-2", "1,inf"] {
        let err = Price::parse(bad).unwrap_err();
        assert!(err.contains("LORE_WORKER_PRICE"), "{err}");
    }
}
