//! `lore cards try "sentence" [--turns JSON] [--json]`: a dry run of the matching engine.
//!
//! Shows which cards fire and why (score, tokens, hit terms), which matched but were dropped
//! and the reason, the block the gateway would inject, and proper nouns without a card.

use std::path::Path;
use std::process::ExitCode;

use lore_actors::cards::{
    BpeTokenCounter, MatchOptions, Turn, TurnRole, candidates, consult, render_block,
};
use serde_json::{Value, json};

use super::load_book;

/// Most candidates shown.
const MAX_CANDIDATES: usize = 10;

/// Parses `--turns`: a JSON list of `{"role": "user"|"assistant", "text": "…"}` (`content` is
/// accepted for `text`).
pub(crate) fn parse_turns(raw: &str) -> Result<Vec<Turn>, String> {
    let value: Value =
        serde_json::from_str(raw).map_err(|err| format!("--turns is not valid JSON: {err}"))?;
    let Value::Array(items) = value else {
        return Err("--turns must be a JSON list of {\"role\": …, \"text\": …} objects".into());
    };
    let mut turns = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let role = match item.get("role").and_then(Value::as_str) {
            Some("user") => TurnRole::User,
            Some("assistant") => TurnRole::Assistant,
            _ => {
                return Err(format!(
                    "--turns item {index}: role must be \"user\" or \"assistant\""
                ));
            }
        };
        let text = item
            .get("text")
            .or_else(|| item.get("content"))
            .and_then(Value::as_str)
            .ok_or_else(|| format!("--turns item {index}: text must be a string"))?;
        turns.push(Turn {
            role,
            text: text.to_owned(),
        });
    }
    Ok(turns)
}

/// Runs the dry run.
pub(crate) fn run(
    root: &Path,
    sentence: &str,
    turns: Option<&str>,
    as_json: bool,
) -> anyhow::Result<ExitCode> {
    let history = match turns.map(parse_turns).transpose() {
        Ok(turns) => turns.unwrap_or_default(),
        Err(message) => {
            eprintln!("lore: {message}");
            return Ok(ExitCode::from(2));
        }
    };
    let book = load_book(root);
    let options = MatchOptions::default();
    let result = consult(&book.cards, &history, sentence, &options, &BpeTokenCounter);
    let block =
        (!result.fired.is_empty()).then(|| render_block(&result.fired, "try", &options.framing));
    let mut proposals = candidates(&history, sentence, &book.cards);
    proposals.truncate(MAX_CANDIDATES);
    if as_json {
        let out = json!({
            "fired": result.fired,
            "dropped": result.dropped,
            "tokens_used": result.tokens_used,
            "block": block,
            "candidates": proposals,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    if book.cards.is_empty() {
        eprintln!(
            "no loadable cards in {}; run `lore cards init` or `lore cards check`",
            root.display()
        );
    }
    for card in &result.fired {
        println!(
            "+ {} [{}]  score {}  {} tokens  hit: {}",
            card.title,
            card.kind,
            card.score,
            card.tokens,
            card.hit_terms.join(", ")
        );
    }
    for card in &result.dropped {
        let reason = serde_json::to_value(card.reason)?;
        let reason = reason.as_str().unwrap_or_default().to_owned();
        let detail = if card.detail.is_empty() {
            String::new()
        } else {
            format!(" ({})", card.detail)
        };
        println!("- {}  dropped: {reason}{detail}", card.title);
    }
    match &block {
        Some(block) => println!(
            "\n{} tokens of {} in the block:\n{block}",
            result.tokens_used, options.budget_tokens
        ),
        None if result.dropped.is_empty() => println!("no card matches"),
        None => println!("no card fires"),
    }
    if !proposals.is_empty() {
        println!("\nnames without a card: {}", proposals.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}
