//! Token counting: the one estimator of the crate, used by the card budget and the context
//! manager alike.
//!
//! [`BpeTokenCounter`] counts o200k_base tokens (the GPT-4o / GPT-5 tokenizer; close enough to
//! other models' tokenizers for a budget, and the context manager calibrates it per session
//! against what the upstream reports). The BPE tables are compiled into `tiktoken-rs`, but
//! building the encoder takes a while, so it is built once per process on first use. Should that
//! ever fail, the counter falls back to a conservative estimate of one token per 3 bytes.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

/// Counts the tokens of a text.
pub trait TokenCounter {
    /// Number of tokens `text` costs in a prompt.
    fn count(&self, text: &str) -> usize;
}

/// o200k_base token counter, built once per process.
#[derive(Debug, Clone, Copy, Default)]
pub struct BpeTokenCounter;

fn encoder() -> Option<&'static CoreBPE> {
    static ENCODER: OnceLock<Option<CoreBPE>> = OnceLock::new();
    ENCODER
        .get_or_init(|| match tiktoken_rs::o200k_base() {
            Ok(bpe) => Some(bpe),
            Err(error) => {
                tracing::warn!(%error, "o200k_base unavailable, estimating tokens from bytes");
                None
            }
        })
        .as_ref()
}

impl BpeTokenCounter {
    /// Builds the encoder now, so the first consultation does not pay for it.
    pub fn warm_up() {
        let _ = encoder();
    }
}

impl TokenCounter for BpeTokenCounter {
    fn count(&self, text: &str) -> usize {
        match encoder() {
            Some(bpe) => bpe.encode_ordinary(text).len(),
            None => text.len().div_ceil(3),
        }
    }
}

impl<F: Fn(&str) -> usize> TokenCounter for F {
    fn count(&self, text: &str) -> usize {
        self(text)
    }
}

/// Estimated tokens of a text (o200k_base).
pub fn count(text: &str) -> u64 {
    BpeTokenCounter.count(text) as u64
}
