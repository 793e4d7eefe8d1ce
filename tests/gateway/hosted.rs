//! Hosted mode over the real binary: the access token (exactly one header, exact value, never
//! forwarded or stored), the caller-upstream allowlist checked at start and per request, and
//! the management API refused to non-loopback peers whatever forwarding headers say.

use std::io::{Read as _, Write as _};
use std::net::{IpAddr, UdpSocket};

use lore_test_support::http_client;
use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

use crate::helpers::*;

const TOKEN: &str = "hosted-test-token-4f1c9e2a7b";

fn remote(upstream: &FakeUpstream, extra: &[(&str, &str)]) -> Gateway {
    let mut env = vec![
        ("LORE_REMOTE_GATEWAY", "1"),
        ("LORE_GATEWAY_AUTH_TOKEN", TOKEN),
    ];
    env.extend_from_slice(extra);
    Gateway::start_with(&upstream.url(), &env)
}

fn ask(gateway: &Gateway, headers: &[(&str, &str)]) -> http_client::Response {
    let mut all: Vec<(&str, &str)> = vec![
        ("x-api-key", "sk-hosted"),
        ("anthropic-version", "2023-06-01"),
    ];
    all.extend_from_slice(headers);
    gateway.post(
        "/v1/messages",
        &all,
        &anthropic_body(json!([{"role": "user", "content": "hello hosted"}]), false),
    )
}

#[test]
fn the_access_token_is_required_once_exactly_and_never_forwarded_or_stored() {
    let upstream = FakeUpstream::start();
    let gateway = remote(&upstream, &[]);
    for (what, headers) in [
        ("missing", vec![]),
        (
            "wrong",
            vec![("x-lore-gateway-token", "hosted-test-token-4f1c9e2a7c")],
        ),
        (
            "a prefix",
            vec![("x-lore-gateway-token", &TOKEN[..TOKEN.len() - 1])],
        ),
        (
            "duplicated",
            vec![
                ("x-lore-gateway-token", TOKEN),
                ("x-lore-gateway-token", TOKEN),
            ],
        ),
        (
            "as the provider key",
            vec![("authorization", "Bearer hosted-test-token-4f1c9e2a7b")],
        ),
    ] {
        let response = ask(&gateway, &headers);
        assert_eq!(response.status, 401, "{what}: {}", response.text());
        assert!(response.text().contains("x-lore-gateway-token"), "{what}");
    }
    assert!(
        upstream.requests().is_empty(),
        "nothing refused reached the upstream"
    );
    upstream.push(Script::Text("welcome".into()));
    let response = ask(&gateway, &[("x-lore-gateway-token", TOKEN)]);
    assert_eq!(response.status, 200, "{}", response.text());
    let forwarded = &upstream.requests()[0];
    assert!(
        forwarded.header("x-lore-gateway-token").is_none(),
        "the token is stripped"
    );
    assert_eq!(forwarded.header("x-api-key"), Some("sk-hosted"));
    // Health stays public.
    assert_eq!(gateway.get("/health").status, 200);
    // Stored nowhere, logged nowhere.
    eventually("the turn stored", || {
        (!gateway.sessions().is_empty()).then_some(())
    });
    let found = grep_dir(gateway.data_dir(), TOKEN.as_bytes());
    assert!(
        found.is_empty(),
        "the access token was written to {found:?}"
    );
}

/// Files under `dir` that contain `needle`.
pub fn grep_dir(dir: &std::path::Path, needle: &[u8]) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.flatten().map(|entry| entry.path()));
            }
        } else if let Ok(bytes) = std::fs::read(&path)
            && bytes.windows(needle.len()).any(|window| window == needle)
        {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_bad_allowlist_is_refused_at_start_with_the_entry_named() {
    let dir = tempfile::tempdir().unwrap();
    for (entry, says) in [
        ("https://llm.example.com/v1", "bare https origin"),
        ("https://*.example.com", "bare https origin"),
        ("http://llm.example.com", "bare https origin"),
        ("https://key@llm.example.com", "credentials"),
        ("https://a.example,https://A.example:443", "twice"),
    ] {
        let (code, out, err) = lore(
            &["start", "--port", "0"],
            dir.path(),
            &[
                ("LORE_REMOTE_GATEWAY", "1"),
                ("LORE_GATEWAY_AUTH_TOKEN", TOKEN),
                ("LORE_CALLER_UPSTREAM_ALLOWLIST", entry),
                ("LORE_EMBEDDINGS", "off"),
            ],
        );
        let text = format!("{out}{err}");
        assert_ne!(code, 0, "{entry} was accepted: {text}");
        assert!(
            text.contains("LORE_CALLER_UPSTREAM_ALLOWLIST"),
            "{entry}: {text}"
        );
        assert!(text.contains(says), "{entry}: {text}");
    }
}

#[test]
fn a_remote_gateway_refuses_caller_upstreams_not_allowed_by_exact_origin() {
    let upstream = FakeUpstream::start();
    let gateway = remote(
        &upstream,
        &[(
            "LORE_CALLER_UPSTREAM_ALLOWLIST",
            "https://llm.example.com:8443",
        )],
    );
    let token = ("x-lore-gateway-token", TOKEN);
    for caller in [
        upstream.url(),                             // http, and not listed
        "https://llm.example.com".to_string(),      // another port
        "https://llm.example.com:8444".to_string(), // another port
        "https://sub.llm.example.com:8443".to_string(),
        "http://llm.example.com:8443".to_string(),
    ] {
        let response = ask(&gateway, &[token, ("x-lore-upstream-url", caller.as_str())]);
        assert!(
            response.status == 400 || response.status == 403,
            "{caller}: {} {}",
            response.status,
            response.text()
        );
        assert!(
            response.text().contains("LORE_CALLER_UPSTREAM_ALLOWLIST"),
            "{caller}"
        );
    }
    assert!(
        upstream.requests().is_empty(),
        "no refused upstream was called"
    );
    // The administrator's default upstream needs no allowlist entry.
    upstream.push(Script::Text("default route".into()));
    assert_eq!(ask(&gateway, &[token]).status, 200);
}

/// A non-loopback address of this machine, if it has one (no packet is sent).
fn own_lan_address() -> Option<IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn management_is_refused_to_other_peers_whatever_forwarding_headers_say() {
    let Some(lan) = own_lan_address() else {
        eprintln!("skipped: this machine has no non-loopback address to connect from");
        return;
    };
    let upstream = FakeUpstream::start();
    let gateway = remote(&upstream, &[("LORE_LISTEN_HOST", "0.0.0.0")]);
    let base = format!("http://{lan}:{}", gateway.port);
    for path in ["/api/v1/sessions", "/api/v1/actors", "/api/v1/recall?q=x"] {
        // Written by hand so the Host header can claim loopback too.
        let mut stream = std::net::TcpStream::connect((lan, gateway.port)).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nx-lore-gateway-token: {TOKEN}\r\nx-forwarded-for: 127.0.0.1\r\nx-real-ip: 127.0.0.1\r\nforwarded: for=127.0.0.1;host=127.0.0.1\r\nconnection: close\r\n\r\n",
            port = gateway.port
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 403"), "{path}: {answer}");
        assert!(answer.contains("SSH tunnel"), "{path}");
    }
    // The data plane and health answer that peer; management answers loopback.
    assert_eq!(http_client::get(&base, "/health", &[]).status, 200);
    assert_eq!(gateway.get("/api/v1/sessions").status, 200);
}
