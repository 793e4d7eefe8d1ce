//! Which headers cross the gateway, in both directions, and the `LORE_UPSTREAM_EXTRA_HEADERS` overlay.
//!
//! Request headers: everything the client sent is forwarded except hop-by-hop headers, framing
//! headers the gateway recomputes, every `x-lore-*` header (ours, never the upstream's), and
//! `accept-encoding` (the gateway asks for identity so it can read the stream it relays). The
//! client's credential goes through unchanged. The extra-header overlay is applied last and wins
//! over any client header of the same name, credential headers included: that is how a
//! corporate proxy or an AI gateway token replaces the session's key.
//!
//! Response headers: everything the upstream sent is relayed except hop-by-hop and framing
//! headers; `retry-after`, request ids and rate-limit headers reach the client.

use tracing::warn;

/// Hop-by-hop headers (RFC 9110 §7.6.1) plus the framing headers a proxy recomputes.
const NOT_FORWARDED: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
];

/// True when a client request header may be sent upstream.
pub fn forward_request_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !(NOT_FORWARDED.contains(&name.as_str())
        || name.starts_with("x-lore-")
        || name == "accept-encoding"
        || name == "content-encoding")
}

/// True when an upstream response header may be relayed to the client.
pub fn forward_response_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !NOT_FORWARDED.contains(&name.as_str())
}

/// Parses `LORE_UPSTREAM_EXTRA_HEADERS`: curl-style `Name: Value` lines; names lowercased,
/// values trimmed. Malformed lines are skipped with a warning that names the line number.
pub fn parse_extra_headers(raw: &str) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    for (number, line) in raw.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            warn!(
                line = number + 1,
                "LORE_UPSTREAM_EXTRA_HEADERS: skipped a line without `Name: Value`"
            );
            continue;
        };
        let name = name.trim().to_ascii_lowercase();
        let value = value.trim();
        let valid_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        let valid_value = value
            .bytes()
            .all(|b| b == b'\t' || (b >= 0x20 && b != 0x7f));
        if !valid_name || !valid_value {
            warn!(
                line = number + 1,
                "LORE_UPSTREAM_EXTRA_HEADERS: skipped a line with an invalid header name or value"
            );
            continue;
        }
        if name.starts_with("x-lore-") || NOT_FORWARDED.contains(&name.as_str()) {
            warn!(line = number + 1, header = %name, "LORE_UPSTREAM_EXTRA_HEADERS: this header is managed by the gateway; skipped");
            continue;
        }
        headers.push((name, value.to_string()));
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lore_and_hop_by_hop_headers_stay_home() {
        for name in [
            "X-Lore-Upstream-URL",
            "x-lore-no-store",
            "Connection",
            "Transfer-Encoding",
            "Host",
            "Accept-Encoding",
            "Content-Length",
        ] {
            assert!(!forward_request_header(name), "{name}");
        }
        for name in [
            "x-api-key",
            "authorization",
            "anthropic-beta",
            "anthropic-version",
            "user-agent",
            "x-team-id",
        ] {
            assert!(forward_request_header(name), "{name}");
        }
        for name in [
            "retry-after",
            "request-id",
            "x-request-id",
            "anthropic-ratelimit-requests-remaining",
            "x-ratelimit-limit-tokens",
            "content-type",
        ] {
            assert!(forward_response_header(name), "{name}");
        }
        assert!(!forward_response_header("transfer-encoding"));
    }

    #[test]
    fn extra_headers_are_parsed_like_curl() {
        let parsed = parse_extra_headers(
            "X-Team-Id: acme\n\nnot a header\ncf-aig-authorization:  Bearer t0k  \nBad Name: x\nx-lore-session-id: 1\nX-Tenant:acme",
        );
        assert_eq!(
            parsed,
            vec![
                ("x-team-id".to_string(), "acme".to_string()),
                ("cf-aig-authorization".to_string(), "Bearer t0k".to_string()),
                ("x-tenant".to_string(), "acme".to_string()),
            ]
        );
    }
}
