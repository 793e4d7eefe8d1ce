//! Who may use which part of the gateway.
//!
//! The data plane (LLM routes and passthrough) is open on a loopback gateway; a remote gateway
//! requires exactly one `x-lore-gateway-token`, equal to `LORE_GATEWAY_AUTH_TOKEN`, compared in
//! constant time (it is an `x-lore-*` header, so it never reaches the upstream).
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
        && !token_matches(req, expected)
    {
        return Some(errors::unauthorized());
    }
    None
}

/// True when the request carries exactly one `x-lore-gateway-token`, equal to `expected`
/// (compared in constant time; a duplicated header is refused, whatever its values).
fn token_matches(req: &HttpRequest, expected: &str) -> bool {
    let mut values = req.headers().get_all("x-lore-gateway-token");
    let (Some(given), None) = (values.next(), values.next()) else {
        return false;
    };
    given.as_bytes().ct_eq(expected.as_bytes()).into()
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
    use super::{is_loopback_authority, token_matches};
    use actix_web::test::TestRequest;

    #[test]
    fn the_token_must_be_there_once_and_exact() {
        let expected = "0123456789abcdef0123";
        let with = |values: &[&str]| {
            let mut req = TestRequest::default();
            for value in values {
                req = req.append_header(("x-lore-gateway-token", *value));
            }
            token_matches(&req.to_http_request(), expected)
        };
        assert!(with(&[expected]));
        assert!(!with(&[]), "missing");
        assert!(!with(&["0123456789abcdef012"]), "a prefix");
        assert!(!with(&["0123456789abcdef01234"]), "longer");
        assert!(!with(&["0123456789ABCDEF0123"]), "case matters");
        assert!(!with(&[expected, expected]), "duplicated");
        assert!(!with(&["wrong", expected]), "duplicated");
    }

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
