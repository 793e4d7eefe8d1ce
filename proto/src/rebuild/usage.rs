//! The usage a client is shown when the gateway manages its context (reference §11.2).
//!
//! A harness that compacts its own conversation when the reported prompt nears the window
//! (Claude Code, Codex, OpenCode) would summarise behind the gateway's back. So the input side of
//! the usage it is shown is scaled down proportionally to stay under the host's auto-compaction
//! threshold, `0.9 × (W − min(max output, 20,000) − 13,000)` with `W` the window clamped to 200K
//! unless the request asked for the 1M-context beta, minus a reserve for the output. The gateway
//! keeps the real figures for itself. Only usage objects change; every other byte is kept.

use serde_json::Value;

use crate::error::ProtoError;
use crate::protocol::Protocol;

/// Output tokens left out of the cap, so the reported total stays under it with the reply.
const OUTPUT_RESERVE: u64 = 8_192;

/// The most input tokens (uncached + cache reads + cache writes) a client is shown.
pub fn reported_input_cap(window: u64, max_output: u64, long_context: bool) -> u64 {
    let window = if long_context {
        window
    } else {
        window.min(200_000)
    };
    let threshold = window
        .saturating_sub(max_output.min(20_000))
        .saturating_sub(13_000) as f64
        * 0.9;
    (threshold as u64).saturating_sub(OUTPUT_RESERVE)
}

fn number(map: &serde_json::Map<String, Value>, key: &str) -> u64 {
    map.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn scale(value: u64, factor: f64) -> u64 {
    (value as f64 * factor).floor() as u64
}

/// Scales one usage object in place; true when it changed.
fn scale_usage(protocol: Protocol, usage: &mut Value, cap: u64) -> bool {
    let Some(map) = usage.as_object_mut() else {
        return false;
    };
    match protocol {
        Protocol::Anthropic => {
            let keys = [
                "input_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            ];
            let total: u64 = keys.iter().map(|key| number(map, key)).sum();
            if total <= cap {
                return false;
            }
            let factor = cap as f64 / total as f64;
            for key in keys {
                if let Some(value) = map.get(key).and_then(Value::as_u64) {
                    map.insert(key.into(), Value::from(scale(value, factor)));
                }
            }
            if let Some(Value::Object(creation)) = map.get_mut("cache_creation") {
                for (_, value) in creation.iter_mut() {
                    if let Some(n) = value.as_u64() {
                        *value = Value::from(scale(n, factor));
                    }
                }
            }
            true
        }
        Protocol::OpenAiChat | Protocol::OpenAiResponses => {
            let (input_key, output_key, details_key) = if protocol == Protocol::OpenAiChat {
                (
                    "prompt_tokens",
                    "completion_tokens",
                    "prompt_tokens_details",
                )
            } else {
                ("input_tokens", "output_tokens", "input_tokens_details")
            };
            let input = number(map, input_key);
            if input <= cap {
                return false;
            }
            let factor = cap as f64 / input as f64;
            let scaled = scale(input, factor);
            map.insert(input_key.into(), Value::from(scaled));
            if let Some(Value::Object(details)) = map.get_mut(details_key)
                && let Some(cached) = details.get("cached_tokens").and_then(Value::as_u64)
            {
                details.insert("cached_tokens".into(), Value::from(scale(cached, factor)));
            }
            if map.contains_key("total_tokens") {
                let output = number(map, output_key);
                map.insert("total_tokens".into(), Value::from(scaled + output));
            }
            true
        }
    }
}

/// Finds the usage objects of a reply or stream event and scales them; true when one changed.
fn scale_in(protocol: Protocol, value: &mut Value, cap: u64) -> bool {
    let mut changed = false;
    if let Some(map) = value.as_object_mut() {
        if let Some(usage) = map.get_mut("usage") {
            changed |= scale_usage(protocol, usage, cap);
        }
        // Anthropic `message_start` carries `message.usage`; Responses events `response.usage`.
        for key in ["message", "response"] {
            if let Some(inner) = map.get_mut(key)
                && let Some(usage) = inner.get_mut("usage")
            {
                changed |= scale_usage(protocol, usage, cap);
            }
        }
    }
    changed
}

/// A non-streaming reply body with its usage scaled under `cap`; `None` when it is already under
/// (or is not JSON, which is relayed as it is).
pub fn scaled_reply(protocol: Protocol, body: &[u8], cap: u64) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(body).ok()?;
    if !scale_in(protocol, &mut value, cap) {
        return None;
    }
    serde_json::to_vec(&value).ok()
}

/// The `data` of a stream event with its usage scaled under `cap`; `None` when unchanged.
pub fn scaled_event_data(
    protocol: Protocol,
    data: &str,
    cap: u64,
) -> Result<Option<String>, ProtoError> {
    if !data.contains("\"usage\"") {
        return Ok(None);
    }
    let Ok(mut value) = serde_json::from_str::<Value>(data) else {
        return Ok(None);
    };
    if !scale_in(protocol, &mut value, cap) {
        return Ok(None);
    }
    Ok(Some(serde_json::to_string(&value)?))
}
