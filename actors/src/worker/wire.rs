//! The worker's wire formats: the request body of one call and the reading of its reply, for
//! Anthropic Messages, OpenAI Chat Completions and OpenAI Responses. Pure, no IO.
//!
//! Worker calls are never streamed. Provider quirks handled here: OpenAI's own API wants
//! `max_completion_tokens`, OpenAI reasoning models (`gpt-5*`, `o1*`, `o3*`, `o4*`) reject a
//! `temperature`, and OpenRouter is asked to route by price.

use lore_storage::memory::UsageTotals;
use serde_json::{Map, Value, json};

use super::{WorkerCall, WorkerProtocol, WorkerRoute};

/// The host of a URL, lowercased, without user info or port.
pub fn host(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(bracketed) = authority.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or(bracketed)
    } else {
        authority.split(':').next().unwrap_or(authority)
    };
    host.to_ascii_lowercase()
}

fn is_openrouter(url: &str) -> bool {
    let host = host(url);
    host == "openrouter.ai" || host.ends_with(".openrouter.ai")
}

/// Extra output tokens given to reasoning models, whose reasoning counts against the limit.
const REASONING_HEADROOM: u32 = 2_048;

/// True for OpenAI reasoning models, which reject `temperature`.
fn rejects_temperature(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    ["gpt-5", "o1", "o3", "o4"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// The JSON body of one worker call.
pub fn request_body(route: &WorkerRoute, call: &WorkerCall) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(route.model));
    match route.protocol {
        WorkerProtocol::Anthropic => {
            body.insert("max_tokens".into(), json!(call.max_tokens));
            body.insert("temperature".into(), json!(0));
            body.insert("system".into(), json!(call.system));
            body.insert(
                "messages".into(),
                json!([{"role": "user", "content": call.user}]),
            );
        }
        WorkerProtocol::OpenAiChat => {
            body.insert(
                "messages".into(),
                json!([
                    {"role": "system", "content": call.system},
                    {"role": "user", "content": call.user},
                ]),
            );
            let limit = if host(&route.url) == "api.openai.com" {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            if rejects_temperature(&route.model) {
                // Reasoning tokens count against the limit: think little, keep room to answer.
                body.insert(limit.into(), json!(call.max_tokens + REASONING_HEADROOM));
                body.insert("reasoning_effort".into(), json!("low"));
            } else {
                body.insert(limit.into(), json!(call.max_tokens));
                body.insert("temperature".into(), json!(0));
            }
        }
        WorkerProtocol::OpenAiResponses => {
            body.insert("instructions".into(), json!(call.system));
            body.insert(
                "input".into(),
                json!([{"role": "user", "content": call.user}]),
            );
            body.insert("store".into(), json!(false));
            if rejects_temperature(&route.model) {
                body.insert(
                    "max_output_tokens".into(),
                    json!(call.max_tokens + REASONING_HEADROOM),
                );
                body.insert("reasoning".into(), json!({"effort": "low"}));
            } else {
                body.insert("max_output_tokens".into(), json!(call.max_tokens));
                body.insert("temperature".into(), json!(0));
            }
        }
    }
    if is_openrouter(&route.url) {
        body.insert("provider".into(), json!({"sort": "price"}));
    }
    Value::Object(body)
}

fn count(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

/// Text of a content value that is either a string or an array of parts with `text`.
fn content_text(content: &Value, part_type: &str) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|part| part.get("type").and_then(Value::as_str) == Some(part_type))
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// Reads a reply: its text (text blocks joined), the model the provider names, and the
/// token counts (`calls` and `cost_usd` left at zero). Missing usage counts as zero.
pub fn parse_reply(
    protocol: WorkerProtocol,
    body: &[u8],
) -> Result<(String, Option<String>, UsageTotals), String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|err| format!("the body is not JSON: {err}"))?;
    if !value.is_object() {
        return Err("the body is not a JSON object".into());
    }
    let model = value
        .get("model")
        .and_then(Value::as_str)
        .filter(|model| !model.is_empty())
        .map(str::to_string);
    let (text, usage) = match protocol {
        WorkerProtocol::Anthropic => {
            let content = value
                .get("content")
                .filter(|content| content.is_array())
                .ok_or("it has no `content` array")?;
            let usage = UsageTotals {
                input_tokens: count(&value, "/usage/input_tokens"),
                output_tokens: count(&value, "/usage/output_tokens"),
                cache_read_tokens: count(&value, "/usage/cache_read_input_tokens"),
                cache_write_tokens: count(&value, "/usage/cache_creation_input_tokens"),
                ..UsageTotals::default()
            };
            (content_text(content, "text"), usage)
        }
        WorkerProtocol::OpenAiChat => {
            let message = value
                .pointer("/choices/0/message")
                .ok_or("it has no `choices[0].message`")?;
            let text = message
                .get("content")
                .map(|content| content_text(content, "text"))
                .unwrap_or_default();
            let cached = count(&value, "/usage/prompt_tokens_details/cached_tokens");
            let usage = UsageTotals {
                input_tokens: count(&value, "/usage/prompt_tokens").saturating_sub(cached),
                output_tokens: count(&value, "/usage/completion_tokens"),
                cache_read_tokens: cached,
                ..UsageTotals::default()
            };
            (text, usage)
        }
        WorkerProtocol::OpenAiResponses => {
            let output = value
                .get("output")
                .and_then(Value::as_array)
                .ok_or("it has no `output` array")?;
            let text = output
                .iter()
                .filter_map(|item| item.get("content"))
                .map(|content| content_text(content, "output_text"))
                .collect();
            let cached = count(&value, "/usage/input_tokens_details/cached_tokens");
            let usage = UsageTotals {
                input_tokens: count(&value, "/usage/input_tokens").saturating_sub(cached),
                output_tokens: count(&value, "/usage/output_tokens"),
                cache_read_tokens: cached,
                ..UsageTotals::default()
            };
            (text, usage)
        }
    };
    Ok((text, model, usage))
}

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
