//! Tests of import and export: all or nothing, matching by marker, merging, forgetting.

#![allow(clippy::unwrap_used)]

use lore_storage::memory::Category;

use super::tests::{draft, store};
use super::*;

#[test]
fn export_then_import_changes_nothing() {
    let (_dir, store) = store();
    create_or_merge(
        &store,
        draft(Some("/p"), "Use sled", "why"),
        "curator",
        None,
    )
    .unwrap();
    create_or_merge(&store, draft(Some("/q"), "Elsewhere", "x"), "curator", None).unwrap();
    create_or_merge(&store, draft(None, "Global", "x"), "curator", None).unwrap();
    let text = export(&store, "/p").unwrap();
    assert!(
        text.contains("### Use sled") && !text.contains("Elsewhere") && !text.contains("Global")
    );
    let summary = import(&store, "/p", &text).unwrap();
    assert_eq!(
        (
            summary.created,
            summary.updated,
            summary.deleted,
            summary.unchanged
        ),
        (0, 0, 0, 1)
    );
    assert_eq!(export(&store, "/p").unwrap(), text);
}

#[test]
fn edits_deletions_and_additions_are_applied() {
    let (_dir, store) = store();
    let keep =
        create_or_merge(&store, draft(Some("/p"), "Use sled", "v1"), "curator", None).unwrap();
    let drop =
        create_or_merge(&store, draft(Some("/p"), "Old habit", "x"), "curator", None).unwrap();
    let moved = create_or_merge(&store, draft(Some("/p"), "Moves", "x"), "curator", None).unwrap();
    let other = create_or_merge(&store, draft(Some("/q"), "Other", "x"), "curator", None).unwrap();
    let text = format!(
        "# Project knowledge\n\n## Decisions\n\n### Use sled\n<!-- lore:{} confidence:0.90 -->\nv2, edited\n\n### Brand new\nadded by hand\n\n### Copied from elsewhere\n<!-- lore:{} confidence:0.40 -->\nx\n\n## Gotchas\n\n### Moves\n<!-- lore:{} confidence:0.90 -->\nx\n",
        keep.entry().id,
        other.entry().id,
        moved.entry().id
    );
    let summary = import(&store, "/p", &text).unwrap();
    assert_eq!(
        (
            summary.created,
            summary.updated,
            summary.deleted,
            summary.unchanged
        ),
        (2, 2, 1, 0)
    );
    let edited = store.knowledge_entry(&keep.entry().id).unwrap().unwrap();
    assert_eq!(
        (
            edited.content.as_str(),
            edited.version,
            edited.updated_by.as_str()
        ),
        ("v2, edited", 2, "import")
    );
    assert_eq!(
        store.knowledge_history(&keep.entry().id).unwrap()[0].content,
        "v1"
    );
    let gone = store.knowledge_entry(&drop.entry().id).unwrap().unwrap();
    assert!(gone.deleted && gone.updated_by == "import");
    assert_eq!(
        store
            .knowledge_entry(&moved.entry().id)
            .unwrap()
            .unwrap()
            .category,
        Category::Gotcha
    );
    // The other project's entry is untouched; its copy is a new entry of this project.
    assert_eq!(
        store.knowledge_entry(&other.entry().id).unwrap().unwrap(),
        other.entry().clone()
    );
    let live = live_entries(&store, Some("/p"), false).unwrap();
    let titles: Vec<&str> = live.iter().map(|e| e.title.as_str()).collect();
    assert_eq!(
        titles,
        ["Brand new", "Copied from elsewhere", "Use sled", "Moves"]
    );
    let added = live.iter().find(|e| e.title == "Brand new").unwrap();
    assert!((added.confidence - 0.9).abs() < f32::EPSILON);
    let copied = live
        .iter()
        .find(|e| e.title == "Copied from elsewhere")
        .unwrap();
    assert!((copied.confidence - 0.4).abs() < f32::EPSILON);
    assert_ne!(copied.id, other.entry().id);
}

#[test]
fn an_added_entry_merges_into_an_unclaimed_duplicate_not_a_claimed_one() {
    let (_dir, store) = store();
    let claimed =
        create_or_merge(&store, draft(Some("/p"), "Use sled", "v1"), "curator", None).unwrap();
    let lost_marker = create_or_merge(
        &store,
        draft(Some("/p"), "Pin the toolchain", "v1"),
        "curator",
        None,
    )
    .unwrap();
    let text = format!(
        "## Decisions\n### Use sled\n<!-- lore:{} confidence:0.90 -->\nv1\n### use sled\nsecond entry\n### Pin the toolchain\nmarker was deleted\n",
        claimed.entry().id
    );
    let summary = import(&store, "/p", &text).unwrap();
    assert_eq!(
        (
            summary.created,
            summary.updated,
            summary.deleted,
            summary.unchanged
        ),
        (1, 1, 0, 1)
    );
    let merged = store
        .knowledge_entry(&lost_marker.entry().id)
        .unwrap()
        .unwrap();
    assert_eq!(
        (merged.content.as_str(), merged.version),
        ("marker was deleted", 2)
    );
    assert_eq!(live_entries(&store, Some("/p"), false).unwrap().len(), 3);
}

#[test]
fn a_confidence_that_reads_the_same_is_not_a_change() {
    let (_dir, store) = store();
    let mut precise = draft(Some("/p"), "Precise", "x");
    precise.confidence = 0.876;
    create_or_merge(&store, precise, "curator", None).unwrap();
    let text = export(&store, "/p").unwrap();
    assert!(text.contains("confidence:0.88"));
    let summary = import(&store, "/p", &text).unwrap();
    assert_eq!(summary.unchanged, 1);
    let changed = import(
        &store,
        "/p",
        &text.replace("confidence:0.88", "confidence:0.50"),
    )
    .unwrap();
    assert_eq!(changed.updated, 1);
    assert!((changed.changes[0].entry().confidence - 0.5).abs() < f32::EPSILON);
}

#[test]
fn a_file_with_problems_writes_nothing() {
    let (_dir, store) = store();
    create_or_merge(&store, draft(Some("/p"), "Use sled", "v1"), "curator", None).unwrap();
    let before = store.all_knowledge().unwrap();
    let text = "## Decisions\n### Fine\nnew\n## Nonsense\n### X\ny\n";
    let Err(ImportError::Problems(problems)) = import(&store, "/p", text) else {
        panic!("expected problems");
    };
    assert_eq!(problems[0].line, 4);
    let too_long = format!("## Decisions\n### Long\n{}\n", "y".repeat(1_300));
    let Err(ImportError::Problems(problems)) = import(&store, "/p", &too_long) else {
        panic!("expected problems");
    };
    assert_eq!(problems[0].line, 2);
    assert!(
        problems[0].message.contains("1300 characters"),
        "{}",
        problems[0].message
    );
    assert_eq!(store.all_knowledge().unwrap(), before);
}

#[test]
fn an_empty_file_forgets_every_entry_of_the_project() {
    let (_dir, store) = store();
    create_or_merge(&store, draft(Some("/p"), "a", "x"), "curator", None).unwrap();
    create_or_merge(&store, draft(Some("/q"), "b", "x"), "curator", None).unwrap();
    let summary = import(&store, "/p", "# Project knowledge\n").unwrap();
    assert_eq!(summary.deleted, 1);
    assert!(matches!(summary.changes[0], Change::Deleted(_)));
    assert_eq!(live_entries(&store, None, false).unwrap().len(), 1);
}
