//! A compaction while turns are written: every write made during the copy lands in the new
//! database (operations wait for the swap instead of failing, and the copy starts only once
//! the writers that already held the old database are done).
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use lore_storage::{SessionRecord, Store};

#[test]
fn writes_during_a_compaction_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    // Enough data that a copy takes a while.
    for i in 0..3_000 {
        let mut record = SessionRecord::new(format!("old{i:05}"));
        record.project = Some("x".repeat(400));
        store.save_session(&record).unwrap();
    }
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let store = store.clone();
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut written = Vec::new();
            let mut failed = Vec::new();
            let mut n = 0;
            while !done.load(Ordering::SeqCst) || n < 200 {
                let id = format!("live{n:05}");
                match store.save_session(&SessionRecord::new(id.clone())) {
                    Ok(()) => written.push(id),
                    Err(err) => failed.push(format!("{id}: {err}")),
                }
                n += 1;
            }
            (written, failed)
        })
    };
    for _ in 0..3 {
        store.compact().unwrap();
    }
    done.store(true, Ordering::SeqCst);
    let (written, failed) = writer.join().unwrap();
    assert!(
        failed.is_empty(),
        "writes failed during a compaction: {failed:?}"
    );
    for id in &written {
        assert!(store.load_session(id).unwrap().is_some(), "{id} was lost");
    }
}
