//! [`EmbeddingModel`]: one ONNX Runtime session of bge-small-en-v1.5 and its tokenizer.
//!
//! Inputs are truncated at 512 tokens and padded to the longest input of each batch (the
//! tokenizer file sets neither, so both are configured here). Texts are sorted by length before
//! batching so a batch carries little padding. The vector is the first token (CLS) of
//! `last_hidden_state`, L2-normalised. Queries take the bge retrieval prefix, documents none.
//!
//! The runtime library is opened once per process ([`environment`]); a missing or too old
//! runtime, or missing model files, give [`ActorError::EmbedderUnavailable`] naming the file and
//! `scripts/setup`, never a panic.

use std::path::Path;
use std::sync::Mutex;

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{EmbedError, EmbedderConfig, MODEL_DIM, SETUP_FIX};
use crate::ActorError;

/// Longest input, in tokens, the model takes.
pub const MAX_TOKENS: usize = 512;
/// Texts run through the model at once.
pub const MAX_BATCH: usize = 32;
/// Prefix bge-small-en-v1.5 wants in front of retrieval queries.
pub const QUERY_PREFIX: &str = "Represent this sentence for searching relevant passages: ";

/// What a text is embedded for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A search query: gets [`QUERY_PREFIX`].
    Query,
    /// A stored document: embedded as is.
    Document,
}

/// The process-wide ONNX Runtime environment, created on first success (failures are retried,
/// so installing the runtime and restarting the embedder works without a new process).
static ENVIRONMENT: Mutex<Option<Environment>> = Mutex::new(None);

/// The ONNX Runtime environment, loading the library at `runtime` on first use.
pub fn environment(runtime: &Path) -> Result<Environment, EmbedError> {
    let mut slot = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(environment) = slot.as_ref() {
        return Ok(environment.clone());
    }
    if !runtime.is_file() {
        return Err(unavailable(format!(
            "the ONNX Runtime library {} does not exist",
            runtime.display()
        )));
    }
    let absolute = std::path::absolute(runtime).unwrap_or_else(|_| runtime.to_path_buf());
    let builder = ort::init_from(&absolute).map_err(|err| {
        unavailable(format!(
            "the ONNX Runtime library {} cannot be used: {err}",
            absolute.display()
        ))
    })?;
    let environment = builder.with_name("lore").build().map_err(|err| {
        unavailable(format!(
            "the ONNX Runtime at {} failed to start: {err}",
            absolute.display()
        ))
    })?;
    *slot = Some(environment.clone());
    Ok(environment)
}

fn unavailable(missing: String) -> ActorError {
    ActorError::EmbedderUnavailable {
        missing,
        fix: SETUP_FIX.to_string(),
    }
}

fn failed(what: &str, err: impl std::fmt::Display) -> ActorError {
    ActorError::Embedding(format!("{what}: {err}"))
}

/// A loaded embedding model. `embed` takes `&mut self`: one session serves one thread.
pub struct EmbeddingModel {
    session: Session,
    tokenizer: Tokenizer,
    /// Whether the graph takes `token_type_ids`.
    type_ids: bool,
    /// Name of the output holding the token states.
    output: String,
}

impl std::fmt::Debug for EmbeddingModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddingModel").finish_non_exhaustive()
    }
}

impl EmbeddingModel {
    /// Loads the model of `config` with one intra-op thread (a pool worker).
    pub fn load(config: &EmbedderConfig) -> Result<Self, EmbedError> {
        Self::load_with_threads(config, 1)
    }

    /// Loads the model of `config`, its session using `threads` intra-op threads.
    pub fn load_with_threads(config: &EmbedderConfig, threads: usize) -> Result<Self, EmbedError> {
        let model_file = config.model_file();
        let tokenizer_file = config.tokenizer_file();
        for (file, what) in [(&model_file, "model"), (&tokenizer_file, "tokenizer")] {
            if !file.is_file() {
                return Err(unavailable(format!(
                    "the embedding {what} file {} does not exist",
                    file.display()
                )));
            }
        }
        let environment = environment(&config.runtime)?;
        let session = build_session(&environment, &model_file, threads.max(1)).map_err(|err| {
            unavailable(format!(
                "the embedding model {} cannot be loaded: {err}",
                model_file.display()
            ))
        })?;
        let names: Vec<&str> = session.inputs().iter().map(|input| input.name()).collect();
        for required in ["input_ids", "attention_mask"] {
            if !names.contains(&required) {
                return Err(unavailable(format!(
                    "the embedding model {} has no `{required}` input (inputs: {})",
                    model_file.display(),
                    names.join(", ")
                )));
            }
        }
        let type_ids = names.contains(&"token_type_ids");
        let output = session
            .outputs()
            .iter()
            .map(|output| output.name().to_string())
            .find(|name| name == "last_hidden_state")
            .or_else(|| session.outputs().first().map(|o| o.name().to_string()))
            .ok_or_else(|| {
                unavailable(format!(
                    "the embedding model {} has no output",
                    model_file.display()
                ))
            })?;
        let tokenizer = load_tokenizer(&tokenizer_file)?;
        Ok(Self {
            session,
            tokenizer,
            type_ids,
            output,
        })
    }

    /// One unit vector of [`MODEL_DIM`] values per text, in the order of `texts`.
    pub fn embed(&mut self, texts: &[&str], purpose: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inputs: Vec<String> = texts
            .iter()
            .map(|text| match purpose {
                Purpose::Query => format!("{QUERY_PREFIX}{text}"),
                Purpose::Document => (*text).to_string(),
            })
            .collect();
        // Similar lengths together: each batch pads to its longest input.
        let mut order: Vec<usize> = (0..inputs.len()).collect();
        order.sort_by_key(|&i| inputs[i].len());
        let mut vectors = vec![Vec::new(); inputs.len()];
        for chunk in order.chunks(MAX_BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| inputs[i].as_str()).collect();
            for (&i, vector) in chunk.iter().zip(self.run(batch)?) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }

    fn run(&mut self, batch: Vec<&str>) -> Result<Vec<Vec<f32>>, EmbedError> {
        let rows = batch.len();
        let encodings = self
            .tokenizer
            .encode_batch(batch, true)
            .map_err(|err| failed("tokenizing failed", err))?;
        let width = encodings.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0i64; rows * width];
        let mut mask = vec![0i64; rows * width];
        let mut types = vec![0i64; rows * width];
        for (row, encoding) in encodings.iter().enumerate() {
            let start = row * width;
            for (j, ((&id, &m), &t)) in encoding
                .get_ids()
                .iter()
                .zip(encoding.get_attention_mask())
                .zip(encoding.get_type_ids())
                .enumerate()
                .take(width)
            {
                ids[start + j] = i64::from(id);
                mask[start + j] = i64::from(m);
                types[start + j] = i64::from(t);
            }
        }
        let shape = [rows, width];
        let mut inputs = ort::inputs![
            "input_ids" => tensor(shape, &ids)?,
            "attention_mask" => tensor(shape, &mask)?,
        ];
        if self.type_ids {
            inputs.push(("token_type_ids".into(), tensor(shape, &types)?.into()));
        }
        let outputs = self
            .session
            .run(inputs)
            .map_err(|err| failed("the model failed", err))?;
        let (dims, data) = outputs[self.output.as_str()]
            .try_extract_tensor::<f32>()
            .map_err(|err| failed("unexpected model output", err))?;
        let dims: Vec<usize> = dims
            .iter()
            .map(|&d| usize::try_from(d).unwrap_or(0))
            .collect();
        if dims.len() != 3 || dims[0] != rows || dims[2] != MODEL_DIM {
            return Err(failed("unexpected output shape", format!("{dims:?}")));
        }
        let stride = dims[1] * dims[2];
        Ok((0..rows)
            .map(|row| normalise(&data[row * stride..row * stride + MODEL_DIM]))
            .collect())
    }
}

fn tensor(shape: [usize; 2], data: &[i64]) -> Result<TensorRef<'_, i64>, EmbedError> {
    TensorRef::from_array_view((shape, data)).map_err(|err| failed("bad input tensor", err))
}

fn build_session(environment: &Environment, path: &Path, threads: usize) -> ort::Result<Session> {
    let mut builder = Session::builder(environment)?
        .with_optimization_level(GraphOptimizationLevel::Level3)?
        .with_intra_threads(threads)?
        .with_inter_threads(1)?
        .with_intra_op_spinning(false)?;
    builder.commit_from_file(path)
}

fn load_tokenizer(path: &Path) -> Result<Tokenizer, EmbedError> {
    let broken = |err: &dyn std::fmt::Display| {
        unavailable(format!(
            "the tokenizer {} cannot be loaded: {err}",
            path.display()
        ))
    };
    // Batches are small and every worker already owns a core: no rayon pool for tokenizing.
    tokenizers::parallelism::set_parallelism(false);
    let mut tokenizer = Tokenizer::from_file(path).map_err(|err| broken(&err))?;
    tokenizer.with_padding(Some(PaddingParams {
        strategy: PaddingStrategy::BatchLongest,
        ..PaddingParams::default()
    }));
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            ..TruncationParams::default()
        }))
        .map_err(|err| broken(&err))?;
    Ok(tokenizer)
}

fn normalise(vector: &[f32]) -> Vec<f32> {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    vector.iter().map(|v| v / norm).collect()
}
