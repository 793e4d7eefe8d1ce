//! Owns the hot-path parsing of Responses request bodies into a [`CanonicalRequest`].

use serde::Deserialize;

use super::accumulator::item_to_parts;
use crate::canonical::{Message, Part, Role};
use crate::error::ProtoError;
use crate::fast::{Fast, Str, content_of, ensure_object, utf8};
use crate::protocol::{CanonicalRequest, array_len, non_empty_tools};

#[derive(Deserialize)]
struct Req<'a> {
    #[serde(borrow, default)]
    model: Option<Str<'a>>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(borrow, default)]
    instructions: Option<Str<'a>>,
    #[serde(borrow, default)]
    input: Option<Fast<'a>>,
    #[serde(borrow, default)]
    previous_response_id: Option<Str<'a>>,
    #[serde(borrow, default)]
    tools: Option<&'a serde_json::value::RawValue>,
}

/// Parses a Responses request body.
pub(crate) fn parse_request(body: &[u8]) -> Result<CanonicalRequest, ProtoError> {
    ensure_object(body)?;
    let req: Req<'_> = serde_json::from_str(utf8(body)?)?;
    let mut system: Vec<String> = req.instructions.map(Str::into_string).into_iter().collect();
    let mut messages = Vec::new();
    let mut items = Vec::new();
    match req.input {
        None | Some(Fast::Scalar(serde_json::Value::Null)) => {}
        Some(Fast::Str(s)) => {
            messages.push(Message::new(
                Role::User,
                vec![Part::Text {
                    text: s.into_owned(),
                }],
            ));
        }
        Some(Fast::List(list)) => {
            for (index, item) in list.into_iter().enumerate() {
                if let Some(message) = item_message(item, &mut system)? {
                    messages.push(message);
                    items.push(index as u32);
                }
            }
        }
        Some(_) => {
            return Err(ProtoError::InvalidShape(
                "input is neither a string nor an array".into(),
            ));
        }
    }
    Ok(CanonicalRequest {
        model: req.model.map(Str::into_string),
        stream: req.stream.unwrap_or(false),
        system: (!system.is_empty()).then(|| system.join("\n")),
        messages,
        tool_count: req.tools.map_or(0, array_len),
        tools_json: req.tools.and_then(non_empty_tools),
        previous_response_id: req.previous_response_id.map(Str::into_string),
        items,
    })
}

/// Maps one input item to a message; system/developer messages go to `system` instead.
fn item_message(item: Fast<'_>, system: &mut Vec<String>) -> Result<Option<Message>, ProtoError> {
    let Fast::Obj(mut item) = item else {
        return Err(ProtoError::InvalidShape(
            "input item is not an object".into(),
        ));
    };
    let kind = item.str("type").unwrap_or("message").to_owned();
    let message = match kind.as_str() {
        // Tool definitions Codex adds mid-conversation: what the model is told, not a message.
        "additional_tools" => return Ok(None),
        "message" => {
            let role = match item.str("role").unwrap_or("user") {
                "system" | "developer" => {
                    system.push(
                        content_of(&mut item)?
                            .map(Fast::joined_text)
                            .unwrap_or_default(),
                    );
                    return Ok(None);
                }
                "assistant" => Role::Assistant,
                _ => Role::User,
            };
            let parts = match content_of(&mut item)? {
                None => Vec::new(),
                Some(Fast::List(parts)) => parts.into_iter().map(content_part).collect(),
                Some(other) => vec![Part::Text {
                    text: other.joined_text(),
                }],
            };
            Message::new(role, parts)
        }
        "function_call" => {
            let id = item
                .take_string("call_id")
                .or_else(|| item.take_string("id"));
            Message::new(
                Role::Assistant,
                vec![Part::ToolCall {
                    id: id.unwrap_or_default(),
                    name: item.take_string("name").unwrap_or_default(),
                    arguments: item
                        .take_string("arguments")
                        .filter(|a| !a.is_empty())
                        .unwrap_or_else(|| "{}".to_owned()),
                }],
            )
        }
        "function_call_output" => Message::new(
            Role::Tool,
            vec![Part::ToolResult {
                call_id: item.take_string("call_id").unwrap_or_default(),
                content: item
                    .take("output")
                    .map(Fast::joined_text)
                    .unwrap_or_default(),
                is_error: false,
            }],
        ),
        _ => {
            let role = if kind.ends_with("_output") {
                Role::Tool
            } else {
                Role::Assistant
            };
            Message::new(role, item_to_parts(&item.into_value()))
        }
    };
    Ok(Some(message))
}

fn content_part(part: Fast<'_>) -> Part {
    match part {
        Fast::Obj(mut p)
            if matches!(p.str("type"), Some("input_text" | "output_text" | "text"))
                && p.str("text").is_some() =>
        {
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
    fn string_input() {
        let req = parse(
            json!({"model": "gpt-5", "input": "hello", "instructions": "be terse", "stream": true}),
        );
        assert_eq!(req.model.as_deref(), Some("gpt-5"));
        assert!(req.stream);
        assert_eq!(req.system.as_deref(), Some("be terse"));
        assert_eq!(
            req.messages,
            vec![Message::new(
                Role::User,
                vec![Part::Text {
                    text: "hello".into()
                }]
            )]
        );
        assert_eq!(req.previous_response_id, None);
    }

    #[test]
    fn item_input_and_previous_response() {
        let req = parse(json!({
            "model": "gpt-5",
            "previous_response_id": "resp_9",
            "instructions": "inst",
            "tools": [{"type": "function", "name": "shell"}, {"type": "web_search"}],
            "input": [
                {"role": "developer", "content": "dev"},
                {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "sys"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run ls"}, {"type": "input_image", "image_url": "data:,"}]},
                {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "plan"}], "encrypted_content": "enc"},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": "{\"cmd\":\"ls\"}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done", "annotations": []}]},
                {"type": "local_shell_call_output", "call_id": "x", "output": "o"},
                {"type": "item_reference", "id": "msg_0"}
            ]
        }));
        assert_eq!(req.previous_response_id.as_deref(), Some("resp_9"));
        assert_eq!(req.system.as_deref(), Some("inst\ndev\nsys"));
        assert_eq!(req.tool_count, 2);
        let expected = vec![
            Message::new(
                Role::User,
                vec![
                    Part::Text {
                        text: "run ls".into(),
                    },
                    Part::Other {
                        kind: "input_image".into(),
                        raw: json!({"type": "input_image", "image_url": "data:,"}),
                    },
                ],
            ),
            Message::new(
                Role::Assistant,
                vec![Part::Thinking {
                    text: "plan".into(),
                    signature: Some("enc".into()),
                }],
            ),
            Message::new(
                Role::Assistant,
                vec![Part::ToolCall {
                    id: "call_1".into(),
                    name: "shell".into(),
                    arguments: "{\"cmd\":\"ls\"}".into(),
                }],
            ),
            Message::new(
                Role::Tool,
                vec![Part::ToolResult {
                    call_id: "call_1".into(),
                    content: "a.txt".into(),
                    is_error: false,
                }],
            ),
            Message::new(
                Role::Assistant,
                vec![Part::Text {
                    text: "done".into(),
                }],
            ),
            Message::new(
                Role::Tool,
                vec![Part::Other {
                    kind: "local_shell_call_output".into(),
                    raw: json!({"type": "local_shell_call_output", "call_id": "x", "output": "o"}),
                }],
            ),
            Message::new(
                Role::Assistant,
                vec![Part::Other {
                    kind: "item_reference".into(),
                    raw: json!({"type": "item_reference", "id": "msg_0"}),
                }],
            ),
        ];
        assert_eq!(req.messages, expected);
    }

    #[test]
    fn additional_tools_are_no_message() {
        let req = parse(json!({"input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "additional_tools", "tools": [{"type": "function", "name": "mcp__x"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
        ]}));
        assert_eq!(req.messages.len(), 2);
        assert_eq!(req.items, vec![0, 2]);
        assert_eq!(req.messages[1].role, Role::Assistant);
    }

    #[test]
    fn wrong_shapes() {
        for body in [
            r#"{"input": 5}"#,
            r#"{"input": {"role": "user"}}"#,
            r#"{"input": [3]}"#,
            "[]",
        ] {
            assert!(parse_request(body.as_bytes()).is_err(), "{body}");
        }
    }
}
