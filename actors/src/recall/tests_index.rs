//! Recall against a real tantivy `SearchIndex` in a temporary folder, with a brute-force
//! vector side: hostile query text never errors, and `id` lookups answer the detail.

use lore_storage::{DocKind, IndexDoc, SearchFilter, SearchHit, SearchIndex};

use super::*;

struct IndexCorpus {
    index: SearchIndex,
    vectors: Vec<(String, Vec<f32>)>,
}

impl RecallCorpus for IndexCorpus {
    fn text_search(
        &self,
        query: &str,
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<SearchHit>, String> {
        self.index
            .search(query, filter, limit, (6.0, 2.0, 3.0))
            .map_err(|err| err.to_string())
    }

    fn vector_search(
        &self,
        vector: &[f32],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<(String, f32)>, String> {
        let mut scored: Vec<(String, f32)> = self
            .vectors
            .iter()
            .filter(|(id, _)| match filter.kind {
                Some(DocKind::Message) | None => id.starts_with("t:"),
                Some(_) => false,
            })
            .map(|(id, v)| (id.clone(), v.iter().zip(vector).map(|(a, b)| a * b).sum()))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.truncate(limit);
        Ok(scored)
    }

    fn document(&self, id: &str) -> Result<Option<SearchHit>, String> {
        self.index.get(id).map_err(|err| err.to_string())
    }
}

fn message(session: &str, seq: u32, body: &str) -> IndexDoc {
    IndexDoc {
        id: format!("t:{session}:{seq}"),
        kind: DocKind::Message,
        project: "/p".into(),
        session: session.into(),
        title: "user".into(),
        body: body.into(),
        category: String::new(),
        created_at_ms: u64::from(seq) + 1,
    }
}

fn corpus(dir: &std::path::Path) -> IndexCorpus {
    let (index, _) = SearchIndex::open(dir).unwrap();
    index
        .add(&[
            message(
                "a",
                0,
                "the ledger migration failed: foo(bar) raised KeyError",
            ),
            message("a", 1, "retrying the refunds job with AND/OR flags -y"),
            message("b", 0, "title:z* is not a field, \"quoted\" text"),
            message("b", 1, "moving accounts to the new schema"),
        ])
        .unwrap();
    index.commit().unwrap();
    IndexCorpus {
        index,
        vectors: vec![
            ("t:b:1".into(), vec![1.0, 0.0]),
            ("t:a:0".into(), vec![0.6, 0.8]),
            ("t:gone:0".into(), vec![0.9, 0.1]),
        ],
    }
}

#[test]
fn hostile_query_text_never_errors() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(dir.path());
    let queries = [
        r#"foo(bar) "x AND -y"#,
        r#"title:z* OR [a TO b] {c} ^2 ~3 \ / ! + - && ||"#,
        "\"unclosed",
        "IN [1 2]",
        "((((((",
        "NOT",
        "ledger\u{0}migration",
        "数据库 迁移",
        &"long".repeat(500),
    ];
    for query in queries {
        for scope in [RecallScope::All, RecallScope::Session, RecallScope::Project] {
            let request = RecallRequest {
                scope,
                session: Some("a".into()),
                project: Some("/p".into()),
                query_vector: Some(vec![1.0, 0.0]),
                variants: vec![query.to_string(), "\"".into()],
                ..RecallRequest::new(query)
            };
            let outcome = recall(&corpus, &request);
            assert!(outcome.is_ok(), "{query:?}: {outcome:?}");
        }
    }
    let outcome = recall(&corpus, &RecallRequest::new(r#"foo(bar) "x AND -y"#)).unwrap();
    assert_eq!(outcome.hits[0].hit.id, "t:a:0");
}

#[test]
fn hybrid_recall_over_a_real_index_fuses_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(dir.path());
    let request = RecallRequest {
        query_vector: Some(vec![1.0, 0.0]),
        ..RecallRequest::new("ledger migration")
    };
    let outcome = recall(&corpus, &request).unwrap();
    let ids: Vec<&str> = outcome.hits.iter().map(|h| h.hit.id.as_str()).collect();
    assert_eq!(ids[0], "t:a:0", "found by both sides");
    assert!(ids.contains(&"t:b:1"), "found by vectors only: {ids:?}");
    assert!(outcome.notes.iter().any(|n| n.contains("t:gone:0")));
    let found = outcome.hits.iter().find(|h| h.hit.id == "t:b:1").unwrap();
    assert_eq!(found.hit.body, "moving accounts to the new schema");
    let text = format_results("ledger migration", &outcome, 10, DEFAULT_CHAR_BUDGET);
    assert!(text.contains("(t:a:0)"));
}

#[test]
fn an_id_lookup_reads_the_detail() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(dir.path());
    let hit = lookup(&corpus, " t:a:1 ").unwrap().unwrap();
    let text = format_detail(&hit);
    assert!(text.starts_with("## Recall Detail: t:a:1\n\n"));
    assert!(text.contains("retrying the refunds job with AND/OR flags -y"));
    assert!(lookup(&corpus, "t:a:9").unwrap().is_none());
    assert!(lookup(&corpus, "  ").is_err());
}
