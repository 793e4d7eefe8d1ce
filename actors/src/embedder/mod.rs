//! The embedding model and the pool of threads that runs it.
//!
//! - [`model`]: [`EmbeddingModel`], one ONNX Runtime session plus its tokenizer (bge-small-en-v1.5,
//!   CLS pooling, L2-normalised, 384 dimensions).
//! - [`pool`]: [`Embedder`], a `SyncArbiter` of workers each owning a model, and the
//!   [`EmbedderHandle`] the rest of the gateway embeds through.
//! - This file: where the runtime and the model live ([`EmbedderConfig`]).
//!
//! The runtime is loaded with dlopen at run time (`ort` with `load-dynamic`); `scripts/setup`
//! installs it and the model under `~/.cache/lore/models` (or `LORE_MODELS_DIR`). When either is
//! missing the gateway keeps running and recall uses BM25 alone.

pub mod model;
pub mod pool;

use std::path::PathBuf;

pub use model::{EmbeddingModel, Purpose};
pub use pool::{Embed, Embedder, EmbedderHandle, EmbedderStatus};

/// The error of embedding calls: the crate's one error type.
pub type EmbedError = crate::ActorError;

/// Name of the embedding model, stored with the vectors.
pub const MODEL_NAME: &str = "bge-small-en-v1.5";
/// Dimension of its vectors.
pub const MODEL_DIM: usize = 384;
/// Directory of the ONNX Runtime inside the models directory.
pub const RUNTIME_DIR: &str = "onnxruntime-1.31.1";
/// File name of the ONNX Runtime shared library.
pub const RUNTIME_FILE: &str = "libonnxruntime.so.1.31.1";
/// What to run when something is missing.
pub const SETUP_FIX: &str = "run `scripts/setup` to install the ONNX Runtime and the embedding model (set LORE_MODELS_DIR / ORT_DYLIB_PATH if they live elsewhere)";

/// Where the runtime and the model are, and how many workers embed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbedderConfig {
    /// The models directory (`LORE_MODELS_DIR`, default `$HOME/.cache/lore/models`).
    pub models_dir: PathBuf,
    /// The ONNX Runtime shared library (`ORT_DYLIB_PATH`, default
    /// `<models_dir>/onnxruntime-1.31.1/libonnxruntime.so.1.31.1`).
    pub runtime: PathBuf,
    /// Worker threads, each with its own session (`LORE_EMBED_POOL_SIZE`, default cores − 1,
    /// at least 1).
    pub pool_size: usize,
}

impl EmbedderConfig {
    /// The configuration from the environment, with the defaults above.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        let models_dir = var("LORE_MODELS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let home = var("HOME").map(PathBuf::from).unwrap_or_default();
                home.join(".cache").join("lore").join("models")
            });
        let runtime = var("ORT_DYLIB_PATH")
            .map(PathBuf::from)
            .unwrap_or_else(|| models_dir.join(RUNTIME_DIR).join(RUNTIME_FILE));
        let pool_size = std::env::var("LORE_EMBED_POOL_SIZE")
            .ok()
            .and_then(|value| value.trim().parse::<usize>().ok())
            .filter(|&size| size > 0)
            .unwrap_or_else(default_pool_size);
        Self {
            models_dir,
            runtime,
            pool_size,
        }
    }

    /// A configuration for the models directory `models_dir`, runtime inside it.
    pub fn in_dir(models_dir: impl Into<PathBuf>) -> Self {
        let models_dir = models_dir.into();
        Self {
            runtime: models_dir.join(RUNTIME_DIR).join(RUNTIME_FILE),
            models_dir,
            pool_size: default_pool_size(),
        }
    }

    /// The directory of the model files.
    pub fn model_dir(&self) -> PathBuf {
        self.models_dir.join(MODEL_NAME)
    }

    /// The ONNX graph.
    pub fn model_file(&self) -> PathBuf {
        self.model_dir().join("model.onnx")
    }

    /// The tokenizer.
    pub fn tokenizer_file(&self) -> PathBuf {
        self.model_dir().join("tokenizer.json")
    }
}

/// Cores − 1, at least 1: one core stays free for the proxy.
pub fn default_pool_size() -> usize {
    std::thread::available_parallelism()
        .map(|cores| cores.get().saturating_sub(1))
        .unwrap_or(1)
        .max(1)
}
