//! Token packing and "see also" lines.
//!
//! Candidates arrive in final order. Each one is rendered with a "see also" line for every ref
//! target that is loaded, injectable, enabled, not already in the context, not the card itself and
//! not selected so far, then:
//! - already in the context (`MatchOptions::already_present`) → `AlreadyPresent`;
//! - over `max_first_card_tokens` → `TooLarge`;
//! - over what is left of the budget (framing and separators count) → `Budget`, and packing
//!   continues with the next, possibly smaller, card;
//! - otherwise selected.
//!
//! Refs are settled against the final selection: when a card is selected, earlier selected cards
//! that pointed at it lose that line and are re-counted. Lines only ever disappear, so the total
//! never grows past the budget.

use std::collections::{HashMap, HashSet};

use super::render::{CARD_SEPARATOR, render_card, see_also_line};
use super::{DropReason, DroppedCard, FiredCard, MatchCard, MatchOptions, TokenCounter};

/// A card that matched and passed its secondary rules.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    /// Index into the consulted cards.
    pub(crate) index: usize,
    /// Its score.
    pub(crate) score: u32,
    /// Hit terms as written on the card.
    pub(crate) hit_terms: Vec<String>,
}

impl Candidate {
    fn dropped(&self, card: &MatchCard, reason: DropReason, detail: String) -> DroppedCard {
        DroppedCard {
            key: card.key.clone(),
            title: card.title.clone(),
            reason,
            score: self.score,
            hit_terms: self.hit_terms.clone(),
            detail,
        }
    }
}

struct Packer<'a> {
    cards: &'a [MatchCard],
    /// Loaded, injectable, enabled cards by key (first card wins on duplicate keys).
    targets: HashMap<&'a str, usize>,
    present: HashSet<&'a str>,
    selected: HashSet<&'a str>,
}

impl<'a> Packer<'a> {
    /// Renders `card` with a line for every ref target that is not (yet) in play.
    fn render(&self, card: &MatchCard) -> String {
        let mut seen: HashSet<&str> = HashSet::new();
        let lines: Vec<String> = card
            .refs
            .iter()
            .map(|r| r.trim())
            .filter(|r| *r != card.key && seen.insert(r))
            .filter(|r| !self.present.contains(r) && !self.selected.contains(r))
            .filter_map(|r| self.targets.get(r).map(|&i| &self.cards[i]))
            .map(|target| see_also_line(&target.key, target.who_line.as_deref()))
            .collect();
        render_card(&card.title, &card.kind, &card.body, &lines)
    }
}

/// Packs `candidates` (in final order) into the budget. Returns the fired cards and the tokens
/// used; drops are appended to `dropped`.
pub(crate) fn pack(
    cards: &[MatchCard],
    candidates: Vec<Candidate>,
    options: &MatchOptions,
    tokens: &dyn TokenCounter,
    dropped: &mut Vec<DroppedCard>,
) -> (Vec<FiredCard>, usize) {
    if candidates.is_empty() {
        return (Vec::new(), 0);
    }
    let mut targets = HashMap::new();
    for (i, card) in cards.iter().enumerate() {
        if card.inject && card.enabled {
            targets.entry(card.key.as_str()).or_insert(i);
        }
    }
    let mut packer = Packer {
        cards,
        targets,
        present: options.already_present.iter().map(|k| k.trim()).collect(),
        selected: HashSet::new(),
    };
    let framing_tokens = tokens.count(&options.framing);
    let separator_tokens = tokens.count(CARD_SEPARATOR);
    let mut fired: Vec<(usize, FiredCard)> = Vec::new();
    let mut used = framing_tokens;
    for candidate in candidates {
        let card = &cards[candidate.index];
        if packer.present.contains(card.key.as_str()) {
            let detail = "already in the context".to_owned();
            dropped.push(candidate.dropped(card, DropReason::AlreadyPresent, detail));
            continue;
        }
        let rendered = packer.render(card);
        let cost = tokens.count(&rendered);
        if cost > options.max_first_card_tokens {
            let detail = format!(
                "{cost} tokens, over the cap of {}",
                options.max_first_card_tokens
            );
            dropped.push(candidate.dropped(card, DropReason::TooLarge, detail));
            continue;
        }
        let extra = cost
            + if fired.is_empty() {
                0
            } else {
                separator_tokens
            };
        if used + extra > options.budget_tokens {
            let left = options.budget_tokens.saturating_sub(used);
            let detail = format!("{cost} tokens, {left} left in the budget");
            dropped.push(candidate.dropped(card, DropReason::Budget, detail));
            continue;
        }
        used += extra;
        packer.selected.insert(card.key.as_str());
        // Earlier cards that pointed at this one no longer need their "see also" line.
        for (index, earlier) in &mut fired {
            if cards[*index].refs.iter().any(|r| r.trim() == card.key) {
                earlier.rendered = packer.render(&cards[*index]);
                let recount = tokens.count(&earlier.rendered);
                used = used - earlier.tokens + recount;
                earlier.tokens = recount;
            }
        }
        fired.push((
            candidate.index,
            FiredCard {
                key: card.key.clone(),
                title: card.title.clone(),
                kind: card.kind.clone(),
                score: candidate.score,
                hit_terms: candidate.hit_terms,
                rendered,
                tokens: cost,
            },
        ));
    }
    let used = if fired.is_empty() { 0 } else { used };
    (fired.into_iter().map(|(_, card)| card).collect(), used)
}
