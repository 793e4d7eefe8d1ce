//! The overview: what Lore holds (projects, sessions live and stored, messages, knowledge,
//! entities, observation logs, cards), today's spend and savings (the cost tracker's report,
//! [`super::costs::today`]), the health of its parts
//! (embeddings, memory workers, search index, card book, disk use of the data directory) and
//! the latest warnings and errors it logged (`GET /api/v1/overview`; `GET /api/v1/stats` is
//! the numbers alone).

use std::path::Path;

use lore_actors::ObserveRegistry;
use lore_storage::memory::day_of;
use lore_storage::now_ms;
use serde::Serialize;
use serde_json::{Value, json};

use super::costs::{TodayCosts, today};
use super::error::{ApiError, blocking};
use super::projects::{ProjectRow, list as project_list};
use crate::recent_errors::{LoggedEvent, latest};
use crate::server::AppState;

/// Projects shown on the overview.
const PROJECTS_SHOWN: usize = 10;
/// Log events shown on the overview.
const ERRORS_SHOWN: usize = 10;

/// The numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Projects with a session or knowledge.
    pub projects: usize,
    /// Stored sessions.
    pub sessions: usize,
    /// Sessions with a running actor.
    pub live_sessions: usize,
    /// Stored messages (every session's whole log, forked-off ones included).
    pub messages: usize,
    /// Live knowledge entries.
    pub knowledge: usize,
    /// Entities.
    pub entities: usize,
    /// Observation logs and consolidations.
    pub distillations: usize,
    /// Cards the book loaded.
    pub cards: usize,
    /// Worker calls today (UTC).
    pub worker_calls_today: u64,
    /// Worker spend today (UTC), US dollars.
    pub worker_cost_today_usd: f64,
    /// Today's spend and savings, every bucket.
    pub today: TodayCosts,
}

/// How each part is doing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Health {
    /// Version of this build.
    pub version: &'static str,
    /// Since start.
    pub uptime_ms: u64,
    /// The embedding model's state.
    pub embeddings: Value,
    /// The memory workers (`null` counters when they are off).
    pub memory: Value,
    /// The search index.
    pub index: Value,
    /// The card book.
    pub cards: Value,
    /// Disk use of the data directory.
    pub disk: Value,
}

/// The overview page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overview {
    /// The numbers.
    pub stats: Stats,
    /// The most recently active projects.
    pub projects: Vec<ProjectRow>,
    /// Projects in all.
    pub projects_total: usize,
    /// How each part is doing.
    pub health: Health,
    /// The latest warnings and errors, newest first.
    pub errors: Vec<LoggedEvent>,
}

/// Bytes of every file under `dir`.
pub fn disk_use(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => disk_use(&entry.path()),
            Ok(_) => entry.metadata().map(|m| m.len()).unwrap_or(0),
            Err(_) => 0,
        })
        .sum()
}

struct Stored {
    stats: Stats,
    projects: Vec<ProjectRow>,
    disk: Value,
}

fn stored(state: &AppState) -> Result<Stored, ApiError> {
    let store = &state.store;
    let sessions = store.session_summaries()?;
    let knowledge = store.all_knowledge()?;
    let projects = project_list(&sessions, &knowledge);
    let today = day_of(now_ms());
    let (mut calls, mut cost) = (0, 0.0);
    for (day, _, totals) in store.worker_usage()? {
        if day == today {
            calls += totals.calls;
            cost += totals.cost_usd;
        }
    }
    let data_dir = &state.config.data_dir;
    let db = disk_use(&data_dir.join("db"));
    let index = disk_use(&data_dir.join("index"));
    Ok(Stored {
        stats: Stats {
            projects: projects.len(),
            sessions: sessions.len(),
            live_sessions: 0,
            messages: sessions.iter().map(|s| s.next_seq as usize).sum(),
            knowledge: knowledge.iter().filter(|k| !k.deleted).count(),
            entities: store.all_entities()?.len(),
            distillations: store.distillation_count()?,
            cards: state
                .cards
                .as_ref()
                .map_or(0, |l| l.current().snapshot.cards.len()),
            worker_calls_today: calls,
            worker_cost_today_usd: cost,
            today: TodayCosts::default(),
        },
        projects,
        disk: json!({
            "data_dir": data_dir.display().to_string(),
            "bytes": disk_use(data_dir),
            "db_bytes": db,
            "index_bytes": index,
        }),
    })
}

/// The numbers alone.
pub async fn stats(state: &actix_web::web::Data<AppState>) -> Result<Stats, ApiError> {
    let inner = state.clone();
    let mut stored = blocking(move || stored(&inner)).await?;
    stored.stats.live_sessions = live_sessions(state).await;
    stored.stats.today = today(state).await;
    Ok(stored.stats)
}

async fn live_sessions(state: &AppState) -> usize {
    state
        .registry
        .send(ObserveRegistry)
        .await
        .map(|c| c.live_sessions)
        .unwrap_or(0)
}

/// The whole overview.
pub async fn load(state: &actix_web::web::Data<AppState>) -> Result<Overview, ApiError> {
    let inner = state.clone();
    let mut stored = blocking(move || stored(&inner)).await?;
    stored.stats.live_sessions = live_sessions(state).await;
    stored.stats.today = today(state).await;
    let (distiller, curator) = crate::api::memory_counters(state).await;
    let index = match &state.index {
        Some(index) => json!({"available": true, "documents": index.num_docs()}),
        None => {
            json!({"available": false, "detail": "the search index could not be opened; see the log, then run `lore reindex`"})
        }
    };
    let cards = match &state.cards {
        Some(library) => {
            let book = library.current();
            json!({
                "on": true,
                "vault": state.config.cards_vault.as_ref().map(|p| p.display().to_string()),
                "loaded": book.cards.len(),
                "problems": book.snapshot.problems.len(),
            })
        }
        None => json!({"on": false}),
    };
    let projects_total = stored.projects.len();
    stored.projects.truncate(PROJECTS_SHOWN);
    let mut errors = latest();
    errors.truncate(ERRORS_SHOWN);
    Ok(Overview {
        stats: stored.stats,
        projects: stored.projects,
        projects_total,
        health: Health {
            version: env!("CARGO_PKG_VERSION"),
            uptime_ms: state.started_at.elapsed().as_millis() as u64,
            embeddings: serde_json::to_value(state.embeddings.handle().status())
                .unwrap_or(Value::Null),
            memory: json!({
                "on": state.memory.is_some(),
                "distiller": distiller,
                "curator": curator,
            }),
            index,
            cards,
            disk: stored.disk,
        },
        errors,
    })
}
