//! The recall engine's corpus in this process: BM25 from the tantivy index, vectors from the
//! sled vector store (when the query could be embedded), and the JSON shape of a result.

use lore_actors::recall::{
    FusedHit, Neighbours, RecallCorpus, RecallOutcome, RecallRequest, recall,
};
use lore_storage::{DocKind, SearchFilter, SearchHit, SearchIndex, VectorStore};
use serde_json::{Value, json};

/// Field weights of `search.ftsWeights`: title, body, category.
pub const FTS_WEIGHTS: (f32, f32, f32) = (6.0, 2.0, 3.0);

/// What recall searches.
pub struct Corpus<'a> {
    /// The full-text index.
    pub index: &'a SearchIndex,
    /// The stored vectors, when the query has a vector to compare.
    pub vectors: Option<&'a VectorStore>,
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
        self.index.get(id).map_err(|err| err.to_string())
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

/// Runs one recall over the corpus.
pub fn search(corpus: &Corpus<'_>, request: &RecallRequest) -> Result<RecallOutcome, String> {
    recall(corpus, request)
}

/// One result as the API answers it.
pub fn hit_json(fused: &FusedHit) -> Value {
    let hit = &fused.hit;
    let snippet: String = hit.body.chars().take(300).collect();
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
