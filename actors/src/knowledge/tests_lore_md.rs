//! Tests of the `.lore.md` format: stable rendering, parsing, problems with lines, round trips.

#![allow(clippy::unwrap_used)]

use lore_storage::memory::{Category, KnowledgeEntry};
use proptest::prelude::*;

use super::lore_md::{ParsedEntry, parse, render};

fn entry(
    id: &str,
    category: Category,
    title: &str,
    content: &str,
    confidence: f32,
) -> KnowledgeEntry {
    KnowledgeEntry {
        id: id.into(),
        version: 1,
        project: Some("/p".into()),
        category,
        title: title.into(),
        content: content.into(),
        confidence,
        source_session: None,
        updated_by: "curator".into(),
        created_at_ms: 1,
        updated_at_ms: 1,
        deleted: false,
    }
}

fn sample() -> Vec<KnowledgeEntry> {
    vec![
        entry(
            "id-3",
            Category::Gotcha,
            "Refunds race",
            "The ledger\nlocks late.",
            0.8,
        ),
        entry(
            "id-1",
            Category::Decision,
            "use sled",
            "We chose sled.",
            0.9,
        ),
        entry(
            "id-2",
            Category::Decision,
            "Avoid SQLite",
            "Too slow here.",
            1.0,
        ),
        entry("id-4", Category::Preference, "Tests", "nextest", 0.854),
    ]
}

#[test]
fn render_lists_sections_in_order_with_sorted_entries() {
    let text = render(&sample());
    let expected = "# Project knowledge\n\n".to_string()
        + super::lore_md::INTRO
        + "\n\n## Decisions\n\n### Avoid SQLite\n<!-- lore:id-2 confidence:1.00 -->\nToo slow here.\n\n### use sled\n<!-- lore:id-1 confidence:0.90 -->\nWe chose sled.\n\n## Preferences\n\n### Tests\n<!-- lore:id-4 confidence:0.85 -->\nnextest\n\n## Gotchas\n\n### Refunds race\n<!-- lore:id-3 confidence:0.80 -->\nThe ledger\nlocks late.\n";
    assert_eq!(text, expected);
}

#[test]
fn rendering_is_byte_stable_and_local() {
    let entries = sample();
    let first = render(&entries);
    let mut shuffled = entries.clone();
    shuffled.reverse();
    assert_eq!(render(&shuffled), first);
    let mut changed = entries.clone();
    changed[1].content = "We chose sled, for its speed.".into();
    let second = render(&changed);
    let a: Vec<&str> = first.lines().collect();
    let b: Vec<&str> = second.lines().collect();
    assert_eq!(a.len(), b.len());
    let differing: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    assert_eq!(differing.len(), 1);
    assert_eq!(b[differing[0]], "We chose sled, for its speed.");
}

#[test]
fn forgotten_entries_are_not_rendered_and_no_entries_give_just_the_header() {
    let mut gone = sample();
    for entry in &mut gone {
        entry.deleted = true;
    }
    let text = render(&gone);
    assert_eq!(
        text,
        format!("# Project knowledge\n\n{}\n", super::lore_md::INTRO)
    );
    assert_eq!(parse(&text).unwrap(), Vec::<ParsedEntry>::new());
}

#[test]
fn a_hand_written_file_parses() {
    let text = "# Project knowledge\r\n\r\nintro text is ignored\r\n<!-- a\ncomment -->\n\n## decisions\n\n### Use sled ##\n<!-- lore:abc confidence:0.7 -->\nBecause.\n\nMore.\n\n### New one\nAdded by hand.\n### With confidence only\n<!-- lore: confidence:0.5 -->\ntext\n## Gotcha\n### G\n\\## not a heading\n";
    let parsed = parse(text).unwrap();
    assert_eq!(
        parsed,
        vec![
            ParsedEntry {
                id: Some("abc".into()),
                category: Category::Decision,
                title: "Use sled".into(),
                content: "Because.\n\nMore.".into(),
                confidence: Some(0.7),
                line: 9,
            },
            ParsedEntry {
                id: None,
                category: Category::Decision,
                title: "New one".into(),
                content: "Added by hand.".into(),
                confidence: None,
                line: 15,
            },
            ParsedEntry {
                id: None,
                category: Category::Decision,
                title: "With confidence only".into(),
                content: "text".into(),
                confidence: Some(0.5),
                line: 17,
            },
            ParsedEntry {
                id: None,
                category: Category::Gotcha,
                title: "G".into(),
                content: "## not a heading".into(),
                confidence: None,
                line: 21,
            },
        ]
    );
}

fn problems(text: &str) -> Vec<(usize, String)> {
    parse(text)
        .unwrap_err()
        .into_iter()
        .map(|p| (p.line, p.message))
        .collect()
}

#[test]
fn every_problem_is_reported_with_its_line() {
    let text = "# Project knowledge\n### Orphan\ntext\n## Decisions\nstray text\n### \ntext\n### No text\n<!-- lore:a -->\n\n## Recipes\n### R\nx\n## Patterns\n### Bad marker\n<!-- lore:b confidence:2 -->\nx\n### Unclosed\n<!-- lore:c\nx\n### Twice\n<!-- lore:a -->\nx\n### Late marker\nx\n<!-- lore:d -->\n";
    let found = problems(text);
    let lines: Vec<usize> = found.iter().map(|(line, _)| *line).collect();
    assert_eq!(lines, [2, 5, 6, 8, 11, 16, 19, 22, 26], "{found:#?}");
    assert!(found[0].1.contains("before any section"));
    assert!(found[1].1.contains("belongs to no entry"));
    assert!(found[2].1.contains("no title"));
    assert!(found[3].1.contains("has no text"));
    assert!(found[4].1.contains("`## Recipes` is not a section"));
    assert!(found[5].1.contains("confidence `2`"));
    assert!(found[6].1.contains("-->"));
    assert!(found[7].1.contains("also used on line 9"));
    assert!(found[8].1.contains("right under its entry's title"));
}

#[test]
fn content_that_looks_like_structure_survives_a_round_trip() {
    let tricky = "## Not a section\n### Not an entry\n<!-- lore:x -->\n\\## escaped already\n\\\\### twice\n#### deep heading stays";
    let entries = vec![entry("id", Category::Pattern, "Tricky", tricky, 0.5)];
    let parsed = parse(&render(&entries)).unwrap();
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].content, tricky);
}

fn line_text() -> impl Strategy<Value = String> {
    // Words of letters, digits and punctuation: no headings, markers or surrounding spaces.
    prop::collection::vec("[a-zA-Z0-9éß.,;:!?()'\"`*_-]{1,8}", 1..6).prop_map(|w| w.join(" "))
}

fn content_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![line_text(), Just(String::new())], 1..5).prop_map(|lines| {
        let text = lines.join("\n");
        let trimmed = text.trim();
        if trimmed.is_empty() {
            "x".to_string()
        } else {
            trimmed.to_string()
        }
    })
}

fn generated() -> impl Strategy<Value = Vec<KnowledgeEntry>> {
    prop::collection::vec((0..5usize, line_text(), content_text(), 0..=100u32), 0..8).prop_map(
        |rows| {
            rows.into_iter()
                .enumerate()
                .map(|(i, (category, title, content, confidence))| {
                    entry(
                        &format!("0190-{i:04}"),
                        Category::ALL[category],
                        &title,
                        &content,
                        confidence as f32 / 100.0,
                    )
                })
                .collect()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn parse_gives_back_what_render_wrote(entries in generated()) {
        let text = render(&entries);
        let parsed = parse(&text).map_err(|p| TestCaseError::fail(format!("{p:?}\n{text}")))?;
        prop_assert_eq!(parsed.len(), entries.len());
        for original in &entries {
            let back = parsed
                .iter()
                .find(|p| p.id.as_deref() == Some(original.id.as_str()))
                .ok_or_else(|| TestCaseError::fail(format!("{} lost", original.id)))?;
            prop_assert_eq!(back.category, original.category);
            prop_assert_eq!(&back.title, &original.title);
            prop_assert_eq!(&back.content, &original.content);
            let confidence = back.confidence.unwrap_or(-1.0);
            prop_assert!((confidence - original.confidence).abs() < 0.005);
        }
        prop_assert_eq!(render(&entries), text);
    }
}
