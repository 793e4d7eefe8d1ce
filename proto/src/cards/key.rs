//! Card keys: the file stem of a card, checked so that it can never escape the vault.

/// Longest accepted key, in bytes (file systems cap names at 255 bytes; `.md` and a temp suffix
/// need room too).
pub const MAX_KEY_BYTES: usize = 200;

/// Why a card key was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// Nothing left after trimming.
    #[error("card key is empty; give the card a name")]
    Empty,
    /// `.`, `..` or a key containing `..`.
    #[error("card key {0:?} contains \"..\"; pick a name without consecutive dots")]
    DotDot(String),
    /// A `/` or `\` would make the key a path.
    #[error("card key {0:?} contains a path separator; use a name without / or \\")]
    Separator(String),
    /// A leading `.` would hide the file.
    #[error("card key {0:?} starts with a dot; remove the leading dot")]
    LeadingDot(String),
    /// NUL or another control character.
    #[error("card key {0:?} contains a control character; remove it")]
    Control(String),
    /// Longer than [`MAX_KEY_BYTES`].
    #[error("card key is {0} bytes long; keep it under {MAX_KEY_BYTES} bytes")]
    TooLong(usize),
}

/// Normalises and checks a card key (a file stem).
///
/// Trims, drops one trailing `.md`, trims again. Refuses empty keys, `..` anywhere, `/` and `\`,
/// a leading `.`, control characters (NUL included) and keys longer than [`MAX_KEY_BYTES`].
/// Spaces and non-ASCII text are allowed (`the Friday deploy` is a valid key).
pub fn safe_key(raw: &str) -> Result<String, KeyError> {
    let trimmed = raw.trim();
    let key = trimmed.strip_suffix(".md").unwrap_or(trimmed).trim();
    if key.is_empty() {
        return Err(KeyError::Empty);
    }
    if key.chars().any(char::is_control) {
        return Err(KeyError::Control(key.to_owned()));
    }
    if key.contains('/') || key.contains('\\') {
        return Err(KeyError::Separator(key.to_owned()));
    }
    if key.contains("..") {
        return Err(KeyError::DotDot(key.to_owned()));
    }
    if key.starts_with('.') {
        return Err(KeyError::LeadingDot(key.to_owned()));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(KeyError::TooLong(key.len()));
    }
    Ok(key.to_owned())
}
