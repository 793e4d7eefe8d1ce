//! Owns the hot-path parsing of Chat Completions request bodies into a [`CanonicalRequest`].

use serde::Deserialize;

use crate::canonical::{Message, Part, Role};
use crate::error::ProtoError;
use crate::fast::{Fast, Ignored, Node, Str, content_of, ensure_object, role_of, utf8};
use crate::protocol::{CanonicalRequest, array_len, non_empty_tools};

#[derive(Deserialize)]
struct Req<'a> {
    #[serde(borrow, default)]
    model: Option<Str<'a>>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(borrow, default)]
    messages: Option<Vec<Node<'a>>>,
    #[serde(borrow, default)]
    tools: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    functions: Option<Ignored>,
}

/// Parses a Chat Completions request body.
pub(crate) fn parse_request(body: &[u8]) -> Result<CanonicalRequest, ProtoError> {
    ensure_object(body)?;
    let req: Req<'_> = serde_json::from_str(utf8(body)?)?;
    let mut system: Vec<String> = Vec::new();
    let mut messages = Vec::new();
    let mut items = Vec::new();
    for (index, mut m) in req.messages.unwrap_or_default().into_iter().enumerate() {
        let role = match role_of(&m)? {
            "system" | "developer" => {
                system.push(
                    content_of(&mut m)?
                        .map(Fast::joined_text)
                        .unwrap_or_default(),
                );
                continue;
            }
            "assistant" => Role::Assistant,
            "tool" | "function" => Role::Tool,
            _ => Role::User,
        };
        let content = content_of(&mut m)?;
        if role == Role::Tool {
            let part = Part::ToolResult {
                call_id: m.take_string("tool_call_id").unwrap_or_default(),
                content: content.map(Fast::joined_text).unwrap_or_default(),
                is_error: false,
            };
            messages.push(Message::new(role, vec![part]));
            items.push(index as u32);
            continue;
        }
        let mut parts = Vec::new();
        let reasoning = m
            .take_string("reasoning_content")
            .or_else(|| m.take_string("reasoning"))
            .filter(|s| !s.is_empty());
        if let Some(text) = reasoning {
            parts.push(Part::Thinking {
                text,
                signature: None,
            });
        }
        match content {
            None => {}
            Some(Fast::Str(s)) if s.is_empty() && role == Role::Assistant => {}
            Some(Fast::List(items)) => parts.extend(items.into_iter().map(content_part)),
            Some(other) => parts.push(Part::Text {
                text: other.joined_text(),
            }),
        }
        if let Some(Fast::List(calls)) = m.take("tool_calls") {
            parts.extend(calls.into_iter().map(tool_call));
        }
        messages.push(Message::new(role, parts));
        items.push(index as u32);
    }
    Ok(CanonicalRequest {
        model: req.model.map(Str::into_string),
        stream: req.stream.unwrap_or(false),
        system: (!system.is_empty()).then(|| system.join("\n")),
        messages,
        tool_count: req.tools.map_or(0, array_len) + req.functions.map_or(0, |f| f.len()),
        tools_json: req.tools.and_then(non_empty_tools),
        previous_response_id: None,
        items,
    })
}

fn tool_call(call: Fast<'_>) -> Part {
    let Fast::Obj(mut call) = call else {
        return Part::Other {
            kind: "unknown".into(),
            raw: call.into_value(),
        };
    };
    let (name, arguments) = match call.take("function") {
        Some(Fast::Obj(mut f)) => (f.take_string("name"), f.take_string("arguments")),
        _ => (None, None),
    };
    Part::ToolCall {
        id: call.take_string("id").unwrap_or_default(),
        name: name.unwrap_or_default(),
        arguments: arguments
            .filter(|a| !a.is_empty())
            .unwrap_or_else(|| "{}".to_owned()),
    }
}

fn content_part(part: Fast<'_>) -> Part {
    match part {
        Fast::Obj(mut p) if p.str("type") == Some("text") && p.str("text").is_some() => {
            Part::Text {
                text: p.take_string("text").unwrap_or_default(),
            }
        }
        Fast::Obj(p) => p.into_other(),
        other => Part::Other {
            kind: "unknown".into(),
            raw: other.into_value(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: serde_json::Value) -> CanonicalRequest {
        parse_request(v.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn messages_tools_and_system() {
        let req = parse(json!({
            "model": "gpt-x",
            "stream": false,
            "tools": [{"type": "function", "function": {"name": "read"}}],
            "messages": [
                {"role": "system", "content": "sys one"},
                {"role": "developer", "content": [{"type": "text", "text": "dev two"}]},
                {"role": "user", "content": "hi"},
                {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:x"}}]},
                {"role": "assistant", "content": null, "reasoning_content": "think", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"p\": 1}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "ls", "arguments": ""}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "file body"},
                {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
                {"role": "assistant", "content": "done", "reasoning": {"effort": "high"}}
            ]
        }));
        assert_eq!(req.model.as_deref(), Some("gpt-x"));
        assert!(!req.stream);
        assert_eq!(req.tool_count, 1);
        assert_eq!(req.system.as_deref(), Some("sys one\ndev two"));
        let expected = vec![
            Message::new(Role::User, vec![Part::Text { text: "hi".into() }]),
            Message::new(
                Role::User,
                vec![
                    Part::Text {
                        text: "look".into(),
                    },
                    Part::Other {
                        kind: "image_url".into(),
                        raw: json!({"type": "image_url", "image_url": {"url": "data:x"}}),
                    },
                ],
            ),
            Message::new(
                Role::Assistant,
                vec![
                    Part::Thinking {
                        text: "think".into(),
                        signature: None,
                    },
                    Part::ToolCall {
                        id: "call_1".into(),
                        name: "read".into(),
                        arguments: "{\"p\": 1}".into(),
                    },
                    Part::ToolCall {
                        id: "call_2".into(),
                        name: "ls".into(),
                        arguments: "{}".into(),
                    },
                ],
            ),
            Message::new(
                Role::Tool,
                vec![Part::ToolResult {
                    call_id: "call_1".into(),
                    content: "file body".into(),
                    is_error: false,
                }],
            ),
            Message::new(
                Role::Tool,
                vec![Part::ToolResult {
                    call_id: "call_2".into(),
                    content: "a\nb".into(),
                    is_error: false,
                }],
            ),
            Message::new(
                Role::Assistant,
                vec![Part::Text {
                    text: "done".into(),
                }],
            ),
        ];
        assert_eq!(req.messages, expected);
    }

    #[test]
    fn no_system_and_wrong_shapes() {
        let req = parse(
            json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "x"}]}),
        );
        assert_eq!(req.system, None);
        assert!(req.stream);
        for body in [
            r#"{"messages": {"role": "user"}}"#,
            r#"{"messages": [{"role": 1}]}"#,
            r#"{"messages": [{"role": "user", "content": {}}]}"#,
        ] {
            assert!(parse_request(body.as_bytes()).is_err(), "{body}");
        }
    }
}
