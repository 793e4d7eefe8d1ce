//! The watchdog: once a second it checks that storage takes writes (recovering it after a full
//! disk, see `lore_storage::Store::check_health`) and that every actor answers a heartbeat
//! (`Observe`) within [`HEARTBEAT_DEADLINE`]; `/health` reports what it found. It runs on the
//! main arbiter; the storage check runs on the blocking pool.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use actix::Addr;
use lore_actors::SessionRegistry;
use lore_actors::indexer::Indexer;
use lore_storage::{Store, StoreHealth};
use serde::Serialize;
use tracing::warn;

use crate::embeddings::Embeddings;
use crate::memory::MemoryWorkers;

/// How often the watchdog looks.
pub const INTERVAL: Duration = Duration::from_secs(1);
/// Longest an actor may take to answer a heartbeat before it counts as stuck.
pub const HEARTBEAT_DEADLINE: Duration = Duration::from_secs(2);

/// What one actor's last heartbeat said.
#[derive(Debug, Clone, Serialize)]
pub struct ActorHealth {
    /// Answered the last heartbeat in time.
    pub ok: bool,
    /// Since when it has not answered (ms of uptime), while stuck.
    pub stuck_for_ms: Option<u64>,
    /// What is wrong, while not ok.
    pub problem: Option<String>,
}

/// What the watchdog knows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WatchReport {
    /// The storage check.
    pub storage: StoreHealth,
    /// Each actor's heartbeat, by name.
    pub actors: BTreeMap<&'static str, ActorHealth>,
}

impl WatchReport {
    /// True when storage takes writes and every actor answers.
    pub fn healthy(&self) -> bool {
        self.storage.ok && self.actors.values().all(|actor| actor.ok)
    }
}

/// The actors it watches.
pub struct Watched {
    /// Storage.
    pub store: Store,
    /// The session registry.
    pub registry: Addr<SessionRegistry>,
    /// The index writer.
    pub indexer: Option<Addr<Indexer>>,
    /// The embeddings (the vectorizer once loaded).
    pub embeddings: Embeddings,
    /// The memory workers.
    pub memory: Option<MemoryWorkers>,
}

/// The shared report, written by the watchdog and read by `/health`.
#[derive(Clone, Default)]
pub struct Watchdog {
    report: Arc<RwLock<WatchReport>>,
}

impl Watchdog {
    /// Starts watching; must run inside the actix system.
    pub fn start(watched: Watched) -> Self {
        let watchdog = Self::default();
        let report = Arc::clone(&watchdog.report);
        if let Ok(mut slot) = report.write() {
            slot.storage = watched.store.health();
        }
        actix_rt::spawn(async move {
            let mut since: BTreeMap<&'static str, Instant> = BTreeMap::new();
            loop {
                actix_rt::time::sleep(INTERVAL).await;
                let store = watched.store.clone();
                let storage = actix_web::web::block(move || store.check_health())
                    .await
                    .unwrap_or_else(|_| watched.store.health());
                let beats = heartbeats(&watched).await;
                let mut actors = BTreeMap::new();
                for (name, problem) in beats {
                    let health = match problem {
                        None => {
                            since.remove(name);
                            ActorHealth {
                                ok: true,
                                stuck_for_ms: None,
                                problem: None,
                            }
                        }
                        Some(problem) => {
                            let first = *since.entry(name).or_insert_with(Instant::now);
                            if first.elapsed() < INTERVAL {
                                warn!(actor = name, %problem, "actor stuck");
                            }
                            ActorHealth {
                                ok: false,
                                stuck_for_ms: Some(first.elapsed().as_millis() as u64),
                                problem: Some(problem),
                            }
                        }
                    };
                    actors.insert(name, health);
                }
                if let Ok(mut slot) = report.write() {
                    *slot = WatchReport { storage, actors };
                }
            }
        });
        watchdog
    }

    /// The latest report.
    pub fn report(&self) -> WatchReport {
        match self.report.read() {
            Ok(report) => report.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }
}

/// Sends each actor a heartbeat; `None` for an answer in time, else what went wrong.
async fn heartbeats(watched: &Watched) -> Vec<(&'static str, Option<String>)> {
    let mut out = Vec::new();
    out.push((
        "session_registry",
        beat(watched.registry.send(lore_actors::ObserveRegistry))
            .await
            .err(),
    ));
    if let Some(indexer) = &watched.indexer {
        out.push((
            "indexer",
            beat(indexer.send(lore_actors::indexer::Observe))
                .await
                .err(),
        ));
    }
    if let Some(vectorizer) = watched.embeddings.vectorizer() {
        let answer = beat(vectorizer.send(lore_actors::vectorizer::Observe)).await;
        let problem = match answer {
            Err(problem) => Some(problem),
            // The actor answers while its embedding call waits: a call past its deadline
            // means the embedder itself is stuck.
            Ok(counters)
                if counters.busy_ms
                    > lore_actors::vectorizer::EMBED_DEADLINE.as_millis() as u64 =>
            {
                Some(format!(
                    "an embedding call has run for {} ms (the embedder is hung; recall uses BM25)",
                    counters.busy_ms
                ))
            }
            Ok(_) => None,
        };
        out.push(("vectorizer", problem));
    }
    if let Some(memory) = &watched.memory {
        out.push((
            "distiller",
            beat(memory.distiller.send(lore_actors::distiller::Observe))
                .await
                .err(),
        ));
        out.push((
            "curator",
            beat(memory.curator.send(lore_actors::curator::Observe))
                .await
                .err(),
        ));
    }
    out
}

/// Waits for one heartbeat answer at most [`HEARTBEAT_DEADLINE`].
async fn beat<T>(
    answer: impl std::future::Future<Output = Result<T, actix::MailboxError>>,
) -> Result<T, String> {
    match actix_rt::time::timeout(HEARTBEAT_DEADLINE, answer).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(format!("its mailbox is closed: {err}")),
        Err(_) => Err(format!(
            "did not answer a heartbeat within {} ms",
            HEARTBEAT_DEADLINE.as_millis()
        )),
    }
}
