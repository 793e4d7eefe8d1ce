//! Rebuilding a request body around a new message array, for the context manager.
//!
//! Every byte outside what changes stays as the client sent it: [`BodyLayout`] finds the byte
//! ranges of the message array (`messages`, or `input` for Responses), of each of its
//! elements, of `system` and of `tools`; [`render`] writes the body back with the array made of
//! [`Piece`]s (a client element verbatim, or new JSON text) and the optional system and tool
//! edits of [`HeadEdits`]. The per-element transformations (tool outputs replaced by an
//! annotation, cache breakpoints removed or added, the distilled prefix) are in [`items`].
//!
//! Pure and deterministic: the same body and the same pieces give the same bytes, which is what
//! keeps the provider's prompt cache warm across turns.

pub mod items;
pub mod usage;

use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::ProtoError;
use crate::protocol::Protocol;

/// Where the parts the context manager may change sit in a request body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BodyLayout {
    /// The message array (`messages`, or `input` for Responses), brackets included.
    pub array: Option<Range<usize>>,
    /// Each element of the array, in order.
    pub items: Vec<Range<usize>>,
    /// The `system` value (Anthropic).
    pub system: Option<Range<usize>>,
    /// The `tools` array, brackets included.
    pub tools: Option<Range<usize>>,
    /// The last element of `tools`.
    pub last_tool: Option<Range<usize>>,
}

fn offset_of(body: &[u8], raw: &RawValue) -> Result<Range<usize>, ProtoError> {
    let text = raw.get();
    let start = (text.as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
    let end = start.wrapping_add(text.len());
    if start > body.len() || end > body.len() {
        return Err(ProtoError::InvalidShape(
            "a field lies outside the body".into(),
        ));
    }
    Ok(start..end)
}

impl BodyLayout {
    /// Reads the layout of `body` (one pass that builds nothing but byte ranges).
    pub fn read(protocol: Protocol, body: &[u8]) -> Result<Self, ProtoError> {
        #[derive(Deserialize)]
        struct Top<'a> {
            #[serde(borrow, default)]
            messages: Option<&'a RawValue>,
            #[serde(borrow, default)]
            input: Option<&'a RawValue>,
            #[serde(borrow, default)]
            system: Option<&'a RawValue>,
            #[serde(borrow, default)]
            tools: Option<&'a RawValue>,
        }
        let top: Top<'_> = serde_json::from_slice(body)?;
        let array = match protocol {
            Protocol::OpenAiResponses => top.input,
            _ => top.messages,
        };
        let mut layout = BodyLayout::default();
        if let Some(array) = array
            && array.get().trim_start().starts_with('[')
        {
            layout.array = Some(offset_of(body, array)?);
            let elements: Vec<&RawValue> = serde_json::from_str(array.get())?;
            for element in elements {
                layout.items.push(offset_of(body, element)?);
            }
        }
        if protocol == Protocol::Anthropic
            && let Some(system) = top.system
        {
            layout.system = Some(offset_of(body, system)?);
        }
        if let Some(tools) = top.tools
            && tools.get().trim_start().starts_with('[')
        {
            layout.tools = Some(offset_of(body, tools)?);
            let elements: Vec<&RawValue> = serde_json::from_str(tools.get())?;
            if let Some(last) = elements.last() {
                layout.last_tool = Some(offset_of(body, last)?);
            }
        }
        Ok(layout)
    }
}

/// One element of the rebuilt message array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// The client's element at this index, byte for byte.
    Item(usize),
    /// New JSON text (a rewritten client element or one of ours).
    Json(String),
}

/// Changes outside the message array.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeadEdits {
    /// The new `system` value (Anthropic), JSON text; added when the body has none.
    pub system: Option<String>,
    /// The new last tool definition, JSON text.
    pub last_tool: Option<String>,
}

/// The body with its message array made of `pieces` and `edits` applied. Fails when the body
/// has no message array.
pub fn render(
    body: &[u8],
    layout: &BodyLayout,
    pieces: &[Piece],
    edits: &HeadEdits,
) -> Result<Vec<u8>, ProtoError> {
    let array = layout
        .array
        .clone()
        .ok_or_else(|| ProtoError::InvalidShape("the request has no message array".into()))?;
    let mut replacements: Vec<(Range<usize>, Vec<u8>)> = Vec::with_capacity(3);
    let mut joined = Vec::with_capacity(array.len() + 1024);
    joined.push(b'[');
    for (n, piece) in pieces.iter().enumerate() {
        if n > 0 {
            joined.push(b',');
        }
        match piece {
            Piece::Item(index) => {
                let range = layout.items.get(*index).ok_or_else(|| {
                    ProtoError::InvalidShape(format!("no message {index} in the request"))
                })?;
                joined.extend_from_slice(&body[range.clone()]);
            }
            Piece::Json(text) => joined.extend_from_slice(text.as_bytes()),
        }
    }
    joined.push(b']');
    replacements.push((array, joined));
    match (&edits.system, &layout.system) {
        (Some(text), Some(range)) => replacements.push((range.clone(), text.as_bytes().to_vec())),
        (Some(text), None) => {
            // A body without `system` gets one as its first field.
            let open = body
                .iter()
                .position(|byte| *byte == b'{')
                .ok_or_else(|| ProtoError::InvalidShape("the body is not an object".into()))?;
            replacements.push((
                open + 1..open + 1,
                format!("\"system\":{text},").into_bytes(),
            ));
        }
        (None, _) => {}
    }
    if let (Some(text), Some(range)) = (&edits.last_tool, &layout.last_tool) {
        replacements.push((range.clone(), text.as_bytes().to_vec()));
    }
    replacements.sort_by_key(|(range, _)| range.start);
    let extra: usize = replacements.iter().map(|(_, text)| text.len()).sum();
    let mut out = Vec::with_capacity(body.len() + extra);
    let mut cursor = 0;
    for (range, text) in replacements {
        if range.start < cursor {
            return Err(ProtoError::InvalidShape("overlapping edits".into()));
        }
        out.extend_from_slice(&body[cursor..range.start]);
        out.extend_from_slice(&text);
        cursor = range.end;
    }
    out.extend_from_slice(&body[cursor..]);
    Ok(out)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
