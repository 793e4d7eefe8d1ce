//! [`DbHandle`]: the open sled database of a data directory, which can be replaced while the
//! process runs, and [`StoreHealth`], what the last check of it found.
//!
//! Why replaceable: sled 0.34 latches the first IO error of its background flush (a full disk)
//! and fails every later write with it until the database is opened again. [`DbHandle::check`]
//! notices that (a flush that fails), waits until there is room on the disk again (a probe file
//! of [`SPACE_NEEDED`] bytes can be written and synced), then drops the database and opens it
//! anew, which runs sled's crash recovery: what was flushed before the error is kept, what was
//! only in memory is gone (at most the flush window), and the next request of a conversation
//! carries the history that recaptures it. While the database is closed every operation fails
//! with a `Io` error saying so; the gateway fails open meanwhile.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{StorageError, StorageErrorKind};
use crate::records::now_ms;

/// Interval of sled's background flush: the most a crash can lose.
pub const FLUSH_EVERY_MS: u64 = 100;
/// Schema version of the database layout.
pub const SCHEMA_VERSION: u64 = 1;
/// Page cache size; small, because the gateway must stay light at idle.
const CACHE_CAPACITY_BYTES: u64 = 16 * 1024 * 1024;
/// Free space the disk must have again before the database is reopened.
pub const SPACE_NEEDED: usize = 4 * 1024 * 1024;
/// Longest wait for the flush of a health check.
const FLUSH_DEADLINE: Duration = Duration::from_secs(3);
/// Longest wait for the old database to let go of its file lock when reopening.
const REOPEN_WAIT: Duration = Duration::from_secs(10);
/// Longest [`DbHandle::open`] waits for the file lock: sled's flusher thread lets go of it a
/// moment after the last handle of a database in this process dropped (sled issue 1289).
const OPEN_LOCK_WAIT: Duration = Duration::from_secs(2);
/// Longest an operation waits for a compaction to swap the database back in before it fails.
const COMPACTION_WAIT: Duration = Duration::from_secs(5);

/// The trees every part of the store uses, of one open database.
pub(crate) struct Trees {
    pub db: sled::Db,
    pub sessions: sled::Tree,
    pub messages: sled::Tree,
    pub session_index: sled::Tree,
    pub meta: sled::Tree,
    pub vectors: sled::Tree,
}

/// What the last check of the database found, for `/health` and the log.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StoreHealth {
    /// False while writes fail or the database is being reopened.
    pub ok: bool,
    /// What is wrong and what to do, while not ok.
    pub problem: Option<String>,
    /// `full` (no space left), `hung` (a flush does not finish), `io` or `closed` (reopening),
    /// while not ok.
    pub kind: Option<String>,
    /// Since when writes fail (ms since the epoch).
    pub failing_since_ms: Option<u64>,
    /// How often the database was reopened after a failure.
    pub recoveries: u64,
    /// When it last was (ms since the epoch).
    pub last_recovery_ms: Option<u64>,
}

/// The open database, shared by every clone of the store. Cheap to clone.
#[derive(Clone)]
pub(crate) struct DbHandle {
    shared: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    slot: RwLock<Option<Arc<Trees>>>,
    health: Mutex<StoreHealth>,
    /// Held by the one check that may reopen.
    reopening: Mutex<()>,
    /// A flush probe is running (or hung).
    probe_pending: std::sync::atomic::AtomicBool,
    /// A compaction has the database out of its slot: operations wait for it.
    compacting: std::sync::atomic::AtomicBool,
    generation: AtomicU64,
}

impl DbHandle {
    /// Opens the database under `dir` (created if missing), finishing or undoing a compaction
    /// a crash interrupted.
    pub fn open(dir: &Path) -> Result<Self, StorageError> {
        finish_compaction(dir);
        std::fs::create_dir_all(dir).map_err(|err| {
            StorageError::new(
                StorageErrorKind::Io,
                format!("cannot create the data directory {}: {err}", dir.display()),
            )
        })?;
        let deadline = Instant::now() + OPEN_LOCK_WAIT;
        let trees = loop {
            match open_trees(dir) {
                Ok(trees) => break trees,
                Err(err) if err.kind == StorageErrorKind::Locked && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(err) => return Err(err),
            }
        };
        Ok(Self {
            shared: Arc::new(Shared {
                dir: dir.to_path_buf(),
                slot: RwLock::new(Some(Arc::new(trees))),
                health: Mutex::new(StoreHealth {
                    ok: true,
                    ..StoreHealth::default()
                }),
                reopening: Mutex::new(()),
                probe_pending: std::sync::atomic::AtomicBool::new(false),
                compacting: std::sync::atomic::AtomicBool::new(false),
                generation: AtomicU64::new(0),
            }),
        })
    }

    /// The trees of the open database, or an `Io` error while it is being reopened. While a
    /// compaction copies the database, this waits for it (up to [`COMPACTION_WAIT`]), so a
    /// turn captured meanwhile is stored in the new copy instead of being dropped.
    pub fn trees(&self) -> Result<Arc<Trees>, StorageError> {
        let deadline = Instant::now() + COMPACTION_WAIT;
        loop {
            let current = self
                .shared
                .slot
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if current.is_some()
                || !self.shared.compacting.load(Ordering::SeqCst)
                || Instant::now() >= deadline
            {
                return Self::opened(current);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn opened(slot: Option<Arc<Trees>>) -> Result<Arc<Trees>, StorageError> {
        slot.ok_or_else(|| {
            StorageError::new(
                StorageErrorKind::Io,
                "the database is closed while it is reopened after a write failure; try again in a moment",
            )
        })
    }

    /// What the last check found.
    pub fn health(&self) -> StoreHealth {
        self.shared
            .health
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// How often the database was reopened; a caller holding state derived from storage
    /// re-reads it when this changes.
    pub fn generation(&self) -> u64 {
        self.shared.generation.load(Ordering::SeqCst)
    }

    /// Checks that writes reach the disk (a flush); after a failure, reopens the database once
    /// the disk has room again. Blocks (a flush, possibly a reopen): call it off the HTTP
    /// executor. Returns what it found.
    pub fn check(&self) -> StoreHealth {
        let Ok(_only_one) = self.shared.reopening.try_lock() else {
            return self.health();
        };
        let flushed = self.trees().and_then(|trees| self.flush_within(trees));
        match flushed {
            Ok(()) => {
                let mut health = self.lock_health();
                if !health.ok {
                    // Writes work again without a reopen (a failure that did not latch).
                    *health = recovered(&health);
                }
            }
            Err(err) => {
                self.mark_failing(&err);
                // A hung flush holds the database (and its lock): reopening cannot work, and
                // the health says to restart. A failed one has latched: reopen once there is room.
                if !self.shared.probe_pending.load(Ordering::SeqCst) && has_room(&self.shared.dir) {
                    self.reopen();
                }
            }
        }
        self.health()
    }

    /// Flushes on a probe thread and waits at most [`FLUSH_DEADLINE`]: sled can block a flush
    /// for good after a failed write of a large value. While a probe hangs no other starts.
    fn flush_within(&self, trees: Arc<Trees>) -> Result<(), StorageError> {
        if self.shared.probe_pending.swap(true, Ordering::SeqCst) {
            return Err(hung());
        }
        let (send, receive) = std::sync::mpsc::channel();
        let shared = Arc::clone(&self.shared);
        let spawned = std::thread::Builder::new()
            .name("lore-flush-probe".into())
            .spawn(move || {
                let result = trees.db.flush().map(|_| ()).map_err(StorageError::from);
                drop(trees);
                shared.probe_pending.store(false, Ordering::SeqCst);
                let _ = send.send(result);
            });
        if let Err(err) = spawned {
            self.shared.probe_pending.store(false, Ordering::SeqCst);
            return Err(StorageError::new(
                StorageErrorKind::Io,
                format!("cannot start the flush probe: {err}"),
            ));
        }
        receive
            .recv_timeout(FLUSH_DEADLINE)
            .unwrap_or_else(|_| Err(hung()))
    }

    fn lock_health(&self) -> std::sync::MutexGuard<'_, StoreHealth> {
        self.shared.health.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn mark_failing(&self, err: &StorageError) {
        let mut health = self.lock_health();
        let kind = match err.kind {
            StorageErrorKind::Full => "full",
            _ if self.trees().is_err() => "closed",
            _ if self.shared.probe_pending.load(Ordering::SeqCst) => "hung",
            _ => "io",
        };
        if health.ok {
            tracing::error!(error = %err, "storage writes fail; requests still pass, capture is off until this is fixed");
        }
        health.ok = false;
        health.kind = Some(kind.to_string());
        health.problem = Some(match err.kind {
            StorageErrorKind::Full => format!(
                "{err} (capture resumes by itself once {} MB are free)",
                SPACE_NEEDED / (1024 * 1024)
            ),
            _ => err.message.clone(),
        });
        health.failing_since_ms.get_or_insert_with(now_ms);
    }

    /// Drops the open database, waits for sled to release its lock, and opens it again.
    fn reopen(&self) {
        let old = self
            .shared
            .slot
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let deadline = Instant::now() + REOPEN_WAIT;
        if let Some(old) = old {
            // Operations running now hold a clone for a moment.
            while Arc::strong_count(&old) > 1 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            drop(old);
        }
        loop {
            match open_trees(&self.shared.dir) {
                Ok(trees) => {
                    *self.shared.slot.write().unwrap_or_else(|e| e.into_inner()) =
                        Some(Arc::new(trees));
                    self.shared.generation.fetch_add(1, Ordering::SeqCst);
                    let mut health = self.lock_health();
                    *health = recovered(&health);
                    tracing::info!(
                        recoveries = health.recoveries,
                        "storage reopened after a write failure; capture resumed"
                    );
                    return;
                }
                // sled's flusher lets go of the lock a moment after the last handle drops.
                Err(err) if err.kind == StorageErrorKind::Locked && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(err) => {
                    tracing::warn!(error = %err, "reopening the storage failed; trying again later");
                    self.mark_failing(&err);
                    return;
                }
            }
        }
    }
}

impl DbHandle {
    /// Rewrites the database into a fresh directory and swaps it in, so the space of deleted
    /// records is given back to the file system (sled reuses freed space but never shrinks its
    /// file). Operations wait for it (see [`DbHandle::trees`]); the copy starts once those that
    /// held the old database are done. Returns the bytes on disk before and after. A crash
    /// midway is finished or undone by the next open.
    pub fn compact(&self) -> Result<(u64, u64), StorageError> {
        let _only_one = self
            .shared
            .reopening
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let dir = self.shared.dir.clone();
        let before = dir_bytes(&dir);
        let _compacting = Compacting::start(&self.shared.compacting);
        let old = self
            .shared
            .slot
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| StorageError::new(StorageErrorKind::Io, "the database is closed"))?;
        // Operations that took the database before it left its slot finish first: a write
        // into the old copy after the copy read its tree would be lost.
        let deadline = Instant::now() + REOPEN_WAIT;
        while Arc::strong_count(&old) > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let fresh = sibling(&dir, "compacting");
        let copied = copy_database(&old.db, &fresh);
        if let Err(err) = copied {
            let _ = std::fs::remove_dir_all(&fresh);
            *self.shared.slot.write().unwrap_or_else(|e| e.into_inner()) = Some(old);
            return Err(err);
        }
        let deadline = Instant::now() + REOPEN_WAIT;
        while Arc::strong_count(&old) > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(old);
        let retired = sibling(&dir, "retired");
        let swapped = std::fs::rename(&dir, &retired).and_then(|()| std::fs::rename(&fresh, &dir));
        if let Err(err) = swapped {
            tracing::warn!(error = %err, "compaction could not swap the database in; keeping the old one");
            finish_compaction(&dir);
        }
        loop {
            match open_trees(&dir) {
                Ok(trees) => {
                    *self.shared.slot.write().unwrap_or_else(|e| e.into_inner()) =
                        Some(Arc::new(trees));
                    self.shared.generation.fetch_add(1, Ordering::SeqCst);
                    break;
                }
                Err(err) if err.kind == StorageErrorKind::Locked && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(err) => return Err(err),
            }
        }
        let _ = std::fs::remove_dir_all(&retired);
        Ok((before, dir_bytes(&dir)))
    }

    /// Bytes the database's files take on disk.
    pub fn disk_bytes(&self) -> u64 {
        dir_bytes(&self.shared.dir)
    }
}

/// Marks a compaction running for as long as it lives.
struct Compacting<'a>(&'a std::sync::atomic::AtomicBool);

impl<'a> Compacting<'a> {
    fn start(flag: &'a std::sync::atomic::AtomicBool) -> Self {
        flag.store(true, Ordering::SeqCst);
        Self(flag)
    }
}

impl Drop for Compacting<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Marker written into a finished copy before it is swapped in.
const COPY_DONE: &str = "lore-compaction-complete";

/// `<dir>.<suffix>` beside `dir`.
fn sibling(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = dir
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(format!(".{suffix}"));
    dir.with_file_name(name)
}

/// Copies every tree of `from` into a new database at `to`, flushed, with the done marker.
fn copy_database(from: &sled::Db, to: &Path) -> Result<(), StorageError> {
    let _ = std::fs::remove_dir_all(to);
    let target = sled::Config::new()
        .path(to)
        .cache_capacity(CACHE_CAPACITY_BYTES)
        .flush_every_ms(None)
        .open()?;
    for name in from.tree_names() {
        let source = from.open_tree(&name)?;
        let sink = target.open_tree(&name)?;
        let mut batch = sled::Batch::default();
        let mut pending = 0usize;
        for item in source.iter() {
            let (key, value) = item?;
            batch.insert(key, value);
            pending += 1;
            if pending == 1000 {
                sink.apply_batch(std::mem::take(&mut batch))?;
                pending = 0;
            }
        }
        sink.apply_batch(batch)?;
    }
    target.flush()?;
    drop(target);
    std::fs::write(to.join(COPY_DONE), b"")
        .map_err(|err| StorageError::new(StorageErrorKind::Io, format!("compaction marker: {err}")))
}

/// After a crash during a compaction: a finished copy replaces a missing database, otherwise
/// the retired original goes back; leftovers are removed.
fn finish_compaction(dir: &Path) {
    let fresh = sibling(dir, "compacting");
    let retired = sibling(dir, "retired");
    if !dir.exists() {
        if fresh.join(COPY_DONE).exists() {
            let _ = std::fs::rename(&fresh, dir);
        } else if retired.exists() {
            let _ = std::fs::rename(&retired, dir);
        }
    }
    if dir.exists() {
        let _ = std::fs::remove_dir_all(&fresh);
        let _ = std::fs::remove_dir_all(&retired);
    }
}

/// Sum of the file sizes under `dir`.
pub(crate) fn dir_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&path) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => stack.push(entry.path()),
                Ok(meta) => total += meta.len(),
                Err(_) => {}
            }
        }
    }
    total
}

/// The error of a flush that did not finish in time.
fn hung() -> StorageError {
    StorageError::new(
        StorageErrorKind::Io,
        format!(
            "writes do not reach the disk (a flush did not finish within {} s); if the disk was full, free space and restart the gateway (`lore stop`, `lore start`)",
            FLUSH_DEADLINE.as_secs()
        ),
    )
}

/// The health after a successful recovery from `before`.
fn recovered(before: &StoreHealth) -> StoreHealth {
    StoreHealth {
        ok: true,
        problem: None,
        kind: None,
        failing_since_ms: None,
        recoveries: before.recoveries + 1,
        last_recovery_ms: Some(now_ms()),
    }
}

/// True when [`SPACE_NEEDED`] bytes can be written and synced in `dir`.
fn has_room(dir: &Path) -> bool {
    use std::io::Write as _;
    let probe = dir.join(".space-probe");
    let written = std::fs::File::create(&probe).and_then(|mut file| {
        file.write_all(&vec![0u8; SPACE_NEEDED])?;
        file.sync_all()
    });
    let _ = std::fs::remove_file(&probe);
    written.is_ok()
}

/// Opens sled under `dir`, checks the schema and opens the trees.
fn open_trees(dir: &Path) -> Result<Trees, StorageError> {
    let db = sled::Config::new()
        .path(dir)
        .cache_capacity(CACHE_CAPACITY_BYTES)
        .flush_every_ms(Some(FLUSH_EVERY_MS))
        .open()
        .map_err(|err| {
            let mut error = StorageError::from(err);
            error.message = format!("cannot open {}: {}", dir.display(), error.message);
            if error.kind == StorageErrorKind::Corrupt || error.kind == StorageErrorKind::Io {
                error.message.push_str(&format!(
                    "; see `lore doctor`, and \"Recovering a damaged database\" in the README (move {} aside and start again; `lore reindex` rebuilds the index)",
                    dir.display()
                ));
            }
            error
        })?;
    let meta = db.open_tree("meta")?;
    match meta.get("schema")? {
        None => {
            meta.insert("schema", &SCHEMA_VERSION.to_be_bytes())?;
        }
        Some(raw) => {
            let found = <[u8; 8]>::try_from(raw.as_ref())
                .map(u64::from_be_bytes)
                .unwrap_or(0);
            if found > SCHEMA_VERSION {
                return Err(StorageError::new(
                    StorageErrorKind::Corrupt,
                    format!(
                        "{} was written by a newer lore (schema {found}, this build reads {SCHEMA_VERSION}); upgrade lore",
                        dir.display()
                    ),
                ));
            }
        }
    }
    Ok(Trees {
        sessions: db.open_tree("sessions")?,
        messages: db.open_tree("messages")?,
        session_index: db.open_tree("session_index")?,
        vectors: db.open_tree("vectors")?,
        meta,
        db,
    })
}
