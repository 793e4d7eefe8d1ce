//! `check` tests: every problem code, and a clean card that passes.

use std::collections::BTreeSet;

use super::*;

fn codes(key: &str, kind: Kind, text: &str) -> Vec<&'static str> {
    let known: BTreeSet<&str> = ["Bob", "Alice"].into();
    let problems = check_card(key, kind, text, &KindsConfig::default(), &|k| {
        known.contains(k)
    });
    for p in &problems {
        assert!(!p.message.is_empty());
        let first = p.message.chars().next().unwrap();
        assert!(first.is_lowercase(), "lowercase: {}", p.message);
    }
    problems.iter().map(|p| p.code.code()).collect()
}

#[test]
fn a_clean_card_passes() {
    let text = "---\nkeywords: [Alice]\nrefs: [Bob]\n---\n## who\nA colleague.\n";
    assert!(codes("Alice", Kind::People, text).is_empty());
}

#[test]
fn frontmatter_codes_are_reported_alone() {
    assert_eq!(codes("a", Kind::Entry, "no fm"), ["no_fm"]);
    assert_eq!(codes("a", Kind::Entry, "---\n: [\n---\n"), ["bad_fm"]);
    assert_eq!(codes("a", Kind::Entry, "---\nkeywords: [a\n"), ["bad_fm"]);
}

#[test]
fn every_lint_code() {
    assert_eq!(
        codes("a", Kind::Entry, "---\ntitle: a\n---\nbody\n"),
        ["no_kw"]
    );
    assert!(codes("a", Kind::Entry, "---\nconstant: true\n---\nbody\n").is_empty());
    assert_eq!(
        codes(
            "a",
            Kind::Entry,
            "---\nkeywords: [The, x, Alice, 林]\n---\nbody\n"
        ),
        ["generic_kw"]
    );
    assert_eq!(
        codes(
            "a",
            Kind::Entry,
            "---\nkeywords: [Al, 小林, /a/i]\nmatch: substring\n---\nbody\n"
        ),
        ["short_substring_kw"]
    );
    assert!(codes("a", Kind::Entry, "---\nkeywords: [Al]\n---\nbody\n").is_empty());
    assert_eq!(
        codes(
            "a",
            Kind::Entry,
            "---\nkeywords: [Alpha]\ntitle: Beta\n---\nbody\n"
        ),
        ["title_mismatch"]
    );
    assert_eq!(
        codes("a", Kind::Entry, "---\nkeywords: [Alpha]\n---\n  \n"),
        ["no_body"]
    );
    assert_eq!(
        codes(
            "a",
            Kind::People,
            "---\nkeywords: [Alpha]\n---\n## Correspondence\nsecret\n"
        ),
        ["private_only_body"]
    );
    assert_eq!(
        codes(
            "a",
            Kind::Entry,
            "---\nkeywords: [Alpha]\nrefs: [Bob, bob, Carol]\n---\nx\n"
        ),
        ["missing_ref"]
    );
    assert_eq!(
        codes(
            "a",
            Kind::Entry,
            "---\nkeywords: [Alpha]\nenabled: perhaps\n---\nx\n"
        ),
        ["fm_warning"]
    );
}

#[test]
fn missing_ref_names_the_keys() {
    let p = check_card(
        "a",
        Kind::Entry,
        "---\nkeywords: [Alpha]\nrefs: [Bob, Carol]\n---\nx\n",
        &KindsConfig::default(),
        &|k| k == "Bob",
    );
    assert_eq!(p.len(), 1);
    assert!(p[0].message.contains("Carol") && !p[0].message.contains("Bob"));
}
