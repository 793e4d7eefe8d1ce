//! The conversation as the planner reads it: one [`Unit`] per message with its estimated
//! tokens (taken from the stored path when known, so a restart does not tokenize the history
//! again), its tool calls and outputs; and the annotations of the outputs a plan replaces.

use std::collections::HashMap;
use std::hash::BuildHasher;

use lore_proto::inject::is_user_text;
use lore_proto::{Message, Part, Role};
use lore_storage::PathEntry;

use crate::gradient::strip::{annotation, duplicate_annotation};
use crate::gradient::{ResultView, Unit};
use crate::tokens::{BpeTokenCounter, TokenCounter};

/// Framing tokens of every message (role markers).
const MESSAGE_FRAMING: u64 = 8;
/// Framing tokens of every tool call or output.
const TOOL_FRAMING: u64 = 10;
/// What an image or document costs, roughly (a 1,092 × 1,092 image on Anthropic).
const MEDIA_TOKENS: u64 = 1_600;

fn text_tokens(text: &str) -> u64 {
    BpeTokenCounter.count(text) as u64
}

/// Estimated prompt tokens of one message.
pub fn estimate(message: &Message) -> u64 {
    let mut tokens = MESSAGE_FRAMING;
    for part in &message.parts {
        tokens += match part {
            Part::Text { text } => text_tokens(text),
            Part::Thinking { text, signature } => {
                text_tokens(text) + signature.as_ref().map_or(0, |s| s.len() as u64 / 4)
            }
            Part::ToolCall {
                name, arguments, ..
            } => TOOL_FRAMING + text_tokens(name) + text_tokens(arguments),
            Part::ToolResult { content, .. } => TOOL_FRAMING + text_tokens(content),
            Part::Other { kind, raw } => match kind.as_str() {
                "image" | "document" | "input_image" | "input_file" | "image_url" => MEDIA_TOKENS,
                _ => raw.to_string().len() as u64 / 4,
            },
        };
    }
    tokens
}

/// A tool output's fingerprint, for finding repeated outputs within one turn (never stored).
/// foldhash with a fixed seed: the same output gets the same value on every turn, and it is
/// several times faster than SipHash on outputs of many kilobytes.
fn hash_of(text: &str) -> u64 {
    foldhash::fast::FixedState::with_seed(0x6c6f_7265).hash_one(text)
}

/// The planner's view of `messages` (whose identities are `identities`). `path` is the
/// session's stored path, aligned with `messages` position by position when it holds them (its
/// `tokens` are reused when set); `estimated` receives the token estimate of every message.
pub fn units_of(
    messages: &[Message],
    identities: &[[u8; 16]],
    path: &[PathEntry],
    estimated: &mut Vec<u64>,
) -> Vec<Unit> {
    estimated.clear();
    let mut units = Vec::with_capacity(messages.len());
    for (i, message) in messages.iter().enumerate() {
        let identity = identities
            .get(i)
            .copied()
            .unwrap_or_else(|| message.identity());
        let entry = path.get(i).filter(|entry| entry.identity == identity);
        let tokens = match entry {
            Some(entry) if entry.tokens > 0 => u64::from(entry.tokens),
            _ => estimate(message),
        };
        estimated.push(tokens);
        let mut calls = Vec::new();
        let mut results = Vec::new();
        for part in &message.parts {
            match part {
                Part::ToolCall { id, .. } => calls.push(id.clone()),
                Part::ToolResult {
                    call_id, content, ..
                } => results.push(ResultView {
                    call_id: call_id.clone(),
                    tokens: TOOL_FRAMING + content.len() as u64 / 4,
                    hash: hash_of(content),
                    chars: content.len(),
                }),
                _ => {}
            }
        }
        units.push(Unit {
            role: message.role,
            tokens,
            identity,
            seq: entry.map(|entry| entry.seq),
            user_text: is_user_text(message),
            text_only_assistant: message.role == Role::Assistant
                && calls.is_empty()
                && !message.text().trim().is_empty(),
            calls,
            results,
        });
    }
    units
}

/// The annotation of each replaced output: `strip` get the size/errors/paths note,
/// `duplicates` the duplicate note; each names the tool that produced the output.
pub fn annotations(
    messages: &[Message],
    strip: &[String],
    duplicates: &[String],
) -> HashMap<String, String> {
    if strip.is_empty() && duplicates.is_empty() {
        return HashMap::new();
    }
    let mut tools: HashMap<&str, &str> = HashMap::new();
    for message in messages {
        for part in &message.parts {
            if let Part::ToolCall { id, name, .. } = part {
                tools.insert(id.as_str(), name.as_str());
            }
        }
    }
    let mut out = HashMap::with_capacity(strip.len() + duplicates.len());
    for message in messages {
        for part in &message.parts {
            let Part::ToolResult {
                call_id,
                content,
                is_error,
            } = part
            else {
                continue;
            };
            let tool = tools.get(call_id.as_str()).copied().unwrap_or("");
            if duplicates.contains(call_id) {
                out.insert(call_id.clone(), duplicate_annotation(tool));
            } else if strip.contains(call_id) {
                out.insert(call_id.clone(), annotation(tool, content, *is_error));
            }
        }
    }
    out
}
