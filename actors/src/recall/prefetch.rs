//! BM25 ahead of the query vector: the text searches of a recall do not need the query's
//! embedding, so the service runs them ([`prefetch_text`]) while the query is embedded, then
//! runs the recall over [`Prefetched`], which answers those searches from what was fetched.
//! The lists, their order and so the results are exactly those of [`super::recall`] alone.

use std::cell::RefCell;

use lore_storage::{DocKind, SearchFilter, SearchHit};

use super::{Neighbours, RecallCorpus, RecallMode, RecallRequest, gather, scope_filter, terms};

/// One text search and its answer.
#[derive(Debug, Clone)]
struct Fetched {
    query: String,
    filter: SearchFilter,
    limit: usize,
    answer: Result<Vec<SearchHit>, String>,
}

/// The text searches of one recall, done ahead.
#[derive(Debug, Clone, Default)]
pub struct TextPrefetch {
    fetched: Vec<Fetched>,
}

impl TextPrefetch {
    /// Text searches held.
    pub fn len(&self) -> usize {
        self.fetched.len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.fetched.is_empty()
    }

    fn find(&self, query: &str, filter: &SearchFilter, limit: usize) -> Option<&Fetched> {
        self.fetched
            .iter()
            .find(|f| f.limit == limit && f.query == query && f.filter == *filter)
    }
}

/// Runs the text searches `request` will make (the same whatever its query vector), once each.
/// A request without text lists (mode `vector`, no meaningful terms) fetches nothing.
pub fn prefetch_text(corpus: &dyn RecallCorpus, request: &RecallRequest) -> TextPrefetch {
    let Ok(filter) = scope_filter(request) else {
        return TextPrefetch::default();
    };
    let terms = terms::query_terms(&request.query);
    if terms.is_empty() || request.mode == RecallMode::Vector {
        return TextPrefetch::default();
    }
    let recorder = Recorder {
        corpus,
        fetched: RefCell::new(Vec::new()),
    };
    let text_only = RecallRequest {
        mode: RecallMode::Bm25,
        query_vector: None,
        ..request.clone()
    };
    // A failed search is recorded and stops the gathering, as it stops the recall later.
    let _ = gather::gather(
        &recorder,
        &text_only,
        &terms,
        &filter,
        request.effective_limit(),
    );
    TextPrefetch {
        fetched: recorder.fetched.into_inner(),
    }
}

/// Records the text searches made through it.
struct Recorder<'a> {
    corpus: &'a dyn RecallCorpus,
    fetched: RefCell<Vec<Fetched>>,
}

impl RecallCorpus for Recorder<'_> {
    fn text_search(
        &self,
        query: &str,
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<SearchHit>, String> {
        let answer = self.corpus.text_search(query, filter, limit);
        self.fetched.borrow_mut().push(Fetched {
            query: query.to_string(),
            filter: filter.clone(),
            limit,
            answer: answer.clone(),
        });
        answer
    }

    fn vector_search(
        &self,
        _: &[f32],
        _: &SearchFilter,
        _: usize,
    ) -> Result<Vec<(String, f32)>, String> {
        Ok(Vec::new())
    }

    fn document(&self, _: &str) -> Result<Option<SearchHit>, String> {
        Ok(None)
    }
}

/// A corpus whose text searches come from a [`TextPrefetch`] when it holds them.
pub struct Prefetched<'a> {
    /// Everything else, and text searches the prefetch does not hold.
    pub corpus: &'a dyn RecallCorpus,
    /// The searches done ahead.
    pub text: &'a TextPrefetch,
}

impl RecallCorpus for Prefetched<'_> {
    fn text_search(
        &self,
        query: &str,
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<SearchHit>, String> {
        match self.text.find(query, filter, limit) {
            Some(fetched) => fetched.answer.clone(),
            None => self.corpus.text_search(query, filter, limit),
        }
    }

    fn vector_search(
        &self,
        vector: &[f32],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<(String, f32)>, String> {
        self.corpus.vector_search(vector, filter, limit)
    }

    fn document(&self, id: &str) -> Result<Option<SearchHit>, String> {
        self.corpus.document(id)
    }

    fn documents(&self, ids: &[&str]) -> Vec<Result<Option<SearchHit>, String>> {
        self.corpus.documents(ids)
    }

    fn vector_search_by_kind(
        &self,
        vector: &[f32],
        filter: &SearchFilter,
        kinds: &[DocKind],
        limit: usize,
    ) -> Result<Vec<(DocKind, Neighbours)>, String> {
        self.corpus
            .vector_search_by_kind(vector, filter, kinds, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::{FakeCorpus, doc};
    use super::super::recall;
    use super::*;

    /// With a session, variants and vectors, the recall over the prefetch is the recall alone,
    /// and asks the corpus no text search of its own.
    #[test]
    fn a_recall_over_the_prefetch_is_the_recall_alone_without_searching_again() {
        let corpus = FakeCorpus {
            docs: vec![
                doc("t:mine:0", "mine", "refunds ledger rebuilt", 5),
                doc("t:other:0", "other", "refunds ledger", 6),
                doc("d:mine:0", "mine", "the ledger moved to postgres", 7),
                doc("k:1", "", "ledger conventions", 8),
                doc("t:other:1", "other", "nothing in common", 9),
            ],
            vector_order: vec!["t:other:1".into(), "k:1".into(), "t:gone:0".into()],
            ..Default::default()
        };
        for mode in [RecallMode::Hybrid, RecallMode::Bm25, RecallMode::Vector] {
            let request = RecallRequest {
                session: Some("mine".into()),
                mode,
                variants: vec!["ledger postgres".into()],
                query_vector: Some(vec![1.0, 0.0]),
                ..RecallRequest::new("refunds ledger")
            };
            let alone = recall(&corpus, &request).unwrap();
            let asked = corpus.text_filters.borrow().len();
            let text = prefetch_text(&corpus, &request);
            assert_eq!(text.is_empty(), mode == RecallMode::Vector, "{mode:?}");
            let prefetched = corpus.text_filters.borrow().len();
            let over = Prefetched {
                corpus: &corpus,
                text: &text,
            };
            let outcome = recall(&over, &request).unwrap();
            assert_eq!(outcome, alone, "{mode:?}");
            assert_eq!(prefetched - asked, text.len(), "{mode:?}");
            assert_eq!(
                corpus.text_filters.borrow().len(),
                prefetched,
                "{mode:?}: no text search after the prefetch"
            );
        }
    }

    #[test]
    fn nothing_is_fetched_without_terms_or_a_valid_scope() {
        let corpus = FakeCorpus::default();
        assert!(prefetch_text(&corpus, &RecallRequest::new("the a of")).is_empty());
        let request = RecallRequest {
            scope: super::super::RecallScope::Session,
            ..RecallRequest::new("ledger")
        };
        assert!(prefetch_text(&corpus, &request).is_empty());
        assert!(corpus.text_filters.borrow().is_empty());
    }
}
