//! Long-term knowledge in the prompt (pure): what system[1] and system[2] say, which entries a
//! session's system[2] pins, when a change becomes a knowledge delta, and the texts, all
//! byte-stable (reference §10; seed "The LTM pin frozen-baseline").
//!
//! - system[1], the stable baseline: a short note that Lore manages the context, the
//!   preferences (by confidence), the known entities (at most 30, said to be partial) and a
//!   catalogue of at most 15 project entries `[k:<id>] <title> (<category>)`; computed on the
//!   session's first turn and never again.
//! - system[2], the context-bound entries: the entries most relevant to the session's recent
//!   context within the LTM budget, pinned the first time (their keys `id:signature`); the same
//!   bytes on every later turn, whatever happens to the entries.
//! - knowledge deltas: a new or materially changed relevant entry is shown in a fixed-notice
//!   user/assistant pair inserted before a turn's first message near the tail, and replayed
//!   there on every later turn.
//!
//! [`render`] holds the texts; [`select`] the choices.

pub mod render;
pub mod select;

use lore_storage::memory::{Category, KnowledgeEntry};

/// A knowledge search the session actor can ask in the background (the hybrid recall engine
/// over knowledge, implemented by the binary): the ids of the entries most relevant to
/// `context` in `project`, best first, with scores in 0–1.
pub trait KnowledgeFinder: Send + Sync {
    /// Runs the search.
    fn find(
        &self,
        context: String,
        project: Option<String>,
        limit: usize,
    ) -> futures_util::future::BoxFuture<'static, Vec<(String, f32)>>;
}

/// FNV-1a of an entry's title and content, normalised (lowercased, punctuation and spacing
/// ignored), so a cosmetic rewording is not a material change.
pub fn signature(title: &str, content: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for c in title.chars().chain(['\u{1}']).chain(content.chars()) {
        if !(c.is_alphanumeric() || c == '\u{1}') {
            continue;
        }
        for lower in c.to_lowercase() {
            let mut buf = [0u8; 4];
            for byte in lower.encode_utf8(&mut buf).bytes() {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    hash
}

/// The key an entry is pinned under: `id:signature`.
pub fn key(entry: &KnowledgeEntry) -> String {
    format!(
        "{}:{:016x}",
        entry.id,
        signature(&entry.title, &entry.content)
    )
}

/// The id of a key.
pub fn key_id(key: &str) -> &str {
    key.split_once(':').map_or(key, |(id, _)| id)
}

/// Whether an entry belongs in a session of `project`: the project's own entries and those that
/// hold everywhere, neither forgotten nor faded below the reference's dead floor (0.2).
pub fn in_scope(entry: &KnowledgeEntry, project: Option<&str>) -> bool {
    !entry.deleted
        && entry.confidence > 0.2
        && match (&entry.project, project) {
            (None, _) => true,
            (Some(own), Some(project)) => own == project,
            (Some(_), None) => false,
        }
}

/// The LTM budget in tokens (reference §10 `getLtmBudget`): `usable` snapped down to an
/// 8,000-token grid, then `max(min(8000, 0.2 × grid), round(grid × 0.05 / 8000) × 8000)`.
pub fn budget(usable: u64) -> u64 {
    let grid = usable / 8_000 * 8_000;
    let floor = 8_000.min(grid / 5);
    let steps = ((grid as f64 * 0.05) / 8_000.0).round() as u64;
    floor.max(steps * 8_000)
}

/// True for preference entries.
pub fn is_preference(entry: &KnowledgeEntry) -> bool {
    entry.category == Category::Preference
}

#[cfg(test)]
mod tests;
