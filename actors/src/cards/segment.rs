//! Word boundaries of one message, and the message in the forms the terms need.
//!
//! Boundaries come from UAX #29 (`unicode-segmentation`), with two adjustments:
//! - both sides of an apostrophe (`'`, `’`) are boundaries, so `Al` hits `Al's` and `l'Alice`
//!   hits `Alice` (UAX #29 keeps `Al's` as one word);
//! - inside a run of Han or kana, UAX #29 would break between every character; there the
//!   boundaries are jieba-rs token edges instead, so a single-character name hits only where
//!   jieba emits it as a token (`林` in `林说…`, not in `树林`).

use std::sync::OnceLock;

use jieba_rs::Jieba;
use unicode_segmentation::UnicodeSegmentation;

use super::normalize::{Placement, casefold, collapse_whitespace, is_segmented_script, nfkc};

/// jieba's HMM glues unknown characters into new words; off, a lone surname stays its own token.
const JIEBA_HMM: bool = false;

/// The jieba segmenter with its compiled-in dictionary, built on first use (it takes a while).
pub(crate) fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// A normalised text with its word boundaries.
#[derive(Debug, Clone)]
pub(crate) struct Segmented {
    text: String,
    /// `boundary[i]`: byte offset `i` (0..=len) is a word boundary.
    boundary: Vec<bool>,
}

impl Segmented {
    /// Computes the boundaries of an already normalised text.
    pub(crate) fn new(text: String) -> Self {
        let len = text.len();
        let mut boundary = vec![false; len + 1];
        for (i, _) in text.split_word_bound_indices() {
            boundary[i] = true;
        }
        boundary[len] = true;
        let mut run_start: Option<usize> = None;
        for (i, c) in text.char_indices() {
            if c == '\'' || c == '\u{2019}' {
                boundary[i] = true;
                boundary[i + c.len_utf8()] = true;
            }
            match (is_segmented_script(c), run_start) {
                (true, None) => run_start = Some(i),
                (false, Some(start)) => {
                    jieba_boundaries(&text, start, i, &mut boundary);
                    run_start = None;
                }
                _ => {}
            }
        }
        if let Some(start) = run_start {
            jieba_boundaries(&text, start, len, &mut boundary);
        }
        Segmented { text, boundary }
    }

    /// True when `term` (in the same normal form) occurs with the required placement.
    pub(crate) fn contains(&self, term: &str, placement: Placement) -> bool {
        if term.is_empty() {
            return false;
        }
        if placement == Placement::Substring {
            return self.text.contains(term);
        }
        let mut from = 0;
        while let Some(pos) = self.text[from..].find(term) {
            let start = from + pos;
            let end = start + term.len();
            let ok = self.boundary[start]
                && (placement == Placement::LeftAnchored || self.boundary[end]);
            if ok {
                return true;
            }
            // Overlapping occurrences: step one character, not the whole term.
            from = start + self.text[start..].chars().next().map_or(1, char::len_utf8);
        }
        false
    }
}

/// Replaces the per-character UAX #29 boundaries of the Han/kana run `start..end` by jieba token
/// edges (the run's own edges stay boundaries).
fn jieba_boundaries(text: &str, start: usize, end: usize, boundary: &mut [bool]) {
    for flag in &mut boundary[start + 1..end] {
        *flag = false;
    }
    for token in jieba().cut(&text[start..end], JIEBA_HMM) {
        boundary[start + token.byte_end] = true;
    }
}

/// One message in every form a term may need.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// NFKC text, for regex terms.
    pub(crate) raw: String,
    /// NFKC + case folding + collapsed whitespace, for case-insensitive literal terms.
    pub(crate) folded: Segmented,
    /// NFKC + collapsed whitespace, for case-sensitive literal terms (built on first use).
    exact: OnceLock<Segmented>,
}

impl Prepared {
    /// Normalises and segments one message.
    pub(crate) fn new(text: &str) -> Self {
        let raw = nfkc(text);
        let folded = Segmented::new(collapse_whitespace(&casefold(&raw)));
        Prepared {
            raw,
            folded,
            exact: OnceLock::new(),
        }
    }

    /// The form for literal terms of a card with the given case sensitivity.
    pub(crate) fn literal(&self, case_sensitive: bool) -> &Segmented {
        if case_sensitive {
            self.exact
                .get_or_init(|| Segmented::new(collapse_whitespace(&self.raw)))
        } else {
            &self.folded
        }
    }

    /// True when the message holds no text.
    pub(crate) fn is_blank(&self) -> bool {
        self.folded.text.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(text: &str) -> Segmented {
        Segmented::new(collapse_whitespace(&casefold(&nfkc(text))))
    }

    #[test]
    fn whole_words_on_uax29_boundaries() {
        let s = seg("Al said hi to the wallaby.");
        assert!(s.contains("al", Placement::WholeWord));
        assert!(s.contains("al said", Placement::WholeWord));
        assert!(!seg("a wallaby").contains("al", Placement::WholeWord));
        assert!(seg("a wallaby").contains("al", Placement::Substring));
        assert!(seg("Al's bike").contains("al", Placement::WholeWord));
        assert!(seg("un café!").contains("café", Placement::WholeWord));
    }

    #[test]
    fn jieba_tokens_inside_han_runs() {
        let s = seg("林说今天下雨");
        assert!(
            s.contains("林", Placement::WholeWord),
            "{:?}",
            jieba().cut("林说今天下雨", JIEBA_HMM)
        );
        assert!(!seg("树林很大").contains("林", Placement::WholeWord));
    }
}
