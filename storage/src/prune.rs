//! Pruning raw conversation data: whole sessions (record, messages, forks, identity index entries
//! and message vectors) are deleted, while distillations, knowledge and entities, which derive
//! from them and are what the memory keeps, stay. [`Store::compact`] then gives the space back.

use std::collections::HashSet;

use crate::error::StorageError;
use crate::store::Store;

/// What one pruning pass deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    /// Sessions deleted.
    pub sessions: u64,
    /// Messages deleted with them.
    pub messages: u64,
}

impl Store {
    /// Deletes the sessions `ids` with their messages, their entries in the identity index and
    /// the vectors of their messages. Distillations, knowledge and entities are kept.
    pub fn prune_sessions(&self, ids: &[String]) -> Result<Pruned, StorageError> {
        let mut pruned = Pruned::default();
        let wanted: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let vectors = self.vectors();
        for id in ids {
            let mut prefix = id.as_bytes().to_vec();
            prefix.push(b'/');
            let messages = self.raw_tree("messages")?;
            let mut batch = sled::Batch::default();
            for item in messages.scan_prefix(&prefix) {
                let (key, _) = item?;
                batch.remove(key);
                pruned.messages += 1;
            }
            messages.apply_batch(batch)?;
            vectors.remove_prefix(&format!("t:{id}:"))?;
            self.delete_forks(id)?;
            if self.raw_tree("sessions")?.remove(id.as_bytes())?.is_some() {
                pruned.sessions += 1;
            }
        }
        // Index keys end with `\0<session id>`.
        let index = self.raw_tree("session_index")?;
        let mut batch = sled::Batch::default();
        for item in index.iter() {
            let (key, _) = item?;
            let owner = key
                .iter()
                .rposition(|&b| b == 0)
                .map(|at| &key[at + 1..])
                .and_then(|id| std::str::from_utf8(id).ok());
            if owner.is_some_and(|owner| wanted.contains(owner)) {
                batch.remove(key);
            }
        }
        index.apply_batch(batch)?;
        Ok(pruned)
    }

    /// Number of stored messages (a scan of the keys).
    pub fn message_count(&self) -> Result<u64, StorageError> {
        Ok(self.raw_tree("messages")?.len() as u64)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::index::DocKind;
    use crate::memory::{DistillState, Distillation};
    use crate::records::{MessageSource, PathEntry, RECORD_VERSION, SessionRecord, StoredMessage};
    use crate::vectors::VectorDoc;
    use lore_proto::{Message, Part, Role};

    fn save(store: &Store, id: &str, count: u64) {
        let mut record = SessionRecord::new(id.into());
        let messages: Vec<StoredMessage> = (0..count)
            .map(|seq| {
                let message = Message {
                    role: Role::User,
                    parts: vec![Part::Text {
                        text: format!("{id} message {seq} {}", "x".repeat(2000)),
                    }],
                };
                record.path.push(PathEntry {
                    seq,
                    identity: message.identity(),
                    tokens: 0,
                });
                StoredMessage {
                    version: RECORD_VERSION,
                    session_id: id.into(),
                    seq,
                    position: seq as u32,
                    identity: message.identity(),
                    message,
                    source: MessageSource::Request,
                    created_at_ms: 0,
                    model: None,
                    usage: None,
                    partial: false,
                }
            })
            .collect();
        record.next_seq = count;
        store.commit_turn(&record, &messages).unwrap();
        store
            .index_header(&format!("x-session-id:{id}"), id)
            .unwrap();
        store.index_fingerprint("shared-fingerprint", id).unwrap();
    }

    #[test]
    fn pruning_deletes_the_raw_session_and_keeps_the_memory_and_compaction_shrinks_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        for i in 0..40 {
            save(&store, &format!("old{i:02}"), 50);
        }
        save(&store, "kept", 5);
        let vectors = store.vectors();
        vectors.ensure_model("m", 4).unwrap();
        let doc = |id: &str, session: &str, kind| VectorDoc {
            id: id.into(),
            kind,
            session: session.into(),
            project: String::new(),
            created_at_ms: 0,
        };
        vectors
            .put_many(&[
                (
                    doc("t:old00:0", "old00", DocKind::Message),
                    vec![1.0, 0.0, 0.0, 0.0],
                ),
                (
                    doc("t:kept:0", "kept", DocKind::Message),
                    vec![0.0, 1.0, 0.0, 0.0],
                ),
                (
                    doc("d:old00/0", "old00", DocKind::Distillation),
                    vec![0.0, 0.0, 1.0, 0.0],
                ),
            ])
            .unwrap();
        let log = Distillation {
            session_id: "old00".into(),
            n: 0,
            project: None,
            observations: "observed".into(),
            generation: 0,
            source_seqs: vec![0, 1],
            consumed: Vec::new(),
            source_tokens: 100,
            tokens: 10,
            archived: false,
            model: None,
            created_at_ms: 0,
        };
        let state = DistillState {
            next_seq: 2,
            next_n: 1,
            ..DistillState::default()
        };
        store.commit_distillations("old00", &state, &[log]).unwrap();
        store.flush().unwrap();
        let before = store.disk_bytes();

        let ids: Vec<String> = (0..40).map(|i| format!("old{i:02}")).collect();
        let pruned = store.prune_sessions(&ids).unwrap();
        assert_eq!(
            pruned,
            Pruned {
                sessions: 40,
                messages: 2000
            }
        );
        assert!(store.load_session("old00").unwrap().is_none());
        assert!(store.session_log("old00").unwrap().is_empty());
        assert_eq!(store.session_log("kept").unwrap().len(), 5);
        assert_eq!(
            store
                .sessions_for_fingerprint("shared-fingerprint")
                .unwrap(),
            ["kept"]
        );
        assert!(
            store
                .sessions_for_header("x-session-id:old00")
                .unwrap()
                .is_empty()
        );
        assert!(!vectors.contains("t:old00:0").unwrap());
        assert!(vectors.contains("t:kept:0").unwrap());
        assert!(
            vectors.contains("d:old00/0").unwrap(),
            "memory vectors stay"
        );
        assert_eq!(store.message_count().unwrap(), 5);
        assert_eq!(
            store.session_distillations("old00").unwrap().len(),
            1,
            "distillations stay"
        );

        let (was, now) = store.compact().unwrap();
        assert!(was >= before / 2, "{was} {before}");
        assert!(now < was / 2, "compaction shrank {was} to {now}");
        // Everything kept reads back, and writes work on the compacted database.
        assert_eq!(store.session_log("kept").unwrap().len(), 5);
        assert!(vectors.contains("t:kept:0").unwrap());
        assert_eq!(store.session_distillations("old00").unwrap().len(), 1);
        save(&store, "after", 2);
        store.flush().unwrap();
        assert_eq!(store.message_count().unwrap(), 7);
        assert_eq!(store.generation(), 1);
    }
}
