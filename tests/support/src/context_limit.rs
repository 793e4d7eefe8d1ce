//! Context windows of the fake models: a prompt over its model's limit gets the provider's own
//! "too long" answer (Anthropic's `prompt is too long: N tokens > M maximum`, OpenAI's
//! `context_length_exceeded`), counted with the cache oracle's tokens.

use actix_web::HttpResponse;
use serde_json::json;

use crate::server::{Protocol, request_id_headers};

/// The limit of `model`: the longest configured prefix it starts with.
pub(crate) fn limit_for(limits: &[(String, u64)], model: &str) -> Option<u64> {
    limits
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix.as_str()))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, limit)| *limit)
}

/// The provider's answer to a prompt of `tokens` over `limit`.
pub(crate) fn too_long(proto: Protocol, n: u64, tokens: u64, limit: u64) -> HttpResponse {
    let body = match proto {
        Protocol::Anthropic => json!({
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": format!("prompt is too long: {tokens} tokens > {limit} maximum"),
            },
        }),
        Protocol::Chat => json!({
            "error": {
                "message": format!("This model's maximum context length is {limit} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            },
        }),
        Protocol::Responses => json!({
            "error": {
                "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
                "type": "invalid_request_error",
                "param": "input",
                "code": "context_length_exceeded",
            },
        }),
    };
    let mut response = HttpResponse::BadRequest();
    for (k, v) in request_id_headers(proto, n) {
        response.insert_header((k, v));
    }
    response.json(body)
}

/// Reads `MODEL=TOKENS` (the binary's `--context-limit`).
pub(crate) fn parse_limit(text: &str) -> Result<(String, u64), String> {
    let (model, tokens) = text
        .split_once('=')
        .ok_or_else(|| format!("--context-limit wants MODEL=TOKENS, got {text:?}"))?;
    let tokens = tokens
        .trim()
        .parse()
        .map_err(|_| format!("--context-limit {text:?}: {tokens:?} is not a number of tokens"))?;
    Ok((model.trim().to_string(), tokens))
}
