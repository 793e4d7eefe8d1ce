//! `check`: lint one card file and say what to fix.

use super::Kind;
use super::card::{Card, CardProblem, MatchMode, parse_card};
use super::config::KindsConfig;

/// What `check` found wrong with a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckCode {
    /// The file could not be read or is not UTF-8 (reported by the storage layer).
    Unreadable,
    /// No frontmatter: the card can never fire.
    NoFrontmatter,
    /// Frontmatter that does not parse: the card can never fire.
    BadFrontmatter,
    /// Frontmatter values that were replaced by defaults.
    FrontmatterWarning,
    /// No keywords (and not constant): the card can never fire.
    NoKeywords,
    /// A keyword or alias that is generic or a single Latin letter.
    GenericKeyword,
    /// A two-character keyword on a substring-matching card: it fires inside other words.
    ShortSubstringKeyword,
    /// `title` differs from the file name.
    TitleMismatch,
    /// Blank body.
    NoBody,
    /// The body is only private sections: nothing can be matched or injected.
    PrivateOnlyBody,
    /// A `refs` entry names a card that does not exist.
    MissingRef,
}

impl CheckCode {
    /// Stable machine code (`no_fm`, `generic_kw`, …).
    pub fn code(self) -> &'static str {
        match self {
            CheckCode::Unreadable => "unreadable",
            CheckCode::NoFrontmatter => "no_fm",
            CheckCode::BadFrontmatter => "bad_fm",
            CheckCode::FrontmatterWarning => "fm_warning",
            CheckCode::NoKeywords => "no_kw",
            CheckCode::GenericKeyword => "generic_kw",
            CheckCode::ShortSubstringKeyword => "short_substring_kw",
            CheckCode::TitleMismatch => "title_mismatch",
            CheckCode::NoBody => "no_body",
            CheckCode::PrivateOnlyBody => "private_only_body",
            CheckCode::MissingRef => "missing_ref",
        }
    }
}

/// One problem: a code plus a message that names the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckProblem {
    /// What kind of problem.
    pub code: CheckCode,
    /// Human message saying what is wrong and what to do.
    pub message: String,
}

impl CheckProblem {
    fn new(code: CheckCode, message: String) -> Self {
        CheckProblem { code, message }
    }
}

/// Whether a key is a `/regex/flags` key.
pub(crate) fn is_regex_key(k: &str) -> bool {
    k.len() >= 2
        && k.starts_with('/')
        && k.rfind('/')
            .is_some_and(|end| end > 0 && k[end + 1..].chars().all(|c| "dgimsuvy".contains(c)))
}

/// Whether a character belongs to a script written without spaces (CJK, kana, Hangul, …),
/// where short names are normal and matched by segmentation.
fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32, 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x3134F)
}

/// Lints card text. `known` answers whether a card key exists in the vault (for `refs`).
pub fn check_card(
    key: &str,
    kind: Kind,
    text: &str,
    config: &KindsConfig,
    known: &dyn Fn(&str) -> bool,
) -> Vec<CheckProblem> {
    match parse_card(key, kind, text, config) {
        Ok(card) => check_parsed(&card, config, known),
        Err(CardProblem::NoFrontmatter) => vec![CheckProblem::new(
            CheckCode::NoFrontmatter,
            "no frontmatter, so the card can never fire; start the file with ---, the fields, then ---"
                .into(),
        )],
        Err(CardProblem::BadFrontmatter(why)) => vec![CheckProblem::new(
            CheckCode::BadFrontmatter,
            format!("frontmatter does not parse ({why}); fix the yaml between the --- lines"),
        )],
    }
}

/// Lints an already parsed card.
pub fn check_parsed(
    card: &Card,
    config: &KindsConfig,
    known: &dyn Fn(&str) -> bool,
) -> Vec<CheckProblem> {
    let mut out = Vec::new();
    for w in &card.warnings {
        out.push(CheckProblem::new(
            CheckCode::FrontmatterWarning,
            format!("{w}; fix the value in the frontmatter"),
        ));
    }
    if card.keywords.is_empty() && !card.constant {
        out.push(CheckProblem::new(
            CheckCode::NoKeywords,
            "no keywords, so the card can never fire; add `keywords: [...]`".into(),
        ));
    }
    let terms = || {
        card.keywords
            .iter()
            .chain(&card.aliases)
            .filter(|k| !is_regex_key(k))
    };
    let generic: Vec<&str> = terms()
        .filter(|k| {
            let mut chars = k.chars();
            let single_latin =
                matches!((chars.next(), chars.next()), (Some(c), None) if !is_unspaced_script(c));
            config.is_generic(k) || single_latin
        })
        .map(String::as_str)
        .collect();
    if !generic.is_empty() {
        out.push(CheckProblem::new(
            CheckCode::GenericKeyword,
            format!(
                "keywords too generic or too short: {}; replace them with names that identify the card",
                generic.join(", ")
            ),
        ));
    }
    if card.match_mode == MatchMode::Substring {
        let short: Vec<&str> = terms()
            .filter(|k| k.chars().count() == 2 && !k.chars().any(is_unspaced_script))
            .map(String::as_str)
            .collect();
        if !short.is_empty() {
            out.push(CheckProblem::new(
                CheckCode::ShortSubstringKeyword,
                format!(
                    "two-letter keywords on a substring card fire inside other words: {}; use longer keywords or drop `match: substring`",
                    short.join(", ")
                ),
            ));
        }
    }
    if card.title != card.key {
        out.push(CheckProblem::new(
            CheckCode::TitleMismatch,
            format!(
                "title {:?} differs from the file name {:?}; rename the file or change the title",
                card.title, card.key
            ),
        ));
    }
    if card.body.trim().is_empty() {
        out.push(CheckProblem::new(
            CheckCode::NoBody,
            "the body is empty, so there is nothing to inject; write the card's text below the frontmatter".into(),
        ));
    } else if card.effective_body(config).is_empty() {
        out.push(CheckProblem::new(
            CheckCode::PrivateOnlyBody,
            "the body holds only private sections, which are never injected; add a public section"
                .into(),
        ));
    }
    let missing: Vec<&str> = card
        .refs
        .iter()
        .filter(|r| !known(r))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        out.push(CheckProblem::new(
            CheckCode::MissingRef,
            format!(
                "refs name cards that do not exist: {}; fix the key (file name, case-sensitive) or remove it",
                missing.join(", ")
            ),
        ));
    }
    out
}
