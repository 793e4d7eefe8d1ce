//! The dedupe ledger of `lore hook`: which cards were injected into which Claude Code session,
//! at which prompt.
//!
//! Stored at `<vault>/.lore/hook-ledger.json`, rewritten atomically under an exclusive lock on
//! the sibling `hook-ledger.json.lock`. Every prompt of a session advances its counter (not only
//! prompts with hits), and a card injected at prompt `n` is held back for the next
//! [`REINJECT_AFTER`] prompts. At most [`MAX_SESSIONS`] sessions are kept, least recently seen
//! dropped first. Only session ids, card keys and counters are stored, never prompt text.

use std::collections::BTreeMap;
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lore_storage::now_ms;
use lore_storage::vault::write_atomic;
use serde::{Deserialize, Serialize};

/// Prompts after an injection during which the same card is not injected again.
pub(crate) const REINJECT_AFTER: u64 = 6;
/// Most sessions remembered.
pub(crate) const MAX_SESSIONS: usize = 500;
/// How long to wait for another hook holding the lock.
const LOCK_WAIT: Duration = Duration::from_secs(3);

/// One session's state.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Session {
    /// Prompts seen so far (the current prompt included once [`Ledger::begin`] ran).
    prompts: u64,
    /// Last time the session was seen, milliseconds since the epoch.
    seen_ms: u64,
    /// Card key → the prompt it was last injected at.
    cards: BTreeMap<String, u64>,
}

/// The whole file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct State {
    sessions: BTreeMap<String, Session>,
}

impl State {
    /// Drops the least recently seen sessions until at most `max` remain.
    fn prune(&mut self, max: usize) {
        if self.sessions.len() <= max {
            return;
        }
        let mut by_age: Vec<(u64, String)> = self
            .sessions
            .iter()
            .map(|(id, s)| (s.seen_ms, id.clone()))
            .collect();
        by_age.sort();
        let excess = self.sessions.len() - max;
        for (_, id) in by_age.into_iter().take(excess) {
            self.sessions.remove(&id);
        }
    }
}

/// The ledger, read and locked for one prompt. Dropping it releases the lock.
pub(crate) struct Ledger {
    path: PathBuf,
    state: State,
    session: String,
    _lock: File,
}

impl Ledger {
    /// Locks and reads the ledger of the vault at `root`, then counts one prompt of `session`.
    /// A missing or corrupt file starts empty.
    pub(crate) fn begin(root: &Path, session: &str) -> anyhow::Result<Ledger> {
        let folder = root.join(".lore");
        std::fs::create_dir_all(&folder)?;
        let path = folder.join("hook-ledger.json");
        let lock = lock(&folder.join("hook-ledger.json.lock"))?;
        let state = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<State>(&bytes).ok())
            .unwrap_or_default();
        let mut ledger = Ledger {
            path,
            state,
            session: session.to_owned(),
            _lock: lock,
        };
        let entry = ledger
            .state
            .sessions
            .entry(ledger.session.clone())
            .or_default();
        entry.prompts += 1;
        entry.seen_ms = now_ms();
        Ok(ledger)
    }

    fn current(&self) -> Option<&Session> {
        self.state.sessions.get(&self.session)
    }

    /// Keys injected into this session within the last [`REINJECT_AFTER`] prompts.
    pub(crate) fn recent(&self) -> Vec<String> {
        let Some(session) = self.current() else {
            return Vec::new();
        };
        session
            .cards
            .iter()
            .filter(|(_, at)| session.prompts.saturating_sub(**at) <= REINJECT_AFTER)
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// Records the keys injected at the current prompt, prunes, and writes the file.
    pub(crate) fn commit(mut self, injected: &[String]) -> anyhow::Result<()> {
        if let Some(session) = self.state.sessions.get_mut(&self.session) {
            let now = session.prompts;
            for key in injected {
                session.cards.insert(key.clone(), now);
            }
            session
                .cards
                .retain(|_, at| now.saturating_sub(*at) <= REINJECT_AFTER);
        }
        self.state.prune(MAX_SESSIONS);
        let bytes = serde_json::to_vec(&self.state)?;
        write_atomic(&self.path, &bytes).map_err(|err| anyhow::anyhow!("{err}"))
    }
}

/// Takes an exclusive lock on `path`, waiting up to [`LOCK_WAIT`].
fn lock(path: &Path) -> anyhow::Result<File> {
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    let start = Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(TryLockError::WouldBlock) if start.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(TryLockError::WouldBlock) => {
                anyhow::bail!("the dedupe ledger stayed locked for {LOCK_WAIT:?}")
            }
            Err(TryLockError::Error(err)) => return Err(err.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_sessions_go_first() {
        let mut state = State::default();
        for n in 0..(MAX_SESSIONS as u64 + 3) {
            let session = Session {
                seen_ms: 1_000 + n,
                ..Session::default()
            };
            state.sessions.insert(format!("s{n}"), session);
        }
        state.prune(MAX_SESSIONS);
        assert_eq!(state.sessions.len(), MAX_SESSIONS);
        assert!(!state.sessions.contains_key("s0") && !state.sessions.contains_key("s2"));
        assert!(state.sessions.contains_key("s3"));
    }

    #[test]
    fn every_prompt_counts_and_a_card_waits_six_prompts() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::begin(dir.path(), "s").unwrap();
        assert!(ledger.recent().is_empty());
        ledger.commit(&["Priya".to_owned()]).unwrap();
        for _ in 0..REINJECT_AFTER {
            let ledger = Ledger::begin(dir.path(), "s").unwrap();
            assert_eq!(ledger.recent(), vec!["Priya".to_owned()]);
            ledger.commit(&[]).unwrap();
        }
        let ledger = Ledger::begin(dir.path(), "s").unwrap();
        assert!(ledger.recent().is_empty());
        drop(ledger);
        assert!(
            Ledger::begin(dir.path(), "other").is_ok(),
            "the lock was released"
        );
    }
}
