//! Light views of every session for listings: [`SessionSummary`] holds the fields a list needs
//! (counts instead of the path and forks, the card injections without their block text).
//!
//! Decoding a thousand session records, each with its path, costs tens of milliseconds, so
//! summaries are cached per process, keyed by session id and a hash of the record's bytes: a
//! listing reads every record (cheap), hashes it, and decodes only the records that changed
//! since the last listing. The answer is always what storage holds now.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use serde::Deserialize;

use crate::error::StorageError;
use crate::records::decode;
use crate::store::Store;

/// One card injection of a session, without the block text.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CardInjection {
    /// Index of the message the block went into.
    pub position: u32,
    /// Card keys in the block.
    pub keys: Vec<String>,
    /// When the cards were first injected.
    pub created_at_ms: u64,
}

/// The fields of a session record a listing needs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SessionSummary {
    /// Session id.
    pub id: String,
    /// When the session was created.
    pub created_at_ms: u64,
    /// When the session last changed.
    pub updated_at_ms: u64,
    /// Model named by the latest request.
    #[serde(default)]
    pub model: Option<String>,
    /// Project directory the session is attributed to.
    #[serde(default)]
    pub project: Option<String>,
    /// True while the project is only the gateway's own working directory.
    #[serde(default)]
    pub project_provisional: bool,
    /// Messages on the current path.
    #[serde(default, rename = "path", deserialize_with = "count_items")]
    pub messages: usize,
    /// History rewrites seen.
    #[serde(default, rename = "forks", deserialize_with = "count_items")]
    pub forks: usize,
    /// History rewrites in the `forks` tree (added to `forks` when read).
    #[serde(default, rename = "fork_count", skip_serializing)]
    fork_count: usize,
    /// Messages in the whole log (forked-off ones included): the next sequence number.
    #[serde(default)]
    pub next_seq: u64,
    /// Completed turns.
    #[serde(default)]
    pub turns: u64,
    /// The card injections of the session.
    #[serde(default, rename = "card_ledger")]
    pub cards: Vec<CardInjection>,
    /// The session's ledger of insertions (its card blocks join `cards` when read).
    #[serde(default, rename = "ledger", skip_serializing)]
    insertions: Vec<InsertionView>,
}

/// One insertion of the ledger, without its text.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
struct InsertionView {
    #[serde(default)]
    kind: crate::insertions::InsertionKind,
    position: u32,
    #[serde(default)]
    keys: Vec<String>,
    #[serde(default)]
    created_at_ms: u64,
}

/// Counts the items of a sequence without keeping them.
fn count_items<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    struct Counter;
    impl<'de> serde::de::Visitor<'de> for Counter {
        type Value = usize;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
            let mut count = 0;
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                count += 1;
            }
            Ok(count)
        }
    }
    deserializer.deserialize_seq(Counter)
}

/// Summaries decoded by earlier listings: session id → (hash of the record's bytes, summary).
static CACHE: Mutex<Option<HashMap<String, (u64, SessionSummary)>>> = Mutex::new(None);

fn hash_of(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

impl Store {
    /// Every session as a [`SessionSummary`], most recently updated first.
    pub fn session_summaries(&self) -> Result<Vec<SessionSummary>, StorageError> {
        let mut guard = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        let previous = guard.take().unwrap_or_default();
        let mut next = HashMap::with_capacity(previous.len());
        let mut out = Vec::new();
        for item in self.tree("sessions")?.iter() {
            let (key, raw) = item?;
            let id = String::from_utf8_lossy(&key).into_owned();
            let hash = hash_of(&raw);
            let summary = match previous.get(&id) {
                Some((seen, summary)) if *seen == hash => summary.clone(),
                _ => {
                    let mut summary = decode::<SessionSummary>("session", &raw)?;
                    summary.forks += std::mem::take(&mut summary.fork_count);
                    let insertions = std::mem::take(&mut summary.insertions);
                    summary.cards.extend(
                        insertions
                            .into_iter()
                            .filter(|i| i.kind == crate::insertions::InsertionKind::Card)
                            .map(|i| CardInjection {
                                position: i.position,
                                keys: i.keys,
                                created_at_ms: i.created_at_ms,
                            }),
                    );
                    summary
                }
            };
            out.push(summary.clone());
            next.insert(id, (hash, summary));
        }
        *guard = Some(next);
        drop(guard);
        out.sort_by_key(|summary| std::cmp::Reverse(summary.updated_at_ms));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::records::{LedgerEntry, PathEntry, SessionRecord};

    #[test]
    fn summaries_follow_every_change_of_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut record = SessionRecord::new("summary-test".into());
        record.path = (0..3)
            .map(|seq| PathEntry {
                seq,
                identity: [1; 16],
                tokens: 0,
            })
            .collect();
        record.next_seq = 5;
        record.card_ledger.push(LedgerEntry {
            position: 2,
            identity: [0; 16],
            block: "block text".into(),
            keys: vec!["Priya".into()],
            created_at_ms: 9,
        });
        record.ledger.push(crate::insertions::Insertion {
            kind: crate::insertions::InsertionKind::Card,
            position: 4,
            anchor: [0; 16],
            text: "block".into(),
            keys: vec!["Mira".into()],
            created_at_ms: 10,
        });
        record.ledger.push(crate::insertions::Insertion {
            kind: crate::insertions::InsertionKind::Delta,
            position: 4,
            anchor: [0; 16],
            text: "delta".into(),
            keys: vec!["k:1".into()],
            created_at_ms: 10,
        });
        store.save_session(&record).unwrap();
        let first = store.session_summaries().unwrap();
        let mine = first.iter().find(|s| s.id == "summary-test").unwrap();
        assert_eq!((mine.messages, mine.next_seq), (3, 5));
        assert_eq!(mine.cards[0].keys, vec!["Priya".to_string()]);
        assert_eq!(
            mine.cards.len(),
            2,
            "the ledger's card joins, its delta does not"
        );
        assert_eq!(mine.cards[1].keys, vec!["Mira".to_string()]);
        // A changed record is decoded again, not served from the cache.
        record.path.push(PathEntry {
            seq: 4,
            identity: [2; 16],
            tokens: 0,
        });
        record.project = Some("/p".into());
        store.save_session(&record).unwrap();
        let second = store.session_summaries().unwrap();
        let mine = second.iter().find(|s| s.id == "summary-test").unwrap();
        assert_eq!((mine.messages, mine.project.as_deref()), (4, Some("/p")));
    }
}
