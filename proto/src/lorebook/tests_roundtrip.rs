//! Lorebook round trips: import → export → import on fixed and generated books, and cards →
//! export → import keeping every field a card represents.

use proptest::prelude::*;
use serde_json::{Value, json};

use super::tests::{cfg, import, native_book};
use super::*;
use crate::cards::{Kind, KindsConfig, MatchMode, parse_card};

#[test]
fn native_round_trip_is_stable() {
    let first = import(&native_book());
    let cards: Vec<_> = first.cards.iter().map(|c| c.card.clone()).collect();
    let exported = export_world_info(&cards, &cfg());
    let second = import(&exported);
    assert_eq!(first.cards, second.cards);
    assert_eq!(
        export_world_info(
            &second
                .cards
                .iter()
                .map(|c| c.card.clone())
                .collect::<Vec<_>>(),
            &cfg()
        ),
        exported
    );
}

#[test]
fn lore_fields_survive_export() {
    let text = "---\ntitle: The Deploy\nkeywords: [deploy]\naliases: [release]\nrefs: [Bob]\ninject: false\nscan_depth: 2\n---\n## when\nFridays.\n";
    let card = parse_card("the Friday deploy", Kind::Event, text, &cfg()).unwrap();
    let out = export_world_info(std::slice::from_ref(&card), &cfg());
    assert_eq!(out["entries"]["0"]["key"], json!(["deploy", "release"]));
    assert_eq!(out["entries"]["0"]["disable"], json!(true));
    let back = import(&out).cards.remove(0).card;
    assert_eq!(back.key, card.key);
    assert_eq!(back.kind, Kind::Event);
    assert_eq!(
        (
            back.keywords.clone(),
            back.aliases.clone(),
            back.refs.clone()
        ),
        (
            card.keywords.clone(),
            card.aliases.clone(),
            card.refs.clone()
        )
    );
    assert!(back.enabled && !back.inject);
    assert_eq!(back.effective_body(&cfg()), card.effective_body(&cfg()));
    let forced = import_world_info_as(&out, Some(Kind::Thing), &cfg()).unwrap();
    assert_eq!(forced.cards[0].card.kind, Kind::Thing);
}

fn entry() -> impl Strategy<Value = Value> {
    let word = "[A-Za-z][A-Za-z0-9 ]{0,8}[a-z]";
    (
        prop::collection::vec(word, 0..3),
        prop::collection::vec(word, 0..3),
        0u64..4,
        word,
        "[a-z ]{0,20}",
        any::<[bool; 4]>(),
        (-50i32..200, prop::option::of(0u32..30), 0u32..8),
    )
        .prop_map(
            |(key, sec, logic, comment, content, f, (order, depth, pos))| {
                json!({"key": key, "keysecondary": sec, "selectiveLogic": logic, "comment": comment,
                   "content": content, "constant": f[0], "disable": f[1], "order": order,
                   "scanDepth": depth, "matchWholeWords": f[2], "caseSensitive": f[3],
                   "position": pos, "probability": 50, "sticky": pos})
            },
        )
}

proptest! {
    #[test]
    fn import_export_import_loses_nothing(entries in prop::collection::vec(entry(), 1..6)) {
        let book = json!({"entries": entries});
        let first = import(&book);
        let cards: Vec<_> = first.cards.iter().map(|c| c.card.clone()).collect();
        let second = import(&export_world_info(&cards, &cfg()));
        prop_assert_eq!(first.skipped.len() + first.cards.len(), entries_len(&book));
        let strip = |b: &ImportedBook| b.cards.iter().map(|c| c.card.clone()).collect::<Vec<_>>();
        prop_assert_eq!(strip(&first), strip(&second));
    }
}

fn entries_len(book: &Value) -> usize {
    book["entries"].as_array().map_or(0, Vec::len)
}

#[test]
fn forced_sectioned_kind_gets_empty_headings() {
    let book = json!([{"key": ["k"], "comment": "c", "content": "plain text"}]);
    let c = import_world_info_as(&book, Some(Kind::Place), &cfg())
        .unwrap()
        .cards
        .remove(0)
        .card;
    assert_eq!(
        c.body,
        "plain text\n\n## where\n\n## relation\n\n## recent\n"
    );
}

fn card_strategy() -> impl Strategy<Value = crate::cards::Card> {
    let w = || "[A-Za-z][A-Za-z0-9 ]{0,6}[a-z]";
    let list = move || prop::collection::vec(w(), 0..3);
    (
        (w(), w(), prop::collection::vec(w(), 1..3), list(), list()),
        (list(), list(), list(), list()),
        (
            prop::option::of(0u8..=10),
            -400i32..400,
            any::<[bool; 5]>(),
            0usize..6,
        ),
        "[a-z ]{1,20}",
    )
        .prop_map(
            |((key, title, kw, al, refs), (all, any, not, not_all), (d, p, f, k), text)| {
                // A word twice in one list means nothing, and the card files keep it once.
                let [mut refs, mut all, mut any, mut not, mut not_all] =
                    [refs, all, any, not, not_all];
                for list in [&mut refs, &mut all, &mut any, &mut not, &mut not_all] {
                    list.dedup();
                }
                let config = KindsConfig::default();
                let mut c = crate::cards::Card::new(&key, Kind::ALL[k]);
                c.title = title;
                c.aliases = al.into_iter().filter(|a| !kw.contains(a)).collect();
                c.aliases.dedup();
                c.keywords = kw;
                c.keywords.dedup();
                c.refs = refs;
                c.secondary = crate::cards::Secondary {
                    all,
                    any,
                    not,
                    not_all,
                };
                c.scan_depth = d;
                c.priority = f64::from(p) / 8.0;
                (c.enabled, c.inject, c.constant, c.case_sensitive) = (f[0], f[1], f[2], f[3]);
                c.match_mode = if f[4] {
                    MatchMode::Substring
                } else {
                    MatchMode::WholeWord
                };
                let body = format!("{text}\n\n## correspondence\nprivate {text}\n");
                c.set_body(&body, &config);
                c
            },
        )
}

proptest! {
    #[test]
    fn card_export_import_keeps_what_cards_represent(cards in prop::collection::vec(card_strategy(), 1..5)) {
        let config = KindsConfig::default();
        let out = export_world_info(&cards, &config);
        prop_assert!(!out.to_string().contains("private"));
        let back = import(&out);
        prop_assert_eq!(back.cards.len(), cards.len());
        for (a, b) in cards.iter().zip(back.cards.iter().map(|c| &c.card)) {
            let deduped = b.key.starts_with(&format!("{} (", a.key));
            prop_assert!(b.key == a.key || deduped);
            prop_assert_eq!(a.kind, b.kind);
            prop_assert_eq!(&a.title, &b.title);
            prop_assert_eq!(&a.keywords, &b.keywords);
            prop_assert_eq!(&a.aliases, &b.aliases);
            prop_assert_eq!(&a.refs, &b.refs);
            prop_assert_eq!(&a.secondary, &b.secondary);
            prop_assert_eq!(a.scan_depth, b.scan_depth);
            prop_assert_eq!(a.priority, b.priority);
            prop_assert_eq!((a.enabled, a.inject, a.constant), (b.enabled, b.inject, b.constant));
            prop_assert_eq!((a.match_mode, a.case_sensitive), (b.match_mode, b.case_sensitive));
            prop_assert_eq!(a.effective_body(&config), b.effective_body(&config));
        }
    }
}
