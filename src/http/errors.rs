//! Errors the gateway itself produces, in the shape of the protocol the client speaks.
//!
//! Anthropic clients get `{"type":"error","error":{"type":…,"message":…}}`, OpenAI clients get
//! `{"error":{"message":…,"type":…,"param":null,"code":…}}`; SDKs parse both into their usual
//! exceptions, so the message reaches the user. Every message says what was wrong and what to do.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use lore_proto::Protocol;
use serde_json::json;

/// Renders an error body for `protocol` with `status`.
pub fn protocol_error(
    protocol: Protocol,
    status: StatusCode,
    kind: &str,
    message: &str,
) -> HttpResponse {
    let body = match protocol {
        Protocol::Anthropic => {
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        Protocol::OpenAiChat | Protocol::OpenAiResponses => {
            json!({"error": {"message": message, "type": kind, "param": null, "code": kind}})
        }
    };
    HttpResponse::build(status).json(body)
}

/// 400 for a body that is not what the route expects.
pub fn bad_request(protocol: Protocol, message: &str) -> HttpResponse {
    protocol_error(
        protocol,
        StatusCode::BAD_REQUEST,
        "invalid_request_error",
        message,
    )
}

/// 502 when the upstream could not be reached at all.
pub fn upstream_unreachable(protocol: Protocol, message: &str) -> HttpResponse {
    protocol_error(protocol, StatusCode::BAD_GATEWAY, "api_error", message)
}

/// 426 for WebSocket upgrades, which the gateway does not speak.
pub fn websocket_refused() -> HttpResponse {
    HttpResponse::build(StatusCode::UPGRADE_REQUIRED)
        .insert_header(("connection", "close"))
        .json(json!({
            "type": "error",
            "error": {
                "type": "websocket_not_supported",
                "message": "this gateway speaks HTTP streaming (SSE), not WebSocket; clients such as Codex fall back to HTTP automatically"
            }
        }))
}

/// 401 for a remote gateway request without the right `x-lore-gateway-token`.
pub fn unauthorized() -> HttpResponse {
    HttpResponse::Unauthorized().json(json!({
        "type": "error",
        "error": {
            "type": "authentication_error",
            "message": "this Lore gateway requires the x-lore-gateway-token header with the value of LORE_GATEWAY_AUTH_TOKEN"
        }
    }))
}
