//! Management writes the dashboard and the API make on stored sessions and entities: delete a
//! session with everything derived from it, move a session to another project, delete an
//! entity (after a merge); and tree counts.
//!
//! Deleting a session removes its record, its whole message log (forked-off messages included),
//! its distillations and the Distiller's cursors, and its entries in the identity index, so a
//! later request cannot resolve to it from storage. Knowledge learnt in the session stays: it is
//! durable and belongs to its project. What the search index holds is the caller's to remove
//! (the returned document ids).

use crate::error::StorageError;
use crate::memory::Distillation;
use crate::memory::distillations::{DISTILLATIONS, STATE};
use crate::memory::entities::ENTITIES;
use crate::records::{SessionRecord, decode, encode, now_ms};
use crate::store::Store;

/// What a session deletion removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeletedSession {
    /// Messages removed from the log.
    pub messages: usize,
    /// Distillations removed.
    pub distillations: usize,
    /// Search document ids of the removed messages and distillations (`t:…`, `d:…`).
    pub doc_ids: Vec<String>,
}

fn prefix(session_id: &str) -> Vec<u8> {
    let mut prefix = session_id.as_bytes().to_vec();
    prefix.push(b'/');
    prefix
}

impl Store {
    /// Number of stored distillations.
    pub fn distillation_count(&self) -> Result<usize, StorageError> {
        Ok(self.tree(DISTILLATIONS)?.len())
    }

    /// Number of stored sessions, without decoding them.
    pub fn session_count(&self) -> Result<usize, StorageError> {
        Ok(self.tree("sessions")?.len())
    }

    /// Deletes a session and everything derived from it (see the module doc). `None` when no
    /// session has this id.
    pub fn delete_session(&self, session_id: &str) -> Result<Option<DeletedSession>, StorageError> {
        let sessions = self.tree("sessions")?;
        if sessions.get(session_id.as_bytes())?.is_none() {
            return Ok(None);
        }
        let mut deleted = DeletedSession::default();
        let messages = self.tree("messages")?;
        let mut batch = sled::Batch::default();
        for item in messages.scan_prefix(prefix(session_id)) {
            let (key, _) = item?;
            if let Some(seq) = key
                .get(key.len().saturating_sub(8)..)
                .and_then(|tail| <[u8; 8]>::try_from(tail).ok())
                .map(u64::from_be_bytes)
            {
                deleted.doc_ids.push(format!("t:{session_id}:{seq}"));
            }
            deleted.messages += 1;
            batch.remove(key);
        }
        messages.apply_batch(batch)?;
        let distillations = self.tree(DISTILLATIONS)?;
        let mut batch = sled::Batch::default();
        for item in distillations.scan_prefix(prefix(session_id)) {
            let (key, raw) = item?;
            let distillation: Distillation = decode("distillation", &raw)?;
            deleted.doc_ids.push(distillation.doc_id());
            deleted.distillations += 1;
            batch.remove(key);
        }
        distillations.apply_batch(batch)?;
        self.tree(STATE)?.remove(session_id.as_bytes())?;
        self.delete_forks(session_id)?;
        let index = self.tree("session_index")?;
        let mut suffix = vec![0u8];
        suffix.extend_from_slice(session_id.as_bytes());
        let mut batch = sled::Batch::default();
        for item in index.iter() {
            let (key, _) = item?;
            if key.ends_with(&suffix) {
                batch.remove(key);
            }
        }
        index.apply_batch(batch)?;
        sessions.remove(session_id.as_bytes())?;
        Ok(Some(deleted))
    }

    /// Attributes a session, and the distillations written from it, to `project`
    /// (confidently: it is the user's choice). Answers the record and the distillations as now
    /// stored; `None` when no session has this id.
    pub fn move_session(
        &self,
        session_id: &str,
        project: &str,
    ) -> Result<Option<(SessionRecord, Vec<Distillation>)>, StorageError> {
        let Some(mut record) = self.load_session(session_id)? else {
            return Ok(None);
        };
        record.project = Some(project.to_string());
        record.project_provisional = false;
        record.updated_at_ms = now_ms();
        let distillations = self.tree(DISTILLATIONS)?;
        let mut moved = Vec::new();
        let mut batch = sled::Batch::default();
        for item in distillations.scan_prefix(prefix(session_id)) {
            let (key, raw) = item?;
            let mut distillation: Distillation = decode("distillation", &raw)?;
            distillation.project = Some(project.to_string());
            batch.insert(key, encode("distillation", &distillation)?);
            moved.push(distillation);
        }
        distillations.apply_batch(batch)?;
        self.save_session(&record)?;
        Ok(Some((record, moved)))
    }

    /// Deletes an entity; false when there was none with this id.
    pub fn delete_entity(&self, id: &str) -> Result<bool, StorageError> {
        Ok(self.tree(ENTITIES)?.remove(id.as_bytes())?.is_some())
    }

    /// Writes several entities at once (a merge rewrites the survivor and every entity that
    /// pointed at the merged one).
    pub fn save_entities(&self, entities: &[crate::memory::Entity]) -> Result<(), StorageError> {
        let tree = self.tree(ENTITIES)?;
        let mut batch = sled::Batch::default();
        for entity in entities {
            batch.insert(entity.id.as_bytes(), encode("entity", entity)?);
        }
        tree.apply_batch(batch)?;
        Ok(())
    }
}

#[cfg(test)]
#[path = "admin_tests.rs"]
mod tests;
