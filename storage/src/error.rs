//! The storage error: a small kind the callers can match on, plus the underlying cause.

use std::sync::Arc;

/// What went wrong, coarsely, so callers can decide what to tell the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageErrorKind {
    /// Another process holds the data directory (sled takes an exclusive lock).
    Locked,
    /// A stored value could not be decoded.
    Corrupt,
    /// The disk is full.
    Full,
    /// Any other input/output failure.
    Io,
}

/// An error of the storage layer: a kind, a message for humans and the source.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct StorageError {
    /// The coarse class of the failure.
    pub kind: StorageErrorKind,
    /// What happened and, where it helps, what to do about it.
    pub message: String,
    /// The underlying error, if any.
    #[source]
    pub source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl StorageError {
    /// Builds an error of `kind` with a message and no source.
    pub fn new(kind: StorageErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    /// Builds a `Corrupt` error for a value that failed to decode.
    pub fn corrupt(what: &str, err: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            kind: StorageErrorKind::Corrupt,
            message: format!("stored {what} could not be decoded: {err}"),
            source: Some(Arc::new(err)),
        }
    }
}

impl From<sled::Error> for StorageError {
    fn from(err: sled::Error) -> Self {
        let (kind, message) = match &err {
            sled::Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull => (
                StorageErrorKind::Full,
                format!("the disk is full ({io}); free some space, nothing already stored is lost"),
            ),
            sled::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => (
                StorageErrorKind::Locked,
                "the data directory is in use by another lore process; stop it with `lore stop` or pass another --data-dir".to_string(),
            ),
            sled::Error::Io(io) if io.to_string().contains("lock") => (
                StorageErrorKind::Locked,
                "the data directory is in use by another lore process; stop it with `lore stop` or pass another --data-dir".to_string(),
            ),
            sled::Error::Corruption { .. } => (
                StorageErrorKind::Corrupt,
                format!("the database is corrupt: {err}"),
            ),
            _ => (StorageErrorKind::Io, format!("storage failure: {err}")),
        };
        Self {
            kind,
            message,
            source: Some(Arc::new(err)),
        }
    }
}
