//! History rewrites ([`ForkRecord`]s) in their own tree, `forks` (`<session>/<n BE u32>`), so a
//! session's record stays small: a client that resends the same first message over and over
//! (a title request, a retry loop) adds a fork per request, and the record is written every
//! turn. Records written before this tree existed keep their forks inline
//! ([`SessionRecord::forks`]); readers see both, the inline ones first.

use crate::error::StorageError;
use crate::records::{ForkRecord, SessionRecord, decode, encode};
use crate::store::Store;

const FORKS: &str = "forks";

fn session_prefix(session_id: &str) -> Vec<u8> {
    let mut key = session_id.as_bytes().to_vec();
    key.push(b'/');
    key
}

fn fork_key(session_id: &str, n: u32) -> Vec<u8> {
    let mut key = session_prefix(session_id);
    key.extend_from_slice(&n.to_be_bytes());
    key
}

/// A fork not written yet, numbered in its session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFork {
    /// Its number in the session (0 for the first fork in the tree).
    pub n: u32,
    /// The rewrite.
    pub fork: ForkRecord,
}

impl SessionRecord {
    /// Counts `fork` in the record and returns it numbered, for [`Store::commit_turn`].
    pub fn add_fork(&mut self, fork: ForkRecord) -> NewFork {
        let n = self.fork_count;
        self.fork_count += 1;
        NewFork { n, fork }
    }

    /// Every history rewrite seen: the inline ones of older records and the counted ones.
    pub fn forks_seen(&self) -> usize {
        self.forks.len() + self.fork_count as usize
    }
}

impl Store {
    /// Writes numbered forks of a session.
    pub(crate) fn write_forks(
        &self,
        session_id: &str,
        forks: &[NewFork],
    ) -> Result<(), StorageError> {
        if forks.is_empty() {
            return Ok(());
        }
        let mut batch = sled::Batch::default();
        for new in forks {
            batch.insert(fork_key(session_id, new.n), encode("fork", &new.fork)?);
        }
        self.tree(FORKS)?.apply_batch(batch)?;
        Ok(())
    }

    /// Every fork of a session, oldest first: the inline ones, then the ones in the tree.
    pub fn session_forks(&self, record: &SessionRecord) -> Result<Vec<ForkRecord>, StorageError> {
        let mut out = record.forks.clone();
        for item in self.tree(FORKS)?.scan_prefix(session_prefix(&record.id)) {
            let (_, raw) = item?;
            out.push(decode("fork", &raw)?);
        }
        Ok(out)
    }

    /// Deletes a session's forks; returns how many there were.
    pub(crate) fn delete_forks(&self, session_id: &str) -> Result<u64, StorageError> {
        let tree = self.tree(FORKS)?;
        let mut batch = sled::Batch::default();
        let mut count = 0;
        for item in tree.scan_prefix(session_prefix(session_id)) {
            let (key, _) = item?;
            batch.remove(key);
            count += 1;
        }
        tree.apply_batch(batch)?;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn fork(at: u32) -> ForkRecord {
        ForkRecord {
            at_position: at,
            replaced_seqs: vec![u64::from(at)],
            created_at_ms: 1,
        }
    }

    #[test]
    fn forks_live_beside_the_record_and_are_read_after_the_inline_ones() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut record = SessionRecord::new("s1".into());
        record.forks.push(fork(0));
        let new: Vec<NewFork> = (1..=300).map(|at| record.add_fork(fork(at))).collect();
        store.commit_turn_with_forks(&record, &[], &new).unwrap();
        let other = SessionRecord::new("s10".into());
        store
            .commit_turn_with_forks(
                &other,
                &[],
                &[NewFork {
                    n: 0,
                    fork: fork(9),
                }],
            )
            .unwrap();

        let back = store.load_session("s1").unwrap().unwrap();
        assert_eq!(back.forks_seen(), 301);
        let forks = store.session_forks(&back).unwrap();
        assert_eq!(forks.len(), 301);
        // In order, the inline one first, and none of the other session's.
        assert!(
            forks
                .iter()
                .enumerate()
                .all(|(i, f)| f.at_position == i as u32)
        );
        // The record does not grow with the forks.
        let small = encode("session", &SessionRecord::new("s1".into()))
            .unwrap()
            .len();
        let written = encode("session", &back).unwrap().len();
        assert!(written < small + 64, "{written} bytes against {small}");

        assert_eq!(store.delete_forks("s1").unwrap(), 300);
        assert_eq!(store.session_forks(&other).unwrap().len(), 1);
    }
}
