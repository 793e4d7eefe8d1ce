//! Byte-level surgery on request bodies for injecting text into one message.
//!
//! The gateway must change a request only where it injects: every other byte of the body stays
//! as the client sent it, so the provider's prompt cache keeps matching. [`message_items`] finds
//! the byte range of each element of `messages` (Anthropic, OpenAI Chat) or `input` (Responses);
//! [`with_block`] rewrites one element with a text block added; [`splice`] puts the rewritten
//! elements back into the original bytes.

use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::canonical::{Message, Role};
use crate::error::ProtoError;
use crate::protocol::{Protocol, parse_request};

/// The byte range of every element of the request's message array, in order. Empty when the
/// request has no such array (a Responses `input` string, for instance).
pub fn message_items(protocol: Protocol, body: &[u8]) -> Result<Vec<Range<usize>>, ProtoError> {
    #[derive(Deserialize)]
    struct Messages<'a> {
        #[serde(borrow, default)]
        messages: Option<&'a RawValue>,
        #[serde(borrow, default)]
        input: Option<&'a RawValue>,
    }
    let parsed: Messages<'_> = serde_json::from_slice(body)?;
    let array = match protocol {
        Protocol::OpenAiResponses => parsed.input,
        _ => parsed.messages,
    };
    let Some(array) = array else {
        return Ok(Vec::new());
    };
    let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(array.get()) else {
        return Ok(Vec::new());
    };
    let base = body.as_ptr() as usize;
    let mut ranges = Vec::with_capacity(items.len());
    for item in items {
        let text = item.get();
        let start = (text.as_ptr() as usize).wrapping_sub(base);
        let end = start + text.len();
        if end > body.len() {
            return Err(ProtoError::InvalidShape("message outside the body".into()));
        }
        ranges.push(start..end);
    }
    Ok(ranges)
}

/// The canonical form of one element of the message array.
pub fn item_message(protocol: Protocol, item: &[u8]) -> Option<Message> {
    let key = match protocol {
        Protocol::OpenAiResponses => "input",
        _ => "messages",
    };
    let mut body = Vec::with_capacity(item.len() + 16);
    body.extend_from_slice(format!("{{\"{key}\":[").as_bytes());
    body.extend_from_slice(item);
    body.extend_from_slice(b"]}");
    let mut request = parse_request(protocol, &body).ok()?;
    request.messages.pop()
}

/// True when the element is a message the user wrote (role user with text of its own, not only
/// tool results).
pub fn is_user_text(message: &Message) -> bool {
    message.role == Role::User && !message.text().trim().is_empty()
}

/// The element rewritten with `block` added: before a string content (`block` + blank line +
/// content), or as a new first text part of a list content (after any tool results, which
/// Anthropic requires first).
pub fn with_block(protocol: Protocol, item: &[u8], block: &str) -> Result<String, ProtoError> {
    let mut message: Map<String, Value> = serde_json::from_slice(item)?;
    let part_type = match protocol {
        Protocol::OpenAiResponses => "input_text",
        _ => "text",
    };
    match message.get_mut("content") {
        Some(Value::String(content)) => {
            *content = format!("{block}\n\n{content}");
        }
        Some(Value::Array(parts)) => {
            let results = parts
                .iter()
                .take_while(|part| part.get("type").and_then(Value::as_str) == Some("tool_result"))
                .count();
            let mut part = Map::new();
            part.insert("type".into(), Value::String(part_type.into()));
            part.insert("text".into(), Value::String(block.to_string()));
            parts.insert(results, Value::Object(part));
        }
        _ => {
            return Err(ProtoError::InvalidShape(
                "the message has no text content to add to".into(),
            ));
        }
    }
    Ok(serde_json::to_string(&message)?)
}

/// The body with each range replaced by its new text; ranges must not overlap.
pub fn splice(body: &[u8], replacements: &[(Range<usize>, String)]) -> Vec<u8> {
    let mut sorted: Vec<&(Range<usize>, String)> = replacements.iter().collect();
    sorted.sort_by_key(|(range, _)| range.start);
    let extra: usize = sorted.iter().map(|(_, text)| text.len()).sum();
    let mut out = Vec::with_capacity(body.len() + extra);
    let mut cursor = 0;
    for (range, text) in sorted {
        if range.start < cursor || range.end > body.len() {
            continue;
        }
        out.extend_from_slice(&body[cursor..range.start]);
        out.extend_from_slice(text.as_bytes());
        cursor = range.end;
    }
    out.extend_from_slice(&body[cursor..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_chosen_message_changes() {
        let body = br#"{"model":"m",  "messages": [ {"role":"user","content":"hi"} ,{"role":"assistant","content":[{"type":"text","text":"yo"}]},{"role":"user","content":[{"type":"text","text":"Mira?","cache_control":{"type":"ephemeral"}}]}], "stream" : true}"#;
        let items = message_items(Protocol::Anthropic, body).unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(
            &body[items[0].clone()],
            br#"{"role":"user","content":"hi"}"#
        );
        let rewritten = with_block(Protocol::Anthropic, &body[items[2].clone()], "BLOCK").unwrap();
        let out = splice(body, &[(items[2].clone(), rewritten)]);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with(r#"{"model":"m",  "messages": [ {"role":"user","content":"hi"} ,"#),
            "{text}"
        );
        assert!(text.ends_with(r#"], "stream" : true}"#), "{text}");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value["messages"][2]["content"][0],
            json!({"type": "text", "text": "BLOCK"})
        );
        assert_eq!(
            value["messages"][2]["content"][1]["cache_control"],
            json!({"type": "ephemeral"})
        );
    }

    #[test]
    fn strings_get_a_prefix_and_tool_results_stay_first() {
        let item = br#"{"role":"user","content":"hello"}"#;
        let out: Value =
            serde_json::from_str(&with_block(Protocol::OpenAiChat, item, "B").unwrap()).unwrap();
        assert_eq!(out["content"], "B\n\nhello");
        let item = br#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"},{"type":"text","text":"next"}]}"#;
        let out: Value =
            serde_json::from_str(&with_block(Protocol::Anthropic, item, "B").unwrap()).unwrap();
        assert_eq!(out["content"][0]["type"], "tool_result");
        assert_eq!(out["content"][1]["text"], "B");
        let item =
            br#"{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]}"#;
        let out: Value =
            serde_json::from_str(&with_block(Protocol::OpenAiResponses, item, "B").unwrap())
                .unwrap();
        assert_eq!(
            out["content"][0],
            json!({"type": "input_text", "text": "B"})
        );
    }

    #[test]
    fn items_are_read_back_as_canonical_messages() {
        let item = br#"{"role":"user","content":[{"type":"text","text":"Mira?"}]}"#;
        let message = item_message(Protocol::Anthropic, item).unwrap();
        assert!(is_user_text(&message));
        let tool = br#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}"#;
        assert!(!is_user_text(
            &item_message(Protocol::Anthropic, tool).unwrap()
        ));
        assert!(
            message_items(Protocol::OpenAiResponses, br#"{"input":"just text"}"#)
                .unwrap()
                .is_empty()
        );
    }
}

/// The body with `blocks` appended to the system prompt: Anthropic `system` (string or text
/// blocks, created when absent), OpenAI Chat's first `system`/`developer` message (one is added
/// at the front when there is none), Responses `instructions`. Everything else stays as sent.
pub fn with_system_blocks(
    protocol: Protocol,
    body: &[u8],
    blocks: &[String],
) -> Result<Vec<u8>, ProtoError> {
    if blocks.is_empty() {
        return Ok(body.to_vec());
    }
    let joined = blocks.join("\n\n");
    match protocol {
        Protocol::Anthropic => replace_top_level(body, "system", |current| match current {
            None => Ok(Value::String(joined.clone())),
            Some(Value::String(text)) => Ok(Value::String(format!("{text}\n\n{joined}"))),
            Some(Value::Array(mut parts)) => {
                for block in blocks {
                    parts.push(serde_json::json!({"type": "text", "text": block}));
                }
                Ok(Value::Array(parts))
            }
            Some(_) => Err(ProtoError::InvalidShape(
                "`system` is neither text nor a list".into(),
            )),
        }),
        Protocol::OpenAiResponses => {
            replace_top_level(body, "instructions", |current| match current {
                None | Some(Value::Null) => Ok(Value::String(joined.clone())),
                Some(Value::String(text)) => Ok(Value::String(format!("{text}\n\n{joined}"))),
                Some(_) => Err(ProtoError::InvalidShape(
                    "`instructions` is not text".into(),
                )),
            })
        }
        Protocol::OpenAiChat => {
            let items = message_items(protocol, body)?;
            let system = items.iter().find(|range| {
                serde_json::from_slice::<Map<String, Value>>(&body[(*range).clone()])
                    .ok()
                    .and_then(|m| {
                        m.get("role")
                            .and_then(Value::as_str)
                            .map(|r| r == "system" || r == "developer")
                    })
                    .unwrap_or(false)
            });
            match system {
                Some(range) => {
                    let mut message: Map<String, Value> =
                        serde_json::from_slice(&body[range.clone()])?;
                    match message.get_mut("content") {
                        Some(Value::String(text)) => *text = format!("{text}\n\n{joined}"),
                        Some(Value::Array(parts)) => {
                            parts.push(serde_json::json!({"type": "text", "text": joined}))
                        }
                        _ => {
                            return Err(ProtoError::InvalidShape(
                                "the system message has no text content".into(),
                            ));
                        }
                    }
                    Ok(splice(
                        body,
                        &[(range.clone(), serde_json::to_string(&message)?)],
                    ))
                }
                None => {
                    let first = items
                        .first()
                        .ok_or_else(|| ProtoError::InvalidShape("no messages".into()))?;
                    let message = serde_json::json!({"role": "system", "content": joined});
                    let at = first.start..first.start;
                    Ok(splice(body, &[(at, format!("{message},"))]))
                }
            }
        }
    }
}

/// Replaces (or adds, right after the opening brace) one top-level field of a JSON object body.
fn replace_top_level(
    body: &[u8],
    field: &str,
    change: impl FnOnce(Option<Value>) -> Result<Value, ProtoError>,
) -> Result<Vec<u8>, ProtoError> {
    let fields: Map<String, Value> = serde_json::from_slice(body)?;
    let top: std::collections::HashMap<String, &RawValue> = serde_json::from_slice(body)?;
    let current = fields.get(field).cloned();
    let new_value = serde_json::to_string(&change(current)?)?;
    match top.get(field) {
        Some(raw) => {
            let start = (raw.get().as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
            let end = start + raw.get().len();
            if end > body.len() {
                return Err(ProtoError::InvalidShape("field outside the body".into()));
            }
            Ok(splice(body, &[(start..end, new_value)]))
        }
        None => {
            let open = body
                .iter()
                .position(|byte| *byte == b'{')
                .ok_or_else(|| ProtoError::InvalidShape("not an object".into()))?;
            let separator = if fields.is_empty() { "" } else { "," };
            let insert = format!("\"{field}\":{new_value}{separator}");
            Ok(splice(body, &[(open + 1..open + 1, insert)]))
        }
    }
}

#[cfg(test)]
mod system_tests {
    use super::*;
    use serde_json::json;

    fn apply(protocol: Protocol, body: Value) -> Value {
        let bytes = serde_json::to_vec(&body).unwrap();
        serde_json::from_slice(
            &with_system_blocks(protocol, &bytes, &["B1".into(), "B2".into()]).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn every_protocol_gets_the_blocks_in_its_system_prompt() {
        assert_eq!(
            apply(Protocol::Anthropic, json!({"messages": []}))["system"],
            "B1\n\nB2"
        );
        assert_eq!(
            apply(Protocol::Anthropic, json!({"system": "S", "messages": []}))["system"],
            "S\n\nB1\n\nB2"
        );
        let array = apply(
            Protocol::Anthropic,
            json!({"system": [{"type": "text", "text": "S"}], "messages": []}),
        );
        assert_eq!(array["system"][2], json!({"type": "text", "text": "B2"}));
        let chat = apply(
            Protocol::OpenAiChat,
            json!({"messages": [{"role": "developer", "content": "D"}, {"role": "user", "content": "u"}]}),
        );
        assert_eq!(chat["messages"][0]["content"], "D\n\nB1\n\nB2");
        let chat = apply(
            Protocol::OpenAiChat,
            json!({"messages": [{"role": "user", "content": "u"}]}),
        );
        assert_eq!(
            chat["messages"][0],
            json!({"role": "system", "content": "B1\n\nB2"})
        );
        assert_eq!(chat["messages"][1]["content"], "u");
        let responses = apply(
            Protocol::OpenAiResponses,
            json!({"input": "q", "instructions": "I"}),
        );
        assert_eq!(responses["instructions"], "I\n\nB1\n\nB2");
    }
}
