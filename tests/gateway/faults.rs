//! Faults the gateway survives: a full disk (requests pass, `/health` and the log say why,
//! capture resumes by itself when space returns), a missing or corrupt search index (rebuilt
//! from storage), a damaged database (a clear message naming the recovery), 529 with
//! `retry-after`, a slow-reading client.

use std::path::{Path, PathBuf};
use std::process::Command;

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

/// A data directory whose database folder (`db`, sled) is a tmpfs of `mb` megabytes, unmounted
/// on drop (the gateway's log stays on the real disk). `None` when this process may not mount
/// (not root).
struct SmallDisk {
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
}

impl SmallDisk {
    fn mount(mb: u32) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        std::fs::create_dir(&path).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
            .arg(&path)
            .status()
            .is_ok_and(|status| status.success());
        mounted.then_some(SmallDisk {
            dir: Some(dir),
            path,
        })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

fn fill(dir: &Path) -> PathBuf {
    use std::io::Write as _;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let chunk = vec![7u8; 64 * 1024];
    while file.write_all(&chunk).is_ok() {}
    path
}

fn health(gateway: &Gateway) -> Value {
    gateway.get("/health").json()
}

/// One new conversation (a distinct first message); the reply must be the upstream's.
fn converse(gateway: &Gateway, upstream: &FakeUpstream, text: &str) {
    upstream.push(Script::Text(format!("re: {text}")));
    let response = gateway.post(
        "/v1/messages",
        &anthropic_headers("sk-disk"),
        &anthropic_body(json!([{"role": "user", "content": text}]), false),
    );
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.json()["content"][0]["text"], format!("re: {text}"));
}

fn stored_texts(gateway: &Gateway) -> Vec<String> {
    gateway
        .sessions()
        .iter()
        .flat_map(|session| gateway.transcript(session["id"].as_str().unwrap_or("")))
        .collect()
}

#[test]
fn a_full_disk_keeps_requests_passing_and_capture_resumes_when_space_returns() {
    let Some(mut disk) = SmallDisk::mount(32) else {
        eprintln!("skipped: mounting a tmpfs needs root (CI runs as root)");
        return;
    };
    let upstream = FakeUpstream::start();
    let data = disk.dir.take().unwrap();
    let gateway = Gateway::start_in(data, &upstream.url(), &[]);
    converse(&gateway, &upstream, "before the disk filled");
    eventually("the first turn stored", || {
        stored_texts(&gateway)
            .iter()
            .any(|t| t.contains("before the disk filled"))
            .then_some(())
    });

    let filler = fill(&disk.path);
    // Turns of 16 KB each until sled's flush hits the wall.
    let padding = "p".repeat(16 * 1024);
    let mut n = 0;
    let failing = eventually("health to report the full disk", || {
        n += 1;
        converse(&gateway, &upstream, &format!("while full {n} {padding}"));
        let health = health(&gateway);
        (health["capture"] == "failing").then_some(health)
    });
    assert_eq!(failing["status"], "degraded", "{failing}");
    assert_eq!(failing["storage"]["kind"], "full", "{failing}");
    assert!(
        failing["storage"]["problem"]
            .as_str()
            .unwrap_or("")
            .contains("disk is full"),
        "{failing}"
    );
    // Requests still pass while capture is off.
    converse(&gateway, &upstream, "still answered on a full disk");
    // The first conversation goes on while the disk is full: this turn's writes fail.
    let first = [
        json!({"role": "user", "content": "before the disk filled"}),
        json!({"role": "assistant", "content": "re: before the disk filled"}),
        json!({"role": "user", "content": "a second turn while full"}),
    ];
    continue_conversation(&gateway, &upstream, &first);
    assert!(
        gateway.log().contains("storage writes fail"),
        "the log says what is wrong"
    );

    std::fs::remove_file(filler).unwrap();
    let recovered = eventually("capture to resume", || {
        let health = health(&gateway);
        (health["capture"] == "on").then_some(health)
    });
    assert_eq!(recovered["storage"]["recoveries"], 1, "{recovered}");
    // A new conversation is captured again, without a restart; the old one is intact.
    converse(&gateway, &upstream, "after the space came back");
    eventually("the new turn stored", || {
        let texts = stored_texts(&gateway);
        (texts
            .iter()
            .any(|t| t.contains("after the space came back"))
            && texts.iter().any(|t| t.contains("before the disk filled")))
        .then_some(())
    });
    assert!(gateway.log().contains("storage reopened"));
    // Its next turn carries the whole history: what could not be written is stored now. (A
    // write sled accepted but never flushed is the session actor's resync, tested there.)
    let mut next = first.to_vec();
    next.push(json!({"role": "assistant", "content": "re: a second turn while full"}));
    next.push(json!({"role": "user", "content": "a third turn after"}));
    continue_conversation(&gateway, &upstream, &next);
    eventually("the turn of the full disk stored after all", || {
        let texts = stored_texts(&gateway);
        (texts.iter().any(|t| t.contains("a second turn while full"))
            && texts.iter().any(|t| t.contains("a third turn after")))
        .then_some(())
    });
}

/// The next turn of a conversation; `history` ends with the new user message.
fn continue_conversation(gateway: &Gateway, upstream: &FakeUpstream, history: &[Value]) {
    let last = history
        .last()
        .and_then(|m| m["content"].as_str())
        .unwrap_or("");
    upstream.push(Script::Text(format!("re: {last}")));
    let response = gateway.post(
        "/v1/messages",
        &anthropic_headers("sk-disk"),
        &anthropic_body(Value::Array(history.to_vec()), false),
    );
    assert_eq!(response.status, 200, "{}", response.text());
}

#[test]
fn a_missing_or_corrupt_index_is_rebuilt_from_storage() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    converse(&gateway, &upstream, "zanzibar deployment notes");
    let search = |gateway: &Gateway| {
        gateway
            .get("/api/v1/recall?q=zanzibar&mode=bm25&scope=all")
            .text()
            .contains("zanzibar")
    };
    eventually("the message searchable", || search(&gateway).then_some(()));
    gateway.stop();
    let index = gateway.data_dir().join("index");
    // Corrupt: every file of the index overwritten with garbage.
    for entry in std::fs::read_dir(&index).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::write(&path, b"not an index").unwrap();
        }
    }
    gateway.restart();
    eventually("the corrupt index rebuilt", || {
        search(&gateway).then_some(())
    });
    gateway.stop();
    std::fs::remove_dir_all(&index).unwrap();
    gateway.restart();
    eventually("the missing index rebuilt", || {
        search(&gateway).then_some(())
    });
}

#[test]
fn a_damaged_database_gets_a_clear_message_and_doctor_points_at_the_recovery() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    converse(&gateway, &upstream, "soon damaged");
    gateway.stop();
    let data_dir = gateway.data_dir().to_path_buf();
    let db = data_dir.join("db");
    // Damage every file of the database: the config file and the log.
    for entry in std::fs::read_dir(&db).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let mut bytes = std::fs::read(&path).unwrap();
            for byte in bytes.iter_mut().take(64) {
                *byte ^= 0x5a;
            }
            std::fs::write(&path, bytes).unwrap();
        }
    }
    let (code, out, err) = lore(&["start"], &data_dir, &[("LORE_EMBEDDINGS", "off")]);
    assert_ne!(code, 0, "a damaged database must not start: {out}{err}");
    let text = format!("{out}{err}");
    assert!(text.contains("lore doctor"), "{text}");
    assert!(text.contains("Recovering a damaged database"), "{text}");
    let (code, out, _) = lore(&["doctor"], &data_dir, &[]);
    assert_ne!(code, 0);
    assert!(out.contains("BROKEN   database"), "{out}");
    assert!(out.contains("Recovering a damaged database"), "{out}");
    drop(gateway);
}

#[test]
fn an_overloaded_upstream_529_is_relayed_with_retry_after_and_not_retried() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    upstream.push(Script::Error {
        status: 529,
        body: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        headers: vec![("retry-after".into(), "7".into())],
    });
    let response = gateway.post(
        "/v1/messages",
        &anthropic_headers("sk-529"),
        &anthropic_body(json!([{"role": "user", "content": "hi"}]), false),
    );
    assert_eq!(response.status, 529);
    assert_eq!(response.header("retry-after"), Some("7"));
    assert_eq!(response.json()["error"]["type"], "overloaded_error");
    assert_eq!(upstream.requests().len(), 1, "a 529 is not retried");
}

#[test]
fn a_slow_reading_client_gets_the_whole_stream_and_the_reply_is_captured() {
    use std::io::{Read as _, Write as _};
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let text = "slow reader ".repeat(20_000); // 240 KB of streamed text
    upstream.push(Script::Text(text.clone()));
    let body =
        anthropic_body(json!([{"role": "user", "content": "stream a lot"}]), true).to_string();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", gateway.port)).unwrap();
    write!(
        stream,
        "POST /v1/messages HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: sk-slow\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // 4 KB every 10 ms: far slower than the upstream sends.
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    let started = std::time::Instant::now();
    loop {
        let read = stream.read(&mut buffer).unwrap();
        if read == 0 {
            break;
        }
        received.extend_from_slice(&buffer[..read]);
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the stream never ended"
        );
    }
    let received = String::from_utf8_lossy(&received);
    assert!(received.contains("message_stop"), "the stream ended early");
    assert!(
        received.len() > text.len(),
        "the whole reply reached the slow client ({} bytes)",
        received.len()
    );
    let session = eventually("the reply captured", || {
        gateway
            .sessions()
            .first()
            .cloned()
            .filter(|s| s["messages"] == 2)
    });
    let transcript = gateway.transcript(session["id"].as_str().unwrap());
    assert_eq!(transcript[1], format!("assistant: {text}"));
}
