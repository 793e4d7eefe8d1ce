//! Lorebook tests: field mapping, selectiveLogic both ways, private sections, V2 books, skipped
//! entries and uids.

use serde_json::{Value, json};

use super::*;
use crate::cards::{Kind, KindsConfig, MatchMode, parse_card};

pub(super) fn cfg() -> KindsConfig {
    KindsConfig::default()
}

pub(super) fn native_book() -> Value {
    json!({"entries": {
        "0": {"uid": 0, "key": ["Alice", "/al(ice)?/i"], "keysecondary": ["payments"], "selectiveLogic": 3,
              "comment": "Alice", "content": "  Alice works on payments.  ", "constant": false,
              "selective": true, "order": 150, "position": 4, "depth": 2, "disable": false,
              "probability": 80, "useProbability": true, "group": "team", "sticky": 2, "cooldown": null,
              "scanDepth": 5, "caseSensitive": true, "matchWholeWords": false, "excludeRecursion": true},
        "7": {"uid": 7, "key": "Bob, Robert", "keysecondary": [], "comment": "", "content": "Bob.",
              "constant": true, "disable": true, "order": 2.5, "scanDepth": null, "matchWholeWords": null},
        "9": {"uid": 9, "key": [], "comment": "Always", "content": "rules", "constant": true}
    }})
}

pub(super) fn import(json: &Value) -> ImportedBook {
    import_world_info(json).unwrap()
}

#[test]
fn native_fields_map_onto_cards() {
    let book = import(&native_book());
    assert!(book.skipped.is_empty());
    let a = &book.cards[0];
    assert_eq!(a.uid, "0");
    let c = &a.card;
    assert_eq!(
        (c.key.as_str(), c.title.as_str(), c.kind),
        ("Alice", "Alice", Kind::Entry)
    );
    assert_eq!(c.keywords, ["Alice", "/al(ice)?/i"]);
    assert_eq!(c.secondary.all, ["payments"]);
    assert_eq!(c.body, "Alice works on payments.\n");
    assert_eq!(
        (c.priority, c.scan_depth, c.case_sensitive),
        (150.0, Some(3), true)
    );
    assert_eq!(c.match_mode, MatchMode::Substring);
    assert!(c.enabled && c.inject && !c.constant);
    let st = c.extra.get("st").unwrap();
    assert_eq!(st.get("position").and_then(|v| v.as_u64()), Some(4));
    assert_eq!(
        st.get("scanDepth").and_then(|v| v.as_u64()),
        Some(5),
        "odd depth kept"
    );
    assert!(st.get("cooldown").unwrap().is_null());
    assert!(st.get("key").is_none() && st.get("content").is_none());
    let b = &book.cards[1].card;
    assert_eq!(b.key, "Bob", "first keyword names an entry without comment");
    assert_eq!(b.keywords, ["Bob", "Robert"]);
    assert!(!b.enabled && b.constant);
    assert_eq!((b.priority, b.scan_depth), (2.5, None));
    assert_eq!(b.match_mode, MatchMode::WholeWord);
    let always = &book.cards[2].card;
    assert!(always.constant && always.keywords.is_empty());
}

#[test]
fn every_selective_logic_code_both_ways() {
    for (code, bucket) in [(0, "any"), (1, "not_all"), (2, "not"), (3, "all")] {
        let book = json!([{"key": ["k"], "keysecondary": ["s1", "s2"], "selectiveLogic": code,
                           "comment": "c", "content": "x"}]);
        let card = import(&book).cards.remove(0).card;
        let s = &card.secondary;
        let got = [
            ("any", &s.any),
            ("not_all", &s.not_all),
            ("not", &s.not),
            ("all", &s.all),
        ];
        for (name, list) in got {
            let expect: &[&str] = if name == bucket { &["s1", "s2"] } else { &[] };
            assert_eq!(list, expect, "code {code} bucket {name}");
        }
        let out = export_world_info(&[card], &cfg());
        let e = &out["entries"]["0"];
        assert_eq!(e["selectiveLogic"], json!(code));
        assert_eq!(e["keysecondary"], json!(["s1", "s2"]));
        assert!(e["lore"].get("secondary").is_none());
    }
}

#[test]
fn several_secondary_lists_export_one_and_keep_the_rest() {
    let mut card = crate::cards::Card::new("c", Kind::Entry);
    card.keywords = vec!["k".into()];
    card.secondary.any = vec!["a".into()];
    card.secondary.not = vec!["n".into()];
    card.secondary.not_all = vec!["na".into()];
    card.set_body("x\n", &cfg());
    let out = export_world_info(std::slice::from_ref(&card), &cfg());
    let e = &out["entries"]["0"];
    assert_eq!(
        (e["selectiveLogic"].clone(), e["keysecondary"].clone()),
        (json!(2), json!(["n"]))
    );
    assert_eq!(
        e["lore"]["secondary"],
        json!({"any": ["a"], "not_all": ["na"]})
    );
    let back = import(&out).cards.remove(0).card;
    assert_eq!(back.secondary, card.secondary);
}

#[test]
fn private_sections_never_leave_the_vault() {
    let text = "---\nkeywords: [Alice]\nemails: [a@example.com]\n---\n## who\nA colleague.\n\n## CORRESPONDENCE\nsecret draft\n\n## recent\nnews\n";
    let card = parse_card("Alice", Kind::People, text, &cfg()).unwrap();
    let out = export_world_info(&[card], &cfg());
    let s = out.to_string();
    assert!(!s.contains("secret draft") && !s.contains("CORRESPONDENCE"));
    assert!(
        !s.contains("a@example.com"),
        "extra frontmatter is not exported"
    );
    assert_eq!(
        out["entries"]["0"]["content"],
        json!("## who\nA colleague.\n\n## recent\nnews")
    );
}

#[test]
fn v2_character_card_book() {
    let card = json!({"spec": "chara_card_v2", "spec_version": "2.0", "data": {"name": "Seraphina",
    "character_book": {"name": "Eldoria", "entries": [
        {"id": 4, "keys": ["forest"], "secondary_keys": ["dark"], "content": "The forest.",
         "extensions": {"position": 4, "depth": 3, "selectiveLogic": 2, "match_whole_words": false,
                        "case_sensitive": true, "scan_depth": 4, "group": "g", "custom_tool": {"x": 1}},
         "enabled": false, "insertion_order": 90, "name": "Forest", "priority": 5,
         "comment": "", "selective": true, "constant": false, "position": "after_char"},
        {"keys": ["river"], "content": "The river.", "enabled": true, "insertion_order": 10,
         "position": "after_char", "extensions": {}}
    ]}}});
    let book = import(&card);
    assert_eq!(book.name.as_deref(), Some("Eldoria"));
    let f = &book.cards[0];
    assert_eq!(f.uid, "4", "V2 id is the uid");
    assert_eq!(book.cards[1].uid, "1", "else the list index");
    let c = &f.card;
    assert_eq!((c.key.as_str(), c.title.as_str()), ("Forest", "Forest"));
    assert_eq!(c.secondary.not, ["dark"]);
    assert!(!c.enabled);
    assert_eq!(
        (c.priority, c.scan_depth, c.case_sensitive),
        (90.0, Some(2), true)
    );
    assert_eq!(c.match_mode, MatchMode::Substring);
    let out = export_world_info(&[c.clone(), book.cards[1].card.clone()], &cfg());
    let e = &out["entries"]["4"];
    assert_eq!(
        e["position"],
        json!(4),
        "extension position wins over the string"
    );
    assert_eq!(
        (e["depth"].clone(), e["group"].clone()),
        (json!(3), json!("g"))
    );
    assert_eq!(e["extensions"], json!({"custom_tool": {"x": 1}}));
    assert_eq!(
        (e["disable"].clone(), e["order"].clone()),
        (json!(true), json!(90))
    );
    assert_eq!(out["entries"]["1"]["position"], json!(1), "after_char → 1");
    let bare = json!({"character_book": card["data"]["character_book"].clone()});
    assert_eq!(import(&bare).cards.len(), 2);
    let v3 = json!({"spec": "chara_card_v3", "data": {"character_book": {"entries": []}}});
    assert!(import(&v3).cards.is_empty());
}

#[test]
fn odd_entries_are_skipped_with_a_reason() {
    let book = json!({"entries": {
        "1": "not an object",
        "2": {"key": ["ok"], "content": "fine"},
        "3": {"key": [], "comment": "  ", "content": "orphan"},
        "4": {"key": ["x"], "content": {"nested": true}},
        "5": {"key": ["y"], "content": "y", "selectiveLogic": 9, "keysecondary": ["z"], "order": "high"}
    }});
    let b = import(&book);
    let reasons: Vec<(&str, &str)> = b
        .skipped
        .iter()
        .map(|s| (s.uid.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(reasons.len(), 3);
    assert_eq!(reasons[0], ("1", "entry is not an object"));
    assert_eq!(reasons[1], ("3", "no keys and no comment"));
    assert!(reasons[2].1.starts_with("content is not text"));
    assert_eq!(b.cards.len(), 2);
    let odd = &b.cards[1].card;
    assert_eq!(odd.secondary.any, ["z"]);
    assert_eq!(odd.warnings.len(), 2, "{:?}", odd.warnings);
}

#[test]
fn not_a_book() {
    for bad in [
        json!(3),
        json!({"entries": 3}),
        json!({"spec": "chara_card_v2", "data": {"name": "x"}}),
        json!({}),
    ] {
        assert!(import_world_info(&bad).is_err(), "{bad}");
    }
}

#[test]
fn keys_are_safe_and_unique() {
    let book = json!([
        {"key": ["a"], "comment": "../../etc/passwd", "content": "x"},
        {"key": ["b"], "comment": "Same", "content": "x"},
        {"key": ["c"], "comment": "same", "content": "x"},
        {"key": ["/re/"], "comment": "", "content": "x", "uid": 12}
    ]);
    let keys: Vec<String> = import(&book)
        .cards
        .into_iter()
        .map(|c| c.card.key)
        .collect();
    assert_eq!(keys, ["-.-etc-passwd", "Same", "same (2)", "entry-12"]);
}

#[test]
fn uids_are_unique() {
    let mut cards = import(&native_book())
        .cards
        .into_iter()
        .map(|c| c.card)
        .collect::<Vec<_>>();
    cards.push(cards[0].clone());
    cards.push(crate::cards::Card::new("fresh", Kind::Entry));
    let out = export_world_info(&cards, &cfg());
    let keys: Vec<&String> = out["entries"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["0", "7", "9", "1", "2"]);
    for (k, e) in out["entries"].as_object().unwrap() {
        assert_eq!(e["uid"].to_string(), *k);
    }
}

#[test]
fn scan_depth_and_null_overrides_round_trip() {
    let out = export_world_info(
        &import(&native_book())
            .cards
            .iter()
            .map(|c| c.card.clone())
            .collect::<Vec<_>>(),
        &cfg(),
    );
    let a = &out["entries"]["0"];
    assert_eq!(
        (a["scanDepth"].clone(), a["matchWholeWords"].clone()),
        (json!(5), json!(false))
    );
    let b = &out["entries"]["7"];
    assert_eq!(
        (
            b["scanDepth"].clone(),
            b["matchWholeWords"].clone(),
            b["caseSensitive"].clone()
        ),
        (Value::Null, Value::Null, Value::Null),
        "missing means inherit"
    );
    let mut card = import(&native_book()).cards.remove(0).card;
    card.scan_depth = Some(1);
    let out = export_world_info(&[card], &cfg());
    assert_eq!(
        out["entries"]["0"]["scanDepth"],
        json!(2),
        "a changed depth is recomputed"
    );
}
