//! Tests of long-term knowledge selection and rendering.
#![allow(clippy::unwrap_used)]

use lore_storage::memory::{Category, Entity, KnowledgeEntry};

use super::render::{delta, knowledge_block, stable};
use super::select::{baseline, changes, pin};
use super::*;

fn entry(
    id: &str,
    project: Option<&str>,
    category: Category,
    title: &str,
    content: &str,
    confidence: f32,
) -> KnowledgeEntry {
    KnowledgeEntry {
        id: id.into(),
        version: 1,
        project: project.map(str::to_string),
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

fn corpus() -> Vec<KnowledgeEntry> {
    vec![
        entry(
            "p1",
            Some("/a"),
            Category::Preference,
            "Tabs not spaces",
            "Indent with tabs.",
            0.9,
        ),
        entry(
            "p2",
            None,
            Category::Preference,
            "Short commits",
            "Keep commit messages under 72 chars.",
            1.0,
        ),
        entry(
            "d1",
            Some("/a"),
            Category::Decision,
            "Postgres over MySQL",
            "Chose Postgres for JSONB.",
            0.8,
        ),
        entry(
            "g1",
            Some("/a"),
            Category::Gotcha,
            "Flaky ledger test",
            "ledger_race fails at midnight.",
            0.9,
        ),
        entry(
            "x1",
            Some("/b"),
            Category::Pattern,
            "Other project pattern",
            "Not for /a.",
            0.9,
        ),
        entry(
            "a1",
            Some("/a"),
            Category::Architecture,
            "Three services",
            "api, worker, web.",
            0.7,
        ),
    ]
}

#[test]
fn signatures_ignore_cosmetics_but_not_content() {
    assert_eq!(
        signature("Tabs, not spaces", "Indent with tabs."),
        signature("tabs not spaces", "indent   with tabs")
    );
    assert_ne!(
        signature("Tabs not spaces", "Indent with tabs."),
        signature("Tabs not spaces", "Indent with spaces.")
    );
    let e = corpus().remove(0);
    assert_eq!(key_id(&key(&e)), "p1");
}

#[test]
fn the_baseline_is_scoped_and_ordered() {
    let entries = corpus();
    let entities = vec![Entity {
        id: "e1".into(),
        project: Some("/a".into()),
        entity_type: "person".into(),
        canonical_name: "Mira".into(),
        aliases: Vec::new(),
        description: "owns payments".into(),
        relations: Vec::new(),
        updated_at_ms: 1,
    }];
    let base = baseline(&entries, &entities, Some("/a"));
    assert_eq!(
        base.preferences
            .iter()
            .map(|e| e.id.as_str())
            .collect::<Vec<_>>(),
        ["p2", "p1"]
    );
    assert!(
        base.catalogue
            .iter()
            .all(|e| e.project.as_deref() == Some("/a"))
    );
    assert!(
        !base.catalogue.iter().any(|e| e.id == "x1"),
        "another project's entry"
    );
    let text = stable(&base.preferences, &base.entities, &base.catalogue, 2_000).unwrap();
    assert!(text.starts_with(render::CAPABILITY_NOTE));
    assert!(text.contains("**Short commits**: Keep commit messages under 72 chars."));
    assert!(text.contains("- Mira (person): owns payments"));
    assert!(text.contains("- [k:g1] Flaky ledger test (gotcha)"));
    let none = baseline(&entries, &[], Some("/nowhere"));
    assert_eq!(
        none.preferences.len(),
        1,
        "cross-project preferences hold everywhere"
    );
    assert!(stable(&[], &[], &[], 100).is_none());
}

#[test]
fn the_pin_follows_relevance_within_the_budget_and_never_reorders_bytes() {
    let entries = corpus();
    let candidates = vec![
        ("g1".to_string(), 0.9),
        ("d1".to_string(), 0.5),
        ("x1".to_string(), 1.0),
        ("p1".to_string(), 1.0),
    ];
    let pinned = pin(&entries, &candidates, Some("/a"), 2_000, &[]);
    let ids: Vec<&str> = pinned.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(
        ids,
        ["g1", "d1"],
        "preferences and other projects are not pinned"
    );
    let block = knowledge_block(&pinned);
    assert!(
        block.find("### decision").unwrap() < block.find("### gotcha").unwrap(),
        "{block}"
    );
    // Re-ranked candidates give the same bytes.
    let reranked = pin(
        &entries,
        &[("d1".into(), 0.9), ("g1".into(), 0.5)],
        Some("/a"),
        2_000,
        &[],
    );
    assert_eq!(knowledge_block(&reranked), block);
    // A tiny budget skips what does not fit and keeps packing.
    let small = pin(&entries, &candidates, Some("/a"), 20, &[]);
    assert!(small.len() <= 1);
    // Nothing relevant: the most confident project entries.
    let fallback = pin(&entries, &[], Some("/a"), 2_000, &[]);
    assert!(!fallback.is_empty());
    assert!(
        fallback
            .iter()
            .all(|e| e.project.as_deref() == Some("/a") && !is_preference(e))
    );
}

#[test]
fn changes_are_material_edits_and_new_relevant_entries() {
    let mut entries = corpus();
    let shown = vec![key(&entries[3])];
    assert!(changes(&entries, &[], &shown, Some("/a")).is_empty());
    entries[3].content = "ledger_race fails when the clock crosses midnight UTC.".into();
    let changed = changes(&entries, &[("d1".into(), 0.8)], &shown, Some("/a"));
    assert_eq!(changed.len(), 2);
    assert_eq!(key_id(&changed[0]), "g1");
    assert_eq!(key_id(&changed[1]), "d1");
    let text = delta(&[&entries[3], &entries[2]]);
    assert!(text.starts_with("## Long-term Knowledge"), "{text}");
}

#[test]
fn the_budget_follows_the_reference_grid() {
    assert_eq!(budget(150_000), 8_000);
    assert_eq!(budget(25_000), 4_800);
    assert_eq!(budget(500_000), 24_000);
    assert_eq!(budget(5_000), 0);
}
