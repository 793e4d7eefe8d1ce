//! The one plan of what the gateway inserts into a conversation, cards and knowledge deltas
//! alike (pure: no actix, no IO).
//!
//! The session's record keeps a single ledger of insertions ([`Insertion`]), in the order they
//! were made, each with its kind, its anchor (the index and identity of the message it belongs
//! to) and its exact text. Every turn:
//! 1. [`resolve`] finds each anchor in the request: at its index while the message is there,
//!    where the message moved to otherwise; a card whose message is gone is dropped (its cards
//!    may fire again), a delta whose message is gone is re-anchored to the last message;
//! 2. the card book and the knowledge add this turn's insertions at the end;
//! 3. once the context manager has chosen the array (the raw window starts at unit `start`),
//!    [`place`] puts each insertion in one place: a card inside the text of its message, after
//!    any tool results; a delta as a fixed-notice pair before the first unit at or after its
//!    anchor that splits no tool call from its result; anything whose message is not sent (the
//!    gradient dropped it) as a pair at the start of the raw window, which is a user message.
//!    Pairs at one place keep the order of their anchors, a delta before a card of the same
//!    message (as it was before the message), then the ledger's order.
//!
//! So every byte before the newest message is a function of the client's bytes, the ledger
//! and the context record: a card and a delta never fight over a position, and neither is lost
//! when the gradient drops the message it was anchored to.

use lore_proto::inject::{message_items, splice, with_block, with_system_blocks};
use lore_proto::{ProtoError, Protocol};
pub use lore_storage::{Insertion, InsertionKind};

use crate::gradient::Unit;
use crate::gradient::window::Shape;
use crate::ltm::render::DELTA_NOTICE;
use crate::turn::PlacedDelta;

/// Most insertions a ledger keeps (the oldest cards go first; deltas are folded before this).
pub const MAX_INSERTIONS: usize = 200;

/// The user half of the pair that carries a card block whose message is no longer sent.
pub const CARD_NOTICE: &str = "[Lore: reference cards shown earlier in this conversation follow; the messages they came with are summarized or no longer shown. No reply is needed; carry on with the conversation.]";

/// Finds every insertion's message in this request (`identities` of its messages, in order):
/// kept at its index while the message is there, moved with the message otherwise; a card
/// whose message is gone is dropped, a delta re-anchored to the last message.
pub fn resolve(ledger: &mut Vec<Insertion>, identities: &[[u8; 16]]) {
    ledger.retain_mut(|entry| {
        let at = entry.position as usize;
        if identities.get(at) == Some(&entry.anchor) {
            return true;
        }
        if let Some(found) = identities.iter().position(|id| *id == entry.anchor) {
            entry.position = u32::try_from(found).unwrap_or(u32::MAX);
            return true;
        }
        match entry.kind {
            InsertionKind::Card => false,
            InsertionKind::Delta => {
                let Some(last) = identities.len().checked_sub(1) else {
                    return true;
                };
                entry.position = u32::try_from(last).unwrap_or(u32::MAX);
                entry.anchor = identities[last];
                true
            }
        }
    });
    if ledger.len() > MAX_INSERTIONS {
        let over = ledger.len() - MAX_INSERTIONS;
        let mut dropped = 0;
        ledger.retain(|entry| {
            if dropped < over && entry.kind == InsertionKind::Card {
                dropped += 1;
                return false;
            }
            true
        });
    }
}

/// Where this turn's insertions go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placed {
    /// Card blocks inside the text of a sent message: (unit, block), in ledger order.
    pub blocks: Vec<(usize, String)>,
    /// Pairs before a unit, in the order they are sent.
    pub pairs: Vec<PlacedDelta>,
}

impl Placed {
    /// True when nothing is inserted.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty() && self.pairs.is_empty()
    }
}

/// The unit a delta anchored at `at` belongs before: the first at or after it where a pair may
/// go (no tool call split from its result), else the last such before it.
fn delta_home(valid: &[bool], at: usize) -> Option<usize> {
    let at = at.min(valid.len());
    (at..valid.len())
        .find(|&u| valid[u])
        .or_else(|| (0..at).rev().find(|&u| valid[u]))
}

/// Places `ledger` (resolved against these `units`) in a conversation whose raw window starts
/// at unit `start` (0 at layer 0). `cards_in_messages` is false when the cards go to the
/// system prompt instead ([`in_system`]).
pub fn place(
    ledger: &[Insertion],
    units: &[Unit],
    start: usize,
    cards_in_messages: bool,
) -> Placed {
    let valid = Shape::of(units).valid;
    let mut placed = Placed::default();
    // (before unit, home, card?, ledger index, notice, text)
    let mut pairs: Vec<(usize, usize, bool, usize, &'static str, &str)> = Vec::new();
    for (index, entry) in ledger.iter().enumerate() {
        let at = entry.position as usize;
        if at >= units.len() {
            continue;
        }
        match entry.kind {
            InsertionKind::Card if !cards_in_messages => {}
            InsertionKind::Card if at >= start => placed.blocks.push((at, entry.text.clone())),
            InsertionKind::Card => {
                pairs.push((start, at, true, index, CARD_NOTICE, &entry.text));
            }
            InsertionKind::Delta => {
                let Some(home) = delta_home(&valid, at) else {
                    // No place splits nothing yet: the delta waits for a later turn.
                    continue;
                };
                pairs.push((
                    home.max(start),
                    home,
                    false,
                    index,
                    DELTA_NOTICE,
                    &entry.text,
                ));
            }
        }
    }
    pairs.sort_by_key(|&(before, home, card, index, _, _)| (before, home, card, index));
    placed.pairs = pairs
        .into_iter()
        .map(|(before_unit, _, _, _, notice, text)| PlacedDelta {
            before_unit,
            notice,
            text: text.to_string(),
        })
        .collect();
    placed
}

/// The card blocks of `ledger` in their messages when every message is sent (layer 0, or no
/// context plan): (unit, block), for [`with_blocks`].
pub fn card_blocks(ledger: &[Insertion], messages: usize) -> Vec<(usize, String)> {
    ledger
        .iter()
        .filter(|entry| entry.kind == InsertionKind::Card && (entry.position as usize) < messages)
        .map(|entry| (entry.position as usize, entry.text.clone()))
        .collect()
}

/// `body` with the card `blocks` in the text of their messages (`spans`: the wire elements
/// of each unit); `None` when there are none.
pub fn with_blocks(
    protocol: Protocol,
    body: &[u8],
    spans: &[Vec<u32>],
    blocks: &[(usize, String)],
) -> Result<Option<Vec<u8>>, ProtoError> {
    if blocks.is_empty() {
        return Ok(None);
    }
    let items = message_items(protocol, body)?;
    let mut replacements: Vec<(std::ops::Range<usize>, String)> = Vec::new();
    // In reverse, so the blocks of one message end up in the ledger's order (each new one goes
    // before the text it finds).
    for (unit, block) in blocks.iter().rev() {
        let range = spans
            .get(*unit)
            .and_then(|span| span.first())
            .and_then(|item| items.get(*item as usize))
            .cloned()
            .ok_or_else(|| {
                ProtoError::InvalidShape("a card's message is not in the body".into())
            })?;
        let current = match replacements.iter().position(|(r, _)| *r == range) {
            Some(i) => replacements.remove(i).1,
            None => String::from_utf8_lossy(&body[range.clone()]).into_owned(),
        };
        replacements.push((range, with_block(protocol, current.as_bytes(), block)?));
    }
    replacements.sort_by_key(|(range, _)| range.start);
    Ok(Some(splice(body, &replacements)))
}

/// `body` with every card block of `ledger` at the end of the system prompt
/// (`LORE_CARDS_PLACEMENT=system`); `None` when there are none.
pub fn in_system(
    protocol: Protocol,
    body: &[u8],
    ledger: &[Insertion],
) -> Result<Option<Vec<u8>>, ProtoError> {
    let blocks: Vec<String> = ledger
        .iter()
        .filter(|entry| entry.kind == InsertionKind::Card)
        .map(|entry| entry.text.clone())
        .collect();
    if blocks.is_empty() {
        return Ok(None);
    }
    with_system_blocks(protocol, body, &blocks).map(Some)
}

/// Estimated tokens of the insertions (for the context manager's budget).
pub fn tokens(ledger: &[Insertion]) -> u64 {
    ledger
        .iter()
        .map(|entry| crate::tokens::count(&entry.text) + 20)
        .sum()
}

#[cfg(test)]
mod tests;
