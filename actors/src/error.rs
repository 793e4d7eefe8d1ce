//! The one error type of the actors crate.

use lore_storage::StorageError;

/// Why an actor could not do what it was asked.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ActorError {
    /// The storage layer failed; the request is forwarded anyway (fail open).
    #[error("storage: {0}")]
    Storage(#[from] StorageError),
    /// The target actor is gone or its mailbox is full.
    #[error("actor unavailable: {0}")]
    Mailbox(String),
}

impl From<actix::MailboxError> for ActorError {
    fn from(err: actix::MailboxError) -> Self {
        Self::Mailbox(err.to_string())
    }
}
