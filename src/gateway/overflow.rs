//! "Prompt is too long" answers: recognising them in every provider's words, reading how far
//! over the limit the prompt was, and telling the client what Lore tried when it could not make
//! the prompt fit.

use bytes::Bytes;
use serde_json::Value;

/// Largest error body read to look for a context overflow.
pub const MAX_ERROR_BYTES: usize = 256 * 1024;

/// A context-overflow error: how far over the limit the prompt was (1.3 when the provider did
/// not say), and the limit when it did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TooLong {
    /// Tokens sent / tokens allowed.
    pub ratio: f64,
    /// Tokens allowed.
    pub limit: Option<u64>,
}

/// The overflow `body` reports, when it is a context-overflow error.
pub fn too_long(body: &[u8]) -> Option<TooLong> {
    let ratio = too_long_ratio(body)?;
    let text = std::str::from_utf8(body).ok()?.to_ascii_lowercase();
    Some(TooLong {
        ratio,
        limit: counts(&text).map(|(_, limit)| limit as u64),
    })
}

/// The ratio of the prompt's tokens to the limit when `body` is a context-overflow error
/// (1.3 when it does not say); `None` for any other error.
pub fn too_long_ratio(body: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(body).ok()?;
    let lower = text.to_ascii_lowercase();
    let overflow = lower.contains("prompt is too long")
        || lower.contains("context_length_exceeded")
        || lower.contains("maximum context length")
        || lower.contains("exceeds the context window");
    if !overflow {
        return None;
    }
    Some(counts(&lower).map_or(1.3, |(used, limit)| used / limit))
}

/// `(used, limit)` from "prompt is too long: N tokens > M maximum" or "maximum context length is
/// M tokens … resulted in N tokens".
fn counts(text: &str) -> Option<(f64, f64)> {
    let numbers_after = |marker: &str| -> Option<f64> {
        let at = text.find(marker)? + marker.len();
        let digits: String = text[at..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    if let Some(used) = numbers_after("prompt is too long:") {
        let limit = numbers_after("tokens >")?;
        return (limit > 0.0).then_some((used, limit));
    }
    let limit = numbers_after("maximum context length is")?;
    let used = numbers_after("resulted in")?;
    (limit > 0.0).then_some((used, limit))
}

/// The error body with `note` appended to its message (Anthropic `error.message`, OpenAI
/// `error.message`); the body as it was when it is not such JSON.
pub fn with_note(body: &[u8], note: &str) -> Bytes {
    let Ok(mut value) = serde_json::from_slice::<Value>(body) else {
        return Bytes::copy_from_slice(body);
    };
    let Some(message) = value
        .get_mut("error")
        .and_then(|error| error.get_mut("message"))
    else {
        return Bytes::copy_from_slice(body);
    };
    let current = message.as_str().unwrap_or("").to_string();
    *message = Value::String(format!("{current} [{note}]"));
    serde_json::to_vec(&value).map_or_else(|_| Bytes::copy_from_slice(body), Bytes::from)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_provider_wording_is_recognised_with_its_ratio() {
        let anthropic = br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert!((too_long_ratio(anthropic).unwrap() - 1.05).abs() < 1e-9);
        let openai = br#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 160,000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert!((too_long_ratio(openai).unwrap() - 1.25).abs() < 1e-9);
        let responses = br#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
        assert_eq!(too_long_ratio(responses), Some(1.3));
        assert_eq!(
            too_long_ratio(br#"{"error":{"message":"invalid model"}}"#),
            None
        );
        assert_eq!(too_long_ratio(b"\xff"), None);
        assert_eq!(too_long(anthropic).unwrap().limit, Some(200_000));
        assert_eq!(too_long(openai).unwrap().limit, Some(128_000));
        assert_eq!(too_long(responses).unwrap().limit, None);
    }

    #[test]
    fn the_note_joins_the_message() {
        let body = br#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}"#;
        let noted: Value =
            serde_json::from_slice(&with_note(body, "Lore tried layers 2, 4")).unwrap();
        assert_eq!(
            noted["error"]["message"],
            "prompt is too long [Lore tried layers 2, 4]"
        );
        assert_eq!(with_note(b"plain", "x").as_ref(), b"plain");
    }
}
