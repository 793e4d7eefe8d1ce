//! The `CostTracker`: what every turn and every worker call costs, the daily budget and its
//! cache-aware throttle, OAuth quota pressure, and what Lore saved.
//!
//! One tracker per process, on its own arbiter, started under an actix [`Supervisor`]: if a
//! handler panics (caught, so the arbiter survives) or the actor stops, it is restarted on the
//! same mailbox and reloads its state from sled. Every cost is written to sled before the
//! tracker's memory changes, so a crash loses nothing that was recorded.
//!
//! The seam with the request path and the workers:
//! - [`RecordTurn`] (fire and forget), one per conversation reply;
//! - [`RecordWorker`] (fire and forget), one per worker call, from the Distiller and Curator;
//! - [`PlanThrottle`] → [`Throttle`], asked before a conversation request is forwarded, only
//!   when [`CostTrackerHandle::wants_plan`] says a budget or a quota poll could delay it.
//!   [`CostTrackerHandle::plan`] answers it on the caller's thread from the state the tracker
//!   last published ([`plan::Snapshot`], a read lock), and tells the tracker the bearer (for
//!   its quota polls) and any delay (for the counters) without waiting;
//! - [`CostsQuery`] → [`CostsReport`], [`SessionCost`] → [`SessionCosts`], [`SetBudget`];
//! - [`CostTrackerHandle::background_paused`]: the workers ask before each job.
//!
//! Pure parts: [`pricing`] (a turn's cost and savings), [`throttle`] (rate, curve, caps),
//! [`plan`] (a request's plan from a snapshot),
//! [`quota`] (bearers, poll schedule, the poll), [`report`] (what the API shows), [`clock`].

pub mod clock;
mod handlers;
pub mod plan;
pub mod pricing;
pub mod quota;
pub mod report;
pub mod throttle;
mod tracker;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix::Supervisor;
use actix::prelude::*;
use lore_proto::Usage;
use lore_storage::Store;
use lore_storage::memory::{UsageTotals, WorkerBucket};

use crate::ActorError;
use crate::catalogue::Catalogue;
pub use clock::Clock;
pub use quota::{Bearer, QuotaSettings};
pub use report::{BudgetStatus, CostsReport, SessionCosts, TrackerCounters};
pub use tracker::CostTracker;

/// One conversation reply's usage. Fire and forget.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct RecordTurn {
    /// The session; an empty id counts the turn per day only.
    pub session_id: String,
    /// The session's project, when known.
    pub project: Option<String>,
    /// The model the request named (priced from the catalogue).
    pub model: String,
    /// The provider's usage.
    pub usage: Usage,
    /// The request asked for 1-hour cache entries.
    pub one_hour_writes: bool,
    /// Prompt tokens a passthrough proxy would have sent.
    pub passthrough_tokens: u64,
    /// Prompt tokens sent.
    pub sent_tokens: u64,
    /// The context layers changed on this turn.
    pub layer_changed: bool,
    /// A recall follow-up, the gateway's own extra call inside a turn: its cost is added, but
    /// it is not another turn.
    pub follow_up: bool,
    /// When the reply came, ms since the epoch (wall clock).
    pub at_ms: u64,
}

/// One worker call's usage, priced by the worker client. Fire and forget.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct RecordWorker {
    /// The session it worked for.
    pub session_id: Option<String>,
    /// Its bucket.
    pub bucket: WorkerBucket,
    /// The model that answered.
    pub model: Option<String>,
    /// Its usage (`failures = 1` for a failed call).
    pub usage: UsageTotals,
    /// When, ms since the epoch (wall clock).
    pub at_ms: u64,
}

/// Asks how long to hold a conversation request before forwarding it.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Throttle")]
pub struct PlanThrottle {
    /// The session (or, before it is known, a stable key of the client).
    pub session_id: String,
    /// The request's OAuth bearer, for quota pressure.
    pub bearer: Option<Bearer>,
    /// The prompt cache's lifetime for this request.
    pub ttl: Duration,
    /// Time since the session's previous request.
    pub since_last_request: Duration,
    /// The request's expected cost ([`pricing::estimate_request_cost`]).
    pub estimated_cost_usd: f64,
}

/// The answer to [`PlanThrottle`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Throttle {
    /// How long to sleep before forwarding (zero: forward now).
    pub delay: Duration,
    /// Budget pressure, 0–1 (0 under half the budget).
    pub pressure: f64,
    /// OAuth quota pressure, 0–1.
    pub quota_pressure: f64,
    /// Why, for the log.
    pub reason: String,
}

/// A request's OAuth bearer, for the quota polls (sent by [`CostTrackerHandle::plan`]).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct NoteBearer(pub Bearer);

/// A request held by the throttle, for the counters (sent by [`CostTrackerHandle::plan`]).
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct CountThrottle {
    /// How long it was held, ms.
    pub delay_ms: u64,
}

/// Asks for the costs report.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<CostsReport, ActorError>")]
pub struct CostsQuery {
    /// Days to show, today included.
    pub days: u32,
}

/// Asks for one session's costs.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<SessionCosts, ActorError>")]
pub struct SessionCost {
    /// The session.
    pub session_id: String,
}

/// Sets (or clears, with `None`) the daily budget kept in sled.
#[derive(Debug, Clone, Message)]
#[rtype(result = "Result<BudgetStatus, ActorError>")]
pub struct SetBudget {
    /// US dollars per UTC day.
    pub daily_usd: Option<f64>,
}

/// Asks for the counters.
#[derive(Debug, Clone, Message)]
#[rtype(result = "TrackerCounters")]
pub struct Observe;

/// Test-only: makes the tracker panic inside its handler, as a bug would, to prove the
/// supervisor restarts it with its state reloaded.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct InjectFault;

/// A fault injected at start-up (`LORE_TEST_COSTS_FAULT`), for the integration tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Panic once, while recording turn `n` (counted from 1 since start), after the ledger
    /// write and before the tracker's memory is updated.
    PanicAfterTurn(u64),
}

/// How the tracker is configured.
#[derive(Debug, Clone)]
pub struct CostSettings {
    /// `LORE_DAILY_BUDGET`, US dollars (beats the budget set through the API).
    pub budget_env: Option<f64>,
    /// The catalogue turns are priced from.
    pub catalogue: Arc<Catalogue>,
    /// The OAuth usage endpoint and its timings.
    pub quota: QuotaSettings,
    /// The clock that says what "today" is.
    pub clock: Clock,
    /// A test fault.
    pub fault: Option<Fault>,
}

impl Default for CostSettings {
    fn default() -> Self {
        Self {
            budget_env: None,
            catalogue: Catalogue::builtin(),
            quota: QuotaSettings::default(),
            clock: Clock::system(),
            fault: None,
        }
    }
}

/// What the handle reads without a message: published by the tracker.
#[derive(Debug, Default)]
struct Shared {
    budget_on: AtomicBool,
    paused: AtomicBool,
    snapshot: RwLock<plan::Snapshot>,
}

/// The tracker's address and the flags the hot paths read without a message. Cheap to clone;
/// stays valid across restarts (same mailbox).
#[derive(Clone)]
pub struct CostTrackerHandle {
    addr: Addr<CostTracker>,
    shared: Arc<Shared>,
    catalogue: Arc<Catalogue>,
    clock: Clock,
    quota_on: bool,
}

impl std::fmt::Debug for CostTrackerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CostTrackerHandle")
            .field("active", &self.active())
            .field("quota_on", &self.quota_on)
            .finish_non_exhaustive()
    }
}

impl CostTrackerHandle {
    /// Starts the tracker under a supervisor on `arbiter`.
    pub fn start(store: Store, settings: CostSettings, arbiter: &ArbiterHandle) -> Self {
        let shared = Arc::new(Shared::default());
        shared
            .budget_on
            .store(settings.budget_env.is_some(), Ordering::Relaxed);
        let catalogue = Arc::clone(&settings.catalogue);
        let quota_on = settings.quota.enabled;
        let clock = settings.clock;
        let for_actor = Arc::clone(&shared);
        let addr = Supervisor::start_in_arbiter(arbiter, move |_| {
            CostTracker::new(store, settings, for_actor)
        });
        Self {
            addr,
            shared,
            catalogue,
            clock,
            quota_on,
        }
    }

    /// True when a daily budget is in force (cheap: an atomic read).
    pub fn active(&self) -> bool {
        self.shared.budget_on.load(Ordering::Relaxed)
    }

    /// True when a request with (or without) an OAuth bearer needs a [`PlanThrottle`]: a
    /// budget is in force, or the bearer's quota is polled.
    pub fn wants_plan(&self, oauth_bearer: bool) -> bool {
        self.active() || (oauth_bearer && self.quota_on)
    }

    /// True while background work must wait (OAuth quota at 95 % or more).
    pub fn background_paused(&self) -> bool {
        self.shared.paused.load(Ordering::Relaxed)
    }

    /// The catalogue the tracker prices from (for request estimates).
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    /// The tracker's address.
    pub fn addr(&self) -> &Addr<CostTracker> {
        &self.addr
    }

    /// Records a conversation turn (fire and forget).
    pub fn record_turn(&self, turn: RecordTurn) {
        self.addr.do_send(turn);
    }

    /// Records a worker call (fire and forget).
    pub fn record_worker(&self, call: RecordWorker) {
        self.addr.do_send(call);
    }

    /// The throttle plan of a request, computed here from what the tracker last published;
    /// the bearer (quota polls) and a delay (counters) go to the tracker without waiting.
    pub fn plan(&self, plan: PlanThrottle) -> Throttle {
        let now_ms = self.clock.now_ms();
        let bearer = plan.bearer.clone().filter(|_| self.quota_on);
        let account = bearer.as_ref().map(Bearer::account);
        let throttle = {
            let snapshot = self
                .shared
                .snapshot
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            plan::plan_from(&snapshot, &plan, account.as_deref(), now_ms)
        };
        if let Some(bearer) = bearer {
            self.addr.do_send(NoteBearer(bearer));
        }
        if !throttle.delay.is_zero() {
            self.addr.do_send(CountThrottle {
                delay_ms: throttle.delay.as_millis() as u64,
            });
        }
        throttle
    }
}

#[cfg(test)]
#[path = "tracker_tests.rs"]
mod tracker_tests;
