//! An in-memory recall corpus for tests: its BM25 side ranks by substring counts, its vector
//! side answers a scripted order, and it records how it was asked.

use std::cell::{Cell, RefCell};

use lore_storage::{DocKind, SearchFilter, SearchHit};

use super::{RecallCorpus, terms};

/// A corpus in memory that records how it was asked.
#[derive(Default)]
pub struct FakeCorpus {
    pub docs: Vec<SearchHit>,
    /// Ids the vector side answers, best first (ids without a document are allowed).
    pub vector_order: Vec<String>,
    pub vector_fails: bool,
    pub vector_calls: Cell<usize>,
    pub text_filters: RefCell<Vec<SearchFilter>>,
}

pub fn doc(id: &str, session: &str, body: &str, created_at_ms: u64) -> SearchHit {
    let kind = match id.split(':').next() {
        Some("k") => "knowledge",
        Some("d") => "distillation",
        Some("e") => "entity",
        _ => "message",
    };
    SearchHit {
        id: id.into(),
        score: 0.0,
        kind: kind.into(),
        session: session.into(),
        project: "/p".into(),
        title: if kind == "message" { "user" } else { "" }.into(),
        body: body.into(),
        created_at_ms,
    }
}

fn admits(filter: &SearchFilter, hit: &SearchHit) -> bool {
    filter.session.as_ref().is_none_or(|s| *s == hit.session)
        && filter.project.as_ref().is_none_or(|p| *p == hit.project)
        && filter.kind.is_none_or(|k| k.as_str() == hit.kind)
}

impl RecallCorpus for FakeCorpus {
    fn text_search(
        &self,
        query: &str,
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<SearchHit>, String> {
        self.text_filters.borrow_mut().push(filter.clone());
        let terms: Vec<String> = terms::words(query).collect();
        let mut scored: Vec<(usize, &SearchHit)> = self
            .docs
            .iter()
            .filter(|hit| admits(filter, hit))
            .map(|hit| {
                let text = format!("{} {}", hit.title, hit.body).to_lowercase();
                let count = terms.iter().map(|t| text.matches(t.as_str()).count()).sum();
                (count, hit)
            })
            .filter(|(count, _)| *count > 0)
            .collect();
        scored.sort_by_key(|(count, _)| std::cmp::Reverse(*count));
        Ok(scored
            .into_iter()
            .take(limit)
            .map(|(count, hit)| SearchHit {
                score: count as f32,
                ..hit.clone()
            })
            .collect())
    }

    fn vector_search(
        &self,
        _vector: &[f32],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<(String, f32)>, String> {
        self.vector_calls.set(self.vector_calls.get() + 1);
        if self.vector_fails {
            return Err("vector store offline".into());
        }
        let known = |id: &String| self.docs.iter().find(|hit| hit.id == *id);
        Ok(self
            .vector_order
            .iter()
            .filter(|id| match known(id) {
                Some(hit) => admits(filter, hit),
                None => filter.kind.is_none_or(|kind| kind == DocKind::Message),
            })
            .take(limit)
            .enumerate()
            .map(|(rank, id)| (id.clone(), 0.9 - rank as f32 * 0.1))
            .collect())
    }

    fn document(&self, id: &str) -> Result<Option<SearchHit>, String> {
        Ok(self.docs.iter().find(|hit| hit.id == id).cloned())
    }
}
