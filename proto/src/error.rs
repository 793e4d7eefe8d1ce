//! Owns the crate's error type, returned by every fallible parser in `lore-proto`.

/// Errors raised while parsing protocol bodies.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    /// The body is not valid JSON (or does not fit the expected JSON types).
    #[error("invalid json: {0}")]
    Json(#[from] serde_json::Error),
    /// The body is valid JSON but its structure is not what the protocol expects.
    #[error("invalid shape: {0}")]
    InvalidShape(String),
}
