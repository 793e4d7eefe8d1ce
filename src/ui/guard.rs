//! The guard of the dashboard (`/`, `/ui/…`) and of the whole management API (`/api/v1/…`),
//! checked before any handler runs:
//!
//! 1. the peer is on this machine (loopback), also when the gateway listens on 0.0.0.0;
//! 2. the `Host` names this gateway: a loopback name with the port it listens on, so a page on a
//!    rebound DNS name cannot reach it;
//! 3. an `Origin` must be this same origin (`http://<Host>`), so another site — another local
//!    port included — is refused;
//! 4. a write (POST, PUT, PATCH, DELETE) carries `x-lore-request: 1`, a header no plain
//!    cross-site form can send and that needs a preflight we never answer.
//!
//! Every answer gets a strict Content-Security-Policy (scripts, styles and everything else only
//! from the gateway itself; no inline script), `nosniff`, no referrer and no framing.

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::http::{Method, StatusCode};
use actix_web::middleware::Next;
use actix_web::{HttpRequest, ResponseError};

use crate::dashboard::error::ApiError;

/// The Content-Security-Policy of every dashboard and API answer.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

fn forbidden(detail: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "forbidden", detail)
}

/// The host and the port of an authority (`127.0.0.1:3207`, `[::1]:80`, `localhost`).
pub fn split_authority(authority: &str) -> (&str, Option<&str>) {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
        return (host, after.strip_prefix(':'));
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    }
}

fn is_loopback_name(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether `authority` is one this gateway serves on `port`.
pub fn is_served_authority(authority: &str, port: u16) -> bool {
    let (host, given) = split_authority(authority.trim());
    let port_matches = match given {
        Some(given) => given.parse::<u16>().is_ok_and(|p| p == port),
        None => port == 80,
    };
    is_loopback_name(host) && port_matches
}

fn header<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Checks a management request; the refusal says what to do.
pub fn check(req: &HttpRequest) -> Result<(), ApiError> {
    let peer_is_local = req.peer_addr().is_some_and(|addr| addr.ip().is_loopback());
    if !peer_is_local {
        return Err(forbidden(
            "the dashboard and the management API answer only on this machine (127.0.0.1); use an SSH tunnel to reach them from elsewhere",
        ));
    }
    let port = req.app_config().local_addr().port();
    let host = header(req, "host");
    if let Some(host) = host
        && !is_served_authority(host, port)
    {
        return Err(forbidden(format!(
            "the Host `{host}` is not this gateway; open http://127.0.0.1:{port}/ui"
        )));
    }
    if let Some(origin) = header(req, "origin") {
        let same = host.is_some_and(|host| {
            origin
                .strip_prefix("http://")
                .is_some_and(|authority| authority.eq_ignore_ascii_case(host))
        });
        if !same {
            return Err(forbidden(format!(
                "requests from another site ({origin}) are refused; use the dashboard at http://127.0.0.1:{port}/ui"
            )));
        }
    }
    let write = !matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if write && header(req, "x-lore-request") != Some("1") {
        return Err(forbidden(
            "send the header x-lore-request: 1 with management writes (the dashboard's forms do)",
        ));
    }
    Ok(())
}

fn secure(response: &mut actix_web::HttpResponse) {
    let headers = response.headers_mut();
    for (name, value) in [
        ("content-security-policy", CONTENT_SECURITY_POLICY),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("x-frame-options", "DENY"),
    ] {
        headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        );
    }
}

/// The middleware (`actix_web::middleware::from_fn(guard::guard)`).
pub async fn guard(
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    if let Err(refusal) = check(req.request()) {
        let mut response = refusal.error_response();
        secure(&mut response);
        return Ok(req.into_response(response));
    }
    let mut response = next.call(req).await?;
    secure(response.response_mut());
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_gateways_loopback_authorities_are_served() {
        for ok in [
            "127.0.0.1:3207",
            "localhost:3207",
            "LOCALHOST:3207",
            "[::1]:3207",
            "127.8.9.1:3207",
        ] {
            assert!(is_served_authority(ok, 3207), "{ok}");
        }
        for bad in [
            "127.0.0.1:3208",
            "127.0.0.1",
            "evil.example:3207",
            "10.0.0.1:3207",
            "[2001:db8::1]:3207",
            "127.0.0.1:x",
        ] {
            assert!(!is_served_authority(bad, 3207), "{bad}");
        }
        assert!(is_served_authority("localhost", 80));
    }

    #[test]
    fn only_loopback_peers_get_in() {
        use actix_web::test::TestRequest;
        let local = TestRequest::get()
            .uri("/ui")
            .peer_addr("127.0.0.1:40000".parse().unwrap_or_else(|_| unreachable!()))
            .insert_header(("host", "127.0.0.1:8080"))
            .to_http_request();
        assert!(check(&local).is_ok());
        let remote = TestRequest::get()
            .uri("/ui")
            .peer_addr("10.0.0.5:40000".parse().unwrap_or_else(|_| unreachable!()))
            .insert_header(("host", "127.0.0.1:8080"))
            .to_http_request();
        let refused = check(&remote).err().map(|e| e.status);
        assert_eq!(refused, Some(StatusCode::FORBIDDEN));
    }
}
