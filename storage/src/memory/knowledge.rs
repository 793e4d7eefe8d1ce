//! Long-term knowledge entries and the versions they replaced.

use sled::Transactional;
use sled::transaction::TransactionError;

use super::records::KnowledgeEntry;
use crate::error::{StorageError, StorageErrorKind};
use crate::records::{decode, encode};
use crate::store::Store;

const KNOWLEDGE: &str = "knowledge";
const HISTORY: &str = "knowledge_history";
/// Tree and key of the counter bumped on every knowledge write.
const META: &str = "meta";
const EPOCH: &str = "knowledge_epoch";

fn history_key(id: &str, version: u32) -> Vec<u8> {
    let mut key = id.as_bytes().to_vec();
    key.push(b'/');
    key.extend_from_slice(&version.to_be_bytes());
    key
}

/// A new, time-ordered entry or entity id (UUIDv7).
pub fn new_memory_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

impl Store {
    /// Writes an entry. When it replaces an older version, that version moves to the history
    /// in the same transaction; a write that does not raise the version is refused, so two
    /// writers cannot silently overwrite each other.
    pub fn save_knowledge(&self, entry: &KnowledgeEntry) -> Result<(), StorageError> {
        let encoded = encode("knowledge entry", entry)?;
        let knowledge = self.tree(KNOWLEDGE)?;
        let history = self.tree(HISTORY)?;
        let id = entry.id.as_bytes();
        (&knowledge, &history)
            .transaction(|(knowledge, history)| {
                if let Some(old_raw) = knowledge.get(id)? {
                    let old: KnowledgeEntry = decode("knowledge entry", &old_raw)
                        .map_err(sled::transaction::ConflictableTransactionError::Abort)?;
                    if old.version >= entry.version {
                        return Err(sled::transaction::ConflictableTransactionError::Abort(
                            StorageError::new(
                                StorageErrorKind::Io,
                                format!(
                                    "knowledge entry {} is already at version {}; reload it and try again",
                                    entry.id, old.version
                                ),
                            ),
                        ));
                    }
                    history.insert(history_key(&old.id, old.version), old_raw)?;
                }
                knowledge.insert(id, encoded.as_slice())?;
                Ok(())
            })
            .map_err(|err: TransactionError<StorageError>| match err {
                TransactionError::Storage(err) => StorageError::from(err),
                TransactionError::Abort(err) => err,
            })?;
        self.bump_knowledge_epoch()
    }

    fn bump_knowledge_epoch(&self) -> Result<(), StorageError> {
        self.tree(META)?.update_and_fetch(EPOCH, |old| {
            let n = old
                .and_then(|raw| <[u8; 8]>::try_from(raw).ok())
                .map_or(0, u64::from_be_bytes);
            Some((n + 1).to_be_bytes().to_vec())
        })?;
        Ok(())
    }

    /// True once any knowledge entry was ever written (forgotten ones count): until then a
    /// knowledge search cannot find anything and is not worth a query embedding.
    pub fn has_knowledge(&self) -> Result<bool, StorageError> {
        Ok(!self.tree(KNOWLEDGE)?.is_empty())
    }

    /// A counter that changes whenever any knowledge entry is written: sessions compare it to
    /// notice new or changed knowledge without reading every entry.
    pub fn knowledge_epoch(&self) -> Result<u64, StorageError> {
        Ok(self
            .tree(META)?
            .get(EPOCH)?
            .and_then(|raw| <[u8; 8]>::try_from(raw.as_ref()).ok())
            .map_or(0, u64::from_be_bytes))
    }

    /// An entry at its current version (forgotten ones included).
    pub fn knowledge_entry(&self, id: &str) -> Result<Option<KnowledgeEntry>, StorageError> {
        self.tree(KNOWLEDGE)?
            .get(id.as_bytes())?
            .map(|raw| decode("knowledge entry", &raw))
            .transpose()
    }

    /// Every entry at its current version, forgotten ones included, oldest first.
    pub fn all_knowledge(&self) -> Result<Vec<KnowledgeEntry>, StorageError> {
        let mut out = Vec::new();
        for item in self.tree(KNOWLEDGE)?.iter() {
            let (_, raw) = item?;
            out.push(decode("knowledge entry", &raw)?);
        }
        Ok(out)
    }

    /// The versions an entry replaced, oldest first.
    pub fn knowledge_history(&self, id: &str) -> Result<Vec<KnowledgeEntry>, StorageError> {
        let mut prefix = id.as_bytes().to_vec();
        prefix.push(b'/');
        let mut out = Vec::new();
        for item in self.tree(HISTORY)?.scan_prefix(prefix) {
            let (_, raw) = item?;
            out.push(decode("knowledge entry", &raw)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::memory::Category;

    fn entry(version: u32, content: &str) -> KnowledgeEntry {
        KnowledgeEntry {
            id: "0190-a".into(),
            version,
            project: Some("/p".into()),
            category: Category::Preference,
            title: "Test runner".into(),
            content: content.into(),
            confidence: 0.9,
            source_session: None,
            updated_by: "curator".into(),
            created_at_ms: 1,
            updated_at_ms: version as u64,
            deleted: false,
        }
    }

    #[test]
    fn updates_keep_history_and_stale_writes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.save_knowledge(&entry(1, "use pytest")).unwrap();
        store.save_knowledge(&entry(2, "use nextest")).unwrap();
        let err = store.save_knowledge(&entry(2, "lost update")).unwrap_err();
        assert!(err.message.contains("already at version 2"), "{err}");
        assert_eq!(
            store.knowledge_entry("0190-a").unwrap().unwrap().content,
            "use nextest"
        );
        let history = store.knowledge_history("0190-a").unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].content, "use pytest");
        assert_eq!(store.all_knowledge().unwrap().len(), 1);
        let (first, second) = (new_memory_id(), new_memory_id());
        assert_eq!(first.len(), 36);
        assert!(
            first < second,
            "ids are time-ordered: {first} then {second}"
        );
    }
}
