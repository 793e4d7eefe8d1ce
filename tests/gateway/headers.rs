//! Header handling: what reaches the upstream and what comes back.

use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

use crate::helpers::*;

#[test]
fn lore_and_hop_by_hop_headers_stay_home_credentials_and_the_rest_go() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let headers = [
        ("x-api-key", "sk-ant-secret"),
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", "prompt-caching-2024-07-31"),
        ("x-lore-project", "/p"),
        ("x-lore-session-id", "sess-1234567890"),
        ("proxy-authorization", "Basic xyz"),
        ("x-team-id", "acme"),
        ("user-agent", "claude-cli/2.1"),
    ];
    let response = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(json!([{"role": "user", "content": "x"}]), false),
    );
    assert_eq!(response.status, 200);
    let sent = &upstream.requests()[0];
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-secret"));
    assert_eq!(
        sent.header("anthropic-beta"),
        Some("prompt-caching-2024-07-31")
    );
    assert_eq!(sent.header("x-team-id"), Some("acme"));
    assert_eq!(sent.header("user-agent"), Some("claude-cli/2.1"));
    assert!(
        sent.headers
            .iter()
            .all(|(name, _)| !name.starts_with("x-lore-")),
        "{:?}",
        sent.headers
    );
    assert!(sent.header("proxy-authorization").is_none());
    // Upstream response headers come back.
    assert!(
        response
            .header("request-id")
            .is_some_and(|id| id.starts_with("req_fake_"))
    );
    assert!(
        response
            .header("anthropic-ratelimit-requests-remaining")
            .is_some()
    );
}

#[test]
fn extra_headers_overlay_and_win_over_the_client() {
    let upstream = FakeUpstream::start();
    let extra = "X-Team-Id: overlay\ncf-aig-authorization: Bearer gw-token\nthis line is malformed\nAuthorization: Bearer service-account";
    let gateway = Gateway::start_with(&upstream.url(), &[("LORE_UPSTREAM_EXTRA_HEADERS", extra)]);
    upstream.push(Script::Text("ok".into()));
    let response = gateway.post(
        "/v1/chat/completions",
        &[
            ("authorization", "Bearer user-key"),
            ("x-team-id", "client"),
        ],
        &chat_body(json!([{"role": "user", "content": "x"}]), false),
    );
    assert_eq!(response.status, 200);
    let sent = &upstream.requests()[0];
    assert_eq!(sent.header("x-team-id"), Some("overlay"));
    assert_eq!(sent.header("cf-aig-authorization"), Some("Bearer gw-token"));
    assert_eq!(sent.header("authorization"), Some("Bearer service-account"));
    assert_eq!(
        sent.headers
            .iter()
            .filter(|(name, _)| name == "authorization")
            .count(),
        1
    );
    assert!(
        gateway.log().contains("LORE_UPSTREAM_EXTRA_HEADERS"),
        "the malformed line is warned about"
    );
}

#[test]
fn keys_never_reach_storage_or_logs() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let secret = "sk-ant-api03-VERYSECRETKEY1234567890";
    for turn in 0..3 {
        gateway.post(
            "/v1/messages",
            &view(&anthropic_headers(secret)),
            &anthropic_body(
                json!([{"role": "user", "content": format!("hello {turn}")}]),
                turn % 2 == 0,
            ),
        );
        gateway.post(
            "/v1/chat/completions",
            &[("authorization", &format!("Bearer {secret}"))],
            &chat_body(json!([{"role": "user", "content": "x"}]), false),
        );
    }
    eventually("sessions stored", || {
        (gateway.sessions().len() >= 4).then_some(())
    });
    let mut found = Vec::new();
    for entry in walk(gateway.data_dir()) {
        let bytes = std::fs::read(&entry).unwrap_or_default();
        if bytes
            .windows(secret.len())
            .any(|window| window == secret.as_bytes())
        {
            found.push(entry);
        }
    }
    assert!(found.is_empty(), "the key was written to {found:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
