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
pub use pool::{Embed, EmbedPassages, Embedder, EmbedderHandle, EmbedderStatus};

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
    /// Worker threads, each with its own session (`LORE_EMBED_POOL_SIZE`, default cores − 1
    /// within the available memory, at least 1; see [`default_pool_size`]).
    pub pool_size: usize,
    /// Intra-op threads of the query worker, a session of its own at normal priority that
    /// embeds only recall queries, so a query never waits behind a document batch or on a
    /// background-priority thread (`LORE_EMBED_QUERY_THREADS`, default 0: off, as its model adds
    /// about 68 MB of resident memory); 0: no query worker,
    /// queries go to the pool.
    pub query_threads: usize,
    /// Most passages embedded per document (`LORE_EMBED_MAX_PASSAGES`, default and at most
    /// [`model::MAX_PASSAGES`]); 1 embeds only a document's first 512 tokens, for measuring
    /// what passages bring.
    pub max_passages: usize,
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
        let query_threads = std::env::var("LORE_EMBED_QUERY_THREADS")
            .ok()
            .and_then(|value| value.trim().parse::<usize>().ok())
            .map_or(DEFAULT_QUERY_THREADS, |threads| {
                threads.min(MAX_QUERY_THREADS)
            });
        let max_passages = std::env::var("LORE_EMBED_MAX_PASSAGES")
            .ok()
            .and_then(|value| value.trim().parse::<usize>().ok())
            .filter(|&count| count > 0)
            .map_or(model::MAX_PASSAGES, |count| count.min(model::MAX_PASSAGES));
        Self {
            models_dir,
            runtime,
            pool_size,
            query_threads,
            max_passages,
        }
    }

    /// A configuration for the models directory `models_dir`, runtime inside it.
    pub fn in_dir(models_dir: impl Into<PathBuf>) -> Self {
        let models_dir = models_dir.into();
        Self {
            runtime: models_dir.join(RUNTIME_DIR).join(RUNTIME_FILE),
            models_dir,
            pool_size: default_pool_size(),
            query_threads: DEFAULT_QUERY_THREADS,
            max_passages: model::MAX_PASSAGES,
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

/// Intra-op threads of the query worker by default.
pub const DEFAULT_QUERY_THREADS: usize = 0;
/// Most intra-op threads of the query worker.
pub const MAX_QUERY_THREADS: usize = 8;

/// Memory one worker may need: the model (about 110 MB resident) and one token-bounded batch.
pub const WORKER_MEMORY_BYTES: u64 = 256 * 1024 * 1024;

/// Cores − 1 (one core stays free for the proxy; the standard library honours a cgroup CPU
/// quota), no more than the available memory holds at [`WORKER_MEMORY_BYTES`] each, at least 1.
pub fn default_pool_size() -> usize {
    let cores = std::thread::available_parallelism()
        .map(|cores| cores.get().saturating_sub(1))
        .unwrap_or(1);
    pool_size_for(cores, available_memory_bytes())
}

/// The pool size for `cores` spare cores and `available` bytes of memory (when known).
pub fn pool_size_for(cores: usize, available: Option<u64>) -> usize {
    let by_memory = available.map_or(usize::MAX, |bytes| {
        usize::try_from(bytes / WORKER_MEMORY_BYTES).unwrap_or(usize::MAX)
    });
    cores.min(by_memory).max(1)
}

/// The memory this process may still use: the smaller of `MemAvailable` in `/proc/meminfo`
/// and what the cgroup's limit leaves (v2 `memory.max` − `memory.current`, or v1
/// `memory.limit_in_bytes` − `memory.usage_in_bytes`). `None` when neither can be read.
pub fn available_memory_bytes() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let system = read("/proc/meminfo").and_then(|info| meminfo_available(&info));
    let cgroup = [
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ]
    .iter()
    .find_map(|(limit, usage)| cgroup_room(&read(limit)?, &read(usage)?));
    match (system, cgroup) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// `MemAvailable` of a `/proc/meminfo` text, in bytes.
fn meminfo_available(info: &str) -> Option<u64> {
    let line = info
        .lines()
        .find(|line| line.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// What a cgroup limit leaves above its usage; `None` for no limit (`max`, or v1's huge value).
fn cgroup_room(limit: &str, usage: &str) -> Option<u64> {
    let limit: u64 = limit.trim().parse().ok()?;
    if limit >= 1 << 60 {
        return None;
    }
    let usage: u64 = usage.trim().parse().ok()?;
    Some(limit.saturating_sub(usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_fits_the_memory_and_the_cores() {
        assert_eq!(pool_size_for(3, None), 3);
        assert_eq!(pool_size_for(3, Some(600 * 1024 * 1024)), 2);
        assert_eq!(pool_size_for(8, Some(10 * 1024 * 1024)), 1, "at least one");
        assert_eq!(pool_size_for(0, None), 1);
    }

    #[test]
    fn memory_limits_are_read_from_meminfo_and_cgroups() {
        let info = "MemTotal:       24684392 kB\nMemAvailable:   1000 kB\n";
        assert_eq!(meminfo_available(info), Some(1_024_000));
        assert_eq!(cgroup_room("max\n", "100"), None);
        assert_eq!(
            cgroup_room("9223372036854771712", "100"),
            None,
            "v1 without a limit"
        );
        assert_eq!(cgroup_room("1000\n", "400\n"), Some(600));
        assert_eq!(cgroup_room("1000", "4000"), Some(0));
    }
}
