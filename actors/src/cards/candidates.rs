//! Proper nouns in a conversation that deserve a card (`lore cards try`, the UI's keyword pills).
//!
//! - Words of the spaced scripts (UAX #29 words) that start with an uppercase letter and are
//!   longer than 2 characters; a trailing possessive `'s` is dropped; common sentence starters
//!   (`The`, `How`, `Please`, …) are skipped, which lorecards did not do.
//! - Chinese words that jieba-rs tags as person (`nr…`) or place (`ns…`) names, 2 characters or
//!   more.
//! - A word is skipped when its normal form is already a term of some card (or a word of a
//!   multi-word term) or, for Chinese, when a known Han term of 2+ characters is inside it.
//!
//! Order of first appearance (history first, then the query), deduplicated, at most 20.

use std::collections::HashSet;

use unicode_segmentation::UnicodeSegmentation;

use super::normalize::{is_segmented_script, literal_form, nfkc};
use super::render::{MARKER_PREFIX, strip_markers};
use super::segment::jieba;
use super::{MatchCard, Turn};

/// Most names returned.
pub const MAX_CANDIDATES: usize = 20;

/// Capitalised words that start sentences far more often than they name anything.
const SENTENCE_STARTERS: &[&str] = &[
    "about", "after", "again", "all", "also", "and", "any", "are", "because", "before", "but",
    "can", "could", "did", "does", "each", "for", "from", "had", "has", "have", "hello", "here",
    "hey", "how", "its", "just", "let", "maybe", "not", "now", "okay", "once", "our", "please",
    "should", "since", "some", "sorry", "still", "sure", "thanks", "that", "the", "then", "there",
    "these", "they", "this", "those", "was", "were", "what", "when", "where", "which", "while",
    "who", "why", "will", "with", "would", "yes", "yet", "you", "your",
];

struct Known {
    terms: HashSet<String>,
    han_terms: Vec<String>,
}

impl Known {
    fn new(cards: &[MatchCard]) -> Self {
        let mut terms = HashSet::new();
        let mut han_terms = Vec::new();
        for card in cards {
            let all = card
                .keywords
                .iter()
                .chain(&card.aliases)
                .chain(std::iter::once(&card.title));
            for term in all {
                let form = literal_form(term, false);
                if form.is_empty() || form.starts_with('/') {
                    continue;
                }
                if form.chars().any(is_segmented_script) && form.chars().count() >= 2 {
                    han_terms.push(form.clone());
                }
                terms.extend(form.split(' ').map(str::to_owned));
                terms.insert(form);
            }
        }
        Known { terms, han_terms }
    }

    fn knows(&self, form: &str) -> bool {
        self.terms.contains(form) || self.han_terms.iter().any(|t| form.contains(t.as_str()))
    }
}

/// Proper nouns in `history` and `query` that no card covers yet (see the module doc).
pub fn candidates(history: &[Turn], query: &str, cards: &[MatchCard]) -> Vec<String> {
    let known = Known::new(cards);
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    let texts = history
        .iter()
        .map(|t| t.text.as_str())
        .chain(std::iter::once(query));
    for text in texts {
        let text = nfkc(&strip_markers(text, MARKER_PREFIX));
        let mut offer = |word: &str| {
            let form = literal_form(word, false);
            if out.len() < MAX_CANDIDATES && !known.knows(&form) && seen.insert(form) {
                out.push(word.to_owned());
            }
        };
        for word in text.unicode_words() {
            if let Some(name) = capitalised_name(word) {
                offer(name);
            }
        }
        if text.chars().any(is_segmented_script) {
            for tag in jieba().tag(&text, true) {
                let is_name = tag.tag.starts_with("nr") || tag.tag.starts_with("ns");
                let han = tag.word.chars().any(is_segmented_script);
                if is_name && han && tag.word.chars().count() >= 2 {
                    offer(tag.word);
                }
            }
        }
        if out.len() >= MAX_CANDIDATES {
            break;
        }
    }
    out
}

/// The word without a possessive, when it looks like a name of a spaced script.
fn capitalised_name(word: &str) -> Option<&str> {
    let word = ["'s", "\u{2019}s"]
        .iter()
        .find_map(|s| word.strip_suffix(s))
        .unwrap_or(word);
    let first = word.chars().next()?;
    let looks_like_name = first.is_uppercase()
        && !is_segmented_script(first)
        && word.chars().count() > 2
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_' || c == '\'');
    let starter = SENTENCE_STARTERS.contains(&word.to_lowercase().as_str());
    (looks_like_name && !starter).then_some(word)
}
