//! [`CrossEncoder`]: one ONNX Runtime session of ms-marco-MiniLM-L-12-v2 (int8) and its
//! tokenizer. It reads a query and a passage together and answers one relevance logit per
//! pair (higher is more relevant); the logits of one call are comparable with each other.
//!
//! The shipped tokenizer pads every pair to 512 tokens; here padding is per batch (to its
//! longest pair) and pairs are truncated to [`MAX_PAIR_TOKENS`], cutting the passage only.
//! Batches hold at most [`BATCH_TOKENS`] padded tokens, so memory does not grow with the number
//! of candidates.

use std::path::Path;

use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::TensorRef;
use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::RerankerConfig;
use crate::ActorError;
use crate::embedder::model::environment;

/// Longest pair, query and passage together, in tokens.
pub const MAX_PAIR_TOKENS: usize = 256;
/// Most padded tokens (rows × width) in one model run.
pub const BATCH_TOKENS: usize = 4096;
/// Longest query read, in bytes (the passage gets the rest of the pair).
const MAX_QUERY_BYTES: usize = 400;

fn unavailable(missing: String) -> ActorError {
    ActorError::EmbedderUnavailable {
        missing,
        fix: super::SETUP_FIX.to_string(),
    }
}

fn failed(what: &str, err: impl std::fmt::Display) -> ActorError {
    ActorError::Rerank(format!("{what}: {err}"))
}

/// A loaded cross-encoder; `score` takes `&mut self`: one session serves one thread.
pub struct CrossEncoder {
    session: Session,
    tokenizer: Tokenizer,
    type_ids: bool,
    output: String,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder").finish_non_exhaustive()
    }
}

impl CrossEncoder {
    /// Loads the model of `config` with `threads` intra-op threads.
    pub fn load(config: &RerankerConfig, threads: usize) -> Result<Self, ActorError> {
        let model_file = config.model_file();
        let tokenizer_file = config.tokenizer_file();
        for (file, what) in [(&model_file, "model"), (&tokenizer_file, "tokenizer")] {
            if !file.is_file() {
                return Err(unavailable(format!(
                    "the reranker {what} file {} does not exist",
                    file.display()
                )));
            }
        }
        let environment = environment(&config.runtime)?;
        let session = build_session(&environment, &model_file, threads.max(1)).map_err(|err| {
            unavailable(format!(
                "the reranker model {} cannot be loaded: {err}",
                model_file.display()
            ))
        })?;
        let names: Vec<&str> = session.inputs().iter().map(|input| input.name()).collect();
        for required in ["input_ids", "attention_mask"] {
            if !names.contains(&required) {
                return Err(unavailable(format!(
                    "the reranker model {} has no `{required}` input",
                    model_file.display()
                )));
            }
        }
        let type_ids = names.contains(&"token_type_ids");
        let output = session
            .outputs()
            .first()
            .map(|output| output.name().to_string())
            .ok_or_else(|| {
                unavailable(format!(
                    "the reranker model {} has no output",
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

    /// One relevance logit per passage for `query`, in the order of `passages`. Past
    /// `deadline` (checked between batches) it stops with an error: nobody waits any more.
    pub fn score(
        &mut self,
        query: &str,
        passages: &[&str],
        deadline: Option<std::time::Instant>,
    ) -> Result<Vec<f32>, ActorError> {
        let query = cut_at(query, MAX_QUERY_BYTES);
        let mut pairs: Vec<(usize, Vec<i64>, Vec<i64>)> = Vec::with_capacity(passages.len());
        for (index, passage) in passages.iter().enumerate() {
            let encoding = self
                .tokenizer
                .encode((query, *passage), true)
                .map_err(|err| failed("tokenizing failed", err))?;
            let ids = encoding.get_ids().iter().map(|&id| i64::from(id)).collect();
            let types = encoding
                .get_type_ids()
                .iter()
                .map(|&id| i64::from(id))
                .collect();
            pairs.push((index, ids, types));
        }
        pairs.sort_by_key(|(_, ids, _)| ids.len());
        let mut scores = vec![f32::NEG_INFINITY; passages.len()];
        let mut start = 0;
        while start < pairs.len() {
            if deadline.is_some_and(|deadline| std::time::Instant::now() > deadline) {
                return Err(failed("scoring", "past its deadline"));
            }
            let mut end = start + 1;
            while end < pairs.len() && (end - start + 1) * pairs[end].1.len() <= BATCH_TOKENS {
                end += 1;
            }
            let batch = &pairs[start..end];
            for ((index, _, _), logit) in batch.iter().zip(self.run(batch)?) {
                scores[*index] = logit;
            }
            start = end;
        }
        Ok(scores)
    }

    fn run(&mut self, batch: &[(usize, Vec<i64>, Vec<i64>)]) -> Result<Vec<f32>, ActorError> {
        let rows = batch.len();
        let width = batch
            .iter()
            .map(|(_, ids, _)| ids.len())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut ids = vec![0i64; rows * width];
        let mut mask = vec![0i64; rows * width];
        let mut types = vec![0i64; rows * width];
        for (row, (_, piece_ids, piece_types)) in batch.iter().enumerate() {
            let start = row * width;
            let len = piece_ids.len().min(width);
            ids[start..start + len].copy_from_slice(&piece_ids[..len]);
            mask[start..start + len].fill(1);
            let typed = piece_types.len().min(len);
            types[start..start + typed].copy_from_slice(&piece_types[..typed]);
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
        let per_row = dims.iter().skip(1).product::<i64>().max(1) as usize;
        if dims.first().copied() != Some(rows as i64) || data.len() < rows * per_row {
            return Err(failed("unexpected output shape", format!("{dims:?}")));
        }
        // One logit per row (the first, should the graph answer more).
        Ok((0..rows).map(|row| data[row * per_row]).collect())
    }
}

fn tensor(shape: [usize; 2], data: &[i64]) -> Result<TensorRef<'_, i64>, ActorError> {
    TensorRef::from_array_view((shape, data)).map_err(|err| failed("bad input tensor", err))
}

fn build_session(
    environment: &ort::environment::Environment,
    path: &Path,
    threads: usize,
) -> ort::Result<Session> {
    let mut builder = Session::builder(environment)?
        .with_optimization_level(GraphOptimizationLevel::Level3)?
        .with_intra_threads(threads)?
        .with_inter_threads(1)?
        .with_intra_op_spinning(false)?
        .with_memory_pattern(false)?
        .with_execution_providers([ort::ep::CPU::default().with_arena_allocator(false).build()])?;
    builder.commit_from_file(path)
}

fn load_tokenizer(path: &Path) -> Result<Tokenizer, ActorError> {
    let broken = |err: &dyn std::fmt::Display| {
        unavailable(format!(
            "the reranker tokenizer {} cannot be loaded: {err}",
            path.display()
        ))
    };
    tokenizers::parallelism::set_parallelism(false);
    let mut tokenizer = Tokenizer::from_file(path).map_err(|err| broken(&err))?;
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            direction: TruncationDirection::Right,
            max_length: MAX_PAIR_TOKENS,
            strategy: TruncationStrategy::OnlySecond,
            stride: 0,
        }))
        .map_err(|err| broken(&err))?;
    Ok(tokenizer)
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut_at(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    &text[..cut]
}
