//! Sessions imported from a harness's own transcripts (`lore import`), written as ordinary
//! sessions of the log so that recall, the index and the Distiller treat them like captured
//! ones.
//!
//! Tree `imports`: `<harness>\0<the harness's session id>` → [`ImportRecord`] (the Lore session
//! it became). A second import of the same transcript compares identities along the session's
//! path: nothing new adds nothing; a transcript that grew appends only its new messages; one
//! whose earlier history changed records a fork, as a rewritten history does on the request
//! path. Imported sessions are not indexed under any session header or fingerprint, so no live
//! request is ever routed into one (the registry never gives it an actor that could write it
//! concurrently).

use serde::{Deserialize, Serialize};

use crate::error::StorageError;
use crate::records::{
    ForkRecord, MessageSource, PathEntry, RECORD_VERSION, SessionRecord, StoredMessage, decode,
    encode, now_ms,
};
use crate::store::{Store, new_session_id};
use lore_proto::{Message, Protocol, Role};

/// One message of an imported transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportMessage {
    /// The message.
    pub message: Message,
    /// When the harness recorded it (ms since the epoch; 0 when unknown).
    #[serde(default)]
    pub created_at_ms: u64,
    /// The model that wrote it (assistant messages).
    #[serde(default)]
    pub model: Option<String>,
}

/// One session of a harness's transcripts, in Lore's terms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportSession {
    /// `claude-code`, `codex` or `opencode`.
    pub harness: String,
    /// The harness's own session id.
    pub external_id: String,
    /// The working directory the transcript records.
    #[serde(default)]
    pub project: Option<String>,
    /// The latest model named.
    #[serde(default)]
    pub model: Option<String>,
    /// The wire protocol the harness spoke.
    pub protocol: Protocol,
    /// The conversation in order.
    pub messages: Vec<ImportMessage>,
}

/// What became of an imported session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImportStatus {
    /// A new Lore session.
    Created,
    /// New messages appended to the session of an earlier import.
    Extended,
    /// The earlier history changed: recorded as a fork, then the new messages appended.
    Forked,
    /// Nothing new.
    Unchanged,
    /// No messages worth storing.
    Empty,
}

/// The outcome of one imported session.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportOutcome {
    /// What happened.
    pub status: ImportStatus,
    /// The Lore session (none for an empty transcript, or a new one in a dry run).
    pub session_id: Option<String>,
    /// The messages written (for the index); counted but not written in a dry run.
    pub added: Vec<StoredMessage>,
    /// How many messages were (or would be) added.
    pub added_count: usize,
}

/// Which Lore session an imported transcript became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportRecord {
    /// Schema version.
    pub version: u16,
    /// The Lore session.
    pub session_id: String,
    /// When it was last imported.
    pub imported_at_ms: u64,
}

fn key(harness: &str, external_id: &str) -> Vec<u8> {
    let mut key = harness.as_bytes().to_vec();
    key.push(0);
    key.extend_from_slice(external_id.as_bytes());
    key
}

impl Store {
    /// The Lore session an earlier import of this transcript became.
    pub fn imported_session(
        &self,
        harness: &str,
        external_id: &str,
    ) -> Result<Option<ImportRecord>, StorageError> {
        self.tree("imports")?
            .get(key(harness, external_id))?
            .map(|raw| decode("import", &raw))
            .transpose()
    }

    /// Every imported transcript: (harness, its session id, the record).
    pub fn imports(&self) -> Result<Vec<(String, String, ImportRecord)>, StorageError> {
        let mut out = Vec::new();
        for item in self.tree("imports")?.iter() {
            let (raw_key, raw) = item?;
            let text = String::from_utf8_lossy(&raw_key);
            let (harness, id) = text.split_once('\0').unwrap_or((&text, ""));
            out.push((harness.to_string(), id.to_string(), decode("import", &raw)?));
        }
        Ok(out)
    }

    /// Writes (or, with `dry_run`, only measures) one imported session; see the module doc.
    pub fn import_session(
        &self,
        session: &ImportSession,
        dry_run: bool,
    ) -> Result<ImportOutcome, StorageError> {
        let messages: Vec<&ImportMessage> = session
            .messages
            .iter()
            .filter(|m| m.message.role != Role::System && !m.message.parts.is_empty())
            .collect();
        let existing = match self.imported_session(&session.harness, &session.external_id)? {
            Some(record) => self.load_session(&record.session_id)?,
            None => None,
        };
        if messages.is_empty() && existing.is_none() {
            return Ok(ImportOutcome {
                status: ImportStatus::Empty,
                session_id: None,
                added: Vec::new(),
                added_count: 0,
            });
        }
        let identities: Vec<[u8; 16]> = messages.iter().map(|m| m.message.identity()).collect();
        let now = now_ms();
        let (mut record, status, keep) = match existing {
            None => {
                let mut record = SessionRecord::new(new_session_id());
                record.created_at_ms = messages
                    .iter()
                    .map(|m| m.created_at_ms)
                    .find(|ms| *ms > 0)
                    .unwrap_or(now);
                (record, ImportStatus::Created, 0)
            }
            Some(record) => {
                let stored = record.path_identities();
                let common = stored
                    .iter()
                    .zip(&identities)
                    .take_while(|(a, b)| a == b)
                    .count();
                let status = if common == stored.len() && common == identities.len() {
                    ImportStatus::Unchanged
                } else if common == stored.len() {
                    ImportStatus::Extended
                } else {
                    ImportStatus::Forked
                };
                (record, status, common)
            }
        };
        let added_count = identities.len().saturating_sub(keep);
        if dry_run || status == ImportStatus::Unchanged {
            let session_id = (status != ImportStatus::Created).then(|| record.id.clone());
            return Ok(ImportOutcome {
                status,
                session_id,
                added: Vec::new(),
                added_count: if status == ImportStatus::Unchanged {
                    0
                } else {
                    added_count
                },
            });
        }
        let mut forks = Vec::new();
        if status == ImportStatus::Forked {
            let replaced_seqs = record.path[keep..].iter().map(|e| e.seq).collect();
            forks.push(record.add_fork(ForkRecord {
                at_position: keep as u32,
                replaced_seqs,
                created_at_ms: now,
            }));
            record.path.truncate(keep);
        }
        let mut added = Vec::with_capacity(added_count);
        for (position, message) in messages.iter().enumerate().skip(keep) {
            let seq = record.next_seq;
            record.next_seq += 1;
            let source = if message.message.role == Role::Assistant {
                MessageSource::Response
            } else {
                MessageSource::Request
            };
            let stored = StoredMessage {
                version: RECORD_VERSION,
                session_id: record.id.clone(),
                seq,
                position: position as u32,
                identity: identities[position],
                message: message.message.clone(),
                source,
                created_at_ms: if message.created_at_ms > 0 {
                    message.created_at_ms
                } else {
                    now
                },
                model: message.model.clone(),
                usage: None,
                partial: false,
            };
            record.path.push(PathEntry {
                seq,
                identity: stored.identity,
                tokens: 0,
            });
            added.push(stored);
        }
        record.protocol = Some(session.protocol);
        if session.model.is_some() {
            record.model = session.model.clone();
        }
        if let Some(project) = &session.project {
            record.project = Some(project.clone());
            record.project_provisional = false;
        }
        record.turns = messages
            .iter()
            .filter(|m| m.message.role == Role::Assistant)
            .count() as u64;
        record.updated_at_ms = messages
            .iter()
            .map(|m| m.created_at_ms)
            .max()
            .filter(|ms| *ms > 0)
            .unwrap_or(now);
        self.commit_turn_with_forks(&record, &added, &forks)?;
        let entry = ImportRecord {
            version: RECORD_VERSION,
            session_id: record.id.clone(),
            imported_at_ms: now,
        };
        self.tree("imports")?.insert(
            key(&session.harness, &session.external_id),
            encode("import", &entry)?,
        )?;
        Ok(ImportOutcome {
            status,
            session_id: Some(record.id),
            added,
            added_count,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use lore_proto::Part;

    fn message(role: Role, text: &str) -> ImportMessage {
        ImportMessage {
            message: Message {
                role,
                parts: vec![Part::Text { text: text.into() }],
            },
            created_at_ms: 1_000,
            model: None,
        }
    }

    fn session(texts: &[(Role, &str)]) -> ImportSession {
        ImportSession {
            harness: "claude-code".into(),
            external_id: "abc".into(),
            project: Some("/home/ada/shop".into()),
            model: Some("claude-sonnet-4-5".into()),
            protocol: Protocol::Anthropic,
            messages: texts.iter().map(|(r, t)| message(*r, t)).collect(),
        }
    }

    #[test]
    fn a_second_import_adds_nothing_and_a_longer_one_only_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let first = session(&[(Role::User, "fix the ledger"), (Role::Assistant, "done")]);
        let dry = store.import_session(&first, true).unwrap();
        assert_eq!((dry.status, dry.added_count), (ImportStatus::Created, 2));
        assert!(
            store.list_sessions().unwrap().is_empty(),
            "a dry run writes nothing"
        );
        let created = store.import_session(&first, false).unwrap();
        assert_eq!(created.status, ImportStatus::Created);
        assert_eq!(created.added.len(), 2);
        let id = created.session_id.unwrap();
        let again = store.import_session(&first, false).unwrap();
        assert_eq!(
            (again.status, again.added_count),
            (ImportStatus::Unchanged, 0)
        );
        let longer = session(&[
            (Role::User, "fix the ledger"),
            (Role::Assistant, "done"),
            (Role::User, "and the tests"),
        ]);
        let extended = store.import_session(&longer, false).unwrap();
        assert_eq!(extended.status, ImportStatus::Extended);
        assert_eq!(extended.session_id.as_deref(), Some(id.as_str()));
        assert_eq!(extended.added.len(), 1);
        let record = store.load_session(&id).unwrap().unwrap();
        assert_eq!(record.path.len(), 3);
        assert_eq!(record.project.as_deref(), Some("/home/ada/shop"));
        assert!(!record.project_provisional);
        assert!(record.header_key.is_none() && record.fingerprint.is_none());
        let rewritten = session(&[(Role::User, "fix the ledger"), (Role::Assistant, "redone")]);
        let forked = store.import_session(&rewritten, false).unwrap();
        assert_eq!(forked.status, ImportStatus::Forked);
        let record = store.load_session(&id).unwrap().unwrap();
        assert_eq!(record.path.len(), 2);
        assert_eq!(store.session_forks(&record).unwrap().len(), 1);
        assert_eq!(
            store.session_log(&id).unwrap().len(),
            4,
            "nothing is overwritten"
        );
        assert_eq!(store.imports().unwrap().len(), 1);
        let empty = session(&[]);
        let mut other = empty.clone();
        other.external_id = "empty".into();
        assert_eq!(
            store.import_session(&other, false).unwrap().status,
            ImportStatus::Empty
        );
    }
}
