//! One compiled term (keyword, alias, title or secondary word) and where it hits.
//!
//! A term written `/pattern/flags` (flags from `gimsu`; `g` and `u` change nothing) is a regex
//! matched against the NFKC text, bypassing case folding and word boundaries, as in SillyTavern.
//! It is compiled with a size limit; a pattern that does not compile is an error for the caller
//! to report, never a panic. Compiled regexes (and compile errors) are kept in a bounded
//! process-wide cache, since the same cards are consulted on every turn. Any other term is a literal in the card's normal form, placed
//! according to its script (see `normalize::placement`) or anywhere for substring cards.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use regex::{Regex, RegexBuilder};

use super::normalize::{Placement, literal_form, placement};
use super::segment::Prepared;

/// Compiled-program and DFA size limit of one regex term.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Entries of the regex cache; it is emptied when full.
const REGEX_CACHE_ENTRIES: usize = 4_096;

/// Longest accepted regex pattern, in bytes.
const REGEX_MAX_PATTERN: usize = 1_000;

#[derive(Debug, Clone)]
enum Matcher {
    Literal {
        form: String,
        placement: Placement,
        case_sensitive: bool,
    },
    Regex(Regex),
}

/// A term ready to be matched.
#[derive(Debug, Clone)]
pub(crate) struct Term {
    /// As written on the card (trimmed), for reports.
    pub(crate) original: String,
    /// Identity for deduplication: the normal form, or the regex source.
    pub(crate) identity: String,
    matcher: Matcher,
}

/// Splits `/pattern/flags` into pattern and flags; `None` when the text is not a regex term.
fn regex_parts(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix('/')?;
    let close = rest.rfind('/')?;
    let (pattern, flags) = (&rest[..close], &rest[close + 1..]);
    let flags_ok = flags.chars().all(|c| "gimsu".contains(c));
    (!pattern.is_empty() && flags_ok).then_some((pattern, flags))
}

impl Term {
    /// Compiles one term for a card with the given modes. `Ok(None)` for a blank term; `Err` with a
    /// lowercase message for a regex that does not compile.
    pub(crate) fn compile(
        text: &str,
        case_sensitive: bool,
        whole_word: bool,
    ) -> Result<Option<Term>, String> {
        let original = text.trim();
        if original.is_empty() {
            return Ok(None);
        }
        if let Some((pattern, flags)) = regex_parts(original) {
            let regex = cached_regex(original, pattern, flags)?;
            return Ok(Some(Term {
                original: original.to_owned(),
                identity: format!("/{pattern}/{flags}"),
                matcher: Matcher::Regex(regex),
            }));
        }
        let form = literal_form(original, case_sensitive);
        if form.is_empty() {
            return Ok(None);
        }
        let placement = if whole_word {
            placement(&form)
        } else {
            Placement::Substring
        };
        Ok(Some(Term {
            original: original.to_owned(),
            identity: form.clone(),
            matcher: Matcher::Literal {
                form,
                placement,
                case_sensitive,
            },
        }))
    }

    /// True when the term occurs in the message.
    pub(crate) fn hits(&self, message: &Prepared) -> bool {
        match &self.matcher {
            Matcher::Literal {
                form,
                placement,
                case_sensitive,
            } => message.literal(*case_sensitive).contains(form, *placement),
            Matcher::Regex(regex) => regex.is_match(&message.raw),
        }
    }

    /// Bit `i` set when the term hits `window[i]` (the window holds at most 32 messages).
    pub(crate) fn mask(&self, window: &[Prepared]) -> u32 {
        window
            .iter()
            .take(32)
            .enumerate()
            .filter(|(_, message)| self.hits(message))
            .fold(0, |mask, (i, _)| mask | (1 << i))
    }
}

/// Compiles `/pattern/flags`, through the process-wide cache.
fn cached_regex(original: &str, pattern: &str, flags: &str) -> Result<Regex, String> {
    type Cache = Mutex<HashMap<String, Result<Regex, String>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    if let Some(hit) = cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(original)
    {
        return hit.clone();
    }
    let compiled = if pattern.len() > REGEX_MAX_PATTERN {
        Err(format!(
            "bad regex {original:.40}…: longer than {REGEX_MAX_PATTERN} bytes"
        ))
    } else {
        RegexBuilder::new(pattern)
            .case_insensitive(flags.contains('i'))
            .dot_matches_new_line(flags.contains('s'))
            .multi_line(flags.contains('m'))
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| format!("bad regex {original}: {}", reason_line(&e.to_string())))
    };
    let mut cache = cache.lock().unwrap_or_else(PoisonError::into_inner);
    if cache.len() >= REGEX_CACHE_ENTRIES {
        cache.clear();
    }
    cache.insert(original.to_owned(), compiled.clone());
    compiled
}

/// The regex crate's errors span several lines; the last line carries the reason.
fn reason_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(message)
        .trim()
        .to_owned()
}

/// Compiles a list of terms, dropping blanks and duplicates (first spelling wins).
pub(crate) fn compile_all<'a>(
    texts: impl IntoIterator<Item = &'a String>,
    case_sensitive: bool,
    whole_word: bool,
) -> Result<Vec<Term>, String> {
    let mut terms: Vec<Term> = Vec::new();
    for text in texts {
        if let Some(term) = Term::compile(text, case_sensitive, whole_word)?
            && !terms.iter().any(|t| t.identity == term.identity)
        {
            terms.push(term);
        }
    }
    Ok(terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_terms() {
        assert!(regex_parts("/ali(ce)?/i").is_some());
        assert!(regex_parts("/usr/bin").is_none());
        assert!(regex_parts("//").is_none());
        let term = Term::compile("/ali(ce)?\\b/i", false, true)
            .unwrap()
            .unwrap();
        assert!(term.hits(&Prepared::new("Hi ALICE")));
        assert!(!term.hits(&Prepared::new("malign")));
        let err = Term::compile("/(unclosed/", false, true).unwrap_err();
        assert!(err.starts_with("bad regex"), "{err}");
        assert!(Term::compile("   ", false, true).unwrap().is_none());
    }

    #[test]
    fn dedupes_by_normal_form() {
        let texts = vec![
            "Alice".to_owned(),
            "ALICE".to_owned(),
            " ".to_owned(),
            "Al".to_owned(),
        ];
        let terms = compile_all(&texts, false, true).unwrap();
        assert_eq!(terms.len(), 2);
        assert_eq!(terms[0].original, "Alice");
    }
}
