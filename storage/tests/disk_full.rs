//! A full disk under the store: writes fail, `check_health` says why, and once space returns
//! the store reopens itself and takes writes again, with what was flushed before intact.
//! Needs root to mount a small tmpfs; elsewhere it says so and passes without running.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use lore_proto::{Message, Part, Role};
use lore_storage::records::RECORD_VERSION;
use lore_storage::{MessageSource, PathEntry, SessionRecord, Store, StoredMessage};

/// A tmpfs of `mb` megabytes mounted on a fresh directory, unmounted on drop.
struct SmallDisk {
    dir: PathBuf,
    _parent: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(mb: u32) -> Option<SmallDisk> {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("disk");
        std::fs::create_dir(&dir).unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|status| status.success());
        mounted.then_some(SmallDisk {
            dir,
            _parent: parent,
        })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// Fills the disk under `dir` with a file; returns it.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write as _;
    let path = dir.join("filler");
    let mut file = std::fs::File::create(&path).unwrap();
    let chunk = vec![7u8; 64 * 1024];
    while file.write_all(&chunk).is_ok() {}
    let _ = file.sync_all();
    path
}

fn turn(record: &mut SessionRecord, text: &str) -> Vec<StoredMessage> {
    let message = Message {
        role: Role::User,
        parts: vec![Part::Text { text: text.into() }],
    };
    let stored = StoredMessage {
        version: RECORD_VERSION,
        session_id: record.id.clone(),
        seq: record.next_seq,
        position: record.path.len() as u32,
        identity: message.identity(),
        message,
        source: MessageSource::Request,
        created_at_ms: 0,
        model: None,
        usage: None,
        partial: false,
    };
    record.path.push(PathEntry {
        seq: stored.seq,
        identity: stored.identity,
        tokens: 0,
    });
    record.next_seq += 1;
    vec![stored]
}

#[test]
fn a_full_disk_is_reported_and_writes_resume_when_space_returns() {
    let Some(disk) = SmallDisk::mount(24) else {
        eprintln!("skipped: mounting a tmpfs needs root (this test runs in CI as root)");
        return;
    };
    let store = Store::open(&disk.dir.join("db")).unwrap();
    let mut before = SessionRecord::new("before".into());
    let messages = turn(&mut before, "stored before the disk filled");
    store.commit_turn(&before, &messages).unwrap();
    store.flush().unwrap();
    assert!(store.check_health().ok);

    let filler = fill(&disk.dir);
    // Writes go to memory first; the flush that cannot write latches the error.
    // Values under sled's blob threshold (a quarter of its 512 KB segment): the failed flush
    // latches an error that a reopen clears. (A failed write of a larger value can leave sled's
    // flush blocked for good; the health then says to restart, see `handle.rs`.)
    let big = "x".repeat(16 * 1024);
    let mut during = SessionRecord::new("during".into());
    let deadline = Instant::now() + Duration::from_secs(20);
    let failing = loop {
        let messages = turn(&mut during, &big);
        let _ = store.commit_turn(&during, &messages);
        let health = store.check_health();
        if !health.ok {
            break health;
        }
        assert!(
            Instant::now() < deadline,
            "writes never failed on a full disk"
        );
    };
    eprintln!("health while full: {failing:?}");
    assert_eq!(failing.kind.as_deref(), Some("full"), "{failing:?}");
    assert!(
        failing
            .problem
            .as_deref()
            .unwrap_or("")
            .contains("disk is full"),
        "{failing:?}"
    );
    assert!(
        !store.check_health().ok,
        "still failing while the disk is full"
    );

    std::fs::remove_file(filler).unwrap();
    let recovered = store.check_health();
    assert!(recovered.ok, "{recovered:?}");
    assert_eq!(recovered.recoveries, 1);
    assert_eq!(store.generation(), 1);

    // Old data intact, new writes accepted and durable.
    let loaded = store.load_session("before").unwrap().unwrap();
    assert_eq!(store.session_messages(&loaded).unwrap().len(), 1);
    let mut after = SessionRecord::new("after".into());
    let messages = turn(&mut after, "stored after the space came back");
    store.commit_turn(&after, &messages).unwrap();
    store.flush().unwrap();
    assert!(store.check_health().ok);
    let dir = disk.dir.join("db");
    drop(store);
    let deadline = Instant::now() + Duration::from_secs(5);
    let reopened = loop {
        match Store::open(&dir) {
            Ok(store) => break store,
            Err(err) if Instant::now() < deadline => {
                let _ = err;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(err) => panic!("{err}"),
        }
    };
    assert!(reopened.load_session("after").unwrap().is_some());
    assert!(reopened.load_session("before").unwrap().is_some());
}
