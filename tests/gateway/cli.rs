//! The command line against a real data directory: start, status, sessions, log, stop.

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

#[test]
fn sessions_and_log_work_with_and_without_the_service() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    upstream.push(Script::Text("captured reply".into()));
    gateway.post(
        "/v1/messages",
        &view(&anthropic_headers("k")),
        &anthropic_body(json!([{"role": "user", "content": "cli question"}]), false),
    );
    let session = single_session_with(&gateway, 2);
    let id = session["id"].as_str().unwrap().to_string();
    let dir = gateway.data_dir().to_path_buf();

    for running in [true, false] {
        let (code, out, err) = lore(&["sessions", "--json"], &dir, &[]);
        assert_eq!(code, 0, "{err}");
        let listing: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            listing["sessions"][0]["id"],
            id.as_str(),
            "running={running}"
        );
        let (code, out, err) = lore(&["log", &id[..8], "--json"], &dir, &[]);
        assert_eq!(code, 0, "{err}");
        let detail: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(detail["messages"][1]["text"], "captured reply");
        let (code, out, _) = lore(&["log", &id[..8]], &dir, &[]);
        assert_eq!(code, 0);
        assert!(
            out.contains("cli question") && out.contains("captured reply"),
            "{out}"
        );
        let (_, out, _) = lore(&["status", "--json"], &dir, &[]);
        let status: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(status["running"], running);
        assert_eq!(status["sessions"], 1);
        gateway.stop();
    }
    let (code, _, err) = lore(&["log", "zzzz"], &dir, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("no session starts with"), "{err}");
}

#[test]
fn daemon_start_and_stop() {
    let upstream = FakeUpstream::start();
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("LORE_UPSTREAM_ANTHROPIC", upstream.url()),
        ("LORE_UPSTREAM_OPENAI", upstream.url()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (code, out, err) = lore(&["start", "--daemon", "--port", "0"], dir.path(), &env);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("running on http://127.0.0.1:"), "{out}");
    let pid: i32 = std::fs::read_to_string(dir.path().join("gateway.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let port: u16 = std::fs::read_to_string(dir.path().join("gateway.port"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let health =
        lore_test_support::http_client::get(&format!("http://127.0.0.1:{port}"), "/health", &[]);
    assert_eq!(health.status, 200);
    let (code, out, _) = lore(&["start", "--daemon"], dir.path(), &env);
    assert_eq!(code, 0);
    assert!(out.contains("already running"), "{out}");
    let (code, out, err) = lore(&["stop"], dir.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("stopped"), "{out}");
    assert!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err(),
        "the process is gone"
    );
    assert!(!dir.path().join("gateway.pid").exists());
}

#[test]
fn a_public_bind_without_a_token_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = lore(
        &["start", "--host", "0.0.0.0", "--port", "0"],
        dir.path(),
        &[],
    );
    assert_eq!(code, 1);
    assert!(err.contains("LORE_GATEWAY_AUTH_TOKEN"), "{err}");
}

#[test]
fn a_remote_gateway_requires_its_token() {
    let upstream = FakeUpstream::start();
    let token = "0123456789abcdef0123456789abcdef";
    let gateway = Gateway::start_with(
        &upstream.url(),
        &[
            ("LORE_REMOTE_GATEWAY", "1"),
            ("LORE_GATEWAY_AUTH_TOKEN", token),
        ],
    );
    let body = anthropic_body(json!([{"role": "user", "content": "x"}]), false);
    let refused = gateway.post("/v1/messages", &view(&anthropic_headers("k")), &body);
    assert_eq!(refused.status, 401);
    let mut headers = view(&anthropic_headers("k"));
    headers.push(("x-lore-gateway-token", token));
    let allowed = gateway.post("/v1/messages", &headers, &body);
    assert_eq!(allowed.status, 200);
    assert!(
        upstream
            .requests()
            .iter()
            .all(|r| r.header("x-lore-gateway-token").is_none()),
        "the token never leaves the gateway"
    );
}

#[test]
fn run_starts_the_gateway_and_points_the_agent_at_it() {
    let upstream = FakeUpstream::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    // A stand-in `claude` that records what it was given.
    let report = bin.path().join("report");
    let agent = bin.path().join("claude");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\necho \"$ANTHROPIC_BASE_URL $*\" > {}\n",
            report.display()
        ),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&agent).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&agent, permissions).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let url = upstream.url();
    let env = [
        ("PATH", path.as_str()),
        ("LORE_UPSTREAM_ANTHROPIC", url.as_str()),
        ("LORE_LISTEN_PORT", "0"),
    ];
    let (code, _, err) = lore(&["run", "claude", "--print", "hello"], dir.path(), &env);
    assert_eq!(code, 0, "{err}");
    let seen = std::fs::read_to_string(&report).unwrap();
    let port = std::fs::read_to_string(dir.path().join("gateway.port")).unwrap();
    assert_eq!(
        seen.trim(),
        format!("http://127.0.0.1:{} --print hello", port.trim())
    );
    let (code, out, _) = lore(&["stop"], dir.path(), &[]);
    assert_eq!(code, 0);
    assert!(out.contains("stopped"), "{out}");
}

#[test]
fn doctor_reports_what_is_there_and_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = lore(&["doctor"], dir.path(), &[("PATH", "/usr/bin:/bin")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ok       data directory"), "{out}");
    assert!(
        out.contains("missing  gateway is not running") && out.contains("lore start --daemon"),
        "{out}"
    );
    assert!(out.contains("missing  claude"), "{out}");
    assert!(
        out.contains("card vault") && out.contains("lore cards init"),
        "{out}"
    );
}
