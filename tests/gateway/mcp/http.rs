//! `lore mcp --http`: streamable HTTP on loopback, refused without the bearer token.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use lore_test_support::http_client;
use serde_json::json;

#[test]
fn http_transport_requires_the_bearer_token() {
    let vault = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(["mcp", "--http", "--port", "0", "--vault"])
        .arg(vault.path())
        .env("LORE_MCP_TOKEN", "test-token")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("listening on") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "lore mcp --http exited"
        );
    }
    let base = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_end_matches("/mcp")
        .to_owned();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "lore-test", "version": "1.0"}}});
    let accept = ("accept", "application/json, text/event-stream");
    let refused = http_client::post_json(&base, "/mcp", &[accept], &init);
    assert_eq!(refused.status, 401);
    let wrong = http_client::post_json(
        &base,
        "/mcp",
        &[accept, ("authorization", "Bearer nope")],
        &init,
    );
    assert_eq!(wrong.status, 401);

    let auth = ("authorization", "Bearer test-token");
    let response = http_client::post_json(&base, "/mcp", &[accept, auth], &init);
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.json()["result"]["protocolVersion"], "2025-06-18");
    let session = response.header("mcp-session-id").unwrap().to_owned();
    let sid = ("mcp-session-id", session.as_str());
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        http_client::post_json(&base, "/mcp", &[accept, auth, sid], &note).status,
        202
    );
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "write_card", "arguments": {"mode": "create", "kind": "thing", "key": "lore",
        "keywords": ["lore"], "sections": {"what": "a memory gateway"}}}});
    let written = http_client::post_json(&base, "/mcp", &[accept, auth, sid], &call);
    assert_eq!(written.status, 200, "{}", written.text());
    assert!(vault.path().join("things/lore.md").is_file());
    let no_token = http_client::post_json(&base, "/mcp", &[accept, sid], &call);
    assert_eq!(no_token.status, 401);

    let _ = child.kill();
    let _ = child.wait();
}
