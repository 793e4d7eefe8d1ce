//! The recall engine's corpus in this process: BM25 from the tantivy index, vectors from the
//! sled vector store (when the query could be embedded), documents from the index or, for one
//! the index has not committed yet, from storage, and the JSON shape of a result.

use lore_actors::documents::stored_document;
use lore_actors::recall::{
    FusedHit, Neighbours, RecallCorpus, RecallOutcome, RecallRequest, recall,
};
use lore_storage::{DocKind, SearchFilter, SearchHit, SearchIndex, Store, VectorStore};
use serde_json::{Value, json};

/// Field weights of `search.ftsWeights`: title, body, category.
pub const FTS_WEIGHTS: (f32, f32, f32) = (6.0, 2.0, 3.0);

/// What recall searches.
pub struct Corpus<'a> {
    /// The full-text index.
    pub index: &'a SearchIndex,
    /// The stored vectors, when the query has a vector to compare.
    pub vectors: Option<&'a VectorStore>,
    /// Storage, the source of truth: a vector hit or an id whose document the index has not
    /// committed yet is read from here instead of being dropped.
    pub store: Option<&'a Store>,
}

impl RecallCorpus for Corpus<'_> {
    fn text_search(
        &self,
        query: &str,
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<SearchHit>, String> {
        self.index
            .search(query, filter, limit, FTS_WEIGHTS)
            .map_err(|err| err.to_string())
    }

    fn vector_search(
        &self,
        vector: &[f32],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<(String, f32)>, String> {
        let Some(vectors) = self.vectors else {
            return Ok(Vec::new());
        };
        let hits = vectors
            .search(vector, filter, limit)
            .map_err(|err| err.to_string())?;
        Ok(hits.into_iter().map(|hit| (hit.id, hit.score)).collect())
    }

    fn document(&self, id: &str) -> Result<Option<SearchHit>, String> {
        if let Some(hit) = self.index.get(id).map_err(|err| err.to_string())? {
            return Ok(Some(hit));
        }
        let Some(store) = self.store else {
            return Ok(None);
        };
        stored_document(store, id)
            .map(|doc| doc.map(SearchHit::from))
            .map_err(|err| err.to_string())
    }

    fn documents(&self, ids: &[&str]) -> Vec<Result<Option<SearchHit>, String>> {
        let indexed = match self.index.get_many(ids) {
            Ok(indexed) => indexed,
            Err(err) => return ids.iter().map(|_| Err(err.to_string())).collect(),
        };
        ids.iter()
            .zip(indexed)
            .map(|(id, hit)| match (hit, self.store) {
                (Some(hit), _) => Ok(Some(hit)),
                (None, None) => Ok(None),
                (None, Some(store)) => stored_document(store, id)
                    .map(|doc| doc.map(SearchHit::from))
                    .map_err(|err| err.to_string()),
            })
            .collect()
    }

    fn vector_search_by_kind(
        &self,
        vector: &[f32],
        filter: &SearchFilter,
        kinds: &[DocKind],
        limit: usize,
    ) -> Result<Vec<(DocKind, Neighbours)>, String> {
        let Some(vectors) = self.vectors else {
            return Ok(Vec::new());
        };
        let per_kind = vectors
            .search_by_kind(vector, filter, limit)
            .map_err(|err| err.to_string())?;
        Ok(per_kind
            .into_iter()
            .filter(|(kind, _)| kinds.contains(kind))
            .map(|(kind, hits)| {
                (
                    kind,
                    hits.into_iter().map(|hit| (hit.id, hit.score)).collect(),
                )
            })
            .collect())
    }
}

/// Characters of the snippet of a JSON result, cut around the part that best answers the query.
pub const SNIPPET_CHARS: usize = 300;

/// Runs one recall over the corpus.
pub fn search(corpus: &Corpus<'_>, request: &RecallRequest) -> Result<RecallOutcome, String> {
    recall(corpus, request)
}

/// One result as the API answers it.
pub fn hit_json(fused: &FusedHit) -> Value {
    let hit = &fused.hit;
    let (snippet, _) = fused.excerpt(SNIPPET_CHARS);
    json!({
        "id": hit.id,
        "source": hit.id.split(':').next().unwrap_or(""),
        "kind": hit.kind,
        "score": fused.score,
        "snippet": snippet,
        "role": hit.title,
        "session": hit.session,
        "project": hit.project,
        "created_at_ms": hit.created_at_ms,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use lore_actors::recall::{RecallMode, RecallRequest};
    use lore_proto::{Message, Part, Role};
    use lore_storage::records::RECORD_VERSION;
    use lore_storage::{MessageSource, SessionRecord, StoredMessage, VectorDoc};

    fn stored(session: &str, seq: u64, text: &str) -> StoredMessage {
        let message = Message::new(Role::User, vec![Part::Text { text: text.into() }]);
        StoredMessage {
            version: RECORD_VERSION,
            session_id: session.into(),
            seq,
            position: seq as u32,
            identity: message.identity(),
            message,
            source: MessageSource::Request,
            created_at_ms: 5,
            model: None,
            usage: None,
            partial: false,
            context_layer: None,
        }
    }

    /// The race of issue 10: the embedder stored a message's vector before the index committed
    /// its document. The hit is answered from storage, not dropped.
    #[test]
    fn a_vector_hit_the_index_has_not_committed_is_read_from_storage() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let (index, _) = SearchIndex::open(&dir.path().join("index")).unwrap();
        let mut record = SessionRecord::new("s1".into());
        record.project = Some("/p".into());
        let message = stored("s1", 0, "Flyway runs the schema migrations on Tuesday.");
        store.commit_turn(&record, &[message]).unwrap();
        let vectors = store.vectors();
        vectors.ensure_model("test", 4).unwrap();
        let doc = VectorDoc {
            id: "t:s1:0".into(),
            kind: DocKind::Message,
            session: "s1".into(),
            project: "/p".into(),
            created_at_ms: 5,
        };
        vectors
            .put_many(&[(doc, vec![1.0, 0.0, 0.0, 0.0])])
            .unwrap();
        assert_eq!(index.num_docs(), 0, "nothing is committed to the index");
        let mut request = RecallRequest::new("how do we evolve the tables");
        request.mode = RecallMode::Vector;
        request.query_vector = Some(vec![1.0, 0.0, 0.0, 0.0]);
        let without_store = Corpus {
            index: &index,
            vectors: Some(&vectors),
            store: None,
        };
        let dropped = search(&without_store, &request).unwrap();
        assert!(dropped.hits.is_empty(), "the index alone cannot resolve it");
        let corpus = Corpus {
            index: &index,
            vectors: Some(&vectors),
            store: Some(&store),
        };
        let outcome = search(&corpus, &request).unwrap();
        assert_eq!(outcome.hits.len(), 1, "{:?}", outcome.notes);
        let hit = &outcome.hits[0].hit;
        assert_eq!(hit.id, "t:s1:0");
        assert!(hit.body.contains("Flyway"), "{}", hit.body);
        assert_eq!(hit.project, "/p");
        assert_eq!(hit.kind, "message");
        assert!(outcome.notes.is_empty(), "{:?}", outcome.notes);
    }

    #[test]
    fn ids_resolve_from_storage_and_unknown_ones_are_none() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let (index, _) = SearchIndex::open(&dir.path().join("index")).unwrap();
        let record = SessionRecord::new("s1".into());
        store
            .commit_turn(&record, &[stored("s1", 3, "hello")])
            .unwrap();
        let corpus = Corpus {
            index: &index,
            vectors: None,
            store: Some(&store),
        };
        let hit = corpus.document("t:s1:3").unwrap().unwrap();
        assert_eq!(hit.body, "hello");
        for unknown in [
            "t:s1:4", "t:nope:0", "t:s1:x", "k:none", "d:s1:0", "q:1", "plain",
        ] {
            assert!(corpus.document(unknown).unwrap().is_none(), "{unknown}");
        }
    }
}
