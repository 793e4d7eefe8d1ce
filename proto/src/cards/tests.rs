//! Card format tests: parsing, forgiving fields, sections, private sections, rendering, keys and
//! `kinds.yaml`.

use proptest::prelude::*;

use super::*;

const ALICE: &str = "---
kind: people
title: Alice
keywords: [Alice, payments team]
aliases: [Al]
secondary:
  not: [Alice Cooper]
scan_depth: 3
refs: [Bob]
priority: 1
emails: [alice@example.com]
---
## who
Alice — works on the payments team, sits two desks away.

## stance
Friendly.

## Correspondence
Draft: ask about the reading group.

## hobbies
Climbing.

## recent
Took over the refund flow rewrite.
";

fn cfg() -> KindsConfig {
    KindsConfig::default()
}

fn parse(text: &str) -> Card {
    parse_card("Alice", Kind::People, text, &cfg()).unwrap()
}

#[test]
fn parses_the_readme_card() {
    let c = parse(ALICE);
    assert_eq!(c.title, "Alice");
    assert_eq!(c.keywords, ["Alice", "payments team"]);
    assert_eq!(c.aliases, ["Al"]);
    assert_eq!(c.secondary.not, ["Alice Cooper"]);
    assert_eq!(c.scan_depth, Some(3));
    assert_eq!(c.refs, ["Bob"]);
    assert_eq!(c.priority, 1.0);
    assert!(c.enabled && c.inject && !c.constant && !c.case_sensitive);
    assert_eq!(c.match_mode, MatchMode::WholeWord);
    assert_eq!(c.extra.len(), 1);
    assert!(c.extra.contains_key("emails"));
    assert_eq!(
        c.section("who"),
        Some("Alice — works on the payments team, sits two desks away.")
    );
    assert_eq!(
        c.section("recent"),
        Some("Took over the refund flow rewrite.")
    );
    // Section names are case-sensitive when splitting: "Correspondence" is an unknown heading.
    assert!(c.extra_sections.contains("## Correspondence"));
    assert!(c.extra_sections.contains("## hobbies\nClimbing."));
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn private_sections_are_stripped_case_insensitively() {
    let c = parse(ALICE);
    let eff = c.effective_body(&cfg());
    assert!(!eff.contains("reading group"));
    assert!(!eff.contains("Correspondence"));
    assert!(eff.contains("## hobbies"));
    assert!(eff.contains("refund flow"));
    assert!(c.body.contains("reading group"), "kept in the file");
}

#[test]
fn who_line_comes_from_the_who_section_capped() {
    let c = parse(ALICE);
    assert_eq!(
        c.who_line(&cfg()).as_deref(),
        Some("Alice — works on the payments team, sits two desks away.")
    );
    let long = format!(
        "---\nkeywords: [x]\n---\nhead line\n\n## who\n{}\n",
        "w".repeat(300)
    );
    let c = parse(&long);
    assert_eq!(
        c.who_line(&cfg()).unwrap().chars().count(),
        WHO_LINE_MAX_CHARS
    );
    let c = parse("---\nkeywords: [x]\n---\n\nfirst head line\nsecond\n## stance\nok\n");
    assert_eq!(c.who_line(&cfg()).as_deref(), Some("first head line"));
    let c = parse("---\nkeywords: [x]\n---\n## correspondence\nsecret\n## stance\nfriendly\n");
    assert_eq!(c.who_line(&cfg()).as_deref(), Some("friendly"));
    let e = parse_card(
        "e",
        Kind::Entry,
        "---\nkeywords: [x]\n---\n\n  Free text\n",
        &cfg(),
    );
    assert_eq!(e.unwrap().who_line(&cfg()).as_deref(), Some("Free text"));
}

#[test]
fn fences_are_line_anchored_and_bom_is_stripped() {
    let c = parse("\u{feff}---\ntitle: a --- b\nkeywords: x---y\n---\nbody --- text\n");
    assert_eq!(c.title, "a --- b");
    assert_eq!(c.keywords, ["x---y"]);
    assert_eq!(c.body, "body --- text\n");
    let c = parse("---  \r\nkeywords: [a]\r\n---\r\nbody\r\n");
    assert_eq!(c.keywords, ["a"]);
    assert_eq!(c.body, "body\r\n");
}

#[test]
fn frontmatter_problems() {
    let p = |t: &str| parse_card("k", Kind::Entry, t, &cfg()).unwrap_err();
    assert_eq!(p("no fences\n"), CardProblem::NoFrontmatter);
    assert_eq!(
        p("text\n---\nkeywords: a\n---\n"),
        CardProblem::NoFrontmatter
    );
    assert!(matches!(
        p("---\nkeywords: [a]\nbody\n"),
        CardProblem::BadFrontmatter(_)
    ));
    assert!(matches!(
        p("---\n- a\n- b\n---\n"),
        CardProblem::BadFrontmatter(_)
    ));
    assert!(matches!(
        p("---\nkeywords: [a\n---\n"),
        CardProblem::BadFrontmatter(_)
    ));
    let empty = parse_card("k", Kind::Entry, "---\n---\nbody\n", &cfg()).unwrap();
    assert!(empty.keywords.is_empty());
    assert_eq!(empty.title, "k");
}

#[test]
fn explicit_booleans_with_warnings() {
    let c = parse(
        "---\nkeywords: [a]\nenabled: no\ninject: OFF\nconstant: Yes\ncase_sensitive: on\n---\n",
    );
    assert!(!c.enabled && !c.inject && c.constant && c.case_sensitive);
    assert!(c.warnings.is_empty());
    let c = parse("---\nkeywords: [a]\nenabled: \"false\"\ninject: 0\n---\n");
    assert!(!c.enabled, "the string false disables");
    assert!(c.inject, "0 is not a boolean: default kept");
    assert_eq!(c.warnings.len(), 1);
    assert!(c.warnings[0].starts_with("inject:"));
    let c = parse("---\nkeywords: [a]\nenabled: maybe\n---\n");
    assert!(c.enabled);
    assert_eq!(c.warnings.len(), 1);
}

#[test]
fn forgiving_lists() {
    let c =
        parse("---\nkeywords: Alice, Bob，Carol、 Dan ,, Alice\naliases: \"[Al, 'Ally']\"\n---\n");
    assert_eq!(c.keywords, ["Alice", "Bob", "Carol", "Dan"]);
    assert_eq!(c.aliases, ["Al", "Ally"]);
    let c =
        parse("---\nkeywords: [true, \"  \", Alice, 3, 2.5, null, [x], {a: b}, '\"Bo\"']\n---\n");
    assert_eq!(c.keywords, ["Alice", "3", "2.5", "Bo"]);
    assert_eq!(c.warnings.len(), 3, "{:?}", c.warnings);
    let c = parse("---\nkeywords: 42\nrefs: {a: b}\naliases: false\n---\n");
    assert_eq!(c.keywords, ["42"]);
    assert!(c.refs.is_empty() && c.aliases.is_empty());
    assert_eq!(c.warnings.len(), 2);
}

#[test]
fn numeric_fields_fall_back() {
    let sd = |v: &str| parse(&format!("---\nkeywords: [a]\nscan_depth: {v}\n---\n")).scan_depth;
    assert_eq!(sd("\"3\""), Some(3));
    assert_eq!(sd("2.7"), Some(2));
    assert_eq!(sd("99"), Some(10));
    assert_eq!(sd("-4"), Some(0));
    assert_eq!(sd("null"), None);
    assert_eq!(sd("true"), None);
    assert_eq!(sd("lots"), None);
    let pr = |v: &str| parse(&format!("---\nkeywords: [a]\npriority: {v}\n---\n")).priority;
    assert_eq!(pr("2.5"), 2.5);
    assert_eq!(pr("\"-3\""), -3.0);
    assert_eq!(pr("high"), 0.0);
    assert_eq!(pr(".nan"), 0.0);
    let c = parse("---\nkeywords: [a]\nsecondary: [x]\nmatch: substring\n---\n");
    assert!(c.secondary.is_empty());
    assert_eq!(c.match_mode, MatchMode::Substring);
    let c = parse(
        "---\nkeywords: [a]\nsecondary: {all: x, not_all: 'y, z', maybe: [q]}\nmatch: fuzzy\n---\n",
    );
    assert_eq!(c.secondary.all, ["x"]);
    assert_eq!(c.secondary.not_all, ["y", "z"]);
    assert_eq!(c.warnings.len(), 2);
}

#[test]
fn sections_keep_unknown_and_repeated_headings() {
    let text = "---\nkeywords: [a]\n---\nintro\n## who\none\n### sub\nstill who\n## who\nagain\n## odd\nx\n";
    let c = parse(text);
    assert_eq!(c.head, "intro");
    assert_eq!(c.section("who"), Some("one\n### sub\nstill who"));
    assert_eq!(c.extra_sections, "## who\nagain\n\n## odd\nx");
    let rendered = c.render_sections(&cfg());
    assert_eq!(
        rendered,
        "intro\n\n## who\none\n### sub\nstill who\n\n## stance\n\n## recent\n\n## impression\n\n## who\nagain\n\n## odd\nx\n"
    );
    let e = parse_card("e", Kind::Entry, text, &cfg()).unwrap();
    assert!(e.sections.is_empty());
    assert!(e.head.starts_with("intro\n## who"));
}

#[test]
fn render_round_trips_and_orders_keys() {
    let c = parse(ALICE);
    let text = c.render();
    assert!(text.starts_with(
        "---\nkind: people\ntitle: Alice\nkeywords: [Alice, payments team]\naliases: [Al]\nsecondary:\n  not: [Alice Cooper]\nscan_depth: 3\nrefs: [Bob]\npriority: 1\nemails:"
    ));
    assert_eq!(parse(&text), c);
    let mut c2 = c.clone();
    c2.enabled = false;
    c2.inject = false;
    c2.constant = true;
    c2.match_mode = MatchMode::Substring;
    c2.case_sensitive = true;
    c2.priority = -2.25;
    c2.keywords = vec![
        "a, b".into(),
        "yes".into(),
        "12".into(),
        "/al(ice)?/i".into(),
        "#tag".into(),
    ];
    c2.title = "null".into();
    assert_eq!(parse(&c2.render()), c2);
}

#[test]
fn sync_body_normalises() {
    let mut c = parse(ALICE);
    c.sections.retain(|(n, _)| n != "stance");
    c.sync_body(&cfg());
    assert!(c.body.contains("## stance\n\n## recent"));
    assert_eq!(parse(&c.render()), c);
}

#[test]
fn safe_keys() {
    assert_eq!(
        safe_key("  the Friday deploy.md "),
        Ok("the Friday deploy".into())
    );
    assert_eq!(safe_key("林林"), Ok("林林".into()));
    assert_eq!(safe_key(" .md"), Err(KeyError::Empty));
    for bad in ["..", "a..b", "../x"] {
        assert!(safe_key(bad).is_err(), "{bad}");
    }
    assert!(matches!(safe_key("a/b"), Err(KeyError::Separator(_))));
    assert!(matches!(safe_key("a\\b"), Err(KeyError::Separator(_))));
    assert!(matches!(safe_key(".hidden"), Err(KeyError::LeadingDot(_))));
    assert!(matches!(safe_key("a\0b"), Err(KeyError::Control(_))));
    assert!(matches!(safe_key("a\u{7f}"), Err(KeyError::Control(_))));
    assert!(matches!(
        safe_key(&"x".repeat(201)),
        Err(KeyError::TooLong(201))
    ));
}

#[test]
fn kinds_yaml_overrides_and_fallbacks() {
    let (c, w) = KindsConfig::parse(
        "dirs: { people: personnes, event: evenements, entry: x, place: ../up }\n\
         sections: { people: [qui, relation, recent, impression], thing: [] }\n\
         recent_section: { people: recent, slang: nope }\n\
         who_section: { people: qui }\n\
         private_sections: [correspondance]\n\
         generic_keywords: [Truc]\n",
    );
    assert_eq!(c.kind_for_dir("personnes"), Kind::People);
    assert_eq!(c.kind_for_dir("people"), Kind::Entry);
    assert_eq!(c.kind_for_dir("places"), Kind::Place);
    assert_eq!(c.dir_for(Kind::Event), Some("evenements"));
    assert_eq!(c.dir_for(Kind::Entry), None);
    assert_eq!(c.sections(Kind::People)[0], "qui");
    assert_eq!(c.sections(Kind::Thing), ["what", "usage", "recent"]);
    assert_eq!(c.who_section(Kind::People), Some("qui"));
    assert_eq!(c.recent_section(Kind::Slang), None);
    assert!(c.is_private("Correspondance") && !c.is_private("correspondence"));
    assert!(c.is_generic("truc") && c.is_generic("The"));
    assert_eq!(w.len(), 4, "{w:?}");
    let (d, w) = KindsConfig::parse("[not, a, mapping]");
    assert_eq!(d, KindsConfig::default());
    assert_eq!(w.len(), 1);
    let (d, w) = KindsConfig::parse("dirs: {people: [unclosed");
    assert_eq!(d, KindsConfig::default());
    assert_eq!(w.len(), 1);
    let (d, w) = KindsConfig::parse("");
    assert_eq!((d, w.len()), (KindsConfig::default(), 0));
    let (d, _) = KindsConfig::parse("private_sections: []\nrecent_section: {people: null}");
    assert!(d.private_sections.is_empty());
    assert_eq!(d.recent_section(Kind::People), None);
}

#[test]
fn kind_names() {
    for k in Kind::ALL {
        assert_eq!(Kind::parse(k.as_str()), Some(k));
    }
    assert_eq!(Kind::Event.dir(), Some("events"));
    assert_eq!(Kind::Entry.dir(), None);
}

fn word() -> impl Strategy<Value = String> {
    "[A-Za-z0-9 ,:#'\"\\-\\[\\]林é]{1,12}"
        .prop_filter("usable", |s| {
            let t = s.trim();
            !t.is_empty() && t == super::fields::strip_quotes(t)
        })
        .prop_map(|s| s.trim().to_owned())
}

fn words() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(word(), 0..4).prop_map(|mut v| {
        let mut seen = Vec::new();
        v.retain(|x| {
            let new = !seen.contains(x);
            seen.push(x.clone());
            new
        });
        v
    })
}

proptest! {
    #[test]
    fn render_parse_round_trip(
        title in word(), keywords in words(), aliases in words(), all in words(), not_all in words(),
        depth in prop::option::of(0u8..=10), priority in -1000i32..1000, flags in any::<[bool; 5]>(),
        body in "[a-z #\n]{0,40}",
    ) {
        let config = KindsConfig::default();
        let mut c = Card::new("k", Kind::Thing);
        c.title = title;
        c.keywords = keywords;
        c.aliases = aliases;
        c.secondary.all = all;
        c.secondary.not_all = not_all;
        c.scan_depth = depth;
        c.priority = f64::from(priority) / 4.0;
        c.enabled = flags[0];
        c.inject = flags[1];
        c.constant = flags[2];
        c.case_sensitive = flags[3];
        c.match_mode = if flags[4] { MatchMode::Substring } else { MatchMode::WholeWord };
        c.extra.insert("st".into(), yaml_serde::to_value(serde_json::json!({"uid": 3, "x": "yes"})).unwrap());
        c.set_body(&body, &config);
        let back = parse_card("k", Kind::Thing, &c.render(), &config).unwrap();
        prop_assert_eq!(back, c);
    }
}
