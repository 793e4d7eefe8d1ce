//! Term matching: word boundaries, Unicode normalisation, scripts without spaces, regex keys.

use super::{card, fired, run, vault};
use crate::cards::{DropReason, MatchCard};

#[test]
fn al_is_a_whole_word() {
    let cards = vault();
    assert!(
        fired(&cards, "we saw a wallaby").is_empty(),
        "Al must not fire inside wallaby"
    );
    assert_eq!(fired(&cards, "Al said hi"), vec!["people/alice"]);
    assert_eq!(fired(&cards, "ask Al."), vec!["people/alice"]);
    assert_eq!(fired(&cards, "is that Al's laptop?"), vec!["people/alice"]);
    assert!(fired(&cards, "an Alpine trip").is_empty());
}

#[test]
fn substring_matching_is_an_opt_in() {
    let mut al = card("people/al", "Al");
    al.whole_word = false;
    assert_eq!(fired(&[al], "we saw a wallaby"), vec!["people/al"]);
}

#[test]
fn multi_word_terms_match_across_whitespace() {
    let cards = vault();
    assert_eq!(
        fired(&cards, "ping the Payments\n  Team"),
        vec!["people/alice"]
    );
    assert!(fired(&cards, "the payments teams").is_empty());
}

#[test]
fn accents_case_and_composition() {
    let cafe = card("places/cafe", "Café");
    assert_eq!(
        fired(std::slice::from_ref(&cafe), "meet at the café!"),
        vec!["places/cafe"]
    );
    assert_eq!(
        fired(std::slice::from_ref(&cafe), "MEET AT THE CAFÉ"),
        vec!["places/cafe"]
    );
    assert_eq!(
        fired(std::slice::from_ref(&cafe), "the cafe\u{301} again"),
        vec!["places/cafe"]
    );
    assert_eq!(
        fired(std::slice::from_ref(&cafe), "ｃａｆé time"),
        vec!["places/cafe"]
    );
    assert!(fired(std::slice::from_ref(&cafe), "a cafeteria").is_empty());
    assert!(fired(&[cafe], "the cafe").is_empty(), "no accent folding");
}

#[test]
fn sharp_s_folds_to_ss() {
    let street = card("places/street", "Hauptstraße");
    assert_eq!(
        fired(std::slice::from_ref(&street), "HAUPTSTRASSE 5"),
        vec!["places/street"]
    );
    assert_eq!(
        fired(std::slice::from_ref(&street), "hauptstrasse"),
        vec!["places/street"]
    );
    let upper = card("places/upper", "STRAẞE");
    assert_eq!(fired(&[upper], "die straße"), vec!["places/upper"]);
}

#[test]
fn case_sensitive_cards_skip_folding() {
    let mut go = card("things/go", "Go");
    go.case_sensitive = true;
    go.title = "Go language".into();
    assert_eq!(
        fired(std::slice::from_ref(&go), "written in Go"),
        vec!["things/go"]
    );
    assert!(fired(&[go], "let's go home").is_empty());
}

#[test]
fn cyrillic_and_hangul_names() {
    let natasha = card("people/natasha", "Наташа");
    assert_eq!(
        fired(std::slice::from_ref(&natasha), "НАТАША пришла."),
        vec!["people/natasha"]
    );
    assert!(
        fired(&[natasha], "Наташами").is_empty(),
        "whole words in Cyrillic"
    );
    let minsu = card("people/minsu", "민수");
    assert_eq!(
        fired(std::slice::from_ref(&minsu), "민수 씨 안녕"),
        vec!["people/minsu"]
    );
    assert_eq!(
        fired(std::slice::from_ref(&minsu), "민수가 왔다"),
        vec!["people/minsu"],
        "particles attach"
    );
    assert!(fired(&[minsu], "김민수가 왔다").is_empty(), "left-anchored");
}

#[test]
fn chinese_single_character_name_via_jieba() {
    let lin = card("people/lin", "林");
    assert_eq!(
        fired(std::slice::from_ref(&lin), "林说今天下雨"),
        vec!["people/lin"]
    );
    assert!(
        fired(std::slice::from_ref(&lin), "树林很大").is_empty(),
        "not inside 树林"
    );
    let xiaolin = card("people/xiaolin", "小林");
    assert_eq!(
        fired(std::slice::from_ref(&xiaolin), "小林呢"),
        vec!["people/xiaolin"]
    );
    let linlin = card("people/linlin", "林林");
    assert_eq!(fired(&[linlin], "今天和林林吃饭了"), vec!["people/linlin"]);
}

#[test]
fn japanese_terms_match_as_substrings() {
    let tanaka = card("people/tanaka", "田中");
    assert_eq!(
        fired(&[tanaka], "田中さんは来ますか"),
        vec!["people/tanaka"]
    );
}

#[test]
fn regex_keys() {
    let mut ticket = card("things/ticket", "/\\bPAY-\\d{3,}\\b/i");
    ticket.title = "Payment tickets".into();
    assert_eq!(
        fired(std::slice::from_ref(&ticket), "see pay-1234 for details"),
        vec!["things/ticket"]
    );
    assert!(fired(&[ticket], "see PAY-12").is_empty());
    let hit = run(&[card("things/r", "/al(ice)?/")], &[], "alice here");
    assert_eq!(hit.fired[0].hit_terms, vec!["/al(ice)?/"]);
}

#[test]
fn bad_regex_is_reported_not_fatal() {
    let mut broken = card("things/broken", "/(unclosed/");
    broken.title = "Broken".into();
    let cards = vec![broken, vault().remove(0)];
    let result = run(&cards, &[], "Broken Alice");
    assert_eq!(result.fired_keys(), vec!["people/alice"]);
    assert_eq!(
        result.drop_reason("things/broken"),
        Some(DropReason::BadRegex)
    );
    let detail = &result.dropped[0].detail;
    assert!(detail.starts_with("bad regex /(unclosed/"), "{detail}");
}

#[test]
fn blank_terms_are_rejected() {
    let mut blank = MatchCard::new("entry/blank", "entry", "  ", "body");
    blank.keywords = vec![" ".into(), String::new()];
    let result = run(&[blank], &[], "anything at all");
    assert!(result.fired.is_empty());
    assert_eq!(result.drop_reason("entry/blank"), Some(DropReason::NoTerms));
}
