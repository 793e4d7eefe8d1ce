//! Distillations and the Distiller's per-session cursors.

use sled::Transactional;
use sled::transaction::TransactionError;

use super::records::{DistillState, Distillation};
use crate::error::StorageError;
use crate::records::{decode, encode};
use crate::store::Store;

pub(crate) const DISTILLATIONS: &str = "distillations";
pub(crate) const STATE: &str = "distill_state";

fn key(session_id: &str, n: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(session_id.len() + 9);
    key.extend_from_slice(session_id.as_bytes());
    key.push(b'/');
    key.extend_from_slice(&n.to_be_bytes());
    key
}

fn prefix(session_id: &str) -> Vec<u8> {
    let mut prefix = session_id.as_bytes().to_vec();
    prefix.push(b'/');
    prefix
}

impl Store {
    /// The Distiller's cursors for a session (zeroes when it has never distilled).
    pub fn distill_state(&self, session_id: &str) -> Result<DistillState, StorageError> {
        Ok(self
            .tree(STATE)?
            .get(session_id.as_bytes())?
            .map(|raw| decode("distill state", &raw))
            .transpose()?
            .unwrap_or_default())
    }

    /// Writes new or changed distillations and the session's cursors in one transaction: either
    /// all of it is stored or none of it.
    pub fn commit_distillations(
        &self,
        session_id: &str,
        state: &DistillState,
        written: &[Distillation],
    ) -> Result<(), StorageError> {
        let encoded_state = encode("distill state", state)?;
        let mut encoded = Vec::with_capacity(written.len());
        for distillation in written {
            encoded.push((
                key(&distillation.session_id, distillation.n),
                encode("distillation", distillation)?,
            ));
        }
        let distillations = self.tree(DISTILLATIONS)?;
        let states = self.tree(STATE)?;
        (&distillations, &states)
            .transaction(|(distillations, states)| {
                for (key, value) in &encoded {
                    distillations.insert(key.as_slice(), value.as_slice())?;
                }
                states.insert(session_id.as_bytes(), encoded_state.as_slice())?;
                Ok(())
            })
            .map_err(|err: TransactionError<()>| match err {
                TransactionError::Storage(err) => StorageError::from(err),
                TransactionError::Abort(()) => StorageError::new(
                    crate::StorageErrorKind::Io,
                    "the distillation transaction was aborted",
                ),
            })
    }

    /// A session's distillations, in the order they were written.
    pub fn session_distillations(
        &self,
        session_id: &str,
    ) -> Result<Vec<Distillation>, StorageError> {
        let mut out = Vec::new();
        for item in self.tree(DISTILLATIONS)?.scan_prefix(prefix(session_id)) {
            let (_, raw) = item?;
            out.push(decode("distillation", &raw)?);
        }
        Ok(out)
    }

    /// One distillation by session and position.
    pub fn distillation(
        &self,
        session_id: &str,
        n: u64,
    ) -> Result<Option<Distillation>, StorageError> {
        self.tree(DISTILLATIONS)?
            .get(key(session_id, n))?
            .map(|raw| decode("distillation", &raw))
            .transpose()
    }

    /// Every distillation of every session (index rebuilds and vector backfills).
    pub fn all_distillations(&self) -> Result<Vec<Distillation>, StorageError> {
        let mut out = Vec::new();
        for item in self.tree(DISTILLATIONS)?.iter() {
            let (_, raw) = item?;
            out.push(decode("distillation", &raw)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn distillation(session: &str, n: u64) -> Distillation {
        Distillation {
            session_id: session.into(),
            n,
            project: Some("/p".into()),
            observations: format!("* 🔴 (10:0{n}) event {n}"),
            generation: 0,
            source_seqs: vec![n * 2, n * 2 + 1],
            consumed: Vec::new(),
            source_tokens: 100,
            tokens: 10,
            archived: false,
            model: None,
            created_at_ms: n,
        }
    }

    #[test]
    fn a_commit_writes_rows_and_cursors_together_and_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            assert_eq!(store.distill_state("s").unwrap(), DistillState::default());
            let state = DistillState {
                next_seq: 6,
                next_n: 2,
                ..Default::default()
            };
            store
                .commit_distillations("s", &state, &[distillation("s", 0), distillation("s", 1)])
                .unwrap();
            store
                .commit_distillations("s2", &DistillState::default(), &[distillation("s2", 0)])
                .unwrap();
            let mut archived = distillation("s", 0);
            archived.archived = true;
            let state = DistillState {
                next_seq: 6,
                next_n: 2,
                curated_through_n: 1,
                ..Default::default()
            };
            store
                .commit_distillations("s", &state, &[archived])
                .unwrap();
            store.flush().unwrap();
        }
        let store = crate::store::reopen(dir.path());
        let rows = store.session_distillations("s").unwrap();
        assert_eq!(rows.len(), 2);
        assert!(rows[0].archived && !rows[1].archived);
        assert_eq!(store.distill_state("s").unwrap().curated_through_n, 1);
        assert_eq!(store.all_distillations().unwrap().len(), 3);
        assert_eq!(
            store.distillation("s", 1).unwrap(),
            Some(distillation("s", 1))
        );
        assert_eq!(rows[1].doc_id(), "d:s:1");
    }
}
