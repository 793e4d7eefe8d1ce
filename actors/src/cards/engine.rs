//! [`consult`]: which cards fire on a conversation.
//!
//! 1. Our own marker blocks are stripped from the query and the history, so an injected card can
//!    never keep itself alive. A blank query fires nothing.
//! 2. Each card sees its own window: the last `scan_depth × 2` non-blank history messages (any
//!    role) plus the query, always; depth 0 is the query alone; depth is capped at 10 turns.
//! 3. Terms are keywords + aliases + title (blank ones dropped, duplicates by normal form merged).
//!    A card fires when a term hits anywhere in its window, then its secondary rules apply:
//!    `all` (every word somewhere in the window), `any` (one word somewhere), `not` (veto when a
//!    word is in a message that produced a primary hit), `not_all` (veto when every word is in
//!    the window). Constant cards always fire, with score 0 and no secondary check.
//! 4. Score = distinct hit terms + hit terms found in the query (the current message counts
//!    double). Order: score, then priority (both descending), then title, then key.
//! 5. `pack` fits the ordered cards in the token budget and settles the "see also" lines.
//!
//! Disabled and `inject: false` cards are reported as dropped only when they would have fired.

use std::cmp::Ordering;

use super::pack::{Candidate, pack};
use super::render::{MARKER_PREFIX, strip_markers};
use super::segment::Prepared;
use super::term::{Term, compile_all};
use super::{
    Consultation, DropReason, DroppedCard, MAX_SCAN_DEPTH, MatchCard, MatchOptions, TokenCounter,
    Turn,
};

/// Runs the whole matching pipeline (see the module doc).
pub fn consult(
    cards: &[MatchCard],
    history: &[Turn],
    query: &str,
    options: &MatchOptions,
    tokens: &dyn TokenCounter,
) -> Consultation {
    let query = Prepared::new(&strip_markers(query, MARKER_PREFIX));
    if query.is_blank() {
        return Consultation::default();
    }
    let keep = usize::from(MAX_SCAN_DEPTH) * 2;
    let mut messages: Vec<Prepared> = history
        .iter()
        .rev()
        .map(|turn| Prepared::new(&strip_markers(&turn.text, MARKER_PREFIX)))
        .filter(|message| !message.is_blank())
        .take(keep)
        .collect();
    messages.reverse();
    messages.push(query);

    let default_depth = options.scan_depth.min(MAX_SCAN_DEPTH);
    let mut candidates = Vec::new();
    let mut dropped = Vec::new();
    for (index, card) in cards.iter().enumerate() {
        match evaluate(card, &messages, default_depth) {
            Verdict::Silent => {}
            Verdict::Fires { score, hit_terms } => candidates.push(Candidate {
                index,
                score,
                hit_terms,
            }),
            Verdict::Dropped {
                reason,
                score,
                hit_terms,
                detail,
            } => dropped.push(DroppedCard {
                key: card.key.clone(),
                title: card.title.clone(),
                reason,
                score,
                hit_terms,
                detail,
            }),
        }
    }
    candidates.sort_by(|a, b| order(&cards[a.index], a.score, &cards[b.index], b.score));
    let (fired, tokens_used) = pack(cards, candidates, options, tokens, &mut dropped);
    Consultation {
        fired,
        dropped,
        tokens_used,
    }
}

/// Score and priority descending, then title and key ascending.
fn order(a: &MatchCard, a_score: u32, b: &MatchCard, b_score: u32) -> Ordering {
    b_score
        .cmp(&a_score)
        .then_with(|| b.priority.total_cmp(&a.priority))
        .then_with(|| a.title.cmp(&b.title))
        .then_with(|| a.key.cmp(&b.key))
}

/// What one card does on this window.
enum Verdict {
    /// No term hit and not constant: nothing to report.
    Silent,
    /// Fires, subject to packing.
    Fires { score: u32, hit_terms: Vec<String> },
    /// Would have fired, or is broken, and does not.
    Dropped {
        reason: DropReason,
        score: u32,
        hit_terms: Vec<String>,
        detail: String,
    },
}

fn bad_regex(detail: String) -> Verdict {
    Verdict::Dropped {
        reason: DropReason::BadRegex,
        score: 0,
        hit_terms: Vec::new(),
        detail,
    }
}

fn evaluate(card: &MatchCard, messages: &[Prepared], default_depth: u8) -> Verdict {
    let depth = usize::from(card.scan_depth.unwrap_or(default_depth).min(MAX_SCAN_DEPTH));
    let history = messages.len() - 1;
    let window = &messages[history.saturating_sub(depth * 2)..];
    let query_bit = 1u32 << (window.len() - 1);

    let primary = card
        .keywords
        .iter()
        .chain(&card.aliases)
        .chain(std::iter::once(&card.title));
    let terms = match compile_all(primary, card.case_sensitive, card.whole_word) {
        Ok(terms) => terms,
        Err(detail) => return bad_regex(detail),
    };
    if terms.is_empty() && !card.constant {
        let detail = "every keyword, alias and the title are blank".to_owned();
        return Verdict::Dropped {
            reason: DropReason::NoTerms,
            score: 0,
            hit_terms: Vec::new(),
            detail,
        };
    }
    let mut hit_messages = 0u32;
    let mut score = 0u32;
    let mut hit_terms = Vec::new();
    for term in &terms {
        let mask = term.mask(window);
        if mask != 0 {
            hit_messages |= mask;
            score += if mask & query_bit != 0 { 2 } else { 1 };
            hit_terms.push(term.original.clone());
        }
    }
    if hit_terms.is_empty() && !card.constant {
        return Verdict::Silent;
    }
    let score = if card.constant { 0 } else { score };
    let drop = |reason, detail: String| Verdict::Dropped {
        reason,
        score,
        hit_terms: hit_terms.clone(),
        detail,
    };
    if !card.enabled {
        return drop(DropReason::Disabled, "enabled: false".to_owned());
    }
    if !card.inject {
        return drop(DropReason::NotInjectable, "inject: false".to_owned());
    }
    if card.constant {
        return Verdict::Fires { score, hit_terms };
    }
    match secondary_verdict(card, window, hit_messages) {
        Ok(None) => Verdict::Fires { score, hit_terms },
        Ok(Some((reason, detail))) => drop(reason, detail),
        Err(detail) => bad_regex(detail),
    }
}

/// The first secondary rule that blocks the card, if any.
fn secondary_verdict(
    card: &MatchCard,
    window: &[Prepared],
    hit_messages: u32,
) -> Result<Option<(DropReason, String)>, String> {
    let rules = &card.secondary;
    if rules.is_empty() {
        return Ok(None);
    }
    let compile = |words: &Vec<String>| compile_all(words, card.case_sensitive, card.whole_word);
    let all = compile(&rules.all)?;
    let any = compile(&rules.any)?;
    let not = compile(&rules.not)?;
    let not_all = compile(&rules.not_all)?;
    let in_window = |term: &Term| term.mask(window) != 0;

    if let Some(missing) = all.iter().find(|t| !in_window(t)) {
        return Ok(Some((
            DropReason::SecondaryAll,
            format!("missing \"{}\"", missing.original),
        )));
    }
    if !any.is_empty() && !any.iter().any(in_window) {
        let words: Vec<&str> = any.iter().map(|t| t.original.as_str()).collect();
        return Ok(Some((
            DropReason::SecondaryAny,
            format!("none of {words:?}"),
        )));
    }
    if let Some(veto) = not.iter().find(|t| t.mask(window) & hit_messages != 0) {
        let detail = format!("\"{}\" in a message that named the card", veto.original);
        return Ok(Some((DropReason::VetoedByNot, detail)));
    }
    if !not_all.is_empty() && not_all.iter().all(in_window) {
        let words: Vec<&str> = not_all.iter().map(|t| t.original.as_str()).collect();
        return Ok(Some((
            DropReason::VetoedByNotAll,
            format!("all of {words:?}"),
        )));
    }
    Ok(None)
}
