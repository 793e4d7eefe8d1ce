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
    /// The embedding runtime or model is missing or cannot be loaded; recall runs on BM25 alone.
    #[error("embeddings unavailable: {missing}; {fix}")]
    EmbedderUnavailable {
        /// What is missing or broken, with its path.
        missing: String,
        /// The command that installs it.
        fix: String,
    },
    /// The model failed on an input (tokenizer or runtime error).
    #[error("embedding failed: {0}")]
    Embedding(String),
    /// The reranker could not score a recall's candidates (missing model, busy, too slow).
    #[error("not reranked: {0}")]
    Rerank(String),
    /// The provider refused the worker's credential (401/403): the session's background work
    /// pauses until a request brings another credential.
    #[error(
        "the worker credential for {origin} was refused ({status}); background work for this session is paused until a request brings a valid key"
    )]
    WorkerCredentialRefused {
        /// HTTP status.
        status: u16,
        /// Where the call went.
        origin: String,
    },
    /// A worker call failed after its retries, or its reply could not be read.
    #[error("worker call failed: {0}")]
    WorkerFailed(String),
    /// A worker call stopped before an attempt because a request of its session arrived.
    #[error("the worker call yielded to a request of its session")]
    WorkerYielded,
    /// The worker answered, but with something that cannot be used; nothing was changed.
    #[error("worker reply rejected: {0}")]
    WorkerReplyRejected(String),
    /// What was asked for does not exist (an unknown or forgotten knowledge entry); the message
    /// says how to find what does.
    #[error("{0}")]
    NotFound(String),
    /// The input cannot be used as it is (an empty title, an ambiguous id prefix); the message
    /// says what to change.
    #[error("{0}")]
    Invalid(String),
}

impl From<actix::MailboxError> for ActorError {
    fn from(err: actix::MailboxError) -> Self {
        Self::Mailbox(err.to_string())
    }
}
