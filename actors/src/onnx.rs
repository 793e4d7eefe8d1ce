//! What the embedding model and the cross-encoder share of ONNX Runtime: the process-wide
//! environment ([`environment`]), loading a model ([`load`]: its files checked, one session
//! with the options both use, its inputs and output found, its tokenizer), one run of a batch of
//! padded token ids ([`Graph::run`]), and [`cut_at`] for text cut before tokenizing.
//!
//! A [`Spec`] says how messages name the model, which output to read, how the tokenizer
//! truncates and which fix to name; what fails to load is
//! [`ActorError::EmbedderUnavailable`] naming the file, never a panic. A failed run is handed to
//! the caller's own error (`"{what}: {cause}"`).

use std::path::Path;
use std::sync::Mutex;

use ort::environment::Environment;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;
use tokenizers::{Tokenizer, TruncationParams};

use crate::ActorError;

/// The process-wide ONNX Runtime environment, created on first success (failures are retried,
/// so installing the runtime and restarting the embedder works without a new process).
static ENVIRONMENT: Mutex<Option<Environment>> = Mutex::new(None);

/// The ONNX Runtime environment, loading the library at `runtime` on first use. What is wrong
/// with the runtime names the embedder's fix ([`crate::embedder::SETUP_FIX`]), which installs it.
pub fn environment(runtime: &Path) -> Result<Environment, ActorError> {
    let unavailable = |missing| unavailable(missing, crate::embedder::SETUP_FIX);
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

fn unavailable(missing: String, fix: &str) -> ActorError {
    ActorError::EmbedderUnavailable {
        missing,
        fix: fix.to_string(),
    }
}

/// A model to load and how its messages name it.
#[derive(Debug, Clone)]
pub struct Spec<'a> {
    /// The model in messages: `embedding` gives "the embedding model … cannot be loaded".
    pub name: &'a str,
    /// The tokenizer in its load error: "the {tokenizer_name} … cannot be loaded".
    pub tokenizer_name: &'a str,
    /// The ONNX graph.
    pub model_file: &'a Path,
    /// The tokenizer (`tokenizer.json`).
    pub tokenizer_file: &'a Path,
    /// The ONNX Runtime library.
    pub runtime: &'a Path,
    /// Intra-op threads of the session (at least one).
    pub threads: usize,
    /// The output to read when the graph has it; otherwise its first.
    pub output: Option<&'a str>,
    /// Whether the message of a missing input lists the graph's inputs.
    pub list_inputs: bool,
    /// The tokenizer's truncation; `None` when the caller cuts its inputs itself. Padding is
    /// always off: [`Graph::run`] pads each batch to its longest row.
    pub truncation: Option<TruncationParams>,
    /// What to do about a missing or broken file.
    pub fix: &'a str,
}

/// A loaded ONNX session and what it takes and answers.
pub struct Graph {
    session: Session,
    /// Whether the graph takes `token_type_ids`.
    type_ids: bool,
    /// Name of the output read.
    output: String,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("type_ids", &self.type_ids)
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

/// Loads the model and tokenizer of `spec`; the runtime is opened on first use
/// ([`environment`]). The graph must take `input_ids` and `attention_mask`.
pub fn load(spec: &Spec<'_>) -> Result<(Graph, Tokenizer), ActorError> {
    let unavailable = |missing| unavailable(missing, spec.fix);
    let name = spec.name;
    let model_file = spec.model_file;
    for (file, what) in [(model_file, "model"), (spec.tokenizer_file, "tokenizer")] {
        if !file.is_file() {
            return Err(unavailable(format!(
                "the {name} {what} file {} does not exist",
                file.display()
            )));
        }
    }
    let environment = environment(spec.runtime)?;
    let session = build_session(&environment, model_file, spec.threads.max(1)).map_err(|err| {
        unavailable(format!(
            "the {name} model {} cannot be loaded: {err}",
            model_file.display()
        ))
    })?;
    let names: Vec<&str> = session.inputs().iter().map(|input| input.name()).collect();
    for required in ["input_ids", "attention_mask"] {
        if !names.contains(&required) {
            let listed = if spec.list_inputs {
                format!(" (inputs: {})", names.join(", "))
            } else {
                String::new()
            };
            return Err(unavailable(format!(
                "the {name} model {} has no `{required}` input{listed}",
                model_file.display()
            )));
        }
    }
    let type_ids = names.contains(&"token_type_ids");
    let output = session
        .outputs()
        .iter()
        .map(|output| output.name().to_string())
        .find(|found| spec.output == Some(found.as_str()))
        .or_else(|| session.outputs().first().map(|o| o.name().to_string()))
        .ok_or_else(|| {
            unavailable(format!(
                "the {name} model {} has no output",
                model_file.display()
            ))
        })?;
    let tokenizer = load_tokenizer(spec)?;
    let graph = Graph {
        session,
        type_ids,
        output,
    };
    Ok((graph, tokenizer))
}

/// One session: full graph optimisation, `threads` intra-op threads that do not spin, and
/// neither the CPU arena nor the memory pattern, so what a run allocated is given back after it.
fn build_session(environment: &Environment, path: &Path, threads: usize) -> ort::Result<Session> {
    let mut builder = Session::builder(environment)?
        .with_optimization_level(GraphOptimizationLevel::Level3)?
        .with_intra_threads(threads)?
        .with_inter_threads(1)?
        .with_intra_op_spinning(false)?
        .with_memory_pattern(false)?
        .with_execution_providers([ort::ep::CPU::default().with_arena_allocator(false).build()])?;
    builder.commit_from_file(path)
}

fn load_tokenizer(spec: &Spec<'_>) -> Result<Tokenizer, ActorError> {
    let broken = |err: &dyn std::fmt::Display| {
        unavailable(
            format!(
                "the {} {} cannot be loaded: {err}",
                spec.tokenizer_name,
                spec.tokenizer_file.display()
            ),
            spec.fix,
        )
    };
    // Batches are small and every worker already owns a core: no rayon pool for tokenizing.
    tokenizers::parallelism::set_parallelism(false);
    let mut tokenizer = Tokenizer::from_file(spec.tokenizer_file).map_err(|err| broken(&err))?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(spec.truncation.clone())
        .map_err(|err| broken(&err))?;
    Ok(tokenizer)
}

impl Graph {
    /// Runs one batch, row `i` being `rows[i]` (token ids, type ids): the rows are padded with
    /// zeros to the longest (the attention mask is one over each row's own ids), and `read` gets
    /// the output's dimensions and data. What fails is `failed(what, cause)`.
    pub fn run<T, E>(
        &mut self,
        rows: &[(&[i64], &[i64])],
        failed: impl Fn(&str, String) -> E,
        read: impl FnOnce(&[i64], &[f32]) -> Result<T, E>,
    ) -> Result<T, E> {
        let count = rows.len();
        let width = rows
            .iter()
            .map(|(ids, _)| ids.len())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut ids = vec![0i64; count * width];
        let mut mask = vec![0i64; count * width];
        let mut types = vec![0i64; count * width];
        for (row, (row_ids, row_types)) in rows.iter().enumerate() {
            let start = row * width;
            let len = row_ids.len().min(width);
            ids[start..start + len].copy_from_slice(&row_ids[..len]);
            mask[start..start + len].fill(1);
            let typed = row_types.len().min(len);
            types[start..start + typed].copy_from_slice(&row_types[..typed]);
        }
        let shape = [count, width];
        let bad = |err| failed("bad input tensor", err);
        let mut inputs = ort::inputs![
            "input_ids" => tensor(shape, &ids).map_err(bad)?,
            "attention_mask" => tensor(shape, &mask).map_err(bad)?,
        ];
        if self.type_ids {
            let type_tensor = tensor(shape, &types).map_err(bad)?;
            inputs.push(("token_type_ids".into(), type_tensor.into()));
        }
        let outputs = self
            .session
            .run(inputs)
            .map_err(|err| failed("the model failed", err.to_string()))?;
        let (dims, data) = outputs[self.output.as_str()]
            .try_extract_tensor::<f32>()
            .map_err(|err| failed("unexpected model output", err.to_string()))?;
        read(&dims[..], data)
    }
}

fn tensor(shape: [usize; 2], data: &[i64]) -> Result<TensorRef<'_, i64>, String> {
    TensorRef::from_array_view((shape, data)).map_err(|err| err.to_string())
}

/// `text` cut to at most `max` bytes at a character boundary.
pub fn cut_at(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}
