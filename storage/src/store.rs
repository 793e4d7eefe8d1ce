//! [`Store`]: the sled database of one data directory and the trees inside it.
//!
//! Trees and key layouts:
//! - `sessions`: session id → [`SessionRecord`].
//! - `messages`: `<session id>/<seq as u64 big-endian>` → [`StoredMessage`]; a prefix scan of a
//!   session id yields its whole log in order.
//! - `session_index`: `h\0<header key>\0<session id>` and `f\0<fingerprint>\0<session id>` → empty;
//!   how a restarted gateway finds the sessions a request may belong to.
//! - `meta`: `schema` → the schema version of the database; `vectors.model` → the embedding
//!   model stamp (see [`crate::vectors`]).
//! - `vectors`: document id → embedding vector ([`VectorStore`]).
//!
//! Durability: sled keeps writes in memory and flushes them on its own timer
//! (`FLUSH_EVERY_MS`), and [`Store::flush`] forces a flush at shutdown. A crash loses at most that
//! window; the next request of the conversation carries the whole history and the lost messages
//! are captured again. Within a turn the messages are written before the session record that
//! points at them, so a crash between the two leaves unreferenced messages, never a dangling path.

use std::path::Path;

use crate::error::StorageError;
#[cfg(test)]
use crate::error::StorageErrorKind;
use crate::handle::{DbHandle, Trees};
pub use crate::handle::{FLUSH_EVERY_MS, SCHEMA_VERSION, StoreHealth};
use crate::records::{SessionRecord, StoredMessage, decode, encode};
use crate::vectors::VectorStore;

/// The storage of one data directory. Cheap to clone; all clones share one database.
#[derive(Clone)]
pub struct Store {
    handle: DbHandle,
    vectors: VectorStore,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

impl Store {
    /// Opens (or creates) the database under `dir`.
    pub fn open(dir: &Path) -> Result<Self, StorageError> {
        let handle = DbHandle::open(dir)?;
        Ok(Self {
            vectors: VectorStore::open(handle.clone())?,
            handle,
        })
    }

    fn trees(&self) -> Result<std::sync::Arc<Trees>, StorageError> {
        self.handle.trees()
    }

    /// Checks that writes reach the disk and, after a failure (a full disk), reopens the
    /// database once there is room again; blocks, so call it off the HTTP executor. See
    /// [`crate::handle`].
    pub fn check_health(&self) -> StoreHealth {
        self.handle.check()
    }

    /// What the last [`Store::check_health`] found.
    pub fn health(&self) -> StoreHealth {
        self.handle.health()
    }

    /// How often the database was reopened (after a failure, or by a compaction).
    pub fn generation(&self) -> u64 {
        self.handle.generation()
    }

    /// Rewrites the database so deleted records give their space back; operations fail while
    /// it runs. Returns the bytes on disk before and after. See `handle::DbHandle::compact`.
    pub fn compact(&self) -> Result<(u64, u64), StorageError> {
        self.handle.compact()
    }

    /// Bytes the database's files take on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.handle.disk_bytes()
    }

    /// One of the store's own trees, for the modules of this crate.
    pub(crate) fn raw_tree(&self, name: &str) -> Result<sled::Tree, StorageError> {
        let trees = self.trees()?;
        Ok(match name {
            "sessions" => trees.sessions.clone(),
            "messages" => trees.messages.clone(),
            "session_index" => trees.session_index.clone(),
            other => trees.db.open_tree(other)?,
        })
    }

    /// A named tree of the database, for the modules that keep their own records.
    pub(crate) fn tree(&self, name: &str) -> Result<sled::Tree, StorageError> {
        Ok(self.trees()?.db.open_tree(name)?)
    }

    /// Forces every pending write to disk.
    pub fn flush(&self) -> Result<(), StorageError> {
        self.trees()?.db.flush()?;
        Ok(())
    }

    /// The embedding vectors of this database. Every call returns a handle on the same store,
    /// so the writer and the searchers share one in-memory copy.
    pub fn vectors(&self) -> VectorStore {
        self.vectors.clone()
    }

    /// Writes a session record.
    pub fn save_session(&self, record: &SessionRecord) -> Result<(), StorageError> {
        self.trees()?
            .sessions
            .insert(record.id.as_bytes(), encode("session", record)?)?;
        Ok(())
    }

    /// Reads a session record.
    pub fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, StorageError> {
        self.trees()?
            .sessions
            .get(id.as_bytes())?
            .map(|raw| decode("session", &raw))
            .transpose()
    }

    /// Every session, most recently updated first.
    pub fn list_sessions(&self) -> Result<Vec<SessionRecord>, StorageError> {
        let mut sessions = Vec::new();
        for item in self.trees()?.sessions.iter() {
            let (_, raw) = item?;
            sessions.push(decode::<SessionRecord>("session", &raw)?);
        }
        sessions.sort_by_key(|session| std::cmp::Reverse(session.updated_at_ms));
        Ok(sessions)
    }

    /// Stores the messages of a turn, then the session record that references them.
    pub fn commit_turn(
        &self,
        record: &SessionRecord,
        messages: &[StoredMessage],
    ) -> Result<(), StorageError> {
        self.commit_turn_with_forks(record, messages, &[])
    }

    /// [`Store::commit_turn`] with the history rewrites the turn counted in the record
    /// ([`SessionRecord::add_fork`]), written before the record.
    pub fn commit_turn_with_forks(
        &self,
        record: &SessionRecord,
        messages: &[StoredMessage],
        forks: &[crate::forks::NewFork],
    ) -> Result<(), StorageError> {
        self.write_forks(&record.id, forks)?;
        if !messages.is_empty() {
            let mut batch = sled::Batch::default();
            for message in messages {
                batch.insert(
                    message_key(&message.session_id, message.seq),
                    encode("message", message)?,
                );
            }
            self.trees()?.messages.apply_batch(batch)?;
        }
        self.save_session(record)
    }

    /// Reads one message of a session's log.
    pub fn load_message(
        &self,
        session_id: &str,
        seq: u64,
    ) -> Result<Option<StoredMessage>, StorageError> {
        self.trees()?
            .messages
            .get(message_key(session_id, seq))?
            .map(|raw| decode("message", &raw))
            .transpose()
    }

    /// Whether message `seq` of a session's log is stored (without decoding it).
    pub fn has_message(&self, session_id: &str, seq: u64) -> Result<bool, StorageError> {
        Ok(self
            .trees()?
            .messages
            .contains_key(message_key(session_id, seq))?)
    }

    /// The session's conversation as the client currently shows it (its path), in order.
    pub fn session_messages(
        &self,
        record: &SessionRecord,
    ) -> Result<Vec<StoredMessage>, StorageError> {
        let mut messages = Vec::with_capacity(record.path.len());
        for entry in &record.path {
            if let Some(message) = self.load_message(&record.id, entry.seq)? {
                messages.push(message);
            }
        }
        Ok(messages)
    }

    /// Every message ever captured in the session, forked-off ones included, by `seq`.
    pub fn session_log(&self, session_id: &str) -> Result<Vec<StoredMessage>, StorageError> {
        let mut prefix = session_id.as_bytes().to_vec();
        prefix.push(b'/');
        let mut messages = Vec::new();
        for item in self.trees()?.messages.scan_prefix(prefix) {
            let (_, raw) = item?;
            messages.push(decode("message", &raw)?);
        }
        Ok(messages)
    }

    /// The messages of a session's log from `seq` on (forked-off ones included), by `seq`: the
    /// part the Distiller has not read yet.
    pub fn session_log_from(
        &self,
        session_id: &str,
        seq: u64,
    ) -> Result<Vec<StoredMessage>, StorageError> {
        let mut end = session_id.as_bytes().to_vec();
        end.push(b'/' + 1);
        let mut messages = Vec::new();
        for item in self
            .trees()?
            .messages
            .range(message_key(session_id, seq)..end)
        {
            let (_, raw) = item?;
            messages.push(decode("message", &raw)?);
        }
        Ok(messages)
    }

    /// Records that `session_id` was seen under the session header key `header_key`.
    pub fn index_header(&self, header_key: &str, session_id: &str) -> Result<(), StorageError> {
        self.trees()?
            .session_index
            .insert(index_key(b'h', header_key, session_id), &[])?;
        Ok(())
    }

    /// Sessions seen under a session header key, oldest first.
    pub fn sessions_for_header(&self, header_key: &str) -> Result<Vec<String>, StorageError> {
        self.scan_index(b'h', header_key)
    }

    /// Records that `session_id` has the conversation fingerprint `fingerprint`.
    pub fn index_fingerprint(
        &self,
        fingerprint: &str,
        session_id: &str,
    ) -> Result<(), StorageError> {
        self.trees()?
            .session_index
            .insert(index_key(b'f', fingerprint, session_id), &[])?;
        Ok(())
    }

    /// Sessions with a conversation fingerprint, oldest first.
    pub fn sessions_for_fingerprint(&self, fingerprint: &str) -> Result<Vec<String>, StorageError> {
        self.scan_index(b'f', fingerprint)
    }

    fn scan_index(&self, tag: u8, value: &str) -> Result<Vec<String>, StorageError> {
        let prefix = index_key(tag, value, "");
        let mut ids = Vec::new();
        for item in self.trees()?.session_index.scan_prefix(&prefix) {
            let (key, _) = item?;
            let id = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
            ids.push(id);
        }
        Ok(ids)
    }
}

fn message_key(session_id: &str, seq: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(session_id.len() + 9);
    key.extend_from_slice(session_id.as_bytes());
    key.push(b'/');
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

fn index_key(tag: u8, value: &str, session_id: &str) -> Vec<u8> {
    let mut key = Vec::with_capacity(value.len() + session_id.len() + 3);
    key.push(tag);
    key.push(0);
    key.extend_from_slice(value.as_bytes());
    key.push(0);
    key.extend_from_slice(session_id.as_bytes());
    key
}

/// A fresh session id: a UUIDv7 in simple hex, so ids sort by creation time.
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

/// Opens `dir` once the previous `Store` on it has let go: sled's flusher thread releases the
/// file lock a moment after the last handle is dropped. For tests that reopen a directory.
#[cfg(test)]
pub(crate) fn reopen(dir: &Path) -> Store {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match Store::open(dir) {
            Ok(store) => return store,
            Err(err)
                if err.kind == StorageErrorKind::Locked && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(err) => panic!("cannot reopen {}: {err}", dir.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{MessageSource, PathEntry, RECORD_VERSION};
    use lore_proto::{Message, Part, Role};

    fn message(session: &str, seq: u64, text: &str) -> StoredMessage {
        let message = Message {
            role: Role::User,
            parts: vec![Part::Text { text: text.into() }],
        };
        StoredMessage {
            version: RECORD_VERSION,
            session_id: session.into(),
            seq,
            position: seq as u32,
            identity: message.identity(),
            message,
            source: MessageSource::Request,
            created_at_ms: 0,
            model: None,
            usage: None,
            partial: false,
            context_layer: None,
        }
    }

    #[test]
    fn a_turn_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut record = SessionRecord::new(new_session_id());
        let messages = vec![message(&record.id, 0, "a"), message(&record.id, 1, "b")];
        for stored in &messages {
            record.path.push(PathEntry {
                seq: stored.seq,
                identity: stored.identity,
                tokens: 0,
            });
        }
        record.next_seq = 2;
        store.commit_turn(&record, &messages).unwrap();
        store.index_header("x-session-id:abc", &record.id).unwrap();
        store.index_fingerprint("f00", &record.id).unwrap();
        store.flush().unwrap();
        drop(store);

        let store = reopen(dir.path());
        let loaded = store.load_session(&record.id).unwrap().unwrap();
        assert_eq!(loaded, record);
        assert_eq!(store.session_messages(&loaded).unwrap(), messages);
        assert_eq!(
            store.sessions_for_header("x-session-id:abc").unwrap(),
            vec![record.id.clone()]
        );
        assert_eq!(
            store.sessions_for_fingerprint("f00").unwrap(),
            vec![record.id.clone()]
        );
        assert!(store.sessions_for_fingerprint("f0").unwrap().is_empty());
    }

    #[test]
    fn logs_of_sessions_do_not_mix() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let a = SessionRecord::new("aaaa".into());
        let b = SessionRecord::new("aaaab".into());
        store.commit_turn(&a, &[message("aaaa", 0, "x")]).unwrap();
        store.commit_turn(&b, &[message("aaaab", 0, "y")]).unwrap();
        assert_eq!(store.session_log("aaaa").unwrap().len(), 1);
        assert_eq!(store.list_sessions().unwrap().len(), 2);
        let more: Vec<StoredMessage> = (1..4).map(|seq| message("aaaa", seq, "z")).collect();
        store.commit_turn(&a, &more).unwrap();
        let tail: Vec<u64> = store
            .session_log_from("aaaa", 2)
            .unwrap()
            .iter()
            .map(|m| m.seq)
            .collect();
        assert_eq!(tail, [2, 3], "the tail stops at the session's end");
        assert!(store.session_log_from("aaaa", 9).unwrap().is_empty());
    }

    #[test]
    fn a_second_process_is_told_the_directory_is_locked() {
        let dir = tempfile::tempdir().unwrap();
        let _first = Store::open(dir.path()).unwrap();
        // sled locks the database file; a second open must fail as another process would.
        let err = Store::open(dir.path()).unwrap_err();
        assert_eq!(err.kind, StorageErrorKind::Locked, "{err}");
        assert!(err.message.contains("another lore process"), "{err}");
    }
}
