//! Owns the hot-path parsing of Anthropic request bodies into a [`CanonicalRequest`].

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::canonical::{Message, Part, Role};
use crate::error::ProtoError;
use crate::fast::{Fast, Node, Str, content_of, ensure_object, role_of, utf8};
use crate::protocol::{CanonicalRequest, array_len, non_empty_tools};
use crate::reuse::{ItemPrint, NoPrior, ParsedWithPrints, PriorTurn};

#[derive(Deserialize)]
struct Req<'a> {
    #[serde(borrow, default)]
    model: Option<Str<'a>>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(borrow, default)]
    system: Option<Fast<'a>>,
    /// Each message as raw JSON text: fingerprinted, then reused or parsed one by one.
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(borrow, default)]
    tools: Option<&'a RawValue>,
}

/// Parses an Anthropic Messages request body.
pub(crate) fn parse_request(body: &[u8]) -> Result<CanonicalRequest, ProtoError> {
    parse_reusing::<NoPrior>(body, |_| None).map(|parsed| parsed.request)
}

/// Parses an Anthropic Messages request body, taking from the earlier parse that `find` gives
/// for the first item's fingerprint every message whose item is unchanged at its position.
pub(crate) fn parse_reusing<R: PriorTurn>(
    body: &[u8],
    find: impl FnOnce(&ItemPrint) -> Option<R>,
) -> Result<ParsedWithPrints, ProtoError> {
    ensure_object(body)?;
    let req: Req<'_> = serde_json::from_str(utf8(body)?)?;
    let raw = req.messages.unwrap_or_default();
    let prints: Vec<ItemPrint> = raw
        .iter()
        .map(|item| ItemPrint::of(item.get().as_bytes()))
        .collect();
    let held = prints.first().and_then(find);
    let prior = held.as_ref().map(PriorTurn::prior);
    let mut messages = Vec::with_capacity(raw.len());
    let mut identities = Vec::with_capacity(raw.len());
    let mut reused = 0;
    for (index, item) in raw.iter().enumerate() {
        if let Some((message, identity)) = prior
            .as_ref()
            .and_then(|prior| prior.reuse(index, &prints[index]))
        {
            messages.push(message);
            identities.push(identity);
            reused += 1;
            continue;
        }
        let message = message_of(serde_json::from_str(item.get())?)?;
        identities.push(message.identity());
        messages.push(message);
    }
    let items = (0..messages.len() as u32).collect();
    let request = CanonicalRequest {
        model: req.model.map(Str::into_string),
        stream: req.stream.unwrap_or(false),
        system: req.system.map(Fast::joined_text),
        messages,
        tool_count: req.tools.map_or(0, array_len),
        tools_json: req.tools.and_then(non_empty_tools),
        previous_response_id: None,
        items,
    };
    Ok(ParsedWithPrints {
        request,
        identities,
        prints,
        reused,
    })
}

/// The message of one wire item (its bytes alone decide it).
fn message_of(mut node: Node<'_>) -> Result<Message, ProtoError> {
    let role = match role_of(&node)? {
        "assistant" => Role::Assistant,
        "system" => Role::System,
        _ => Role::User,
    };
    let parts = match content_of(&mut node)? {
        None => Vec::new(),
        Some(Fast::List(blocks)) => blocks.into_iter().map(block_to_part).collect(),
        Some(other) => vec![Part::Text {
            text: other.joined_text(),
        }],
    };
    Ok(Message { role, parts })
}

/// Converts one content block to a part; unknown or malformed blocks are kept verbatim.
pub(crate) fn block_to_part(block: Fast<'_>) -> Part {
    let Fast::Obj(mut b) = block else {
        return Part::Other {
            kind: "unknown".into(),
            raw: block.into_value(),
        };
    };
    match b.str("type").unwrap_or_default() {
        "text" if matches!(b.get("text"), Some(Fast::Str(_))) => Part::Text {
            text: b.take_string("text").unwrap_or_default(),
        },
        "thinking" => Part::Thinking {
            text: b.take_string("thinking").unwrap_or_default(),
            signature: b.take_string("signature").filter(|s| !s.is_empty()),
        },
        "tool_use" => Part::ToolCall {
            id: b.take_string("id").unwrap_or_default(),
            name: b.take_string("name").unwrap_or_default(),
            arguments: match b.take("input") {
                Some(Fast::Raw(raw)) => raw.get().to_owned(),
                _ => "{}".to_owned(),
            },
        },
        "tool_result" => Part::ToolResult {
            call_id: b.take_string("tool_use_id").unwrap_or_default(),
            content: b.take("content").map(Fast::joined_text).unwrap_or_default(),
            is_error: matches!(
                b.get("is_error"),
                Some(Fast::Scalar(serde_json::Value::Bool(true)))
            ),
        },
        _ => b.into_other(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> CanonicalRequest {
        parse_request(serde_json::to_string(&v).unwrap().as_bytes()).unwrap()
    }

    #[test]
    fn string_and_block_content() {
        let req = parse(json!({
            "model": "claude-x",
            "stream": true,
            "max_tokens": 10,
            "system": [{"type": "text", "text": "be nice"}, {"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": "a"}, {"name": "b"}],
            "messages": [
                {"role": "user", "content": "hi \"there\""},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                    {"type": "redacted_thinking", "data": "zzz"},
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "id": "tu_1", "name": "read", "input": {"path": "/a"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "tu_1", "content": [{"type": "text", "text": "line1"}, {"type": "text", "text": "line2"}], "is_error": true},
                    {"type": "tool_result", "tool_use_id": "tu_2", "content": "plain"},
                    {"type": "image", "source": {"type": "base64", "data": "AAA"}}
                ]}
            ]
        }));
        assert_eq!(req.model.as_deref(), Some("claude-x"));
        assert!(req.stream);
        assert_eq!(req.system.as_deref(), Some("be nice\nbe brief"));
        assert_eq!(req.tool_count, 2);
        assert_eq!(req.previous_response_id, None);
        let expected = vec![
            Message::new(
                Role::User,
                vec![Part::Text {
                    text: "hi \"there\"".into(),
                }],
            ),
            Message::new(
                Role::Assistant,
                vec![
                    Part::Thinking {
                        text: "hmm".into(),
                        signature: Some("sig".into()),
                    },
                    Part::Other {
                        kind: "redacted_thinking".into(),
                        raw: json!({"type": "redacted_thinking", "data": "zzz"}),
                    },
                    Part::Text {
                        text: "calling".into(),
                    },
                    Part::ToolCall {
                        id: "tu_1".into(),
                        name: "read".into(),
                        arguments: r#"{"path":"/a"}"#.into(),
                    },
                ],
            ),
            Message::new(
                Role::User,
                vec![
                    Part::ToolResult {
                        call_id: "tu_1".into(),
                        content: "line1\nline2".into(),
                        is_error: true,
                    },
                    Part::ToolResult {
                        call_id: "tu_2".into(),
                        content: "plain".into(),
                        is_error: false,
                    },
                    Part::Other {
                        kind: "image".into(),
                        raw: json!({"type": "image", "source": {"type": "base64", "data": "AAA"}}),
                    },
                ],
            ),
        ];
        assert_eq!(req.messages, expected);
    }

    #[test]
    fn string_system_and_defaults() {
        let req = parse(json!({"system": "sys", "messages": []}));
        assert_eq!(req.system.as_deref(), Some("sys"));
        assert!(!req.stream);
        assert_eq!(req.model, None);
        assert_eq!(req.tool_count, 0);
    }

    #[test]
    fn wrong_shapes_are_errors() {
        for body in [
            r#"{"messages": 3}"#,
            r#"{"messages": [{"content": "x"}]}"#,
            r#"{"messages": [{"role": "user", "content": 5}]}"#,
            "[]",
        ] {
            assert!(parse_request(body.as_bytes()).is_err(), "{body}");
        }
    }

    #[test]
    fn malformed_block_is_kept_verbatim() {
        let req = parse(
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}),
        );
        assert_eq!(
            req.messages[0].parts,
            vec![Part::Other {
                kind: "text".into(),
                raw: json!({"type": "text", "text": 5})
            }]
        );
    }
}
