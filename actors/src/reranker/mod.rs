//! The optional cross-encoder reranker (ms-marco-MiniLM-L-12-v2 int8, installed by
//! `scripts/setup` beside the embedding model): it rescores the top recall candidates by
//! reading the query and each candidate's best windows together.
//!
//! - [`model`]: [`model::CrossEncoder`], the ONNX session and its pair tokenizer.
//! - This file: the setting (`LORE_RERANK=on|off|auto`), where the files are, and
//!   [`Reranker`], one thread that owns the model, loads it on the first call (not at start),
//!   takes one job at a time and answers on a channel. A caller waits at most its deadline and
//!   then goes on without reranking (fail open); a job whose caller stopped waiting is dropped
//!   between batches; while a job runs the next caller does not queue behind it.

pub mod model;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tracing::{info, warn};

use crate::ActorError;
use crate::embedder::EmbedderConfig;

/// Directory of the reranker inside the models directory.
pub const MODEL_NAME: &str = "ms-marco-MiniLM-L-12-v2";
/// Longest a recall waits for the reranker by default.
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(2_000);
/// What to run when the model is missing.
pub const SETUP_FIX: &str = "run `scripts/setup` to install the reranker model beside the embedding model (LORE_MODELS_DIR), or set LORE_RERANK=off";

/// Whether recall reranks (`LORE_RERANK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RerankSetting {
    /// Always; a missing model is reported with every recall.
    On,
    /// Never.
    #[default]
    Off,
    /// When the model files are installed.
    Auto,
}

impl std::str::FromStr for RerankSetting {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "on" | "1" | "true" => Ok(RerankSetting::On),
            "off" | "0" | "false" => Ok(RerankSetting::Off),
            "auto" => Ok(RerankSetting::Auto),
            other => Err(format!(
                "LORE_RERANK must be on, off or auto, not `{other}`"
            )),
        }
    }
}

/// Where the reranker's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerankerConfig {
    /// The models directory (as the embedder's: `LORE_MODELS_DIR`).
    pub models_dir: PathBuf,
    /// The ONNX Runtime library (as the embedder's: `ORT_DYLIB_PATH`).
    pub runtime: PathBuf,
}

impl RerankerConfig {
    /// The files next to the embedder's.
    pub fn beside(embedder: &EmbedderConfig) -> Self {
        Self {
            models_dir: embedder.models_dir.clone(),
            runtime: embedder.runtime.clone(),
        }
    }

    /// The ONNX graph.
    pub fn model_file(&self) -> PathBuf {
        self.models_dir.join(MODEL_NAME).join("model.onnx")
    }

    /// The tokenizer.
    pub fn tokenizer_file(&self) -> PathBuf {
        self.models_dir.join(MODEL_NAME).join("tokenizer.json")
    }

    /// Whether both files exist.
    pub fn installed(&self) -> bool {
        self.model_file().is_file() && self.tokenizer_file().is_file()
    }
}

/// What the reranker can do now, for recall answers and `/health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum RerankerStatus {
    /// `LORE_RERANK=off`, or `auto` without the model.
    Off {
        /// Why.
        reason: String,
    },
    /// Installed; loads on the first recall that reranks.
    NotLoaded,
    /// Loaded.
    Ready,
    /// Asked for but it cannot run.
    Unavailable {
        /// What is missing or broken.
        missing: String,
        /// How to fix it.
        fix: String,
    },
}

/// One scoring job.
struct Job {
    query: String,
    passages: Vec<String>,
    deadline: Instant,
    reply: tokio::sync::oneshot::Sender<Result<Vec<f32>, ActorError>>,
}

struct Shared {
    setting: RerankSetting,
    config: RerankerConfig,
    status: Mutex<RerankerStatus>,
    busy: AtomicBool,
    jobs: Mutex<Option<std::sync::mpsc::SyncSender<Job>>>,
}

/// The reranker of the process. Cheap to clone.
#[derive(Clone)]
pub struct Reranker {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Reranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reranker")
            .field("setting", &self.shared.setting)
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

impl Reranker {
    /// A reranker for `setting` over the files of `config`; nothing is loaded yet.
    pub fn new(setting: RerankSetting, config: RerankerConfig) -> Self {
        let status = match setting {
            RerankSetting::Off => RerankerStatus::Off {
                reason: "LORE_RERANK=off".into(),
            },
            _ if config.installed() => RerankerStatus::NotLoaded,
            RerankSetting::Auto => RerankerStatus::Off {
                reason: format!(
                    "LORE_RERANK=auto and the model is not installed ({})",
                    config.model_file().display()
                ),
            },
            RerankSetting::On => RerankerStatus::Unavailable {
                missing: format!(
                    "the reranker model {} does not exist",
                    config.model_file().display()
                ),
                fix: SETUP_FIX.to_string(),
            },
        };
        Self {
            shared: Arc::new(Shared {
                setting,
                config,
                status: Mutex::new(status),
                busy: AtomicBool::new(false),
                jobs: Mutex::new(None),
            }),
        }
    }

    /// The setting it was made with.
    pub fn setting(&self) -> RerankSetting {
        self.shared.setting
    }

    /// What it can do now.
    pub fn status(&self) -> RerankerStatus {
        self.shared
            .status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether recall reranks when the request does not say: the setting is on or auto and
    /// the model is installed and has not failed.
    pub fn by_default(&self) -> bool {
        self.shared.setting != RerankSetting::Off && self.can_run()
    }

    /// Whether a rerank can be attempted: the model is installed and has not failed to load
    /// (with `LORE_RERANK=off` a request may still ask for one).
    pub fn can_run(&self) -> bool {
        match self.status() {
            RerankerStatus::NotLoaded | RerankerStatus::Ready => true,
            RerankerStatus::Off { .. } => {
                self.shared.setting == RerankSetting::Off && self.shared.config.installed()
            }
            RerankerStatus::Unavailable { .. } => false,
        }
    }

    /// Relevance logits of `passages` for `query`, within `deadline`. Fails at once when the
    /// model cannot run or another rerank is running, and when the deadline passes.
    pub async fn score(
        &self,
        query: String,
        passages: Vec<String>,
        deadline: Duration,
    ) -> Result<Vec<f32>, ActorError> {
        if passages.is_empty() {
            return Ok(Vec::new());
        }
        if !self.can_run() {
            return Err(ActorError::Rerank(match self.status() {
                RerankerStatus::Unavailable { missing, fix } => format!("{missing}; {fix}"),
                RerankerStatus::Off { reason } => reason,
                other => format!("{other:?}"),
            }));
        }
        if self.shared.busy.swap(true, Ordering::AcqRel) {
            return Err(ActorError::Rerank(
                "reranker busy with another recall".into(),
            ));
        }
        let _idle = BusyGuard(&self.shared.busy);
        let sender = self.sender()?;
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job = Job {
            query,
            passages,
            deadline: Instant::now() + deadline,
            reply,
        };
        sender
            .try_send(job)
            .map_err(|_| ActorError::Rerank("reranker busy with another recall".into()))?;
        match tokio::time::timeout(deadline, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(ActorError::Rerank("the reranker thread stopped".into())),
            Err(_) => Err(ActorError::Rerank(format!(
                "reranking took longer than {} ms",
                deadline.as_millis()
            ))),
        }
    }

    /// The channel to the model's thread, starting the thread on first use.
    fn sender(&self) -> Result<std::sync::mpsc::SyncSender<Job>, ActorError> {
        let mut slot = self.shared.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sender) = slot.as_ref() {
            return Ok(sender.clone());
        }
        let (sender, jobs) = std::sync::mpsc::sync_channel::<Job>(1);
        let shared = Arc::clone(&self.shared);
        std::thread::Builder::new()
            .name("lore-rerank".into())
            .spawn(move || serve(&shared, &jobs))
            .map_err(|err| ActorError::Rerank(format!("cannot start the reranker: {err}")))?;
        *slot = Some(sender.clone());
        Ok(sender)
    }
}

/// Clears the busy flag when a call ends, however it ends.
struct BusyGuard<'a>(&'a AtomicBool);

impl Drop for BusyGuard<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// The model thread: loads the model on the first job, then answers jobs until every sender
/// is gone.
fn serve(shared: &Shared, jobs: &std::sync::mpsc::Receiver<Job>) {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get().min(4))
        .unwrap_or(1);
    let mut model: Option<model::CrossEncoder> = None;
    while let Ok(job) = jobs.recv() {
        if model.is_none() {
            let started = Instant::now();
            match model::CrossEncoder::load(&shared.config, threads) {
                Ok(loaded) => {
                    info!(
                        model = MODEL_NAME,
                        threads,
                        took_ms = started.elapsed().as_millis() as u64,
                        "reranker loaded"
                    );
                    set_status(shared, RerankerStatus::Ready);
                    model = Some(loaded);
                }
                Err(err) => {
                    let (missing, fix) = match err.clone() {
                        ActorError::EmbedderUnavailable { missing, fix } => (missing, fix),
                        other => (other.to_string(), SETUP_FIX.to_string()),
                    };
                    warn!(%missing, "reranker unavailable; recall answers unreranked");
                    set_status(shared, RerankerStatus::Unavailable { missing, fix });
                    let _ = job.reply.send(Err(ActorError::Rerank(err.to_string())));
                    return;
                }
            }
        }
        let Some(loaded) = model.as_mut() else {
            return;
        };
        if Instant::now() > job.deadline {
            let _ = job
                .reply
                .send(Err(ActorError::Rerank("past its deadline".into())));
            continue;
        }
        let passages: Vec<&str> = job.passages.iter().map(String::as_str).collect();
        let result = loaded.score(&job.query, &passages, Some(job.deadline));
        let _ = job.reply.send(result);
    }
}

fn set_status(shared: &Shared, status: RerankerStatus) {
    *shared.status.lock().unwrap_or_else(|e| e.into_inner()) = status;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_parses_and_says_what_is_wrong() {
        assert_eq!("on".parse(), Ok(RerankSetting::On));
        assert_eq!(" OFF ".parse(), Ok(RerankSetting::Off));
        assert_eq!("auto".parse(), Ok(RerankSetting::Auto));
        let err = "sometimes".parse::<RerankSetting>().unwrap_err();
        assert!(err.contains("on, off or auto"), "{err}");
    }

    #[test]
    fn a_missing_model_is_off_for_auto_and_unavailable_for_on() {
        let dir = std::env::temp_dir().join("lore-rerank-test-no-models");
        let config = RerankerConfig::beside(&EmbedderConfig::in_dir(&dir));
        let auto = Reranker::new(RerankSetting::Auto, config.clone());
        assert!(matches!(auto.status(), RerankerStatus::Off { .. }));
        assert!(!auto.by_default() && !auto.can_run());
        let on = Reranker::new(RerankSetting::On, config.clone());
        assert!(matches!(on.status(), RerankerStatus::Unavailable { .. }));
        assert!(!on.by_default());
        let off = Reranker::new(RerankSetting::Off, config);
        assert!(!off.by_default() && !off.can_run());
    }
}
