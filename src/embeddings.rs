//! Embeddings in the service: the model loads in the background after the gateway is already
//! listening; until it has (or when it cannot), recall runs on BM25 alone and `/health` says
//! why. Once loaded, the `Vectorizer` starts, the `Indexer` hands it every new document, and a
//! backfill embeds whatever was stored without a vector. The optional reranker lives here
//! too: it loads on the first recall that reranks.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix::{Actor, Addr};
use lore_actors::curator::{AttachEmbedder, Curator};
use lore_actors::embedder::{Embedder, EmbedderConfig, EmbedderHandle, EmbeddingModel, Purpose};
use lore_actors::indexer::{AttachVectorizer, Indexer};
use lore_actors::reranker::{RerankSetting, Reranker, RerankerConfig};
use lore_actors::vectorizer::{Backfill, Vectorizer};
use lore_actors::worker::ActivityBoard;
use lore_storage::{Store, VectorStore};
use tracing::warn;

/// Longest wait for a query's vector; past it recall runs on BM25 alone.
const QUERY_EMBED_DEADLINE: Duration = Duration::from_secs(3);
/// A busy embedder times out many queries at once: their warning is logged once a minute,
/// with how many timed out since the last one.
const TIMEOUT_LOG_EVERY_MS: u64 = 60_000;
static TIMEOUT_LOGGED_MS: AtomicU64 = AtomicU64::new(0);
static TIMEOUTS_UNLOGGED: AtomicU64 = AtomicU64::new(0);

/// The embedding side of the service. Cheap to clone.
#[derive(Clone)]
pub struct Embeddings {
    handle: Arc<RwLock<EmbedderHandle>>,
    vectorizer: Arc<RwLock<Option<Addr<Vectorizer>>>>,
    /// The stored vectors.
    pub vectors: VectorStore,
    /// The cross-encoder reranker (`LORE_RERANK`); off until [`Embeddings::with_reranker`].
    pub reranker: Reranker,
}

impl Embeddings {
    /// Embeddings that are off, saying why and how to turn them on.
    pub fn off(store: &Store, missing: &str, fix: &str) -> Self {
        Self {
            handle: Arc::new(RwLock::new(EmbedderHandle::unavailable(missing, fix))),
            vectorizer: Arc::new(RwLock::new(None)),
            vectors: store.vectors(),
            reranker: Reranker::new(
                RerankSetting::Off,
                RerankerConfig::beside(&EmbedderConfig::from_env()),
            ),
        }
    }

    /// The same embeddings with `reranker` for recall.
    pub fn with_reranker(mut self, reranker: Reranker) -> Self {
        self.reranker = reranker;
        self
    }

    /// Starts loading the model in the background; must run inside the actix system.
    pub fn start(
        store: &Store,
        board: &Arc<ActivityBoard>,
        indexer: Option<Addr<Indexer>>,
        curator: Option<Addr<Curator>>,
    ) -> Self {
        let embeddings = Self::off(
            store,
            "the embedding model is still loading",
            "wait a moment; recall uses BM25 until it is ready",
        );
        let this = embeddings.clone();
        let store = store.clone();
        let board = Arc::clone(board);
        actix_rt::spawn(async move {
            let config = EmbedderConfig::from_env();
            let probe_config = config.clone();
            let probe = match tokio::task::spawn_blocking(move || {
                EmbeddingModel::load(&probe_config)
            })
            .await
            {
                Ok(probe) => probe,
                Err(err) => {
                    warn!(error = %err, "embedding model load panicked");
                    return;
                }
            };
            let handle = Embedder::start_with_probe(config, probe);
            if let Ok(mut slot) = this.handle.write() {
                *slot = handle.clone();
            }
            if !handle.is_ready() {
                return;
            }
            if let Some(curator) = &curator {
                curator.do_send(AttachEmbedder(handle.clone()));
            }
            let arbiter = lore_actors::background::low_priority_arbiter();
            let worker = Vectorizer::new(store, handle).with_board(board);
            let vectorizer = Vectorizer::start_in_arbiter(&arbiter.handle(), |_| worker);
            vectorizer.do_send(Backfill);
            if let Some(indexer) = &indexer {
                indexer.do_send(AttachVectorizer(vectorizer.clone().recipient()));
            }
            if let Ok(mut slot) = this.vectorizer.write() {
                *slot = Some(vectorizer);
            }
            // Dropping the handle leaves the arbiter running until the system stops.
            drop(arbiter);
        });
        embeddings
    }

    /// The embedder as it is now.
    pub fn handle(&self) -> EmbedderHandle {
        match self.handle.read() {
            Ok(handle) => handle.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The vectorizer, once the model has loaded.
    pub fn vectorizer(&self) -> Option<Addr<Vectorizer>> {
        match self.vectorizer.read() {
            Ok(slot) => slot.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The unit vector of a query, or `None` when embeddings are not available (or too slow).
    pub async fn query_vector(&self, text: &str) -> Option<Vec<f32>> {
        let handle = self.handle();
        if !handle.is_ready() {
            return None;
        }
        let embedding = handle.embed(vec![text.to_string()], Purpose::Query);
        match tokio::time::timeout(QUERY_EMBED_DEADLINE, embedding).await {
            Ok(Ok(mut vectors)) => vectors.pop(),
            Ok(Err(err)) => {
                warn!(error = %err, "query embedding failed; recall uses BM25 alone");
                None
            }
            Err(_) => {
                TIMEOUTS_UNLOGGED.fetch_add(1, Ordering::Relaxed);
                let now = lore_storage::now_ms();
                let last = TIMEOUT_LOGGED_MS.load(Ordering::Relaxed);
                if now.saturating_sub(last) >= TIMEOUT_LOG_EVERY_MS
                    && TIMEOUT_LOGGED_MS
                        .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                {
                    warn!(
                        since_last_warning = TIMEOUTS_UNLOGGED.swap(0, Ordering::Relaxed),
                        "query embedding timed out (the embedder is busy); recall uses BM25 alone"
                    );
                }
                None
            }
        }
    }
}
