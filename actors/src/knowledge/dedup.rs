//! Which stored entry a draft repeats: the same project (no project matches no project) and a
//! title equal ignoring case and surrounding whitespace, or, when both titles have at least
//! [`MIN_WORDS`] words, a word overlap (Jaccard over lowercased words) of at least
//! [`MIN_OVERLAP`].

use std::collections::HashSet;

use lore_storage::memory::KnowledgeEntry;

use super::Draft;

/// Fewest words both titles need before word overlap counts.
pub const MIN_WORDS: usize = 4;
/// Least word overlap that makes two titles the same entry.
pub const MIN_OVERLAP: f64 = 0.7;

/// The live entry of the draft's project that the draft repeats: an equal title first, else the
/// one with the highest word overlap (the first of equals).
pub fn find_duplicate<'a>(
    entries: &'a [KnowledgeEntry],
    draft: &Draft,
) -> Option<&'a KnowledgeEntry> {
    let candidates = || {
        entries
            .iter()
            .filter(|entry| !entry.deleted && entry.project == draft.project)
    };
    let title = draft.title.trim().to_lowercase();
    if let Some(equal) = candidates().find(|entry| entry.title.trim().to_lowercase() == title) {
        return Some(equal);
    }
    let words = title_words(&draft.title);
    if words.len() < MIN_WORDS {
        return None;
    }
    let mut best: Option<(&KnowledgeEntry, f64)> = None;
    for entry in candidates() {
        let other = title_words(&entry.title);
        if other.len() < MIN_WORDS {
            continue;
        }
        let overlap = jaccard(&words, &other);
        if overlap >= MIN_OVERLAP && best.is_none_or(|(_, score)| overlap > score) {
            best = Some((entry, overlap));
        }
    }
    best.map(|(entry, _)| entry)
}

/// The distinct lowercased words of a title (runs of letters and digits).
pub fn title_words(title: &str) -> HashSet<String> {
    title
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_string)
        .collect()
}

/// Shared words over all words of either set.
pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}
