//! `Pruner`: retention and the size cap. Every `interval` it deletes the raw data (records,
//! messages, identity entries, message vectors and index documents) of sessions untouched for
//! longer than the retention, and, while the data directory is over its size cap, of the oldest
//! sessions too; distillations, knowledge and entities stay. Sessions active within
//! `keep_recent` are never touched (their actors may still be writing). After deleting it
//! compacts the database so the space is given back; over the cap with nothing to prune it
//! compacts anyway (sled's file holds every rewrite of a session record until it cleans). It runs on its own low-priority arbiter,
//! never on the request path; what it did is published in [`PrunerCounters`].

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix::prelude::*;
use lore_storage::{SearchIndex, Store, disk_usage, now_ms};
use serde::Serialize;
use tracing::{info, warn};

/// When and how much to prune.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetentionSettings {
    /// Raw data of sessions quiet for longer goes (`None`: kept forever).
    pub retention: Option<Duration>,
    /// Size cap of the data directory's database and index, in bytes (`None`: no cap).
    pub max_bytes: Option<u64>,
    /// Time between passes.
    pub interval: Duration,
    /// Sessions active more recently are never pruned.
    pub keep_recent: Duration,
}

/// What the pruner has done.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PrunerCounters {
    /// Passes run.
    pub runs: u64,
    /// Sessions whose raw data was deleted.
    pub sessions_pruned: u64,
    /// Messages deleted with them.
    pub messages_pruned: u64,
    /// Compactions run.
    pub compactions: u64,
    /// Bytes of the database and index before and after the last pass that pruned.
    pub bytes_before: u64,
    /// See `bytes_before`.
    pub bytes_after: u64,
    /// Bytes at the end of the last pass.
    pub bytes_now: u64,
    /// The cap was still exceeded after the last pass (only recent sessions were left).
    pub over_cap: bool,
    /// The latest failure.
    pub last_error: Option<String>,
}

/// The pruner actor.
pub struct Pruner {
    store: Store,
    index: Option<Arc<SearchIndex>>,
    db_dir: PathBuf,
    index_dir: PathBuf,
    settings: RetentionSettings,
    counters: Arc<RwLock<PrunerCounters>>,
}

impl Pruner {
    /// A pruner of `store` (under `data_dir/db`) and its index (`data_dir/index`).
    pub fn new(
        store: Store,
        index: Option<Arc<SearchIndex>>,
        data_dir: PathBuf,
        settings: RetentionSettings,
    ) -> Self {
        Self {
            store,
            index,
            db_dir: data_dir.join("db"),
            index_dir: data_dir.join("index"),
            settings,
            counters: Arc::default(),
        }
    }

    /// Where the counters are published.
    pub fn counters(&self) -> Arc<RwLock<PrunerCounters>> {
        Arc::clone(&self.counters)
    }

    fn bytes(&self) -> u64 {
        disk_usage(&self.db_dir) + disk_usage(&self.index_dir)
    }

    fn publish(&self, update: impl FnOnce(&mut PrunerCounters)) {
        let mut counters = self.counters.write().unwrap_or_else(|e| e.into_inner());
        update(&mut counters);
    }

    /// One pass.
    pub fn run(&mut self) {
        if let Err(err) = self.pass() {
            warn!(error = %err, "pruning failed; trying again at the next pass");
            self.publish(|c| c.last_error = Some(err));
        }
    }

    fn pass(&mut self) -> Result<(), String> {
        let now = now_ms();
        let recent_after = now.saturating_sub(self.settings.keep_recent.as_millis() as u64);
        let mut sessions = self.store.list_sessions().map_err(|e| e.to_string())?;
        sessions.reverse(); // oldest first
        let mut victims: Vec<String> = Vec::new();
        let mut victim_messages = 0u64;
        if let Some(retention) = self.settings.retention {
            let cutoff = now.saturating_sub(retention.as_millis() as u64);
            for session in sessions
                .iter()
                .filter(|s| s.updated_at_ms < cutoff.min(recent_after))
            {
                victims.push(session.id.clone());
                victim_messages += session.next_seq;
            }
        }
        let bytes = self.bytes();
        let mut over_cap = false;
        if let Some(cap) = self.settings.max_bytes
            && bytes > cap
        {
            // Prune down to 90 % of the cap, estimating each message's share of the database.
            let messages = self
                .store
                .message_count()
                .map_err(|e| e.to_string())?
                .max(1);
            let per_message = (disk_usage(&self.db_dir) / messages).max(1);
            let excess = bytes - cap / 10 * 9;
            let mut freed = victim_messages * per_message;
            for session in &sessions {
                if freed >= excess {
                    break;
                }
                if session.updated_at_ms >= recent_after || victims.contains(&session.id) {
                    continue;
                }
                victims.push(session.id.clone());
                freed += session.next_seq.max(1) * per_message;
            }
            over_cap = freed < excess;
        }
        if victims.is_empty() {
            // Over the cap with nothing old enough to prune: much of sled's file can still be
            // garbage (every turn rewrites its session record), which a compaction returns.
            let over = self.settings.max_bytes.is_some_and(|cap| bytes > cap);
            let compacted = if over {
                Some(self.store.compact().map_err(|e| e.to_string()))
            } else {
                None
            };
            let after = self.bytes();
            self.publish(|c| {
                c.runs += 1;
                c.bytes_now = after;
                c.over_cap = self.settings.max_bytes.is_some_and(|cap| after > cap);
                if let Some(result) = &compacted {
                    c.compactions += u64::from(result.is_ok());
                    c.bytes_before = bytes;
                    c.bytes_after = after;
                    if let Err(err) = result {
                        c.last_error = Some(err.clone());
                    }
                }
            });
            return compacted.map_or(Ok(()), |result| result.map(|_| ()));
        }
        let pruned = self
            .store
            .prune_sessions(&victims)
            .map_err(|e| e.to_string())?;
        if let Some(index) = &self.index {
            index
                .remove_session_messages(&victims)
                .and_then(|()| index.commit())
                .map_err(|e| e.to_string())?;
        }
        let compacted = self.store.compact().map_err(|e| e.to_string());
        let after = self.bytes();
        info!(
            sessions = pruned.sessions,
            messages = pruned.messages,
            bytes_before = bytes,
            bytes_after = after,
            "pruned old conversations (distillations and knowledge kept)"
        );
        if over_cap {
            warn!(
                bytes = after,
                "the data directory is over LORE_MAX_STORAGE_MB but every remaining session is recent"
            );
        }
        self.publish(|c| {
            c.runs += 1;
            c.sessions_pruned += pruned.sessions;
            c.messages_pruned += pruned.messages;
            c.compactions += u64::from(compacted.is_ok());
            c.bytes_before = bytes;
            c.bytes_after = after;
            c.bytes_now = after;
            c.over_cap = over_cap;
            if let Err(err) = &compacted {
                c.last_error = Some(err.clone());
            }
        });
        compacted.map(|_| ())
    }
}

impl Actor for Pruner {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(self.settings.interval, |pruner, _| pruner.run());
    }
}
