//! Opening a data directory right after this process dropped its last handle of it: sled's
//! flusher thread still holds the file lock for a moment, and `Store::open` waits for it
//! instead of failing with "in use by another lore process". A directory that really stays
//! open still fails, with the message that says what to do.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lore_storage::{SessionRecord, StorageErrorKind, Store};

#[test]
fn a_store_reopens_right_after_it_was_dropped() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("db");
    // sled's IO thread pool is shared by every database of the process: while other stores
    // keep it busy, a write of this one queued behind theirs holds its lock past the drop.
    let stop = Arc::new(AtomicBool::new(false));
    let mut others = Vec::new();
    for n in 0..3 {
        let other = tempfile::tempdir()?;
        let stop = stop.clone();
        others.push(std::thread::spawn(move || -> Result<(), String> {
            let store = Store::open(&other.path().join("db")).map_err(|e| e.to_string())?;
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut record = SessionRecord::new(format!("o{n}-{}", i % 500));
                record.project = Some("y".repeat(50_000));
                store.save_session(&record).map_err(|e| e.to_string())?;
                i += 1;
            }
            Ok(())
        }));
    }
    let mut reopened = Ok(());
    for round in 0..30u64 {
        let store = match Store::open(&path) {
            Ok(store) => store,
            Err(err) => {
                reopened = Err(format!("round {round}: {err}"));
                break;
            }
        };
        for i in 0..50 {
            let mut record = SessionRecord::new(format!("s{round:02}-{i:02}"));
            record.project = Some("x".repeat(20_000));
            store.save_session(&record)?;
        }
        store.flush()?;
        drop(store);
    }
    stop.store(true, Ordering::Relaxed);
    for other in others {
        other.join().map_err(|_| "a writer panicked")??;
    }
    reopened?;
    let store = Store::open(&path)?;
    assert_eq!(store.list_sessions()?.len(), 30 * 50);
    Ok(())
}

#[test]
fn a_directory_held_open_is_refused_with_what_to_do() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("db");
    let _held = Store::open(&path)?;
    let started = Instant::now();
    let err = Store::open(&path).err().ok_or("a second open succeeded")?;
    assert_eq!(err.kind, StorageErrorKind::Locked);
    assert!(err.message.contains("lore stop"), "{}", err.message);
    assert!(
        started.elapsed() >= Duration::from_millis(1_900),
        "waited for the lock first"
    );
    Ok(())
}
