//! Proper nouns that deserve a card.

use super::vault;
use crate::cards::{Turn, candidates};

#[test]
fn capitalised_words_not_yet_terms() {
    let history = [
        Turn::user("Alice met Mira Okafor at the Lisbon office."),
        Turn::assistant("The Lisbon team?"),
    ];
    let found = candidates(
        &history,
        "How did Bob's talk with Mira go? Al said ok.",
        &vault(),
    );
    assert_eq!(found, vec!["Mira", "Okafor", "Lisbon"]);
}

#[test]
fn chinese_names_from_jieba_tags() {
    let found = candidates(&[], "今天王小明去了北京", &vault());
    assert!(found.iter().any(|w| w == "北京"), "{found:?}");
    assert!(found.iter().any(|w| w == "王小明"), "{found:?}");
}

#[test]
fn capped_and_known_terms_skipped() {
    let text: String = (0..40).map(|i| format!("Name{i}x ")).collect();
    assert_eq!(candidates(&[], &text, &[]).len(), 20);
    let mut cards = vault();
    cards[0].keywords.push("北京".into());
    assert!(
        !candidates(&[], "今天去了北京", &cards)
            .iter()
            .any(|w| w == "北京")
    );
}
