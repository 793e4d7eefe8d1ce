//! Owns the protocol-neutral conversation model: roles, message parts, messages, token usage,
//! and the lenient message identity used to recognise resent history.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Who produced a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// System or developer instructions.
    System,
    /// The human (or harness) side, including Anthropic tool results.
    User,
    /// The model.
    Assistant,
    /// OpenAI-style tool output messages.
    Tool,
}

impl Role {
    /// The snake_case tag of the role, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// Model reasoning, with the provider signature when there is one.
    Thinking {
        /// The reasoning text (may be empty when only a signature is known).
        text: String,
        /// Anthropic signature or OpenAI `encrypted_content`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// A call of a client-side tool.
    ToolCall {
        /// Call id (Anthropic `tool_use.id`, OpenAI `call_id` / `tool_calls[].id`).
        id: String,
        /// Tool name.
        name: String,
        /// JSON text of the arguments.
        arguments: String,
    },
    /// The result of a tool call.
    ToolResult {
        /// The id of the call this answers.
        call_id: String,
        /// The result flattened to text.
        content: String,
        /// Whether the tool reported an error.
        #[serde(default)]
        is_error: bool,
    },
    /// Anything else (images, documents, redacted thinking, unknown blocks), kept verbatim.
    Other {
        /// The block or item `type`.
        kind: String,
        /// The whole block as received.
        raw: serde_json::Value,
    },
}

/// A message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who produced it.
    pub role: Role,
    /// Its parts, in order.
    pub parts: Vec<Part>,
}

impl Message {
    /// Builds a message from a role and parts.
    pub fn new(role: Role, parts: Vec<Part>) -> Self {
        Self { role, parts }
    }

    /// Lenient identity used to recognise the same message when a client resends history.
    ///
    /// SHA-256 over: the role tag, `"\0"`, the text parts each trimmed (empty ones skipped) joined
    /// by `"\n"`; then `"\0call:{id}:{name}"` for each tool call and `"\0result:{call_id}:{content}"`
    /// (content trimmed) for each tool result. Thinking, signatures, other parts, cache control,
    /// JSON formatting and argument text do not contribute. Returns the first 16 bytes.
    pub fn identity(&self) -> [u8; 16] {
        let mut hasher = Sha256::new();
        hasher.update(self.role.as_str().as_bytes());
        hasher.update(b"\0");
        let mut first = true;
        for part in &self.parts {
            if let Part::Text { text } = part {
                let text = text.trim();
                if text.is_empty() {
                    continue;
                }
                if !first {
                    hasher.update(b"\n");
                }
                first = false;
                hasher.update(text.as_bytes());
            }
        }
        for part in &self.parts {
            match part {
                Part::ToolCall { id, name, .. } => {
                    for piece in ["\0call:", id.as_str(), ":", name.as_str()] {
                        hasher.update(piece.as_bytes());
                    }
                }
                Part::ToolResult {
                    call_id, content, ..
                } => {
                    for piece in ["\0result:", call_id.as_str(), ":", content.trim()] {
                        hasher.update(piece.as_bytes());
                    }
                }
                // Images, documents and other blocks a client sends are hashed too (without
                // their cache_control), so replacing one is seen as a change. Assistant blocks
                // are left out: the gateway rebuilds those from a stream, whose shape differs.
                Part::Other { kind, raw } if self.role != Role::Assistant => {
                    hasher.update(b"\0other:");
                    hasher.update(kind.as_bytes());
                    if let serde_json::Value::Object(fields) = raw {
                        for (key, value) in fields.iter().filter(|(key, _)| *key != "cache_control")
                        {
                            hasher.update(key.as_bytes());
                            hasher.update(value.to_string().as_bytes());
                        }
                    }
                }
                _ => {}
            }
        }
        let digest = hasher.finalize();
        let mut out = [0u8; 16];
        out.copy_from_slice(&digest[..16]);
        out
    }

    /// Text parts joined with `"\n"` (for display and search).
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }

    /// Whether the message contains at least one tool call.
    pub fn has_tool_call(&self) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, Part::ToolCall { .. }))
    }
}

/// Token usage of one exchange, normalised to Anthropic semantics:
/// `input_tokens` excludes tokens read from or written to the prompt cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Input tokens served from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Part {
        Part::Text { text: t.into() }
    }

    fn call(id: &str, name: &str, args: &str) -> Part {
        Part::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.into(),
        }
    }

    #[test]
    fn identity_ignores_cosmetic_differences() {
        let base = Message::new(
            Role::Assistant,
            vec![text("hello"), call("c1", "read", r#"{"a":1}"#)],
        );
        let variants = [
            Message::new(
                Role::Assistant,
                vec![
                    Part::Thinking {
                        text: "hmm".into(),
                        signature: Some("sig".into()),
                    },
                    text("  hello \n"),
                    text("   "),
                    call("c1", "read", "{ \"a\": 1 }"),
                ],
            ),
            Message::new(
                Role::Assistant,
                vec![
                    text("hello"),
                    Part::Other {
                        kind: "redacted_thinking".into(),
                        raw: serde_json::json!({"type": "redacted_thinking", "data": "x"}),
                    },
                    call("c1", "read", "{}"),
                ],
            ),
        ];
        for v in &variants {
            assert_eq!(base.identity(), v.identity(), "{v:?}");
        }
    }

    #[test]
    fn identity_changes_with_content() {
        let base = Message::new(Role::User, vec![text("hello"), call("c1", "read", "{}")]);
        let variants = [
            Message::new(Role::User, vec![text("hello!"), call("c1", "read", "{}")]),
            Message::new(Role::User, vec![text("hello"), call("c2", "read", "{}")]),
            Message::new(Role::User, vec![text("hello"), call("c1", "write", "{}")]),
            Message::new(
                Role::Assistant,
                vec![text("hello"), call("c1", "read", "{}")],
            ),
            Message::new(
                Role::User,
                vec![
                    text("hello"),
                    call("c1", "read", "{}"),
                    Part::ToolResult {
                        call_id: "c1".into(),
                        content: "ok".into(),
                        is_error: false,
                    },
                ],
            ),
        ];
        for v in &variants {
            assert_ne!(base.identity(), v.identity(), "{v:?}");
        }
    }

    #[test]
    fn client_blocks_count_but_their_cache_control_does_not() {
        let image = |data: &str, cached: bool| {
            let mut raw =
                serde_json::json!({"type": "image", "source": {"type": "base64", "data": data}});
            if cached {
                raw["cache_control"] = serde_json::json!({"type": "ephemeral"});
            }
            Message::new(
                Role::User,
                vec![Part::Other {
                    kind: "image".into(),
                    raw,
                }],
            )
        };
        assert_eq!(
            image("AAA", false).identity(),
            image("AAA", true).identity()
        );
        assert_ne!(
            image("AAA", false).identity(),
            image("BBB", false).identity()
        );
        let reply = |data: &str| {
            let raw = serde_json::json!({"type": "redacted_thinking", "data": data});
            Message::new(
                Role::Assistant,
                vec![
                    text("x"),
                    Part::Other {
                        kind: "redacted_thinking".into(),
                        raw,
                    },
                ],
            )
        };
        assert_eq!(reply("one").identity(), reply("two").identity());
    }

    #[test]
    fn identity_trims_tool_result_content() {
        let a = Message::new(
            Role::Tool,
            vec![Part::ToolResult {
                call_id: "c".into(),
                content: " out\n".into(),
                is_error: false,
            }],
        );
        let b = Message::new(
            Role::Tool,
            vec![Part::ToolResult {
                call_id: "c".into(),
                content: "out".into(),
                is_error: true,
            }],
        );
        assert_eq!(a.identity(), b.identity());
    }

    #[test]
    fn text_joins_text_parts() {
        let m = Message::new(Role::User, vec![text("a"), call("c", "n", "{}"), text("b")]);
        assert_eq!(m.text(), "a\nb");
    }

    #[test]
    fn part_serde_shape() {
        let p = Part::Thinking {
            text: "t".into(),
            signature: None,
        };
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            serde_json::json!({"type": "thinking", "text": "t"})
        );
        let back: Part = serde_json::from_value(
            serde_json::json!({"type": "tool_result", "call_id": "c", "content": "x"}),
        )
        .unwrap();
        assert_eq!(
            back,
            Part::ToolResult {
                call_id: "c".into(),
                content: "x".into(),
                is_error: false
            }
        );
    }
}
