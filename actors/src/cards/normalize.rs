//! Normalisation shared by terms and messages, and the script classes that decide how a term
//! matches.
//!
//! Both sides go through the same steps, so byte offsets always refer to the normalised text:
//! 1. NFKC (width folding, ligatures, composed accents: `ｃａｆｅ\u{301}` → `café`);
//! 2. case folding, unless the card is case-sensitive. There is no case-folding crate in the
//!    dependency set, so folding is `str::to_lowercase` plus the full-folding cases where Unicode
//!    `casefold` differs from lowercase in practice: `ß`/`ẞ` → `ss` and final sigma `ς` → `σ`;
//!    NFKC already handles the compatibility characters (`ﬀ`, `ſ`, `ŉ`) and a second NFKC pass
//!    re-composes what lowercasing decomposed (the NFKC_Casefold recipe);
//! 3. whitespace runs collapsed to one space and the ends trimmed, so `payments  team` across a
//!    line break still matches `payments team`.
//!
//! Regex terms see the text after step 1 only.

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// NFKC, without allocating a new normal form when the text already is one.
pub(crate) fn nfkc(text: &str) -> String {
    if is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        text.to_owned()
    } else {
        text.nfkc().collect()
    }
}

/// Full case folding of NFKC text (see the module doc for the approximation).
pub(crate) fn casefold(text: &str) -> String {
    let lower = text.to_lowercase();
    let folded = if lower.contains(['ß', 'ς']) {
        lower.replace('ß', "ss").replace('ς', "σ")
    } else {
        lower
    };
    nfkc(&folded)
}

/// Trims and collapses every whitespace run to one ASCII space.
pub(crate) fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// The form a literal term or a message takes before matching.
pub(crate) fn literal_form(text: &str, case_sensitive: bool) -> String {
    let normal = nfkc(text);
    if case_sensitive {
        collapse_whitespace(&normal)
    } else {
        collapse_whitespace(&casefold(&normal))
    }
}

/// Han ideographs and kana: scripts written without spaces that jieba-rs segments.
pub(crate) fn is_segmented_script(c: char) -> bool {
    matches!(c,
        '\u{3005}'..='\u{3007}'          // 々 〆 〇
        | '\u{3040}'..='\u{30FF}'        // hiragana, katakana
        | '\u{31F0}'..='\u{31FF}'        // katakana phonetic extensions
        | '\u{3400}'..='\u{4DBF}'        // CJK extension A
        | '\u{4E00}'..='\u{9FFF}'        // CJK unified ideographs
        | '\u{F900}'..='\u{FAFF}'        // CJK compatibility ideographs
        | '\u{20000}'..='\u{3FFFF}'      // CJK extensions B and later
    )
}

/// Other scripts written without spaces, for which there is no dictionary here.
fn is_unsegmented_script(c: char) -> bool {
    matches!(c,
        '\u{0E00}'..='\u{0EFF}'          // Thai, Lao
        | '\u{1000}'..='\u{109F}'        // Myanmar
        | '\u{1780}'..='\u{17FF}'        // Khmer
        | '\u{1A20}'..='\u{1AAF}'        // Tai Tham
    )
}

/// Hangul: spaced, but particles attach to the end of nouns (`민수가`).
fn is_hangul(c: char) -> bool {
    matches!(c, '\u{1100}'..='\u{11FF}' | '\u{3130}'..='\u{318F}' | '\u{AC00}'..='\u{D7AF}')
}

/// How a literal term is located in a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Anywhere.
    Substring,
    /// Starting and ending on a word boundary (UAX #29; jieba tokens inside Han and kana runs).
    WholeWord,
    /// Starting on a word boundary, ending anywhere (Hangul, whose particles attach to nouns).
    LeftAnchored,
}

/// The placement rule for a literal term (already in literal form) of a whole-word card.
///
/// Han and kana terms of two or more characters match as substrings; a single Han or kana
/// character must be a jieba token (or start and end on jieba tokens). Thai, Lao, Khmer and
/// Myanmar terms match as substrings; Hangul terms are left-anchored; everything else is whole-word.
pub(crate) fn placement(term: &str) -> Placement {
    let segmented = term.chars().any(is_segmented_script);
    if segmented && term.chars().nth(1).is_some() {
        Placement::Substring
    } else if segmented {
        Placement::WholeWord
    } else if term.chars().any(is_unsegmented_script) {
        Placement::Substring
    } else if term.chars().any(is_hangul) {
        Placement::LeftAnchored
    } else {
        Placement::WholeWord
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_like_casefold() {
        assert_eq!(literal_form("Straße", false), "strasse");
        assert_eq!(literal_form("STRAẞE", false), "strasse");
        assert_eq!(
            literal_form("ΟΔΥΣΣΕΥΣ", false),
            literal_form("οδυσσευσ", false)
        );
        assert_eq!(literal_form("CAFÉ", false), "café");
        assert_eq!(literal_form("cafe\u{301}", false), "café");
        assert_eq!(literal_form("ｃａｆé", false), "café");
        assert_eq!(
            literal_form("  payments \n\t team ", false),
            "payments team"
        );
        assert_eq!(literal_form("Straße", true), "Straße");
    }

    #[test]
    fn placement_by_script() {
        assert_eq!(placement("al"), Placement::WholeWord);
        assert_eq!(placement("林"), Placement::WholeWord);
        assert_eq!(placement("小林"), Placement::Substring);
        assert_eq!(placement("สมชาย"), Placement::Substring);
        assert_eq!(placement("민수"), Placement::LeftAnchored);
        assert_eq!(placement("наташа"), Placement::WholeWord);
    }
}
