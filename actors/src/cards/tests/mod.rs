//! Tests of the card engine: the lorecards engine scenarios adapted to our rules, plus the
//! Unicode, regex, budget and scale cases lorecards lacked.

mod budget;
mod candidates;
mod engine;
mod matching;

use super::{Consultation, MatchCard, MatchOptions, Secondary, Turn, consult};

/// One token per character: budgets in tests are easy to reason about.
pub(super) fn chars(text: &str) -> usize {
    text.chars().count()
}

/// The lorecards fixture vault: Alice (keywords Alice and "payments team", alias Al), Bob, and
/// the Friday deploy (refs Bob).
pub(super) fn vault() -> Vec<MatchCard> {
    let mut alice = MatchCard::new(
        "people/alice",
        "people",
        "Alice",
        "## who\nAlice leads payments.",
    );
    alice.keywords = vec!["Alice".into(), "payments team".into()];
    alice.aliases = vec!["Al".into()];
    alice.who_line = Some("Alice leads payments.".into());
    let mut bob = MatchCard::new("people/bob", "people", "Bob", "## who\nBob runs infra.");
    bob.keywords = vec!["Bob".into()];
    bob.who_line = Some("Bob runs infra.".into());
    let mut deploy = MatchCard::new(
        "events/friday-deploy",
        "events",
        "the Friday deploy",
        "## what\nIt broke.",
    );
    deploy.keywords = vec!["deploy".into()];
    deploy.refs = vec!["people/bob".into()];
    deploy.who_line = Some("The Friday deploy broke prod.".into());
    vec![alice, bob, deploy]
}

/// A card with one keyword.
pub(super) fn card(key: &str, keyword: &str) -> MatchCard {
    let mut card = MatchCard::new(key, "entry", key, &format!("about {key}"));
    card.keywords = vec![keyword.to_owned()];
    card
}

/// Consults with default options and the character counter.
pub(super) fn run(cards: &[MatchCard], history: &[Turn], query: &str) -> Consultation {
    consult(cards, history, query, &MatchOptions::default(), &chars)
}

/// Keys that fire for `query` with no history.
pub(super) fn fired(cards: &[MatchCard], query: &str) -> Vec<String> {
    run(cards, &[], query)
        .fired
        .into_iter()
        .map(|c| c.key)
        .collect()
}

/// A card with secondary rules.
pub(super) fn with_secondary(keyword: &str, secondary: Secondary) -> MatchCard {
    let mut c = card("entry/gated", keyword);
    c.secondary = secondary;
    c
}

/// Words as owned strings.
pub(super) fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}
