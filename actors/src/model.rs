//! Data passed between the HTTP layer and the actors.

use actix::Addr;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::session::SessionActor;

/// What identifies the conversation a request belongs to, strongest evidence first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionIdentity {
    /// `<header name>:<value>` of the first session header present
    /// (`x-lore-session-id`, `x-claude-code-session-id`, `x-session-id`, `x-session-affinity`).
    pub header_key: Option<String>,
    /// First 16 hex digits of SHA-256 over the first user message and the credential fingerprint.
    pub fingerprint: Option<String>,
    /// `previous_response_id` of an OpenAI Responses request: the session that produced it.
    pub previous_response_id: Option<String>,
}

impl SessionIdentity {
    /// The identity of a request: its session header key, the fingerprint of its first user
    /// message with the credential's fingerprint (never the credential), and the Responses
    /// reply it continues.
    pub fn of(
        header_key: Option<String>,
        credential_fingerprint: &str,
        first_user_text: Option<&str>,
        previous_response_id: Option<String>,
    ) -> Self {
        Self {
            header_key,
            fingerprint: first_user_text
                .map(|text| conversation_fingerprint(text, credential_fingerprint)),
            previous_response_id,
        }
    }
}

/// Fingerprint of a conversation: its first user message and the credential fingerprint.
/// The model is left out on purpose: switching models mid-conversation is common.
pub fn conversation_fingerprint(first_user_text: &str, credential: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(first_user_text.as_bytes());
    hasher.update([0]);
    hasher.update(credential.as_bytes());
    hex::encode(&hasher.finalize()[..8])
}

/// Where the request says its project is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectHint {
    /// Project directory.
    pub path: String,
    /// False when it is only the gateway's working directory.
    pub confident: bool,
}

/// The session a request was mapped to.
#[derive(Clone)]
pub struct SessionHandle {
    /// Session id.
    pub session_id: String,
    /// Address of the session's actor.
    pub addr: Addr<SessionActor>,
}

/// Counters of one session actor, for `/api/v1/actors` and tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionCounters {
    /// Turns prepared.
    pub turns: u64,
    /// Replies captured.
    pub replies: u64,
    /// Messages written to storage.
    pub messages_stored: u64,
    /// History rewrites recorded.
    pub forks: u64,
    /// Cards injected for the first time.
    pub cards_injected: u64,
    /// Storage failures.
    pub failed: u64,
    /// The latest failure, if any.
    pub last_error: Option<String>,
}
