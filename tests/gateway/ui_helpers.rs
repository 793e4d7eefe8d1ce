//! Shared by the dashboard tests: a gateway over a seeded data directory (with a card vault),
//! raw requests that set their own `Host`, and management writes with `x-lore-request: 1`.

use std::io::{Read, Write};
use std::net::TcpStream;

use lore_test_support::FakeUpstream;
use lore_test_support::http_client::{self, Response};
use lore_test_support::ui_seed::{Plan, Seeded, seed};
use serde_json::Value;

use crate::helpers::Gateway;

/// A gateway over the small seeded directory; its vault is `<data dir>/cards`.
pub fn seeded_gateway(upstream: &FakeUpstream) -> (Gateway, Seeded) {
    seeded_gateway_with(upstream, &[])
}

/// The same with extra environment variables.
pub fn seeded_gateway_with(upstream: &FakeUpstream, env: &[(&str, &str)]) -> (Gateway, Seeded) {
    let mut seeded = None;
    let gateway = Gateway::start_prepared(&upstream.url(), env, |dir| {
        seeded = Some(seed(dir, Plan::SMALL, Some(&dir.join("cards"))).unwrap());
    });
    (gateway, seeded.unwrap())
}

/// A request with exactly these headers (no `Host` unless given).
pub fn raw(
    gateway: &Gateway,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", gateway.port)).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    http_client::parse_response(&bytes).unwrap()
}

/// A management write: JSON body, `x-lore-request: 1`.
pub fn write(gateway: &Gateway, method: &str, path: &str, body: Option<&Value>) -> Response {
    let bytes = body
        .map(|b| serde_json::to_vec(b).unwrap())
        .unwrap_or_default();
    http_client::request(
        &gateway.url(),
        method,
        path,
        &[
            ("x-lore-request", "1"),
            ("content-type", "application/json"),
        ],
        &bytes,
    )
    .unwrap()
}

/// A page's HTML, asserting a 200 HTML answer with the CSP.
pub fn page(gateway: &Gateway, path: &str) -> String {
    let response = gateway.get(path);
    assert_eq!(response.status, 200, "{path}: {}", response.text());
    assert!(
        response
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "{path}"
    );
    assert!(
        response
            .header("content-security-policy")
            .is_some_and(|csp| csp.contains("script-src 'self'") && !csp.contains("unsafe-inline")),
        "{path}: {:?}",
        response.header("content-security-policy")
    );
    response.text()
}

/// A JSON answer, asserting its status.
pub fn json(gateway: &Gateway, path: &str, status: u16) -> Value {
    let response = gateway.get(path);
    assert_eq!(response.status, status, "{path}: {}", response.text());
    response.json()
}
