//! Token budget, hard cap, refs settled after the final selection, block rendering, token counter.

use super::{card, chars, run, vault};
use crate::cards::{
    BpeTokenCounter, DEFAULT_FRAMING, DropReason, MatchCard, MatchOptions, TokenCounter, consult,
    render_block,
};

fn sized(key: &str, keyword: &str, body_chars: usize) -> MatchCard {
    let mut c = card(key, keyword);
    c.body = "x".repeat(body_chars);
    c
}

#[test]
fn budget_skips_and_continues_with_smaller_cards() {
    // Rendered size = "### <key> [entry]\n" (key.len() + 13) + body.
    let big = sized("entry/big", "alpha", 80);
    let small = sized("entry/small", "beta", 10);
    let mut first = sized("entry/first", "gamma", 40);
    first.priority = 10.0;
    let cards = [big, small, first];
    let options = MatchOptions {
        budget_tokens: 130,
        framing: "F:\n".into(),
        ..MatchOptions::default()
    };
    let result = consult(&cards, &[], "alpha beta gamma", &options, &chars);
    assert_eq!(result.fired_keys(), vec!["entry/first", "entry/small"]);
    assert_eq!(result.drop_reason("entry/big"), Some(DropReason::Budget));
    let dropped = &result.dropped[0];
    assert_eq!(
        (dropped.score, dropped.hit_terms.clone()),
        (2, vec!["alpha".to_owned()])
    );
    let expected = 3 + result.fired[0].tokens + 2 + result.fired[1].tokens;
    assert_eq!(result.tokens_used, expected, "framing + cards + separator");
    assert!(result.tokens_used <= 130);
    let block = render_block(&result.fired, "n1", &options.framing);
    assert_eq!(
        chars(&block) - 2 * "<!-- lore:cards:n1 -->".len(),
        result.tokens_used + 1 + 1 + 1
    );
}

#[test]
fn no_card_is_taken_over_the_budget() {
    let cards = [sized("entry/big", "alpha", 900)];
    let options = MatchOptions {
        max_first_card_tokens: 5_000,
        ..MatchOptions::default()
    };
    let result = consult(&cards, &[], "alpha", &options, &chars);
    assert!(result.fired.is_empty());
    assert_eq!(result.drop_reason("entry/big"), Some(DropReason::Budget));
    assert_eq!(result.tokens_used, 0);
}

#[test]
fn oversized_cards_are_too_large() {
    let cards = [
        sized("entry/huge", "alpha", 500),
        sized("entry/ok", "alpha", 20),
    ];
    let options = MatchOptions {
        budget_tokens: 2_000,
        max_first_card_tokens: 300,
        ..MatchOptions::default()
    };
    let result = consult(&cards, &[], "alpha", &options, &chars);
    assert_eq!(result.fired_keys(), vec!["entry/ok"]);
    assert_eq!(result.drop_reason("entry/huge"), Some(DropReason::TooLarge));
    assert!(
        result.dropped[0].detail.contains("over the cap of 300"),
        "{}",
        result.dropped[0].detail
    );
}

#[test]
fn refs_only_when_the_target_did_not_fire() {
    let cards = vault();
    let alone = run(&cards, &[], "the deploy failed");
    assert_eq!(alone.fired_keys(), vec!["events/friday-deploy"]);
    assert!(
        alone.fired[0]
            .rendered
            .ends_with("It broke.\n\n(see also: people/bob — Bob runs infra.)")
    );

    let both = run(&cards, &[], "the deploy failed, ask Bob");
    assert_eq!(both.fired.len(), 2);
    assert!(
        both.fired.iter().all(|c| !c.rendered.contains("see also")),
        "Bob is in the block"
    );
    let sum: usize = both.fired.iter().map(|c| c.tokens).sum();
    assert_eq!(both.tokens_used, chars(DEFAULT_FRAMING) + sum + 2);
}

#[test]
fn refs_settle_after_budget_drops() {
    // Bob fires first (higher priority) but is dropped for budget: the deploy card names him.
    let mut cards = vault();
    cards[1].priority = 9.0;
    cards[1].body = "y".repeat(700);
    let options = MatchOptions {
        max_first_card_tokens: 5_000,
        ..MatchOptions::default()
    };
    let result = consult(&cards, &[], "deploy Bob", &options, &chars);
    assert_eq!(result.fired_keys(), vec!["events/friday-deploy"]);
    assert_eq!(result.drop_reason("people/bob"), Some(DropReason::Budget));
    assert!(
        result.fired[0]
            .rendered
            .contains("(see also: people/bob — Bob runs infra.)")
    );
}

#[test]
fn refs_skip_self_missing_disabled_and_present_targets() {
    let mut cards = vault();
    cards[2].refs = vec![
        "events/friday-deploy".into(),
        "people/ghost".into(),
        "people/bob".into(),
        "people/alice".into(),
    ];
    cards[1].enabled = false;
    let options = MatchOptions {
        already_present: vec!["people/alice".into()],
        ..MatchOptions::default()
    };
    let result = consult(&cards, &[], "deploy", &options, &chars);
    assert!(
        !result.fired[0].rendered.contains("see also"),
        "{}",
        result.fired[0].rendered
    );
    cards[1].enabled = true;
    cards[1].who_line = None;
    let result = consult(&cards, &[], "deploy", &MatchOptions::default(), &chars);
    assert!(
        result.fired[0]
            .rendered
            .contains("(see also: people/bob)\n(see also: people/alice — Alice leads payments.)")
    );
}

#[test]
fn already_present_cards_are_not_packed_again() {
    let cards = vault();
    let options = MatchOptions {
        already_present: vec!["people/alice".into()],
        ..MatchOptions::default()
    };
    let result = consult(&cards, &[], "Alice and Bob", &options, &chars);
    assert_eq!(result.fired_keys(), vec!["people/bob"]);
    assert_eq!(
        result.drop_reason("people/alice"),
        Some(DropReason::AlreadyPresent)
    );
}

#[test]
fn block_shape() {
    let result = run(&vault(), &[], "Alice and Bob");
    let block = render_block(&result.fired, "ab12cd", DEFAULT_FRAMING);
    let expected = format!(
        "<!-- lore:cards:ab12cd -->\nA memory surfaces:\n\n{}\n\n{}\n<!-- /lore:cards:ab12cd -->",
        result.fired[0].rendered, result.fired[1].rendered
    );
    assert_eq!(block, expected);
}

#[test]
fn bpe_counter_counts_tokens() {
    crate::cards::warm_up();
    let counter = BpeTokenCounter;
    assert_eq!(counter.count(""), 0);
    let hello = counter.count("hello world");
    assert!((1..=3).contains(&hello), "{hello}");
    let han = counter.count("今天和林林吃饭了");
    assert!((2..16).contains(&han), "{han}");
    let result = consult(&vault(), &[], "Alice", &MatchOptions::default(), &counter);
    assert_eq!(
        result.fired[0].tokens,
        counter.count(&result.fired[0].rendered)
    );
    assert!(result.tokens_used < chars(&result.fired[0].rendered));
}
