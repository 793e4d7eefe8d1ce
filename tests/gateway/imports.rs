//! `lore import` on transcripts in the harnesses' real formats (`tests/gateway/import/`): through
//! the running gateway and on the files, idempotent, attributed to the recorded directory,
//! searchable, and distilled when the workers have a route of their own.

use std::path::{Path, PathBuf};

use lore_test_support::FakeUpstream;
use serde_json::Value;

use crate::helpers::*;

fn fixtures(harness: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/gateway/import")
        .join(harness)
}

fn import(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["import"];
    all.extend_from_slice(args);
    all.push("--json");
    let (code, out, err) = lore(&all, dir, &[("LORE_EMBEDDINGS", "off")]);
    assert_eq!(code, 0, "{out}{err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn statuses(report: &Value) -> Vec<String> {
    report["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap().to_string())
        .collect()
}

fn recall_finds(gateway: &Gateway, query: &str, needle: &str) {
    let path = format!(
        "/api/v1/recall?q={}&mode=bm25&scope=all",
        query.replace(' ', "+")
    );
    eventually(&format!("recall finds {needle:?}"), || {
        let answer = gateway.get(&path).json();
        answer.to_string().contains(needle).then_some(())
    });
}

#[test]
fn each_format_imports_through_the_gateway_once_into_its_project_and_is_searchable() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let dir = gateway.data_dir().to_path_buf();
    let cases = [
        (
            "claude-code",
            "/home/ada/shop",
            "anthropic",
            6,
            "webhook retries",
        ),
        (
            "codex",
            "/home/ada/api",
            "open_ai_responses",
            8,
            "bucket keyed by tenant",
        ),
        (
            "opencode",
            "/home/ada/site",
            "anthropic",
            6,
            "hero image lazy loading",
        ),
    ];
    for (harness, project, protocol, messages, phrase) in cases {
        let path = fixtures(harness);
        let path = path.to_str().unwrap();
        let dry = import(&dir, &[harness, "--path", path, "--dry-run"]);
        assert_eq!(statuses(&dry), ["created"], "{harness}: {dry}");
        assert!(
            !gateway.sessions().iter().any(|s| s["project"] == project),
            "a dry run writes nothing"
        );
        let first = import(&dir, &[harness, "--path", path]);
        assert_eq!(statuses(&first), ["created"], "{harness}: {first}");
        assert_eq!(first["added"], messages, "{harness}: {first}");
        let second = import(&dir, &[harness, "--path", path]);
        assert_eq!(statuses(&second), ["unchanged"], "{harness}");
        assert_eq!(second["added"], 0);

        let session = gateway
            .sessions()
            .into_iter()
            .find(|s| s["project"] == project)
            .unwrap_or_else(|| panic!("{harness}: no session in {project}"));
        assert_eq!(session["protocol"], protocol, "{harness}");
        assert_eq!(session["project_provisional"], false);
        assert_eq!(session["messages"], messages, "{harness}: {session}");
        recall_finds(&gateway, phrase, phrase.split(' ').next().unwrap());
    }
    let transcript = gateway.transcript(
        gateway
            .sessions()
            .iter()
            .find(|s| s["project"] == "/home/ada/shop")
            .unwrap()["id"]
            .as_str()
            .unwrap(),
    );
    let text = transcript.join("\n");
    assert!(
        !text.contains("sub-agent"),
        "side chains are not the conversation"
    );
    assert!(
        !text.contains("local-command-caveat"),
        "meta records are skipped"
    );
    let codex = gateway.transcript(
        gateway
            .sessions()
            .iter()
            .find(|s| s["project"] == "/home/ada/api")
            .unwrap()["id"]
            .as_str()
            .unwrap(),
    );
    assert!(
        !codex.join("\n").contains("permissions instructions"),
        "developer instructions are not the conversation"
    );
}

#[test]
fn opencode_1_x_sessions_are_read_from_its_sqlite_database() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let folder = tempfile::tempdir().unwrap();
    let sql = std::fs::read_to_string(fixtures("opencode-db").join("opencode.sql")).unwrap();
    rusqlite::Connection::open(folder.path().join("opencode.db"))
        .unwrap()
        .execute_batch(&sql)
        .unwrap();
    let path = folder.path().to_str().unwrap();
    let first = import(gateway.data_dir(), &["opencode", "--path", path]);
    assert_eq!(
        statuses(&first),
        ["created"],
        "the sub-agent session is skipped: {first}"
    );
    assert_eq!(first["added"], 6, "{first}");
    let again = import(gateway.data_dir(), &["opencode", "--path", path]);
    assert_eq!(statuses(&again), ["unchanged"]);
    let session = gateway
        .sessions()
        .into_iter()
        .find(|s| s["project"] == "/home/ada/fx")
        .unwrap();
    let text = gateway
        .get(&format!(
            "/api/v1/sessions/{}/messages",
            session["id"].as_str().unwrap()
        ))
        .json()
        .to_string();
    assert!(text.contains("src/rates.rs:14"), "the tool result: {text}");
    assert!(!text.contains("(subagent)"), "{text}");
    recall_finds(&gateway, "exchange rate cache", "exchange");
}

#[test]
fn a_transcript_that_grew_adds_only_its_new_messages_and_offline_imports_are_served_later() {
    let data = tempfile::tempdir().unwrap();
    let copy = tempfile::tempdir().unwrap();
    let source = fixtures("claude-code").join("projects/-home-ada-shop");
    let file = std::fs::read_dir(&source)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let target = copy.path().join("session.jsonl");
    std::fs::copy(&file, &target).unwrap();
    let target_str = target.to_str().unwrap();

    // No gateway runs: the store and the index are written directly.
    let first = import(data.path(), &["claude-code", "--path", target_str]);
    assert_eq!(statuses(&first), ["created"]);
    let mut text = std::fs::read_to_string(&target).unwrap();
    text.push_str(r#"{"type":"user","isSidechain":false,"cwd":"/home/ada/shop","sessionId":"5d0c8a2e-9b41-4f7e-8c1a-3e2f6b7d9a10","message":{"role":"user","content":"Now backfill refund_events for last month's deliveries."},"uuid":"u9","timestamp":"2026-11-30T10:00:00.000Z"}"#);
    text.push('\n');
    std::fs::write(&target, text).unwrap();
    let grown = import(data.path(), &["claude-code", "--path", target_str]);
    assert_eq!(statuses(&grown), ["extended"], "{grown}");
    assert_eq!(grown["added"], 1);

    // A gateway started later serves what was imported on the files.
    let upstream = FakeUpstream::start();
    let env = [
        ("LORE_UPSTREAM_ANTHROPIC", upstream.url()),
        ("LORE_UPSTREAM_OPENAI", upstream.url()),
        ("LORE_EMBEDDINGS", "off".to_string()),
        ("LORE_MEMORY", "off".to_string()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (code, out, err) = lore(&["start", "--daemon", "--port", "0"], data.path(), &env);
    assert_eq!(code, 0, "{out}{err}");
    let daemon = StopOnDrop(data.path().to_path_buf());
    let (code, out, err) = lore(&["sessions", "--json"], data.path(), &[]);
    assert_eq!(code, 0, "{err}");
    let listing: Value = serde_json::from_str(&out).unwrap();
    let sessions = listing["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["messages"], 7);
    assert_eq!(sessions[0]["project"], "/home/ada/shop");
    let (code, out, _) = lore(
        &["recall", "backfill refund_events", "--mode", "bm25"],
        data.path(),
        &[],
    );
    drop(daemon);
    assert_eq!(code, 0);
    assert!(out.contains("backfill"), "{out}");
    assert!(
        !data.path().join("gateway.pid").exists(),
        "the daemon stopped"
    );
}

/// Stops the daemon of a data directory when dropped, so a failed assertion leaves no gateway
/// running.
struct StopOnDrop(PathBuf);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let _ = lore(&["stop"], &self.0, &[]);
    }
}

#[test]
fn imported_sessions_are_distilled_when_the_workers_have_their_own_route() {
    let upstream = FakeUpstream::start();
    let worker_url = format!("{}/v1/messages", upstream.url());
    let gateway = crate::memory::memory_gateway(
        &upstream,
        &[
            ("LORE_WORKER_UPSTREAM", worker_url.as_str()),
            ("LORE_WORKER_API_KEY", "sk-worker-test"),
            ("LORE_WORKER_MODEL", "claude-haiku-4-5"),
        ],
    );
    let path = fixtures("claude-code");
    let report = import(
        gateway.data_dir(),
        &["claude-code", "--path", path.to_str().unwrap()],
    );
    assert_eq!(statuses(&report), ["created"]);
    assert!(
        report["distillation"]
            .as_str()
            .unwrap()
            .contains("queued for distillation"),
        "{report}"
    );
    let id = report["sessions"][0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let memory = eventually("the imported session is distilled", || {
        let memory = gateway.get(&format!("/api/v1/sessions/{id}/memory")).json();
        (!memory["distillations"].as_array()?.is_empty()).then_some(memory)
    });
    assert!(memory.to_string().contains("refund"), "{memory}");
    let keyed = upstream.requests().iter().any(|request| {
        request
            .headers
            .iter()
            .any(|(name, value)| name == "x-api-key" && value == "sk-worker-test")
    });
    assert!(keyed, "worker calls use the configured key");
    assert!(!upstream.worker_calls().is_empty());
}

#[test]
fn imports_without_a_worker_route_say_why_they_are_not_distilled() {
    let upstream = FakeUpstream::start();
    let gateway = crate::memory::memory_gateway(&upstream, &[]);
    let path = fixtures("codex");
    let report = import(
        gateway.data_dir(),
        &["codex", "--path", path.to_str().unwrap()],
    );
    assert!(
        report["distillation"]
            .as_str()
            .unwrap()
            .contains("LORE_WORKER_API_KEY"),
        "{report}"
    );
    let (code, _, err) = lore(&["import", "vim"], gateway.data_dir(), &[]);
    assert_eq!(code, 1);
    assert!(err.contains("claude-code, codex and opencode"), "{err}");
    let (code, _, err) = lore(
        &["import", "codex", "--path", "/no/such/folder"],
        gateway.data_dir(),
        &[],
    );
    assert_eq!(code, 1);
    assert!(err.contains("--path"), "{err}");
}
