//! Who may use which part of the gateway.
//!
//! The data plane (LLM routes and passthrough) is open on a loopback gateway; a remote gateway
//! requires `x-lore-gateway-token` equal to `LORE_GATEWAY_AUTH_TOKEN`, compared in constant time.
//! The management API answers loopback peers only, and refuses requests whose `Host` is not a
//! loopback name (DNS rebinding) or whose `Origin` is a foreign web page. WebSocket upgrades are
//! refused by a route guard (see `http::routes`) before any body is read.

use actix_web::{HttpRequest, HttpResponse};
use subtle::ConstantTimeEq;

use crate::gateway::header_str;
use crate::http::errors;
use crate::server::AppState;

/// On a remote gateway, the refusal of a request without the gateway token.
pub fn refuse_data_plane(req: &HttpRequest, state: &AppState) -> Option<HttpResponse> {
    if let Some(expected) = &state.config.auth_token
        && state.config.remote
    {
        let given = header_str(req.headers(), "x-lore-gateway-token").unwrap_or("");
        let matches: bool = given.as_bytes().ct_eq(expected.as_bytes()).into();
        if !matches {
            return Some(errors::unauthorized());
        }
    }
    None
}

/// The refusal of a management request that is not from a loopback peer addressing the gateway
/// by a loopback name.
pub fn refuse_management(req: &HttpRequest) -> Option<HttpResponse> {
    let peer_is_local = req.peer_addr().is_some_and(|addr| addr.ip().is_loopback());
    let host_is_local = header_str(req.headers(), "host").is_none_or(is_loopback_authority);
    let origin_is_local = header_str(req.headers(), "origin").is_none_or(|origin| {
        origin
            .split_once("://")
            .is_some_and(|(_, authority)| is_loopback_authority(authority))
    });
    if peer_is_local && host_is_local && origin_is_local {
        None
    } else {
        Some(HttpResponse::Forbidden().json(serde_json::json!({
            "error": {
                "type": "forbidden",
                "message": "the management API answers only on this machine (127.0.0.1); use an SSH tunnel to reach it from elsewhere"
            }
        })))
    }
}

fn is_loopback_authority(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host)
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::is_loopback_authority;

    #[test]
    fn loopback_names_only() {
        for ok in [
            "127.0.0.1:3207",
            "localhost",
            "LOCALHOST:1",
            "[::1]:3207",
            "127.8.9.1",
        ] {
            assert!(is_loopback_authority(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:3207",
            "10.0.0.1:3207",
            "[2001:db8::1]:80",
        ] {
            assert!(!is_loopback_authority(bad), "{bad}");
        }
    }
}
