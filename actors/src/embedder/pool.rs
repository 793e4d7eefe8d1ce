//! [`Embedder`]: a `SyncArbiter` of workers, each owning its own [`EmbeddingModel`] (one intra-op
//! thread per session, `pool_size` threads in all, at background priority), a query worker
//! (its own session at normal priority: recall's query waits for it, so it must not wait behind
//! document batches or for a lowered thread), and the [`EmbedderHandle`] callers use.
//!
//! The model is loaded once up front, on the calling thread, to decide the status. If that
//! fails the embedder is [`EmbedderStatus::Unavailable`]: one warning is logged, no worker is
//! started, and every `embed` fails at once with the same reason (no log line per request).
//! The probe model becomes the first worker's; the other workers load their own.

use std::sync::{Arc, Mutex};

use actix::prelude::*;
use serde::Serialize;
use tracing::{info, warn};

use super::model::{EmbeddingModel, Purpose};
use super::{EmbedError, EmbedderConfig, MODEL_DIM, MODEL_NAME, SETUP_FIX};
use crate::ActorError;

/// Embeds texts on one worker of the pool.
#[derive(Message)]
#[rtype(result = "Result<Vec<Vec<f32>>, EmbedError>")]
pub struct Embed {
    /// The texts, embedded in this order.
    pub texts: Vec<String>,
    /// Query or document.
    pub purpose: Purpose,
}

/// Embeds documents cut into passages on one worker of the pool: each text's passage vectors.
#[derive(Message)]
#[rtype(result = "Result<Vec<Vec<Vec<f32>>>, EmbedError>")]
pub struct EmbedPassages {
    /// The documents, in this order.
    pub texts: Vec<String>,
}

/// Whether embeddings can be computed, for `/health` and `lore doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum EmbedderStatus {
    /// The model is loaded.
    Ready {
        /// Model name.
        model: String,
        /// Vector dimension.
        dim: usize,
        /// Worker threads.
        threads: usize,
    },
    /// Embeddings are off; recall uses BM25 alone.
    Unavailable {
        /// What is missing or broken.
        missing: String,
        /// How to fix it.
        fix: String,
    },
}

/// The pool of embedding workers; see [`Embedder::start`].
pub struct Embedder;

impl Embedder {
    /// Loads the model once to decide the status, then starts `config.pool_size` workers. Must
    /// run inside an actix system. Blocks for the model load (a fraction of a second).
    pub fn start(config: EmbedderConfig) -> EmbedderHandle {
        let probe = EmbeddingModel::load(&config);
        Self::start_with_probe(config, probe)
    }

    /// [`Embedder::start`] with the model already loaded (or not) elsewhere, so the caller can
    /// load it off the actix thread. Must run inside an actix system.
    pub fn start_with_probe(
        config: EmbedderConfig,
        probe: Result<EmbeddingModel, EmbedError>,
    ) -> EmbedderHandle {
        let probe = match probe {
            Ok(model) => model,
            Err(err) => {
                let (missing, fix) = match err {
                    ActorError::EmbedderUnavailable { missing, fix } => (missing, fix),
                    other => (other.to_string(), SETUP_FIX.to_string()),
                };
                warn!(%missing, %fix, "embeddings unavailable; recall uses BM25 alone");
                return EmbedderHandle::unavailable(missing, fix);
            }
        };
        let threads = config.pool_size.max(1);
        let query_config = config.clone();
        let probe = Arc::new(Mutex::new(Some(probe)));
        let workers = SyncArbiter::start_with_thread_builder(
            threads,
            || std::thread::Builder::new().name("lore-embed".into()),
            move || {
                // Embedding is background work: it yields to the request path.
                crate::background::lower_current_thread();
                let taken = probe.lock().unwrap_or_else(|e| e.into_inner()).take();
                EmbedWorker {
                    model: taken.map_or_else(|| EmbeddingModel::load(&config), Ok),
                }
            },
        );
        let query_threads = query_config.query_threads;
        let queries = (query_threads > 0).then(|| {
            SyncArbiter::start_with_thread_builder(
                1,
                || std::thread::Builder::new().name("lore-embed-query".into()),
                move || EmbedWorker {
                    model: EmbeddingModel::load_with_threads(&query_config, query_threads),
                },
            )
        });
        info!(model = MODEL_NAME, threads, query_threads, "embedder ready");
        EmbedderHandle {
            status: EmbedderStatus::Ready {
                model: MODEL_NAME.to_string(),
                dim: MODEL_DIM,
                threads,
            },
            workers: Some(workers),
            queries,
        }
    }
}

/// How the rest of the gateway embeds. Cheap to clone.
#[derive(Clone)]
pub struct EmbedderHandle {
    status: EmbedderStatus,
    workers: Option<Addr<EmbedWorker>>,
    /// The query worker, when there is one.
    queries: Option<Addr<EmbedWorker>>,
}

impl std::fmt::Debug for EmbedderHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbedderHandle")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl EmbedderHandle {
    /// A handle whose every call fails with `missing` and `fix` (embeddings switched off).
    pub fn unavailable(missing: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            status: EmbedderStatus::Unavailable {
                missing: missing.into(),
                fix: fix.into(),
            },
            workers: None,
            queries: None,
        }
    }

    /// Whether embeddings can be computed.
    pub fn status(&self) -> EmbedderStatus {
        self.status.clone()
    }

    /// Whether the model is loaded.
    pub fn is_ready(&self) -> bool {
        matches!(self.status, EmbedderStatus::Ready { .. })
    }

    /// The passage vectors of each document, in order (see [`EmbeddingModel::embed_passages`]).
    pub async fn embed_passages(
        &self,
        texts: Vec<String>,
    ) -> Result<Vec<Vec<Vec<f32>>>, EmbedError> {
        let workers = self.workers()?;
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        workers.send(EmbedPassages { texts }).await?
    }

    fn workers(&self) -> Result<&Addr<EmbedWorker>, EmbedError> {
        self.workers.as_ref().ok_or_else(|| match &self.status {
            EmbedderStatus::Unavailable { missing, fix } => ActorError::EmbedderUnavailable {
                missing: missing.clone(),
                fix: fix.clone(),
            },
            EmbedderStatus::Ready { .. } => ActorError::Mailbox("no embedding worker".into()),
        })
    }

    /// One unit vector per text, in order. Queries go to the query worker when there is one.
    pub async fn embed(
        &self,
        texts: Vec<String>,
        purpose: Purpose,
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let pool = self.workers()?;
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let worker = match (&self.queries, purpose) {
            (Some(queries), Purpose::Query) => queries,
            _ => pool,
        };
        worker.send(Embed { texts, purpose }).await?
    }
}

/// One worker: a model of its own, used by its thread only.
pub struct EmbedWorker {
    model: Result<EmbeddingModel, EmbedError>,
}

impl Actor for EmbedWorker {
    type Context = SyncContext<Self>;
}

impl Handler<Embed> for EmbedWorker {
    type Result = Result<Vec<Vec<f32>>, EmbedError>;

    fn handle(&mut self, msg: Embed, _: &mut Self::Context) -> Self::Result {
        let model = self.model.as_mut().map_err(|err| err.clone())?;
        let texts: Vec<&str> = msg.texts.iter().map(String::as_str).collect();
        model.embed(&texts, msg.purpose)
    }
}

impl Handler<EmbedPassages> for EmbedWorker {
    type Result = Result<Vec<Vec<Vec<f32>>>, EmbedError>;

    fn handle(&mut self, msg: EmbedPassages, _: &mut Self::Context) -> Self::Result {
        let model = self.model.as_mut().map_err(|err| err.clone())?;
        let texts: Vec<&str> = msg.texts.iter().map(String::as_str).collect();
        model.embed_passages(&texts)
    }
}
