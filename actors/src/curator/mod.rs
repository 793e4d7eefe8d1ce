//! `Curator`: turns a session's new observations into long-term knowledge (create, update,
//! delete in five categories, per project or cross-project) and keeps the entity graph.
//!
//! The Distiller asks it ([`Curate`]) after a session's observations were written, on idle or
//! after enough turns. It shows the model the entries it may update, the known entities and
//! the observations not curated yet, reads the JSON reply leniently ([`parse`]), and applies
//! each operation through [`crate::knowledge`], where near-duplicate titles become updates;
//! with embeddings ready, a new entry within cosine 0.935 of an entry of the same project
//! (0.88 for preferences) updates it too. A reply that cannot be read changes nothing and the
//! observations are offered again later.
//!
//! - [`prompt`]: instructions and user message. [`parse`]: JSON repair and operation checks.
//! - [`apply`]: operations and entities into storage and the index.

pub mod apply;
pub mod parse;
pub mod prompt;

use std::rc::Rc;
use std::sync::Arc;

use actix::prelude::*;
use lore_storage::Store;
use lore_storage::memory::WorkerBucket;
use serde::Serialize;
use tracing::{info, warn};

use crate::ActorError;
use crate::costs::CostTrackerHandle;
use crate::distiller::MemorySettings;
use crate::distiller::job::{Job, Stop};
use crate::embedder::EmbedderHandle;
use crate::indexer::Indexer;
use crate::worker::{ActivityBoard, WorkerClient, WorkerRoute};
use apply::Applied;

/// Output limit of a curator call.
const CURATOR_MAX_TOKENS: u32 = 4_096;
/// Most observation text shown in one curation (about 12,000 tokens); the rest waits for the
/// next one.
const BATCH_CHARS: usize = 36_000;

/// Curates a session's observations that were not curated yet.
#[derive(Message)]
#[rtype(result = "Result<Applied, Stop>")]
pub struct Curate {
    /// The session.
    pub session_id: String,
    /// Where its worker calls go.
    pub route: Arc<WorkerRoute>,
    /// True after repeated failures: an unreadable reply is given up, not retried.
    pub give_up: bool,
}

/// Gives the Curator the embedder once the model is loaded.
#[derive(Message)]
#[rtype(result = "()")]
pub struct AttachEmbedder(pub EmbedderHandle);

/// Asks for the counters.
#[derive(Message)]
#[rtype(result = "CuratorCounters")]
pub struct Observe;

/// Counters of the Curator, for `/api/v1/actors` and `lore status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CuratorCounters {
    /// Curation calls answered and applied.
    pub runs: u64,
    /// Entries created.
    pub created: u64,
    /// Entries updated (near-duplicates included).
    pub updated: u64,
    /// Entries forgotten.
    pub deleted: u64,
    /// Entities created or updated.
    pub entities: u64,
    /// Operations skipped as malformed or naming unknown entries.
    pub skipped: u64,
    /// Replies rejected as unreadable.
    pub rejected_replies: u64,
    /// Runs that failed.
    pub failures: u64,
    /// The latest failure.
    pub last_error: Option<String>,
}

/// The Curator actor.
pub struct Curator {
    store: Store,
    board: Arc<ActivityBoard>,
    settings: MemorySettings,
    indexer: Option<Addr<Indexer>>,
    embedder: Option<EmbedderHandle>,
    client: Option<Rc<WorkerClient>>,
    costs: Option<CostTrackerHandle>,
    counters: CuratorCounters,
}

impl Curator {
    /// A Curator over `store`.
    pub fn new(
        store: Store,
        board: Arc<ActivityBoard>,
        settings: MemorySettings,
        indexer: Option<Addr<Indexer>>,
    ) -> Self {
        Self {
            store,
            board,
            settings,
            indexer,
            embedder: None,
            client: None,
            costs: None,
            counters: CuratorCounters::default(),
        }
    }

    /// Reports every worker call to the cost tracker and waits while it pauses background work.
    pub fn with_costs(mut self, costs: CostTrackerHandle) -> Self {
        self.costs = Some(costs);
        self
    }
}

/// One curation: observations not curated yet (at most [`BATCH_CHARS`] of them) → a worker
/// call → operations applied → cursor past the observations shown.
async fn curate(
    job: Job,
    indexer: Option<Addr<Indexer>>,
    embedder: Option<EmbedderHandle>,
) -> Result<Applied, Stop> {
    let state = job.store.distill_state(&job.session_id)?;
    let mut batch = Vec::new();
    let mut chars = 0;
    for row in job.store.session_distillations(&job.session_id)? {
        if row.generation != 0 || row.n < state.curated_through_n {
            continue;
        }
        chars += row.observations.len();
        if chars > BATCH_CHARS && !batch.is_empty() {
            break;
        }
        batch.push(row);
    }
    let Some(last) = batch.last().map(|d| d.n) else {
        return Ok(Applied::default());
    };
    let project = job
        .store
        .load_session(&job.session_id)?
        .and_then(|record| record.project);
    // The project's entries and the cross-project ones; the curator may change only these.
    let entries: Vec<_> = crate::knowledge::live_entries(&job.store, project.as_deref(), true)?
        .into_iter()
        .filter(|e| e.project.is_none() || e.project == project)
        .collect();
    let entities: Vec<_> = job
        .store
        .all_entities()?
        .into_iter()
        .filter(|e| e.project.is_none() || e.project == project)
        .collect();
    let observations: Vec<&str> = batch.iter().map(|d| d.observations.as_str()).collect();
    let user = prompt::curator_user(&entries, &entities, &observations);
    let reply = job
        .ask(
            WorkerBucket::Curation,
            prompt::CURATOR_SYSTEM,
            user,
            CURATOR_MAX_TOKENS,
        )
        .await?;
    let applied = match parse::parse_reply(&reply.text) {
        Ok(parsed) => {
            let context = apply::Context {
                store: &job.store,
                project: project.clone(),
                session_id: &job.session_id,
                indexer: indexer.as_ref(),
                shown: entries.iter().map(|e| e.id.clone()).collect(),
            };
            apply::apply(&context, parsed, embedder.as_ref()).await?
        }
        // Tried enough: these observations stay searchable, curation moves on.
        Err(why) if job.give_up => {
            warn!(session = %job.session_id, why, "an unreadable curator reply was given up");
            Applied {
                skipped: 1,
                ..Default::default()
            }
        }
        Err(why) => {
            return Err(Stop::Failed(ActorError::WorkerReplyRejected(format!(
                "the curator's reply could not be read ({why}); nothing was changed and the observations are offered again later"
            ))));
        }
    };
    let mut state = job.store.distill_state(&job.session_id)?;
    state.curated_through_n = state.curated_through_n.max(last + 1);
    job.store
        .commit_distillations(&job.session_id, &state, &[])?;
    Ok(applied)
}

impl Actor for Curator {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Self::Context) {
        self.client = Some(Rc::new(WorkerClient::new(self.settings.worker.clone())));
    }
}

impl Handler<Curate> for Curator {
    type Result = ResponseActFuture<Self, Result<Applied, Stop>>;

    fn handle(&mut self, msg: Curate, _: &mut Self::Context) -> Self::Result {
        let Some(client) = self.client.clone() else {
            return Box::pin(fut::ready(Err(Stop::Failed(ActorError::Mailbox(
                "the curator has not started".into(),
            )))));
        };
        let job = Job {
            store: self.store.clone(),
            client,
            board: Arc::clone(&self.board),
            route: msg.route,
            session_id: msg.session_id.clone(),
            settings: self.settings.clone(),
            indexer: None,
            give_up: msg.give_up,
            costs: self.costs.clone(),
        };
        let work = curate(job, self.indexer.clone(), self.embedder.clone());
        Box::pin(work.into_actor(self).map(move |result, actor, _| {
            match &result {
                Ok(applied) => {
                    let c = &mut actor.counters;
                    c.runs += 1;
                    c.created += applied.created;
                    c.updated += applied.updated;
                    c.deleted += applied.deleted;
                    c.entities += applied.entities;
                    c.skipped += applied.skipped;
                    if applied.created + applied.updated + applied.deleted > 0 {
                        info!(session = %msg.session_id, created = applied.created, updated = applied.updated, deleted = applied.deleted, "knowledge curated");
                    }
                }
                Err(Stop::Busy) => {}
                Err(Stop::Failed(err)) => {
                    actor.counters.failures += 1;
                    if matches!(err, ActorError::WorkerReplyRejected(_)) {
                        actor.counters.rejected_replies += 1;
                    }
                    actor.counters.last_error = Some(err.to_string());
                    warn!(session = %msg.session_id, error = %err, "curation failed");
                }
            }
            result
        }))
    }
}

impl Handler<AttachEmbedder> for Curator {
    type Result = ();

    fn handle(&mut self, msg: AttachEmbedder, _: &mut Self::Context) {
        self.embedder = Some(msg.0);
    }
}

impl Handler<Observe> for Curator {
    type Result = MessageResult<Observe>;

    fn handle(&mut self, _: Observe, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.counters.clone())
    }
}
