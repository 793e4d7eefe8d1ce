//! Bad worker output and the credential: storage stays consistent, the key stays off disk.

use std::time::Duration;

use lore_test_support::{FakeUpstream, WorkerScript};
use serde_json::{Value, json};

use super::*;

#[test]
fn bad_worker_output_leaves_storage_consistent() {
    let upstream = FakeUpstream::start();
    // Retries 2 s apart: each check below runs between a failed job and its retry, which
    // would otherwise get the fake's default (good) answer on a machine slow enough.
    let gateway = memory_gateway(&upstream, &[("LORE_MEMORY_RETRY_AFTER", "2")]);
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
    // After two failed jobs in a row an unusable reply is given up rather than retried: the
    // observations stay searchable and curation moves on; either way nothing is written.
    slowly("the curator reply to be rejected or given up", || {
        let curator = &actors(&gateway)["curator"];
        let refused = curator["rejected_replies"].as_u64()? + curator["skipped"].as_u64()?;
        (refused >= 1).then_some(())
    });
    assert_eq!(actors(&gateway)["curator"]["created"], 0);
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
    let (code, status, _) = lore(&["status"], gateway.data_dir(), &[]);
    assert_eq!(code, 0);
    assert!(status.contains("memory: "), "{status}");
    assert!(
        status.contains("last memory error: ") && status.contains("refused"),
        "{status}"
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
