//! The knowledge search behind system[2] and the knowledge deltas: the hybrid recall engine
//! (BM25 and, when the model is loaded, vectors) over knowledge entries, run in the background
//! for a session's recent context. Entries of every project come back; the session keeps those
//! of its own project and the ones that hold everywhere.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use lore_actors::ltm::KnowledgeFinder;
use lore_actors::recall::{RecallMode, RecallRequest, RecallScope};
use lore_storage::{SearchIndex, Store};
use tracing::debug;

use crate::embeddings::Embeddings;
use crate::recall::corpus::{Corpus, search};

/// The recall engine over knowledge.
pub struct RecallFinder {
    /// The search index, when it opened.
    pub index: Option<Arc<SearchIndex>>,
    /// The embedding model and the vectors.
    pub embeddings: Embeddings,
    /// Storage (documents the index has not committed yet).
    pub store: Store,
}

impl KnowledgeFinder for RecallFinder {
    fn find(
        &self,
        context: String,
        _project: Option<String>,
        limit: usize,
    ) -> BoxFuture<'static, Vec<(String, f32)>> {
        let index = self.index.clone();
        let embeddings = self.embeddings.clone();
        let store = self.store.clone();
        Box::pin(async move {
            let Some(index) = index else {
                return Vec::new();
            };
            let mut request = RecallRequest {
                query: context,
                scope: RecallScope::Knowledge,
                mode: RecallMode::Hybrid,
                limit,
                ..RecallRequest::default()
            };
            request.query_vector = embeddings.query_vector(&request.query).await;
            let vectors = embeddings.vectors.clone();
            let outcome = tokio::task::spawn_blocking(move || {
                let corpus = Corpus {
                    index: &index,
                    vectors: Some(&vectors),
                    store: Some(&store),
                };
                search(&corpus, &request)
            })
            .await;
            let hits = match outcome {
                Ok(Ok(outcome)) => outcome.hits,
                Ok(Err(err)) => {
                    debug!(error = %err, "knowledge search failed");
                    return Vec::new();
                }
                Err(err) => {
                    debug!(error = %err, "knowledge search panicked");
                    return Vec::new();
                }
            };
            let top = hits.first().map_or(1.0, |hit| hit.score.max(f32::EPSILON));
            hits.iter()
                .filter_map(|fused| {
                    let id = fused.hit.id.strip_prefix("k:")?;
                    Some((id.to_string(), (fused.score / top).clamp(0.0, 1.0)))
                })
                .collect()
        })
    }
}
