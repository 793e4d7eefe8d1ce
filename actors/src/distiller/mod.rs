//! `Distiller`: turns quiet sessions' undistilled messages into observation logs, folds old logs
//! into a consolidated context past a threshold, and hands new observations to the `Curator`.
//!
//! It polls the [`ActivityBoard`] every `tick`. A session is due when it is *idle* (no request
//! for `idle_after` and its last reply did not stop for a tool call), when its undistilled
//! tokens pass `max_segment_tokens`, when `curate_after_turns` turns passed since its last
//! curation, when its context manager asks for logs ahead of need (its raw history passed half
//! of its layer-0 cap), or when its prompt cache went cold (or its prefix already leaves logs out
//! for its budget) with enough logs to consolidate — consolidations rewrite the distilled
//! prefix, so they run only then. In every case no request
//! of the session may be in flight, and every worker call
//! checks that again right before it starts. While the `CostTracker` pauses background work
//! (OAuth quota at 95 % or more) no job starts and no worker call is made. One job runs at a
//! time (the worker calls of a
//! machine's sessions queue behind each other); a failed job waits `retry_after` before the
//! session is tried again, and a refused credential pauses the session until a request brings
//! another one.
//!
//! - [`input`]: rendering messages for the observer (tool-output annotations, pinned
//!   instructions, tool failures).
//! - [`prompts`]: the instructions, user messages, acceptance rules and output limits.
//! - [`observe`]: generation 0. [`reflect`]: meta-distillation. [`job`]: the job context.

pub mod input;
pub mod job;
pub mod observe;
pub mod prompts;
pub mod reflect;

use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use lore_storage::Store;
use serde::Serialize;
use tracing::{info, warn};

use crate::costs::CostTrackerHandle;
use crate::curator::{Curate, Curator};
use crate::indexer::IndexDocs;
use crate::worker::{ActivityBoard, WorkerClient, WorkerRoute, WorkerSettings};
use job::{Job, Stop};

/// Failed jobs in a row after which an unusable reply is given up instead of retried.
const GIVE_UP_AFTER: u32 = 2;
/// Longest wait before a failing session is tried again.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(3_600);

/// Quiet time after which the board forgets a session and its route.
const FORGET_AFTER: Duration = Duration::from_secs(24 * 3_600);

/// Thresholds and timings of the memory workers.
#[derive(Debug, Clone)]
pub struct MemorySettings {
    /// Quiet time after which a session is idle (`LORE_IDLE_TIMEOUT`, 60 s).
    pub idle_after: Duration,
    /// How often the board is polled.
    pub tick: Duration,
    /// Fewest undistilled messages worth a call (5).
    pub min_messages: usize,
    /// Fewest undistilled tokens worth a call (64).
    pub min_tokens: u64,
    /// Largest segment, and the undistilled size that triggers a run before idle (16,384).
    pub max_segment_tokens: u64,
    /// Live generation-0 logs that trigger a consolidation (20).
    pub meta_threshold: usize,
    /// Newest generation-0 logs a consolidation leaves alone (5).
    pub keep_recent: usize,
    /// Tool outputs longer than this are annotated instead of shown (4,000).
    pub tool_output_max_chars: usize,
    /// Turns after which curation runs without waiting for idle (`LORE_CURATE_AFTER_TURNS`, 10).
    pub curate_after_turns: u64,
    /// Wait after a failed job before the session is tried again (60 s).
    pub retry_after: Duration,
    /// Settings of the worker client.
    pub worker: WorkerSettings,
}

impl Default for MemorySettings {
    fn default() -> Self {
        Self {
            idle_after: Duration::from_secs(60),
            tick: Duration::from_secs(5),
            min_messages: 5,
            min_tokens: 64,
            max_segment_tokens: 16_384,
            meta_threshold: 20,
            keep_recent: 5,
            tool_output_max_chars: 4_000,
            curate_after_turns: 10,
            retry_after: Duration::from_secs(60),
            worker: WorkerSettings::default(),
        }
    }
}

/// Why a session's job was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    Idle,
    SegmentCap,
    TurnsDue,
    /// The context manager wants logs before its next turns need them.
    Ahead,
    /// The prompt cache went cold and enough logs wait to be consolidated.
    Cold,
    /// The user asked (`/lore:curate`).
    Asked,
}

/// A session waiting for its job.
#[derive(Debug)]
struct Queued {
    session_id: String,
    route: Arc<WorkerRoute>,
    trigger: Trigger,
    turns: u64,
    /// The session's prompt cache had expired when it was queued: its logs may be
    /// consolidated (which rewrites the distilled prefix).
    cold: bool,
}

/// What the Distiller remembers of a session between ticks.
#[derive(Debug, Default)]
struct Seen {
    /// Board turn count when the segment cap was last checked.
    checked_turns: Option<u64>,
    /// Board turn count at the end of the last idle job.
    idle_done_turns: Option<u64>,
    /// Board turn count at the last curation.
    curated_turns: u64,
    /// Board turn count when distillation ahead of need was last considered.
    ahead_turns: Option<u64>,
    /// Board turn count when a cold cache was last checked for a consolidation.
    cold_turns: Option<u64>,
    /// Not before this time (after a failure).
    retry_at: Option<Instant>,
    /// Failed jobs in a row.
    failures: u32,
    queued: bool,
    /// `/lore:curate` was asked and its job has not run through yet: a job that yielded to a
    /// request of the session is queued again by the next tick that finds the session quiet.
    asked: bool,
}

/// Counters of the Distiller, for `/api/v1/actors` and `lore status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DistillerCounters {
    /// Sessions waiting for their job.
    pub queued: usize,
    /// Session whose job runs now.
    pub running: Option<String>,
    /// Jobs finished (successfully or not).
    pub jobs: u64,
    /// Observation logs written.
    pub distillations: u64,
    /// Consolidations written.
    pub consolidations: u64,
    /// Observer outputs dropped because they expanded their source.
    pub rejected: u64,
    /// Jobs that yielded because a request of the session arrived.
    pub yielded: u64,
    /// Jobs that failed.
    pub failures: u64,
    /// Sessions paused because the provider refused their credential.
    pub paused: u64,
    /// Polls of the board skipped because background work waits for OAuth quota.
    pub quota_paused: u64,
    /// The latest failure.
    pub last_error: Option<String>,
}

/// Asks for the counters.
#[derive(Message)]
#[rtype(result = "DistillerCounters")]
pub struct Observe;

/// The Distiller actor.
pub struct Distiller {
    store: Store,
    board: Arc<ActivityBoard>,
    settings: MemorySettings,
    indexer: Option<Recipient<IndexDocs>>,
    curator: Option<Addr<Curator>>,
    client: Option<Rc<WorkerClient>>,
    costs: Option<CostTrackerHandle>,
    seen: HashMap<String, Seen>,
    queue: VecDeque<Queued>,
    counters: DistillerCounters,
}

impl Distiller {
    /// A Distiller over `store`, polling `board`.
    pub fn new(
        store: Store,
        board: Arc<ActivityBoard>,
        settings: MemorySettings,
        indexer: Option<Recipient<IndexDocs>>,
        curator: Option<Addr<Curator>>,
    ) -> Self {
        Self {
            store,
            board,
            settings,
            indexer,
            curator,
            client: None,
            costs: None,
            seen: HashMap::new(),
            queue: VecDeque::new(),
            counters: DistillerCounters::default(),
        }
    }

    /// Reports every worker call to the cost tracker and waits while it pauses background work.
    pub fn with_costs(mut self, costs: CostTrackerHandle) -> Self {
        self.costs = Some(costs);
        self
    }

    fn quota_paused(&self) -> bool {
        self.costs
            .as_ref()
            .is_some_and(CostTrackerHandle::background_paused)
    }

    fn job(&self, session_id: &str, route: Arc<WorkerRoute>, give_up: bool) -> Option<Job> {
        Some(Job {
            give_up,
            costs: self.costs.clone(),
            store: self.store.clone(),
            client: self.client.clone()?,
            board: Arc::clone(&self.board),
            route,
            session_id: session_id.to_string(),
            settings: self.settings.clone(),
            indexer: self.indexer.clone(),
        })
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        let now = Instant::now();
        // Sessions quiet for a day are forgotten with their routes (and credentials); their next
        // request brings them back.
        self.board.forget_older_than(FORGET_AFTER);
        let board = &self.board;
        self.seen.retain(|id, seen| seen.queued || board.knows(id));
        if self.quota_paused() {
            self.counters.quota_paused += 1;
            return;
        }
        for session in self.board.quiet_sessions(self.settings.idle_after) {
            let seen = self.seen.entry(session.session_id.clone()).or_default();
            if seen.queued || seen.retry_at.is_some_and(|at| at > now) {
                continue;
            }
            let trigger = if seen.asked {
                Some(Trigger::Asked)
            } else if session.idle && seen.idle_done_turns != Some(session.turns) {
                Some(Trigger::Idle)
            } else if session.turns >= seen.curated_turns + self.settings.curate_after_turns {
                Some(Trigger::TurnsDue)
            } else if session.distil_ahead && seen.ahead_turns != Some(session.turns) {
                seen.ahead_turns = Some(session.turns);
                let pending = observe::pending_tokens(
                    &self.store,
                    &session.session_id,
                    self.settings.tool_output_max_chars,
                );
                matches!(pending, Ok(tokens) if tokens >= self.settings.min_tokens)
                    .then_some(Trigger::Ahead)
            } else if session.cache_cold && seen.cold_turns != Some(session.turns) {
                seen.cold_turns = Some(session.turns);
                reflect::due(&self.store, &session.session_id, &self.settings)
                    .then_some(Trigger::Cold)
            } else if seen.checked_turns != Some(session.turns) {
                seen.checked_turns = Some(session.turns);
                let pending = observe::pending_tokens(
                    &self.store,
                    &session.session_id,
                    self.settings.tool_output_max_chars,
                );
                match pending {
                    Ok(tokens) if tokens >= self.settings.max_segment_tokens => {
                        Some(Trigger::SegmentCap)
                    }
                    Ok(_) => None,
                    Err(_) => None,
                }
            } else {
                None
            };
            if let Some(trigger) = trigger {
                seen.queued = true;
                self.queue.push_back(Queued {
                    session_id: session.session_id,
                    route: session.route,
                    trigger,
                    turns: session.turns,
                    cold: session.cache_cold,
                });
            }
        }
        self.counters.queued = self.queue.len();
        self.start_next(ctx);
    }

    fn start_next(&mut self, ctx: &mut Context<Self>) {
        if self.counters.running.is_some() || self.quota_paused() {
            return;
        }
        let Some(Queued {
            session_id,
            route,
            trigger,
            turns,
            cold,
        }) = self.queue.pop_front()
        else {
            return;
        };
        self.counters.queued = self.queue.len();
        let give_up = self
            .seen
            .get(&session_id)
            .is_some_and(|seen| seen.failures >= GIVE_UP_AFTER);
        let Some(job) = self.job(&session_id, route.clone(), give_up) else {
            return;
        };
        self.counters.running = Some(session_id.clone());
        let curator = self.curator.clone();
        let curate = matches!(trigger, Trigger::Idle | Trigger::TurnsDue | Trigger::Asked);
        let work = async move { run_job(job, curator, curate, cold, route, give_up).await };
        ctx.spawn(work.into_actor(self).map(move |outcome, actor, ctx| {
            actor.finish(&session_id, trigger, turns, outcome);
            ctx.notify(Poke);
        }));
    }

    fn finish(&mut self, session_id: &str, trigger: Trigger, turns: u64, outcome: JobOutcome) {
        self.counters.running = None;
        self.counters.jobs += 1;
        self.counters.distillations += outcome.distillations;
        self.counters.consolidations += outcome.consolidations;
        self.counters.rejected += outcome.rejected;
        let seen = self.seen.entry(session_id.to_string()).or_default();
        seen.queued = false;
        if trigger == Trigger::Asked {
            seen.asked = matches!(outcome.stop, Some(Stop::Busy));
        }
        match outcome.stop {
            None => {
                if trigger == Trigger::Idle {
                    seen.idle_done_turns = Some(turns);
                }
                if outcome.curated {
                    seen.curated_turns = turns;
                }
                seen.retry_at = None;
                seen.failures = 0;
            }
            Some(Stop::Busy) => self.counters.yielded += 1,
            Some(Stop::Failed(err)) => {
                self.counters.failures += 1;
                if matches!(err, crate::ActorError::WorkerCredentialRefused { .. }) {
                    self.counters.paused += 1;
                }
                seen.failures += 1;
                let wait = self
                    .settings
                    .retry_after
                    .saturating_mul(1 << (seen.failures - 1).min(6))
                    .min(MAX_RETRY_WAIT);
                seen.retry_at = Some(Instant::now() + wait);
                warn!(session = %session_id, error = %err, "memory job failed; the session is tried again later");
                self.counters.last_error = Some(err.to_string());
            }
        }
    }
}

/// What a job did.
#[derive(Debug, Default)]
struct JobOutcome {
    distillations: u64,
    consolidations: u64,
    rejected: u64,
    curated: bool,
    stop: Option<Stop>,
}

async fn run_job(
    job: Job,
    curator: Option<Addr<Curator>>,
    curate: bool,
    cold: bool,
    route: Arc<WorkerRoute>,
    give_up: bool,
) -> JobOutcome {
    let mut outcome = JobOutcome::default();
    match observe::distill_pending(&job).await {
        Ok(report) => {
            outcome.distillations = report.written;
            outcome.rejected = report.rejected;
        }
        Err(stop) => {
            outcome.stop = Some(stop);
            return outcome;
        }
    }
    // A consolidation rewrites the session's distilled prefix: only while its cache is cold.
    if cold {
        match reflect::consolidate(&job).await {
            Ok(written) => outcome.consolidations = u64::from(written.is_some()),
            Err(stop) => {
                outcome.stop = Some(stop);
                return outcome;
            }
        }
    }
    if let (true, Some(curator)) = (curate, curator) {
        let asked = curator
            .send(Curate {
                session_id: job.session_id.clone(),
                route,
                give_up,
            })
            .await;
        match asked {
            Ok(Ok(_)) => outcome.curated = true,
            Ok(Err(stop)) => outcome.stop = Some(stop),
            Err(err) => outcome.stop = Some(Stop::Failed(err.into())),
        }
    }
    if outcome.distillations + outcome.consolidations > 0 {
        info!(
            session = %job.session_id,
            distillations = outcome.distillations,
            consolidations = outcome.consolidations,
            "memory job done"
        );
    }
    outcome
}

/// `/lore:curate`: distil and curate one session now, with this route (the request's own).
/// Answers false when the session already waits for a job.
#[derive(Message)]
#[rtype(result = "bool")]
pub struct CurateNow {
    /// The session.
    pub session_id: String,
    /// Where its worker calls go.
    pub route: Arc<WorkerRoute>,
}

impl Handler<CurateNow> for Distiller {
    type Result = bool;

    fn handle(&mut self, msg: CurateNow, ctx: &mut Self::Context) -> bool {
        let seen = self.seen.entry(msg.session_id.clone()).or_default();
        if seen.queued {
            return false;
        }
        seen.queued = true;
        seen.asked = true;
        seen.retry_at = None;
        let turns = seen.curated_turns;
        // Ahead of the idle sessions: the user is waiting for it.
        self.queue.push_front(Queued {
            session_id: msg.session_id,
            route: msg.route,
            trigger: Trigger::Asked,
            turns,
            cold: false,
        });
        self.counters.queued = self.queue.len();
        self.start_next(ctx);
        true
    }
}

/// Starts the next queued job.
#[derive(Message)]
#[rtype(result = "()")]
struct Poke;

impl Actor for Distiller {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.client = Some(Rc::new(WorkerClient::new(self.settings.worker.clone())));
        ctx.run_interval(self.settings.tick, |actor, ctx| actor.tick(ctx));
    }
}

impl Handler<Poke> for Distiller {
    type Result = ();

    fn handle(&mut self, _: Poke, ctx: &mut Self::Context) {
        self.start_next(ctx);
    }
}

impl Handler<Observe> for Distiller {
    type Result = MessageResult<Observe>;

    fn handle(&mut self, _: Observe, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.counters.clone())
    }
}
