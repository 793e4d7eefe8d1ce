//! The limits every knowledge write keeps, whoever writes: titles are one trimmed line of at
//! most [`MAX_TITLE_CHARS`] characters, contents are trimmed and at most [`MAX_CONTENT_CHARS`]
//! characters (cut, ending with "…"), confidences lie in 0.0..=1.0 (NaN becomes
//! [`DEFAULT_CONFIDENCE`]). An empty title or content is refused with a message that says so.

use crate::error::ActorError;

use super::Draft;

/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// Longest content, in characters.
pub const MAX_CONTENT_CHARS: usize = 1_200;
/// Confidence of an inferred entry; what a NaN becomes.
pub const DEFAULT_CONFIDENCE: f32 = 0.8;

/// A title as it is stored: whitespace runs (line breaks included) become one space, then it is
/// cut to [`MAX_TITLE_CHARS`] at a character boundary.
pub fn clean_title(title: &str) -> Result<String, ActorError> {
    let title = one_line(title);
    if title.is_empty() {
        return Err(ActorError::Invalid(
            "a knowledge entry needs a title: give it a short, specific one (at most 120 characters)"
                .into(),
        ));
    }
    Ok(cut(&title, MAX_TITLE_CHARS).trim_end().to_string())
}

/// Content as it is stored: line endings as `\n`, trimmed, cut to [`MAX_CONTENT_CHARS`] with a
/// final "…" when longer.
pub fn clean_content(content: &str) -> Result<String, ActorError> {
    let content = content.replace("\r\n", "\n").replace('\r', "\n");
    let content = content.trim();
    if content.is_empty() {
        return Err(ActorError::Invalid(
            "a knowledge entry needs content: say what should be remembered (at most 1,200 characters)"
                .into(),
        ));
    }
    if content.chars().count() <= MAX_CONTENT_CHARS {
        return Ok(content.to_string());
    }
    let mut out = cut(content, MAX_CONTENT_CHARS - 1).trim_end().to_string();
    out.push('…');
    Ok(out)
}

/// A confidence clamped to 0.0..=1.0; NaN becomes [`DEFAULT_CONFIDENCE`].
pub fn clean_confidence(confidence: f32) -> f32 {
    if confidence.is_nan() {
        DEFAULT_CONFIDENCE
    } else {
        confidence.clamp(0.0, 1.0)
    }
}

/// The draft with every limit applied.
pub fn clean_draft(draft: Draft) -> Result<Draft, ActorError> {
    Ok(Draft {
        title: clean_title(&draft.title)?,
        content: clean_content(&draft.content)?,
        confidence: clean_confidence(draft.confidence),
        ..draft
    })
}

/// Words of a title joined by single spaces.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most `max` characters of `text`, cut at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}
