//! [`EmbeddingModel`]: one ONNX Runtime session of bge-small-en-v1.5 and its tokenizer.
//!
//! Memory is bounded by what one model run holds, not by how many texts are asked for: a long
//! document is cut into passages of at most 512 tokens (overlapping by [`PASSAGE_OVERLAP`], at
//! most [`MAX_PASSAGES`] of them) before it reaches the model, and passages are run in batches of
//! at most [`BATCH_TOKENS`] padded tokens (rows × width), shortest first so a batch carries little
//! padding. ONNX Runtime's CPU arena and memory pattern are off, so what a batch allocated is
//! given back after it. The vector is the first token (CLS) of `last_hidden_state`,
//! L2-normalised. Queries take the bge retrieval prefix and keep their first passage only;
//! documents none.
//!
//! The runtime library is opened once per process ([`crate::onnx::environment`]); a missing or
//! too old runtime, or missing model files, give [`ActorError::EmbedderUnavailable`] naming the
//! file and `scripts/setup`, never a panic. Loading the session and running a batch are
//! [`crate::onnx`]'s, shared with the reranker.

use tokenizers::Tokenizer;

use super::{EmbedError, EmbedderConfig, MODEL_DIM, SETUP_FIX};
use crate::ActorError;
use crate::onnx::{self, Graph, cut_at};

/// Longest input, in tokens, the model takes.
pub const MAX_TOKENS: usize = 512;
/// Most rows in one model run.
pub const MAX_BATCH: usize = 32;
/// Most padded tokens (rows × width) in one model run: the attention of 4 rows of 512 tokens,
/// about 50 MB per attention buffer on bge-small, instead of 400 MB for 32 such rows.
pub const BATCH_TOKENS: usize = 2048;
/// Most passages of one document: 16 × 512 tokens, about 30 KB of English or code.
pub const MAX_PASSAGES: usize = 16;
/// Tokens shared by two neighbouring passages, so a sentence cut at a border is whole in one.
pub const PASSAGE_OVERLAP: usize = 32;
/// Bytes of a document read at all (more than [`MAX_PASSAGES`] passages hold), so tokenizing a
/// huge text costs no more than tokenizing what is embedded.
const MAX_TEXT_BYTES: usize = 96 * 1024;
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
    /// The session; its output read holds the token states (`last_hidden_state`).
    graph: Graph,
    tokenizer: Tokenizer,
    /// Ids of the tokens that open and close every input.
    cls: u32,
    sep: u32,
    /// Most passages per document ([`EmbedderConfig::max_passages`]).
    max_passages: usize,
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
        let (graph, tokenizer) = onnx::load(&onnx::Spec {
            name: "embedding",
            tokenizer_name: "tokenizer",
            model_file: &model_file,
            tokenizer_file: &tokenizer_file,
            runtime: &config.runtime,
            threads,
            output: Some("last_hidden_state"),
            list_inputs: true,
            // Passages are cut in `passages` (with [CLS] and [SEP] around each).
            truncation: None,
            fix: SETUP_FIX,
        })?;
        let special = |token: &str| {
            tokenizer.token_to_id(token).ok_or_else(|| {
                unavailable(format!(
                    "the tokenizer {} has no {token} token",
                    tokenizer_file.display()
                ))
            })
        };
        let (cls, sep) = (special("[CLS]")?, special("[SEP]")?);
        Ok(Self {
            graph,
            tokenizer,
            cls,
            sep,
            max_passages: config.max_passages.clamp(1, MAX_PASSAGES),
        })
    }

    /// One unit vector of [`MODEL_DIM`] values per text, in the order of `texts`: the vector of
    /// its first passage.
    pub fn embed(&mut self, texts: &[&str], purpose: Purpose) -> Result<Vec<Vec<f32>>, EmbedError> {
        let inputs: Vec<String> = texts
            .iter()
            .map(|text| match purpose {
                Purpose::Query => format!("{QUERY_PREFIX}{text}"),
                Purpose::Document => (*text).to_string(),
            })
            .collect();
        let passages = self.embed_cut(&inputs, 1)?;
        Ok(passages
            .into_iter()
            .map(|mut vectors| {
                if vectors.is_empty() {
                    vec![0.0; MODEL_DIM]
                } else {
                    vectors.swap_remove(0)
                }
            })
            .collect())
    }

    /// The passage vectors of each document, in the order of `texts` (at least one per text,
    /// at most [`MAX_PASSAGES`], or fewer when the configuration says so).
    pub fn embed_passages(&mut self, texts: &[&str]) -> Result<Vec<Vec<Vec<f32>>>, EmbedError> {
        let inputs: Vec<String> = texts.iter().map(|text| (*text).to_string()).collect();
        self.embed_cut(&inputs, self.max_passages)
    }

    /// Tokenizes each input, cuts it into at most `max_passages` passages and runs them in
    /// token-bounded batches.
    fn embed_cut(
        &mut self,
        inputs: &[String],
        max_passages: usize,
    ) -> Result<Vec<Vec<Vec<f32>>>, EmbedError> {
        let mut pieces: Vec<Piece> = Vec::new();
        for (text_index, input) in inputs.iter().enumerate() {
            let input = cut_at(input, MAX_TEXT_BYTES);
            let encoding = self
                .tokenizer
                .encode(input, false)
                .map_err(|err| failed("tokenizing failed", err))?;
            for (passage, window) in passages(encoding.get_ids(), max_passages)
                .into_iter()
                .enumerate()
            {
                let mut ids = Vec::with_capacity(window.len() + 2);
                ids.push(i64::from(self.cls));
                ids.extend(window.iter().map(|&id| i64::from(id)));
                ids.push(i64::from(self.sep));
                pieces.push(Piece {
                    text_index,
                    passage,
                    types: vec![0; ids.len()],
                    ids,
                });
            }
        }
        let mut vectors: Vec<Vec<Vec<f32>>> = inputs
            .iter()
            .enumerate()
            .map(|(i, _)| {
                let count = pieces.iter().filter(|piece| piece.text_index == i).count();
                vec![Vec::new(); count]
            })
            .collect();
        // Similar lengths together: each batch pads to its longest input.
        pieces.sort_by_key(|piece| piece.ids.len());
        for batch in token_batches(&pieces) {
            let run = &pieces[batch];
            for (piece, vector) in run.iter().zip(self.run(run)?) {
                vectors[piece.text_index][piece.passage] = vector;
            }
        }
        Ok(vectors)
    }

    fn run(&mut self, batch: &[Piece]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let rows: Vec<(&[i64], &[i64])> = batch
            .iter()
            .map(|piece| (piece.ids.as_slice(), piece.types.as_slice()))
            .collect();
        self.graph.run(&rows, failed, |dims, data| {
            let dims: Vec<usize> = dims
                .iter()
                .map(|&d| usize::try_from(d).unwrap_or(0))
                .collect();
            if dims.len() != 3 || dims[0] != rows.len() || dims[2] != MODEL_DIM {
                return Err(failed("unexpected output shape", format!("{dims:?}")));
            }
            let stride = dims[1] * dims[2];
            Ok((0..rows.len())
                .map(|row| normalise(&data[row * stride..row * stride + MODEL_DIM]))
                .collect())
        })
    }
}

/// One passage, tokenized: which text and which of its passages it is.
struct Piece {
    text_index: usize,
    passage: usize,
    ids: Vec<i64>,
    types: Vec<i64>,
}

/// Consecutive ranges of `pieces` (sorted by length) that fit one run: at most [`MAX_BATCH`]
/// rows and [`BATCH_TOKENS`] padded tokens (a single longer piece runs alone).
fn token_batches(pieces: &[Piece]) -> Vec<std::ops::Range<usize>> {
    let mut batches = Vec::new();
    let mut start = 0;
    while start < pieces.len() {
        let mut end = start + 1;
        while end < pieces.len()
            && end - start < MAX_BATCH
            && (end - start + 1) * pieces[end].ids.len().max(1) <= BATCH_TOKENS
        {
            end += 1;
        }
        batches.push(start..end);
        start = end;
    }
    batches
}

/// Windows of at most `MAX_TOKENS − 2` token ids (room for [CLS] and [SEP]), each sharing
/// [`PASSAGE_OVERLAP`] ids with the one before, at most `max` of them (one, empty, for no ids).
fn passages(ids: &[u32], max: usize) -> Vec<&[u32]> {
    let width = MAX_TOKENS - 2;
    let step = width - PASSAGE_OVERLAP;
    let mut windows = vec![&ids[..ids.len().min(width)]];
    let mut start = step;
    while start + PASSAGE_OVERLAP < ids.len() && windows.len() < max.max(1) {
        windows.push(&ids[start..ids.len().min(start + width)]);
        start += step;
    }
    windows
}

fn normalise(vector: &[f32]) -> Vec<f32> {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    vector.iter().map(|v| v / norm).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(len: usize) -> Piece {
        Piece {
            text_index: 0,
            passage: 0,
            ids: vec![1; len],
            types: vec![0; len],
        }
    }

    #[test]
    fn batches_are_bounded_by_padded_tokens_and_rows() {
        let mut pieces: Vec<Piece> = (0..40).map(|_| piece(10)).collect();
        pieces.extend((0..10).map(|_| piece(512)));
        let batches = token_batches(&pieces);
        for range in &batches {
            let width = pieces[range.clone()]
                .iter()
                .map(|p| p.ids.len())
                .max()
                .unwrap_or(0);
            assert!(range.len() <= MAX_BATCH);
            assert!(range.len() * width <= BATCH_TOKENS, "{range:?} × {width}");
        }
        assert_eq!(
            batches.iter().map(|range| range.len()).sum::<usize>(),
            50,
            "every piece runs once"
        );
        assert_eq!(
            batches.len(),
            2 + 3,
            "40 short ones in 2 runs, 10 long ones 4 at a time"
        );
        assert_eq!(
            token_batches(&[piece(4000)]).len(),
            1,
            "an oversized piece runs alone"
        );
    }

    #[test]
    fn passages_overlap_and_cover_the_text() {
        let ids: Vec<u32> = (0..1200).collect();
        let windows = passages(&ids, 16);
        assert_eq!(windows.len(), 3);
        assert!(windows.iter().all(|w| w.len() <= MAX_TOKENS - 2));
        assert_eq!(windows[1][0], (MAX_TOKENS - 2 - PASSAGE_OVERLAP) as u32);
        assert_eq!(*windows[2].last().unwrap_or(&0), 1199, "the end is covered");
        assert_eq!(passages(&ids, 2).len(), 2, "capped");
        assert_eq!(
            passages(&[], 16),
            vec![&[] as &[u32]],
            "an empty text is one passage"
        );
        assert_eq!(passages(&ids[..510], 16).len(), 1, "exactly one window");
    }

    #[test]
    fn texts_are_cut_at_a_character_boundary() {
        assert_eq!(cut_at("héllo", 2), "h");
        assert_eq!(cut_at("abc", 10), "abc");
    }
}
