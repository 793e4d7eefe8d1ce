//! Tests of the search index: words, filters, exact id lookups, schema changes.

use super::*;

fn doc(id: &str, session: &str, body: &str) -> IndexDoc {
    IndexDoc {
        id: id.into(),
        kind: DocKind::Message,
        project: "/p".into(),
        session: session.into(),
        title: "user".into(),
        body: body.into(),
        category: String::new(),
        created_at_ms: 1,
    }
}

#[test]
fn documents_are_found_by_words_and_filtered_by_session() {
    let dir = tempfile::tempdir().unwrap();
    let (index, rebuilt) = SearchIndex::open(dir.path()).unwrap();
    assert!(rebuilt);
    index
        .add(&[
            doc("t:a:0", "a", "the ledger migration failed on refunds"),
            doc("t:b:0", "b", "refunds are processed nightly"),
        ])
        .unwrap();
    index.commit().unwrap();
    let hits = index
        .search(
            "refunds ledger",
            &SearchFilter::default(),
            10,
            (6.0, 2.0, 3.0),
        )
        .unwrap();
    assert_eq!(hits[0].id, "t:a:0");
    assert_eq!(hits.len(), 2);
    let only_b = SearchFilter {
        session: Some("b".into()),
        ..Default::default()
    };
    let hits = index
        .search("refunds", &only_b, 10, (6.0, 2.0, 3.0))
        .unwrap();
    assert_eq!(
        hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        ["t:b:0"]
    );
    assert!(
        index
            .search("AND OR ((", &SearchFilter::default(), 10, (6.0, 2.0, 3.0))
            .is_ok(),
        "bad syntax is lenient"
    );
    drop(index);
    let (again, rebuilt) = SearchIndex::open(dir.path()).unwrap();
    assert!(!rebuilt);
    assert_eq!(again.num_docs(), 2);
}

#[test]
fn a_document_is_found_by_its_exact_id() {
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = SearchIndex::open(dir.path()).unwrap();
    index
        .add(&[
            doc("t:a:0", "a", "first words"),
            doc("t:a:1", "a", "second words"),
            doc("t:a:10", "a", "tenth words"),
        ])
        .unwrap();
    index.commit().unwrap();
    let hit = index.get("t:a:1").unwrap().unwrap();
    assert_eq!(hit.id, "t:a:1");
    assert_eq!(hit.body, "second words");
    assert_eq!(hit.session, "a");
    assert_eq!(hit.kind, "message");
    assert!(index.get("t:a").unwrap().is_none(), "no prefix match");
    assert!(
        index.get("T:A:1").unwrap().is_none(),
        "ids are not lowercased"
    );
    assert!(index.get("").unwrap().is_none());
    assert!(
        index.get("t:a:1 OR *").unwrap().is_none(),
        "no query syntax"
    );
}

#[test]
fn a_schema_change_or_a_corrupt_index_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = SearchIndex::open(dir.path()).unwrap();
    index.add(&[doc("t:a:0", "a", "hello")]).unwrap();
    index.commit().unwrap();
    drop(index);
    std::fs::write(dir.path().join(VERSION_FILE), "0").unwrap();
    let (index, rebuilt) = SearchIndex::open(dir.path()).unwrap();
    assert!(rebuilt);
    assert_eq!(index.num_docs(), 0);
    drop(index);
    std::fs::write(dir.path().join("meta.json"), "garbage").unwrap();
    let (_, rebuilt) = SearchIndex::open(dir.path()).unwrap();
    assert!(rebuilt);
}

#[test]
fn knowledge_documents_are_replaced_and_removed_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = SearchIndex::open(dir.path()).unwrap();
    let entry = |body: &str| IndexDoc {
        kind: DocKind::Knowledge,
        ..doc("k:1", "", body)
    };
    index.add(&[entry("use pytest for tests")]).unwrap();
    index.commit().unwrap();
    index.add(&[entry("use nextest for tests")]).unwrap();
    index.commit().unwrap();
    let filter = SearchFilter::default();
    assert_eq!(
        index
            .search("pytest", &filter, 10, (6.0, 2.0, 3.0))
            .unwrap()
            .len(),
        0
    );
    assert_eq!(
        index
            .search("nextest", &filter, 10, (6.0, 2.0, 3.0))
            .unwrap()
            .len(),
        1
    );
    index.remove(&["k:1".to_string()]).unwrap();
    index.commit().unwrap();
    assert!(index.get("k:1").unwrap().is_none());
}

/// `get_many` answers as `get` does for each id, across segments, skipping replaced and
/// removed documents.
#[test]
fn many_documents_are_found_by_id_at_once_as_one_by_one() {
    let dir = tempfile::tempdir().unwrap();
    let (index, _) = SearchIndex::open(dir.path()).unwrap();
    let entry = |id: &str, body: &str| IndexDoc {
        kind: DocKind::Knowledge,
        ..doc(id, "", body)
    };
    index
        .add(&[doc("t:a:0", "a", "first words"), entry("k:1", "old entry")])
        .unwrap();
    index.commit().unwrap();
    // A second segment: a new message, a replaced entry, a removed one.
    index
        .add(&[doc("t:a:1", "a", "second words"), entry("k:1", "new entry")])
        .unwrap();
    index.add(&[entry("k:2", "gone soon")]).unwrap();
    index.commit().unwrap();
    index.remove(&["k:2".to_string()]).unwrap();
    index.commit().unwrap();
    let ids = ["t:a:1", "k:1", "t:a", "k:2", "t:a:0", "", "t:a:1"];
    let many = index.get_many(&ids).unwrap();
    assert_eq!(many.len(), ids.len());
    for (id, hit) in ids.iter().zip(&many) {
        assert_eq!(hit, &index.get(id).unwrap(), "{id}");
    }
    let bodies: Vec<Option<&str>> = many
        .iter()
        .map(|hit| hit.as_ref().map(|hit| hit.body.as_str()))
        .collect();
    assert_eq!(
        bodies,
        [
            Some("second words"),
            Some("new entry"),
            None,
            None,
            Some("first words"),
            None,
            Some("second words")
        ]
    );
}
