//! [`CrossEncoder`]: one ONNX Runtime session of ms-marco-MiniLM-L-12-v2 (int8) and its
//! tokenizer. It reads a query and a passage together and answers one relevance logit per
//! pair (higher is more relevant); the logits of one call are comparable with each other.
//!
//! The shipped tokenizer pads every pair to 512 tokens; here padding is per batch (to its
//! longest pair) and pairs are truncated to [`MAX_PAIR_TOKENS`], cutting the passage only.
//! Batches hold at most [`BATCH_TOKENS`] padded tokens, so memory does not grow with the number
//! of candidates. Loading the session and running a batch are [`crate::onnx`]'s, shared with
//! the embedder.

use tokenizers::{Tokenizer, TruncationDirection, TruncationParams, TruncationStrategy};

use super::RerankerConfig;
use crate::ActorError;
use crate::onnx::{self, Graph, cut_at};

/// Longest pair, query and passage together, in tokens.
pub const MAX_PAIR_TOKENS: usize = 256;
/// Most padded tokens (rows × width) in one model run.
pub const BATCH_TOKENS: usize = 4096;
/// Longest query read, in bytes (the passage gets the rest of the pair).
const MAX_QUERY_BYTES: usize = 400;

fn failed(what: &str, err: impl std::fmt::Display) -> ActorError {
    ActorError::Rerank(format!("{what}: {err}"))
}

/// A loaded cross-encoder; `score` takes `&mut self`: one session serves one thread.
pub struct CrossEncoder {
    graph: Graph,
    tokenizer: Tokenizer,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder").finish_non_exhaustive()
    }
}

impl CrossEncoder {
    /// Loads the model of `config` with `threads` intra-op threads.
    pub fn load(config: &RerankerConfig, threads: usize) -> Result<Self, ActorError> {
        let (graph, tokenizer) = onnx::load(&onnx::Spec {
            name: "reranker",
            tokenizer_name: "reranker tokenizer",
            model_file: &config.model_file(),
            tokenizer_file: &config.tokenizer_file(),
            runtime: &config.runtime,
            threads,
            output: None,
            list_inputs: false,
            truncation: Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: MAX_PAIR_TOKENS,
                strategy: TruncationStrategy::OnlySecond,
                stride: 0,
            }),
            fix: super::SETUP_FIX,
        })?;
        Ok(Self { graph, tokenizer })
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
        let rows: Vec<(&[i64], &[i64])> = batch
            .iter()
            .map(|(_, ids, types)| (ids.as_slice(), types.as_slice()))
            .collect();
        self.graph.run(&rows, failed, |dims, data| {
            let count = rows.len();
            let per_row = dims.iter().skip(1).product::<i64>().max(1) as usize;
            if dims.first().copied() != Some(count as i64) || data.len() < count * per_row {
                return Err(failed("unexpected output shape", format!("{dims:?}")));
            }
            // One logit per row (the first, should the graph answer more).
            Ok((0..count).map(|row| data[row * per_row]).collect())
        })
    }
}
