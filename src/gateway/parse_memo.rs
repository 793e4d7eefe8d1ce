//! Owns what lets a turn reuse the parse of its conversation's turn before: for each
//! conversation (keyed by its first wire item's fingerprint), the item fingerprints of its
//! latest request with weak references to that request's parsed messages and identities.
//!
//! The memo holds no message itself: the session actor keeps the open turn's request alive
//! until the next turn has been planned, and once it lets go (the next turn, an idle session),
//! the entry is dead and the next request parses in full. So it costs no memory beyond a few
//! fingerprints per conversation.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, Weak};

use lore_proto::CanonicalRequest;
use lore_proto::reuse::{ItemPrint, Prior, PriorTurn};

/// Entries kept before the dead ones are swept out.
const SWEEP_AT: usize = 512;
/// Entries kept at most, live or not (a sweep that leaves more empties the memo).
const MAX_ENTRIES: usize = 4_096;

struct Entry {
    prints: Arc<Vec<ItemPrint>>,
    request: Weak<CanonicalRequest>,
    identities: Weak<Vec<[u8; 16]>>,
}

/// An earlier parse held alive while a request reuses it.
pub(crate) struct HeldTurn {
    prints: Arc<Vec<ItemPrint>>,
    request: Arc<CanonicalRequest>,
    identities: Arc<Vec<[u8; 16]>>,
}

impl PriorTurn for HeldTurn {
    fn prior(&self) -> Prior<'_> {
        Prior {
            prints: &self.prints,
            messages: &self.request.messages,
            identities: &self.identities,
        }
    }
}

/// The memo of the latest parse of each conversation.
#[derive(Default)]
pub(crate) struct ParseMemo {
    entries: Mutex<HashMap<ItemPrint, Entry>>,
}

/// The gateway's memo (it holds only fingerprints and weak references).
pub(crate) static PARSE_MEMO: LazyLock<ParseMemo> = LazyLock::new(ParseMemo::default);

impl ParseMemo {
    /// The latest parse of the conversation whose first item is `first`, while it is alive.
    pub(crate) fn find(&self, first: &ItemPrint) -> Option<HeldTurn> {
        let entries = self.entries.lock().ok()?;
        let entry = entries.get(first)?;
        Some(HeldTurn {
            prints: Arc::clone(&entry.prints),
            request: entry.request.upgrade()?,
            identities: entry.identities.upgrade()?,
        })
    }

    /// Remembers `request` (its items' `prints`) as its conversation's latest parse.
    pub(crate) fn remember(
        &self,
        prints: Vec<ItemPrint>,
        request: &Arc<CanonicalRequest>,
        identities: &Arc<Vec<[u8; 16]>>,
    ) {
        let Some(first) = prints.first().copied() else {
            return;
        };
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        entries.insert(
            first,
            Entry {
                prints: Arc::new(prints),
                request: Arc::downgrade(request),
                identities: Arc::downgrade(identities),
            },
        );
        if entries.len() > SWEEP_AT {
            entries.retain(|_, entry| entry.request.strong_count() > 0);
            if entries.len() > MAX_ENTRIES {
                entries.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lore_proto::{Message, Part, Role};

    fn request(text: &str) -> Arc<CanonicalRequest> {
        Arc::new(CanonicalRequest {
            messages: vec![Message::new(
                Role::User,
                vec![Part::Text { text: text.into() }],
            )],
            ..CanonicalRequest::default()
        })
    }

    #[test]
    fn an_entry_lives_as_long_as_its_request() {
        let memo = ParseMemo::default();
        let first = ItemPrint::of(b"{\"role\":\"user\",\"content\":\"hi\"}");
        let held = request("hi");
        let identities = Arc::new(vec![[7u8; 16]]);
        memo.remember(vec![first], &held, &identities);
        let found = memo
            .find(&first)
            .map(|turn| turn.prior().identities.to_vec());
        assert_eq!(found, Some(vec![[7u8; 16]]));
        drop(held);
        assert!(
            memo.find(&first).is_none(),
            "a dropped request is not reused"
        );
    }

    #[test]
    fn dead_entries_are_swept() {
        let memo = ParseMemo::default();
        let identities = Arc::new(Vec::new());
        for n in 0..SWEEP_AT + 10 {
            let held = request(&n.to_string());
            memo.remember(
                vec![ItemPrint::of(n.to_string().as_bytes())],
                &held,
                &identities,
            );
        }
        let kept = memo.entries.lock().map(|e| e.len()).unwrap_or(usize::MAX);
        assert!(kept <= SWEEP_AT, "{kept} entries kept");
    }
}
