//! The records Lore persists: one [`SessionRecord`] per conversation and one [`StoredMessage`] per
//! captured message, plus the codec that turns them into sled values.
//!
//! A session's history is an append-only log of messages numbered by `seq`. Its *path* lists, in
//! conversation order, the `seq` of each message the client currently shows. When a client
//! rewrites its history (an edited or regenerated turn), the path is cut back at the first
//! difference and the cut-off entries are kept in a [`ForkRecord`]; no stored message is ever
//! overwritten or deleted.

use std::time::{SystemTime, UNIX_EPOCH};

use lore_proto::{Message, Protocol, Usage};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::StorageError;

/// Version written into every record; bump it when a field changes meaning.
pub const RECORD_VERSION: u16 = 1;

/// Milliseconds since the Unix epoch, the timestamp unit of every record.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}

/// One position of a session's current history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathEntry {
    /// Sequence number of the stored message at this position.
    pub seq: u64,
    /// Lenient identity of the message (see `lore_proto::Message::identity`).
    pub identity: [u8; 16],
    /// Estimated prompt tokens of the message (0 when not estimated yet), so a restart does
    /// not tokenize the whole history again.
    #[serde(default)]
    pub tokens: u32,
}

impl PathEntry {
    /// Set in the `seq` of an entry with no stored message behind it (said under
    /// `/lore:amnesia`): the path still follows the conversation, the log holds nothing.
    pub const UNSTORED: u64 = 1 << 63;

    /// Whether a stored message stands behind this entry.
    pub fn is_stored(&self) -> bool {
        self.seq & Self::UNSTORED == 0
    }
}

/// A rewrite of history by the client: positions from `at_position` on were replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkRecord {
    /// First position whose message differed from the stored one.
    pub at_position: u32,
    /// Sequence numbers of the messages the rewrite cut from the path (still stored).
    pub replaced_seqs: Vec<u64>,
    /// When the rewrite was seen.
    pub created_at_ms: u64,
}

/// One injection of lore cards, replayed at the same place on every later request so the
/// prompt prefix stays byte-identical.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// Index of the message in the request's message array that received the block.
    pub position: u32,
    /// Identity of that message, to notice when the client's history no longer has it.
    pub identity: [u8; 16],
    /// The exact block text inserted.
    pub block: String,
    /// Keys of the cards in the block.
    pub keys: Vec<String>,
    /// When the cards were first injected.
    pub created_at_ms: u64,
}

/// Everything a restart needs to resume a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Schema version of this record.
    pub version: u16,
    /// Session id (a UUIDv7 in simple hex form, so ids sort by creation time).
    pub id: String,
    /// When the session was created.
    pub created_at_ms: u64,
    /// When the session last changed.
    pub updated_at_ms: u64,
    /// Wire protocol of the client's requests.
    #[serde(default)]
    pub protocol: Option<Protocol>,
    /// Model named by the latest request.
    #[serde(default)]
    pub model: Option<String>,
    /// Project directory the session is attributed to.
    #[serde(default)]
    pub project: Option<String>,
    /// True while the project is only the gateway's own working directory, a guess.
    #[serde(default)]
    pub project_provisional: bool,
    /// Fingerprint of the first user message and the credential (never the credential itself).
    #[serde(default)]
    pub fingerprint: Option<String>,
    /// The session header key (`<header>:<value>`) the client identified itself with.
    #[serde(default)]
    pub header_key: Option<String>,
    /// The conversation as the client currently shows it.
    #[serde(default)]
    pub path: Vec<PathEntry>,
    /// History rewrites of records written before forks got their own tree, oldest first;
    /// new ones go to the `forks` tree ([`crate::forks`]) and are only counted here.
    #[serde(default)]
    pub forks: Vec<ForkRecord>,
    /// History rewrites in the `forks` tree.
    #[serde(default)]
    pub fork_count: u32,
    /// Next sequence number to assign in this session's log.
    #[serde(default)]
    pub next_seq: u64,
    /// Stop reason of the latest reply (`tool_use` means the turn is not over).
    #[serde(default)]
    pub last_stop_reason: Option<String>,
    /// Token usage summed over every reply of the session.
    #[serde(default)]
    pub usage: Usage,
    /// Number of completed turns.
    #[serde(default)]
    pub turns: u64,
    /// Card injections of records written before [`SessionRecord::ledger`]; moved there when
    /// the session is loaded ([`SessionRecord::adopt_legacy_insertions`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub card_ledger: Vec<LedgerEntry>,
    /// The one ledger of what the gateway inserted into the conversation (card blocks and
    /// knowledge deltas), replayed on every request.
    #[serde(default)]
    pub ledger: Vec<crate::insertions::Insertion>,
    /// The context manager's state (layer, floors, calibration, frozen prefix, pins).
    #[serde(default)]
    pub context: crate::context::ContextRecord,
    /// Long-term knowledge in the session's prompt (system[1], system[2], deltas).
    #[serde(default)]
    pub ltm: crate::context::LtmRecord,
    /// `/lore:amnesia on`: nothing of the session is stored (its path holds only identities, so
    /// later requests still match it) and no background work runs for it, until it is off.
    #[serde(default)]
    pub amnesia: bool,
}

impl SessionRecord {
    /// A new, empty session.
    pub fn new(id: String) -> Self {
        let now = now_ms();
        Self {
            version: RECORD_VERSION,
            id,
            created_at_ms: now,
            updated_at_ms: now,
            protocol: None,
            model: None,
            project: None,
            project_provisional: false,
            fingerprint: None,
            header_key: None,
            path: Vec::new(),
            forks: Vec::new(),
            fork_count: 0,
            next_seq: 0,
            last_stop_reason: None,
            usage: Usage::default(),
            turns: 0,
            card_ledger: Vec::new(),
            ledger: Vec::new(),
            context: crate::context::ContextRecord::default(),
            ltm: crate::context::LtmRecord::default(),
            amnesia: false,
        }
    }

    /// Identities of the current path, in order.
    pub fn path_identities(&self) -> Vec<[u8; 16]> {
        self.path.iter().map(|entry| entry.identity).collect()
    }
}

/// Where a stored message came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageSource {
    /// Sent by the client in a request body.
    Request,
    /// Rebuilt by the gateway from the upstream's reply.
    Response,
}

/// One captured message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage {
    /// Schema version of this record.
    pub version: u16,
    /// Session the message belongs to.
    pub session_id: String,
    /// Sequence number in the session's log.
    pub seq: u64,
    /// Position in the conversation when it was captured.
    pub position: u32,
    /// The message itself.
    pub message: Message,
    /// Lenient identity, as in the session path.
    pub identity: [u8; 16],
    /// Whether the client sent it or the gateway rebuilt it from a reply.
    pub source: MessageSource,
    /// When it was captured.
    pub created_at_ms: u64,
    /// Model that produced it (replies only).
    #[serde(default)]
    pub model: Option<String>,
    /// Usage of the reply (replies only).
    #[serde(default)]
    pub usage: Option<Usage>,
    /// True when the reply was cut short (client gone or upstream broke).
    #[serde(default)]
    pub partial: bool,
    /// The context layer (0–4) the context manager sent the turn at (replies only; `None`
    /// for requests, for turns it did not plan, and in records written before it was kept).
    #[serde(default)]
    pub context_layer: Option<u8>,
}

/// Encodes a record as MessagePack with field names, so fields can be added later.
pub fn encode<T: Serialize>(what: &str, value: &T) -> Result<Vec<u8>, StorageError> {
    rmp_serde::to_vec_named(value).map_err(|err| StorageError::corrupt(what, err))
}

/// Decodes a record written by [`encode`].
pub fn decode<T: DeserializeOwned>(what: &str, bytes: &[u8]) -> Result<T, StorageError> {
    rmp_serde::from_slice(bytes).map_err(|err| StorageError::corrupt(what, err))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lore_proto::{Part, Role};

    #[test]
    fn session_record_round_trips() {
        let mut record = SessionRecord::new("abc".into());
        record.path.push(PathEntry {
            seq: 3,
            identity: [7; 16],
            tokens: 0,
        });
        record.forks.push(ForkRecord {
            at_position: 1,
            replaced_seqs: vec![1, 2],
            created_at_ms: 5,
        });
        record.protocol = Some(Protocol::OpenAiChat);
        let bytes = encode("session", &record).unwrap();
        let back: SessionRecord = decode("session", &bytes).unwrap();
        assert_eq!(back, record);
    }

    #[test]
    fn stored_message_round_trips_every_part_kind() {
        let message = Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text { text: "hi".into() },
                Part::Thinking {
                    text: "hmm".into(),
                    signature: Some("sig".into()),
                },
                Part::ToolCall {
                    id: "t1".into(),
                    name: "bash".into(),
                    arguments: "{\"cmd\":\"ls\"}".into(),
                },
                Part::ToolResult {
                    call_id: "t1".into(),
                    content: "a\nb".into(),
                    is_error: true,
                },
                Part::Other {
                    kind: "image".into(),
                    raw: serde_json::json!({"type": "image", "source": {"data": "x"}}),
                },
            ],
        };
        let stored = StoredMessage {
            version: RECORD_VERSION,
            session_id: "s".into(),
            seq: 9,
            position: 4,
            identity: message.identity(),
            message,
            source: MessageSource::Response,
            created_at_ms: 1,
            model: Some("m".into()),
            usage: Some(Usage::default()),
            partial: false,
            context_layer: None,
        };
        let bytes = encode("message", &stored).unwrap();
        let back: StoredMessage = decode("message", &bytes).unwrap();
        assert_eq!(back, stored);
        let layered = StoredMessage {
            context_layer: Some(2),
            ..stored
        };
        let bytes = encode("message", &layered).unwrap();
        let back: StoredMessage = decode("message", &bytes).unwrap();
        assert_eq!(back.context_layer, Some(2));
    }

    #[test]
    fn a_message_stored_before_context_layers_reads_without_one() {
        /// The reply record as builds before the context layer wrote it.
        #[derive(Serialize)]
        struct OldStoredMessage {
            version: u16,
            session_id: String,
            seq: u64,
            position: u32,
            message: Message,
            identity: [u8; 16],
            source: MessageSource,
            created_at_ms: u64,
            model: Option<String>,
            usage: Option<Usage>,
            partial: bool,
        }
        let message = Message::new(Role::Assistant, vec![Part::Text { text: "ok".into() }]);
        let old = OldStoredMessage {
            version: RECORD_VERSION,
            session_id: "s".into(),
            seq: 1,
            position: 1,
            identity: message.identity(),
            message,
            source: MessageSource::Response,
            created_at_ms: 5,
            model: Some("m".into()),
            usage: Some(Usage::default()),
            partial: false,
        };
        let bytes = encode("message", &old).unwrap();
        let back: StoredMessage = decode("message", &bytes).unwrap();
        assert_eq!((back.seq, back.context_layer), (1, None));
    }

    #[test]
    fn garbage_is_reported_as_corrupt() {
        let err = decode::<SessionRecord>("session", b"\xc1\xc1").unwrap_err();
        assert_eq!(err.kind, crate::StorageErrorKind::Corrupt);
    }
}
