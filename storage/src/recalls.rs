//! The recall calls the gateway answered, by marker key (tree `recalls`), so a marker in any
//! later request, after a restart too, expands into the call and its result again.

use lore_proto::recall_tool::RecallRecord;

use crate::error::StorageError;
use crate::records::{decode, encode};
use crate::store::Store;

/// The sled tree of recall records.
const TREE: &str = "recalls";

impl Store {
    /// Keeps a recall record (durable once the next flush ran; the caller flushes when it must).
    pub fn put_recall(&self, record: &RecallRecord) -> Result<(), StorageError> {
        self.tree(TREE)?
            .insert(record.key.as_bytes(), encode("recall record", record)?)?;
        Ok(())
    }

    /// The record a marker key names.
    pub fn recall_record(&self, key: &str) -> Result<Option<RecallRecord>, StorageError> {
        self.tree(TREE)?
            .get(key.as_bytes())?
            .map(|raw| decode("recall record", &raw))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn records_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let record = RecallRecord {
            key: "r:0011aabb".into(),
            call_id: "toolu_1".into(),
            input: r#"{"query":"x"}"#.into(),
            result: "## Recall Results".into(),
            continued: true,
            created_at_ms: 5,
        };
        {
            let store = Store::open(dir.path()).unwrap();
            store.put_recall(&record).unwrap();
            store.flush().unwrap();
        }
        let store = crate::store::reopen(dir.path());
        assert_eq!(store.recall_record("r:0011aabb").unwrap(), Some(record));
        assert_eq!(store.recall_record("r:ffffffff").unwrap(), None);
    }
}
