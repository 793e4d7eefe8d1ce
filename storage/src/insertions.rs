//! The session's one ledger of conversation insertions: the card blocks and the knowledge
//! deltas the gateway added to the client's messages, in the order they were made, each with
//! its anchor (the message it belongs to) and its exact bytes, so every later request replays
//! them at the same place. Records written before the ledger kept cards in `card_ledger` and
//! deltas in `ltm.deltas`; [`SessionRecord::adopt_legacy_insertions`] moves them here.

use serde::{Deserialize, Serialize};

use crate::records::SessionRecord;

/// What an insertion is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsertionKind {
    /// A block of lore cards, inside the text of the user message that made them fire.
    #[default]
    Card,
    /// A knowledge delta: a fixed-notice user/assistant pair before the message.
    Delta,
}

/// One insertion into the conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Insertion {
    /// Card or delta.
    #[serde(default)]
    pub kind: InsertionKind,
    /// Index of the anchor message in the client's (parsed) message array.
    pub position: u32,
    /// Identity of the anchor message, to find it again when the client's array moved.
    pub anchor: [u8; 16],
    /// The exact text inserted (the card block, or the delta's assistant half).
    pub text: String,
    /// Card keys, or `id:signature` of the knowledge entries shown.
    #[serde(default)]
    pub keys: Vec<String>,
    /// When it was made, ms since the epoch.
    #[serde(default)]
    pub created_at_ms: u64,
}

impl SessionRecord {
    /// Moves the insertions of a record written before the ledger (cards in `card_ledger`,
    /// deltas in `ltm.deltas`) into `ledger`, ordered by their anchor (a delta before a card of
    /// the same message, since it goes before the message the card is in). True when anything
    /// moved.
    pub fn adopt_legacy_insertions(&mut self) -> bool {
        if self.card_ledger.is_empty() && self.ltm.deltas.is_empty() {
            return false;
        }
        let deltas = std::mem::take(&mut self.ltm.deltas)
            .into_iter()
            .map(|delta| Insertion {
                kind: InsertionKind::Delta,
                position: delta.position,
                anchor: delta.anchor,
                text: delta.text,
                keys: delta.keys,
                created_at_ms: 0,
            });
        let cards = std::mem::take(&mut self.card_ledger)
            .into_iter()
            .map(|entry| Insertion {
                kind: InsertionKind::Card,
                position: entry.position,
                anchor: entry.identity,
                text: entry.block,
                keys: entry.keys,
                created_at_ms: entry.created_at_ms,
            });
        let mut legacy: Vec<Insertion> = deltas.chain(cards).collect();
        legacy.sort_by_key(|insertion| (insertion.position, insertion.kind == InsertionKind::Card));
        self.ledger.extend(legacy);
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn an_old_record_loads_and_its_cards_and_deltas_join_the_ledger() {
        let id = [1u8; 16];
        let old = serde_json::json!({
            "version": 1, "id": "s", "created_at_ms": 1, "updated_at_ms": 1,
            "card_ledger": [{"position": 2, "identity": id, "block": "B", "keys": ["mira"], "created_at_ms": 5}],
            "ltm": {"deltas": [{"position": 2, "anchor": id, "text": "D", "keys": ["k:1"]}]},
        });
        let mut record: SessionRecord = serde_json::from_value(old).unwrap();
        assert!(record.ledger.is_empty());
        assert!(record.adopt_legacy_insertions());
        let kinds: Vec<InsertionKind> = record.ledger.iter().map(|i| i.kind).collect();
        assert_eq!(kinds, [InsertionKind::Delta, InsertionKind::Card]);
        assert!(record.card_ledger.is_empty() && record.ltm.deltas.is_empty());
        assert!(!record.adopt_legacy_insertions(), "only once");
    }
}
