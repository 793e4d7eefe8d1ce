//! The memory workers through the real gateway, with the fake upstream answering the worker
//! calls: distillation thresholds over a 60-turn session, consolidation keeping the five newest
//! logs, archived logs still found by `lore recall`, the curator updating a changed preference
//! instead of duplicating it, bad worker output leaving storage consistent, the credential never
//! reaching the disk, and no worker call while a request of the session is in flight.

use std::time::{Duration, Instant};

use lore_test_support::{FakeUpstream, Script, WorkerScript};
use serde_json::{Value, json};

use crate::helpers::*;

const SESSION_HEADER: &str = "x-claude-code-session-id";

fn memory_gateway(upstream: &FakeUpstream, extra: &[(&str, &str)]) -> Gateway {
    let mut env = vec![
        ("LORE_MEMORY", "on"),
        ("LORE_IDLE_TIMEOUT", "0.3"),
        ("LORE_CURATE_AFTER_TURNS", "1000"),
        ("LORE_MEMORY_RETRY_AFTER", "0.3"),
        ("LORE_WORKER_MAX_ATTEMPTS", "2"),
        ("LORE_WORKER_RETRY_BASE_MS", "10"),
    ];
    env.extend_from_slice(extra);
    Gateway::start_with(&upstream.url(), &env)
}

/// A conversation of one session, resent in full every turn as a harness does.
struct Conversation<'a> {
    gateway: &'a Gateway,
    session_header: &'static str,
    key: &'static str,
    project: &'static str,
    history: Vec<Value>,
    session: Option<String>,
}

impl<'a> Conversation<'a> {
    fn new(gateway: &'a Gateway, session_header: &'static str) -> Self {
        Self {
            gateway,
            session_header,
            key: "k-memory",
            project: "/tmp/lore-memory-test",
            history: Vec::new(),
            session: None,
        }
    }

    fn send(&mut self, content: Value, stream: bool) -> lore_test_support::http_client::Response {
        self.history
            .push(json!({"role": "user", "content": content}));
        let headers = vec![
            ("x-api-key", self.key),
            ("anthropic-version", "2023-06-01"),
            (SESSION_HEADER, self.session_header),
            ("x-lore-project", self.project),
        ];
        let body = anthropic_body(Value::Array(self.history.clone()), stream);
        let response = self.gateway.post("/v1/messages", &headers, &body);
        assert_eq!(
            response.status,
            200,
            "{}",
            String::from_utf8_lossy(&response.body)
        );
        if let Some((_, id)) = response
            .headers
            .iter()
            .find(|(name, _)| name == "x-lore-session-id")
        {
            self.session = Some(id.clone());
        }
        response
    }

    /// One turn with a JSON reply; the reply joins the history.
    fn turn(&mut self, text: &str) -> Value {
        let response = self.send(json!(text), false);
        let reply: Value = serde_json::from_slice(&response.body).expect("JSON reply");
        self.history
            .push(json!({"role": "assistant", "content": reply["content"].clone()}));
        reply
    }

    /// The session id the gateway reported on the latest reply.
    fn session_id(&self) -> String {
        self.session.clone().expect("a reply named the session")
    }
}

fn memory(gateway: &Gateway, session: &str) -> Value {
    gateway
        .get(&format!("/api/v1/sessions/{session}/memory"))
        .json()
}

fn distillations(gateway: &Gateway, session: &str) -> Vec<Value> {
    memory(gateway, session)["distillations"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn actors(gateway: &Gateway) -> Value {
    gateway.get("/api/v1/actors").json()
}

/// Waits longer than [`eventually`]: worker calls follow idle timeouts and retries.
fn slowly<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn worker_calls(upstream: &FakeUpstream, bucket: &str) -> usize {
    upstream
        .worker_calls()
        .iter()
        .filter(|call| call.bucket == bucket)
        .count()
}

#[test]
fn sixty_turns_distil_at_the_thresholds_and_consolidation_keeps_the_five_newest() {
    let upstream = FakeUpstream::start();
    let gateway = memory_gateway(&upstream, &[]);
    let mut chat = Conversation::new(&gateway, "memory-sixty");
    let say = |burst: usize, turn: usize| {
        format!(
            "zq{burst}marker: in burst {burst} turn {turn} we moved the parser into src/parser_{burst}.rs and kept nom for the tokens"
        )
    };
    // Two turns: four messages, plenty of tokens, but fewer than five messages.
    chat.turn(&say(0, 0));
    chat.turn(&say(0, 1));
    let session = chat.session_id();
    std::thread::sleep(Duration::from_millis(1_200));
    assert_eq!(
        worker_calls(&upstream, "distillation"),
        0,
        "four messages are below the threshold"
    );
    assert!(distillations(&gateway, &session).is_empty());
    // A short session: six messages, but fewer than 64 tokens.
    let mut small = Conversation::new(&gateway, "memory-small");
    for text in ["hi", "yo", "ok"] {
        small.turn(text);
    }
    // The third turn makes six messages: the first observation log.
    chat.turn(&say(0, 2));
    let first = slowly("the first observation log", || {
        let rows = distillations(&gateway, &session);
        (rows.len() == 1).then(|| rows[0].clone())
    });
    assert_eq!(first["generation"], 0);
    assert_eq!(first["source_messages"], 6);
    assert!(
        first["observations"]
            .as_str()
            .unwrap()
            .contains("zq0marker"),
        "{first}"
    );
    assert_eq!(memory(&gateway, &session)["distilled_through_seq"], 6);
    let small_id = small.session_id();
    assert!(
        distillations(&gateway, &small_id).is_empty(),
        "under 64 tokens nothing is distilled"
    );

    // Nineteen more bursts of three turns: sixty turns in all, twenty observation logs.
    for burst in 1..20 {
        for turn in 0..3 {
            chat.turn(&say(burst, turn));
        }
        slowly(&format!("observation log {burst}"), || {
            let rows = distillations(&gateway, &session);
            let gen0 = rows.iter().filter(|d| d["generation"] == 0).count();
            (gen0 == burst + 1).then_some(())
        });
    }
    let rows = slowly("the consolidation", || {
        let rows = distillations(&gateway, &session);
        rows.iter().any(|d| d["generation"] == 1).then_some(rows)
    });
    let gen0: Vec<&Value> = rows.iter().filter(|d| d["generation"] == 0).collect();
    assert_eq!(gen0.len(), 20);
    let live: Vec<u64> = gen0
        .iter()
        .filter(|d| d["archived"] == false)
        .map(|d| d["n"].as_u64().unwrap())
        .collect();
    assert_eq!(
        live,
        [15, 16, 17, 18, 19],
        "exactly the five newest stay in context"
    );
    let meta = rows.iter().find(|d| d["generation"] == 1).unwrap();
    assert_eq!(meta["archived"], false);
    assert_eq!(meta["consumed"].as_array().unwrap().len(), 15);
    assert_eq!(
        worker_calls(&upstream, "distillation"),
        21,
        "twenty logs and one consolidation"
    );

    // An archived log is still found by recall.
    let (code, out, err) = lore(
        &["recall", "zq0marker", "--json", "--limit", "20"],
        gateway.data_dir(),
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let archived_id = format!("d:{session}:0");
    assert!(
        out.contains(&archived_id),
        "recall should find the archived log {archived_id}: {out}"
    );
    let counters = actors(&gateway);
    assert_eq!(counters["distiller"]["distillations"], 20);
    assert_eq!(counters["distiller"]["consolidations"], 1);
}

fn observer(text: &str) -> WorkerScript {
    WorkerScript::Text(format!(
        "<observations>\nDate: 2026-11-30\n* 🔴 (10:00) {text}\n</observations>"
    ))
}

#[test]
fn the_curator_updates_a_changed_preference_instead_of_adding_a_second() {
    let upstream = FakeUpstream::start();
    let gateway = memory_gateway(&upstream, &[]);
    let mut chat = Conversation::new(&gateway, "memory-curator");
    upstream.push_worker(observer(
        "user prefers pytest for the Python tests [stated-preference]",
    ));
    upstream.push_worker(WorkerScript::Text(
        json!({"ops": [{"op": "create", "category": "preference", "title": "Test runner for the Python tests",
            "content": "Use pytest.", "scope": "project", "crossProject": false, "confidence": 0.9}],
            "entities": [{"type": "tool", "canonical_name": "pytest", "aliases": [{"type": "name", "value": "py.test"}]}],
            "relations": []})
        .to_string(),
    ));
    for text in [
        "I prefer pytest for the python tests of this repository, please remember that",
        "and run them with the verbose flag so failures are easy to read",
        "thanks, that is all for the test setup today",
    ] {
        chat.turn(text);
    }
    let project = chat.project;
    let entries = slowly("the preference", || {
        let list: Value = gateway
            .get(&format!("/api/v1/knowledge?project={project}"))
            .json();
        list.as_array().filter(|l| !l.is_empty()).cloned()
    });
    assert_eq!(entries.len(), 1);
    let id = entries[0]["id"].as_str().unwrap().to_string();
    assert_eq!(entries[0]["content"], "Use pytest.");

    // The preference changes: the curator proposes the same title again.
    upstream.push_worker(observer(
        "user switched the test runner from pytest to nextest [corrected-style]",
    ));
    upstream.push_worker(WorkerScript::Text(
        json!([{"op": "create", "category": "preference", "title": "Test runner for the python tests",
            "content": "Use nextest; pytest is no longer used.", "confidence": 1.0}])
        .to_string(),
    ));
    for text in [
        "From now on we use nextest instead of pytest for every test run",
        "it is much faster on this machine and the output is clearer",
        "update whatever notes you keep about the test runner",
    ] {
        chat.turn(text);
    }
    let entry = slowly("the update", || {
        let entry: Value = gateway.get(&format!("/api/v1/knowledge/{id}")).json();
        (entry["version"] == 2).then_some(entry)
    });
    assert_eq!(entry["content"], "Use nextest; pytest is no longer used.");
    let history = entry["history"].as_array().unwrap();
    assert_eq!(history[0]["content"], "Use pytest.");
    let list: Value = gateway
        .get(&format!("/api/v1/knowledge?project={project}"))
        .json();
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "updated, not duplicated: {list}"
    );
    let counters = actors(&gateway);
    assert_eq!(counters["curator"]["created"], 1);
    assert_eq!(counters["curator"]["updated"], 1);
    assert!(counters["curator"]["entities"].as_u64().unwrap() >= 1);
    let usage = counters["worker_usage"].as_array().unwrap();
    let curation = usage
        .iter()
        .find(|row| row["bucket"] == "curation")
        .unwrap();
    assert_eq!(curation["calls"], 2);
    assert!(curation["input_tokens"].as_u64().unwrap() > 0);
    assert!(curation["cost_usd"].as_f64().unwrap() > 0.0);
}

#[test]
fn bad_worker_output_leaves_storage_consistent() {
    let upstream = FakeUpstream::start();
    let gateway = memory_gateway(&upstream, &[]);
    let mut chat = Conversation::new(&gateway, "memory-bad");
    // A 500 on every attempt: the job fails, nothing is written.
    for _ in 0..2 {
        upstream.push_worker(WorkerScript::Error {
            status: 500,
            body: json!({"error": {"message": "overloaded"}}),
        });
    }
    for text in [
        "the build script lives in scripts/build.sh and needs bash 5",
        "we decided against make because of the tab rules",
        "please keep the script under a hundred lines",
    ] {
        chat.turn(text);
    }
    let session = chat.session_id();
    slowly("the failure to be counted", || {
        let distiller = &actors(&gateway)["distiller"];
        (distiller["failures"].as_u64()? >= 1).then_some(())
    });
    assert!(distillations(&gateway, &session).is_empty());
    assert_eq!(memory(&gateway, &session)["distilled_through_seq"], 0);
    assert!(
        actors(&gateway)["distiller"]["last_error"]
            .as_str()
            .unwrap()
            .contains("500")
    );

    // An empty reply is a failure too.
    upstream.push_worker(WorkerScript::Empty);
    slowly("the empty reply to be refused", || {
        (actors(&gateway)["distiller"]["failures"].as_u64()? >= 2).then_some(())
    });
    assert!(distillations(&gateway, &session).is_empty());

    // A good log, then a curator reply that is not JSON: the log stays, no knowledge appears.
    upstream.push_worker(observer(
        "build script is scripts/build.sh; make was rejected because of tabs",
    ));
    upstream.push_worker(WorkerScript::Text(
        "Sure! Here are the entries: none really".into(),
    ));
    slowly("the log", || {
        (distillations(&gateway, &session).len() == 1).then_some(())
    });
    slowly("the curator reply to be rejected", || {
        (actors(&gateway)["curator"]["rejected_replies"].as_u64()? >= 1).then_some(())
    });
    let list: Value = gateway
        .get("/api/v1/knowledge?project=/tmp/lore-memory-test")
        .json();
    assert_eq!(list, json!([]));

    // A 401: the session's background work pauses; another key resumes it.
    upstream.push_worker(WorkerScript::Error {
        status: 401,
        body: json!({"error": {"message": "invalid x-api-key"}}),
    });
    for text in [
        "next we add a lint step to scripts/build.sh",
        "shellcheck is the linter we want",
        "fail the build on any warning",
    ] {
        chat.turn(text);
    }
    slowly("the pause", || {
        (actors(&gateway)["distiller"]["paused"].as_u64()? >= 1).then_some(())
    });
    let calls = upstream.worker_calls().len();
    std::thread::sleep(Duration::from_millis(1_200));
    assert_eq!(
        upstream.worker_calls().len(),
        calls,
        "no worker call with a refused key"
    );
    assert!(
        gateway.log().contains("refused"),
        "a clear log line says why"
    );
    chat.key = "k-memory-renewed";
    chat.turn("the key was renewed, carry on with the lint step");
    slowly("work to resume", || {
        (distillations(&gateway, &session).len() >= 2).then_some(())
    });
    let rows = distillations(&gateway, &session);
    assert!(
        rows.iter()
            .all(|d| !d["observations"].as_str().unwrap().is_empty())
    );
}

#[test]
fn the_credential_never_reaches_the_disk() {
    const KEY: &str = "sk-ant-api03-NEVER-ON-DISK-7f3a9c21";
    let upstream = FakeUpstream::start();
    let mut gateway = memory_gateway(&upstream, &[]);
    let mut chat = Conversation::new(&gateway, "memory-secret");
    chat.key = KEY;
    for text in [
        "the deploy uses fly.io with the region set to ams",
        "secrets are read from the environment, never from files",
        "deploys happen only from the main branch",
    ] {
        chat.turn(text);
    }
    let session = chat.session_id();
    slowly("the log", || {
        (distillations(&gateway, &session).len() == 1).then_some(())
    });
    let worker = upstream
        .requests()
        .into_iter()
        .find(|r| {
            r.header("user-agent")
                .is_some_and(|ua| ua.starts_with("lore-worker/"))
        })
        .expect("a worker call");
    assert_eq!(
        worker.header("x-api-key"),
        Some(KEY),
        "the worker used the session's own key"
    );
    gateway.stop();
    let mut files = vec![gateway.data_dir().to_path_buf()];
    let mut checked = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                files.push(entry.unwrap().path());
            }
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        checked += 1;
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "{} holds the credential",
            path.display()
        );
    }
    assert!(
        checked > 5,
        "the data directory was searched ({checked} files)"
    );
}

#[test]
fn no_worker_call_starts_while_a_request_of_the_session_is_in_flight() {
    let upstream = FakeUpstream::start();
    let gateway = memory_gateway(&upstream, &[]);
    let mut chat = Conversation::new(&gateway, "memory-busy");
    chat.turn("we are porting the scheduler from src/sched.c to src/sched.rs this week");
    chat.turn("keep the public function names so the callers do not change");
    // A reply that stops for a tool call is not idle: the harness is about to send the result.
    upstream.push(Script::ToolCall {
        name: "bash".into(),
        id: "toolu_busy".into(),
        arguments: json!({"cmd": "cargo test -p sched"}),
        text: None,
    });
    let reply = chat.turn("run the scheduler tests now");
    assert_eq!(reply["stop_reason"], "tool_use");
    std::thread::sleep(Duration::from_millis(1_000));
    assert_eq!(
        upstream.worker_calls().len(),
        0,
        "no distillation while a tool runs"
    );
    // The tool result goes up; its reply streams slowly, far past the idle timeout.
    upstream.push(Script::SlowStream {
        text: "All 42 scheduler tests pass after the port; the old C file can go.".into(),
        chunks: 10,
        interval: Duration::from_millis(200),
    });
    chat.send(
        json!([{"type": "tool_result", "tool_use_id": "toolu_busy", "content": "test result: ok. 42 passed"}]),
        true,
    );
    let streamed_until = Instant::now();
    let session = chat.session_id();
    slowly("the log", || {
        (distillations(&gateway, &session).len() == 1).then_some(())
    });
    let calls = upstream.worker_calls();
    assert!(!calls.is_empty());
    for call in &calls {
        assert_eq!(
            call.conversation_in_flight, 0,
            "a worker call overlapped a request: {call:?}"
        );
        assert!(
            call.received_at + Duration::from_millis(100) >= streamed_until,
            "a worker call came during the slow reply"
        );
    }
}
