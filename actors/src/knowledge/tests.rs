//! Tests of the write rules: limits, near-duplicates, updates, forgetting, listing.

#![allow(clippy::unwrap_used)]

use lore_storage::Store;
use lore_storage::memory::{Category, KnowledgeEntry};

use super::limits::{MAX_CONTENT_CHARS, MAX_TITLE_CHARS};
use super::*;
use crate::error::ActorError;

pub(crate) fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

pub(crate) fn draft(project: Option<&str>, title: &str, content: &str) -> Draft {
    Draft {
        category: Category::Decision,
        title: title.into(),
        content: content.into(),
        project: project.map(str::to_string),
        confidence: 0.9,
        source_session: None,
    }
}

fn created(change: Change) -> KnowledgeEntry {
    match change {
        Change::Created(entry) => entry,
        other => panic!("expected a new entry, got {other:?}"),
    }
}

#[test]
fn a_new_title_creates_version_one() {
    let (_dir, store) = store();
    let entry = created(
        create_or_merge(
            &store,
            draft(Some("/p"), "  Use sled  ", " because \n"),
            "curator",
            None,
        )
        .unwrap(),
    );
    assert_eq!(entry.version, 1);
    assert_eq!(entry.title, "Use sled");
    assert_eq!(entry.content, "because");
    assert_eq!(entry.updated_by, "curator");
    assert_eq!(store.knowledge_entry(&entry.id).unwrap(), Some(entry));
}

#[test]
fn an_equal_title_in_the_same_project_is_rewritten() {
    let (_dir, store) = store();
    let first = created(
        create_or_merge(&store, draft(Some("/p"), "Use sled", "v1"), "curator", None).unwrap(),
    );
    let mut next = draft(Some("/p"), " USE SLED ", "v2");
    next.category = Category::Architecture;
    next.confidence = 0.6;
    let Change::Updated { before, after } = create_or_merge(&store, next, "import", None).unwrap()
    else {
        panic!("expected an update");
    };
    assert_eq!(before, first);
    assert_eq!(after.id, first.id);
    assert_eq!(after.version, 2);
    assert_eq!(after.title, "USE SLED");
    assert_eq!(after.content, "v2");
    assert_eq!(after.category, Category::Architecture);
    assert!((after.confidence - 0.6).abs() < f32::EPSILON);
    assert_eq!(after.updated_by, "import");
    assert_eq!(store.knowledge_history(&first.id).unwrap(), vec![first]);
}

#[test]
fn other_projects_and_global_entries_are_not_duplicates() {
    let (_dir, store) = store();
    created(create_or_merge(&store, draft(Some("/p"), "Use sled", "a"), "curator", None).unwrap());
    created(create_or_merge(&store, draft(Some("/q"), "Use sled", "b"), "curator", None).unwrap());
    created(create_or_merge(&store, draft(None, "Use sled", "c"), "curator", None).unwrap());
    assert!(matches!(
        create_or_merge(&store, draft(None, "use sled", "d"), "curator", None).unwrap(),
        Change::Updated { .. }
    ));
    assert_eq!(store.all_knowledge().unwrap().len(), 3);
}

#[test]
fn word_overlap_merges_only_titles_of_four_words_or_more() {
    let (_dir, store) = store();
    let long = created(
        create_or_merge(
            &store,
            draft(Some("/p"), "Run the integration tests with nextest", "a"),
            "curator",
            None,
        )
        .unwrap(),
    );
    // 6 shared words of 7: 0.86.
    let change = create_or_merge(
        &store,
        draft(
            Some("/p"),
            "Run the integration tests with cargo nextest",
            "b",
        ),
        "curator",
        None,
    )
    .unwrap();
    assert_eq!(change.entry().id, long.id);
    assert!(matches!(change, Change::Updated { .. }));
    // 4 shared words of 8: 0.5, a different entry.
    let other = create_or_merge(
        &store,
        draft(Some("/p"), "Run the unit tests without any nextest", "c"),
        "curator",
        None,
    )
    .unwrap();
    assert!(matches!(other, Change::Created(_)));
    // Short titles never merge by overlap: "Use sled now" vs "Use sled" share 2 of 3.
    created(create_or_merge(&store, draft(Some("/p"), "Use sled", "d"), "curator", None).unwrap());
    let short = create_or_merge(
        &store,
        draft(Some("/p"), "Use sled now", "e"),
        "curator",
        None,
    )
    .unwrap();
    assert!(matches!(short, Change::Created(_)));
}

#[test]
fn the_similar_id_is_merged_into_unless_it_is_unknown_or_forgotten() {
    let (_dir, store) = store();
    let target = created(
        create_or_merge(
            &store,
            draft(Some("/p"), "Pin the toolchain", "a"),
            "curator",
            None,
        )
        .unwrap(),
    );
    let change = create_or_merge(
        &store,
        draft(Some("/p"), "Rust version is fixed", "b"),
        "curator",
        Some(&target.id),
    )
    .unwrap();
    assert_eq!(change.entry().id, target.id);
    assert_eq!(change.entry().title, "Rust version is fixed");
    let unknown = create_or_merge(
        &store,
        draft(Some("/p"), "Something else", "c"),
        "curator",
        Some("no-such-id"),
    )
    .unwrap();
    assert!(matches!(unknown, Change::Created(_)));
    forget(&store, &target.id, "user").unwrap();
    let after_forget = create_or_merge(
        &store,
        draft(Some("/p"), "Yet another", "d"),
        "curator",
        Some(&target.id),
    )
    .unwrap();
    assert!(matches!(after_forget, Change::Created(_)));
}

#[test]
fn a_write_that_changes_nothing_writes_nothing() {
    let (_dir, store) = store();
    let entry = created(
        create_or_merge(
            &store,
            draft(Some("/p"), "Use sled", "why"),
            "curator",
            None,
        )
        .unwrap(),
    );
    let again = create_or_merge(
        &store,
        draft(Some("/p"), "Use sled", " why "),
        "import",
        None,
    )
    .unwrap();
    assert_eq!(again, Change::Unchanged(entry.clone()));
    let same = update(
        &store,
        &entry.id,
        Some("Use sled".into()),
        None,
        Some(0.9),
        "user",
    )
    .unwrap();
    assert_eq!(same, Change::Unchanged(entry.clone()));
    assert_eq!(
        store.knowledge_entry(&entry.id).unwrap().unwrap().version,
        1
    );
    assert!(store.knowledge_history(&entry.id).unwrap().is_empty());
}

#[test]
fn limits_apply_to_every_write() {
    let (_dir, store) = store();
    let long_title = "é".repeat(200);
    let long_content = format!("  {}  ", "x".repeat(2_000));
    let mut wild = draft(Some("/p"), &long_title, &long_content);
    wild.confidence = f32::NAN;
    let entry = created(create_or_merge(&store, wild, "curator", None).unwrap());
    assert_eq!(entry.title.chars().count(), MAX_TITLE_CHARS);
    assert_eq!(entry.content.chars().count(), MAX_CONTENT_CHARS);
    assert!(entry.content.ends_with('…'));
    assert!((entry.confidence - 0.8).abs() < f32::EPSILON);
    let Change::Updated { after, .. } =
        update(&store, &entry.id, None, None, Some(7.0), "user").unwrap()
    else {
        panic!("expected an update");
    };
    assert!((after.confidence - 1.0).abs() < f32::EPSILON);
    let low = update(&store, &entry.id, None, None, Some(-1.0), "user").unwrap();
    assert!(low.entry().confidence.abs() < f32::EPSILON);
    let multi = update(&store, &entry.id, Some("a\n  b".into()), None, None, "user").unwrap();
    assert_eq!(multi.entry().title, "a b");
}

#[test]
fn empty_titles_and_contents_are_refused_and_nothing_is_written() {
    let (_dir, store) = store();
    let err = create_or_merge(&store, draft(None, "  ", "x"), "curator", None).unwrap_err();
    assert!(
        matches!(&err, ActorError::Invalid(m) if m.contains("needs a title")),
        "{err}"
    );
    let err = create_or_merge(&store, draft(None, "t", "\n "), "curator", None).unwrap_err();
    assert!(
        matches!(&err, ActorError::Invalid(m) if m.contains("needs content")),
        "{err}"
    );
    assert!(store.all_knowledge().unwrap().is_empty());
    let entry = created(create_or_merge(&store, draft(None, "t", "x"), "curator", None).unwrap());
    assert!(update(&store, &entry.id, None, Some(" ".into()), None, "user").is_err());
    assert_eq!(store.knowledge_entry(&entry.id).unwrap(), Some(entry));
}

#[test]
fn update_rewrites_named_fields_and_refuses_unknown_ids() {
    let (_dir, store) = store();
    let entry = created(
        create_or_merge(&store, draft(Some("/p"), "Use sled", "v1"), "curator", None).unwrap(),
    );
    let Change::Updated { before, after } =
        update(&store, &entry.id, None, Some("v2".into()), None, "user").unwrap()
    else {
        panic!("expected an update");
    };
    assert_eq!(before.content, "v1");
    assert_eq!((after.content.as_str(), after.version), ("v2", 2));
    assert_eq!(after.title, "Use sled");
    assert_eq!(after.updated_by, "user");
    let err = update(&store, "nope", None, Some("x".into()), None, "user").unwrap_err();
    assert!(
        matches!(&err, ActorError::NotFound(m) if m.contains("lore knowledge list")),
        "{err}"
    );
}

#[test]
fn forget_is_a_soft_delete_with_history() {
    let (_dir, store) = store();
    let entry = created(
        create_or_merge(&store, draft(Some("/p"), "Use sled", "v1"), "curator", None).unwrap(),
    );
    let Change::Deleted(gone) = forget(&store, &entry.id, "user").unwrap() else {
        panic!("expected a deletion");
    };
    assert!(gone.deleted);
    assert_eq!(gone.version, 2);
    assert_eq!(gone.updated_by, "user");
    assert_eq!(
        store.knowledge_history(&entry.id).unwrap(),
        vec![entry.clone()]
    );
    assert!(live_entries(&store, None, true).unwrap().is_empty());
    assert!(matches!(
        forget(&store, &entry.id, "user"),
        Err(ActorError::NotFound(_))
    ));
    assert!(matches!(
        update(&store, &entry.id, None, Some("x".into()), None, "user"),
        Err(ActorError::NotFound(_))
    ));
    // A forgotten title is free again.
    let again =
        create_or_merge(&store, draft(Some("/p"), "Use sled", "v3"), "curator", None).unwrap();
    assert!(matches!(again, Change::Created(_)));
}

#[test]
fn live_entries_filter_by_project_and_sort_by_category_then_title() {
    let (_dir, store) = store();
    let add = |project: Option<&str>, category: Category, title: &str| {
        let mut d = draft(project, title, "text");
        d.category = category;
        create_or_merge(&store, d, "curator", None)
            .unwrap()
            .entry()
            .clone()
    };
    add(Some("/p"), Category::Gotcha, "zeta");
    add(Some("/p"), Category::Decision, "beta");
    add(Some("/p"), Category::Decision, "Alpha");
    add(None, Category::Pattern, "global");
    add(Some("/q"), Category::Decision, "other project");
    let titles =
        |entries: Vec<KnowledgeEntry>| entries.into_iter().map(|e| e.title).collect::<Vec<_>>();
    assert_eq!(
        titles(live_entries(&store, Some("/p"), false).unwrap()),
        ["Alpha", "beta", "zeta"]
    );
    assert_eq!(
        titles(live_entries(&store, Some("/p"), true).unwrap()),
        ["Alpha", "beta", "global", "zeta"]
    );
    assert_eq!(live_entries(&store, None, false).unwrap().len(), 5);
}

#[test]
fn ids_resolve_from_unique_prefixes() {
    let (_dir, store) = store();
    let a = create_or_merge(&store, draft(None, "a", "x"), "curator", None).unwrap();
    let a = a.entry().clone();
    assert_eq!(resolve_id(&store, &a.id).unwrap(), a);
    assert_eq!(resolve_id(&store, &a.id[..13]).unwrap(), a);
    assert!(matches!(
        resolve_id(&store, "zzz"),
        Err(ActorError::NotFound(_))
    ));
    assert!(matches!(
        resolve_id(&store, " "),
        Err(ActorError::Invalid(_))
    ));
    let b = create_or_merge(&store, draft(None, "b", "x"), "curator", None).unwrap();
    // Both UUIDv7 ids start with the same time prefix.
    let shared: String =
        a.id.chars()
            .zip(b.entry().id.chars())
            .take_while(|(x, y)| x == y)
            .map(|(x, _)| x)
            .collect();
    if !shared.is_empty() {
        let err = resolve_id(&store, &shared).unwrap_err();
        assert!(
            matches!(&err, ActorError::Invalid(m) if m.contains("give more")),
            "{err}"
        );
    }
}

mod lore_md_fuzz {
    //! Fuzzing of `.lore.md` parsing: token soups of the format's own syntax and mutated valid
    //! files; every input gives entries or line-numbered problems, never a panic, within 2 s.
    //! `LORE_FUZZ_CASES` sets the cases (256 by default).
    use proptest::prelude::*;

    const TOKENS: &[&str] = &[
        "# ",
        "## ",
        "### ",
        "\n",
        "\r\n",
        "<!-- lore:",
        " confidence:",
        "0.5",
        "1.7",
        "-3",
        "NaN",
        " -->",
        "<!--",
        "-->",
        "Decision",
        "Gotcha",
        "Preference",
        "Pattern",
        "title",
        "content line",
        "```",
        "\t",
        "  ",
        "k:0190abcd",
        ":",
        "\u{0}",
        "é",
    ];

    fn cases() -> u32 {
        std::env::var("LORE_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(256)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn lore_md_parsing_never_panics(
            pieces in prop::collection::vec(
                prop_oneof![
                    4 => prop::sample::select(TOKENS).prop_map(str::to_string),
                    1 => "\\PC{0,12}",
                ],
                0..120,
            ),
        ) {
            let text = pieces.concat();
            let started = std::time::Instant::now();
            match crate::knowledge::lore_md::parse(&text) {
                Ok(_) => {}
                Err(problems) => {
                    prop_assert!(!problems.is_empty());
                    for problem in &problems {
                        prop_assert!(problem.line >= 1, "{problem:?}");
                    }
                }
            }
            prop_assert!(started.elapsed() < std::time::Duration::from_secs(2));
        }
    }
}
