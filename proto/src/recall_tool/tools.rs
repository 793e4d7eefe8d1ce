//! Adding the `recall` tool to a request: appended as the last element of `tools`, every other
//! byte of the body unchanged, so the client's own tools keep their cache prefix.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::definition::{
    RECALL_TOOL_NAME, anthropic_definition, chat_definition, responses_definition,
};
use crate::error::ProtoError;
use crate::protocol::Protocol;

/// The body with the recall tool appended to `tools`; `None` when the request has no tools, an
/// empty `tools` array, already has a tool named `recall`, or continues a stored Responses
/// response (`previous_response_id`).
pub fn with_recall_tool(protocol: Protocol, body: &[u8]) -> Result<Option<Vec<u8>>, ProtoError> {
    #[derive(Deserialize)]
    struct Tools<'a> {
        #[serde(borrow, default)]
        tools: Option<&'a RawValue>,
        #[serde(default)]
        previous_response_id: Option<Value>,
    }
    let definition = match protocol {
        Protocol::Anthropic => anthropic_definition(),
        Protocol::OpenAiChat => chat_definition(),
        Protocol::OpenAiResponses => responses_definition(),
    };
    let parsed: Tools<'_> = serde_json::from_slice(body)?;
    // A Responses request continuing a stored response cannot be followed up from here.
    if parsed
        .previous_response_id
        .as_ref()
        .is_some_and(|id| !id.is_null())
    {
        return Ok(None);
    }
    let Some(raw) = parsed.tools else {
        return Ok(None);
    };
    let Ok(tools) = serde_json::from_str::<Vec<Value>>(raw.get()) else {
        return Ok(None);
    };
    if tools.is_empty()
        || tools
            .iter()
            .any(|tool| tool_name(tool) == Some(RECALL_TOOL_NAME))
    {
        return Ok(None);
    }
    let text = raw.get();
    let start = (text.as_ptr() as usize).wrapping_sub(body.as_ptr() as usize);
    let Some(close) = text.rfind(']') else {
        return Ok(None);
    };
    let at = start + close;
    if at >= body.len() {
        return Err(ProtoError::InvalidShape("tools outside the body".into()));
    }
    let addition = format!(",{}", serde_json::to_string(&definition)?);
    let mut out = Vec::with_capacity(body.len() + addition.len());
    out.extend_from_slice(&body[..at]);
    out.extend_from_slice(addition.as_bytes());
    out.extend_from_slice(&body[at..]);
    Ok(Some(out))
}

/// The name of a tool in either shape (`name`, or `function.name`).
fn tool_name(tool: &Value) -> Option<&str> {
    tool.get("name")
        .and_then(Value::as_str)
        .or_else(|| tool.pointer("/function/name").and_then(Value::as_str))
}
