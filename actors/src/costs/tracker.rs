//! The `CostTracker` actor's state and work: the single writer of the cost ledger, the
//! throttle's state and the quota polls. Its handlers ([`super::handlers`]) run each message
//! inside a panic guard: a panic stops the actor, and its supervisor restarts it, which
//! reloads the ledger's state from sled.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use actix::prelude::*;
use lore_storage::costs::{BudgetSetting, CONVERSATION, CostEntry, CostTotals, RateState};
use lore_storage::memory::day_of;
use lore_storage::{StorageError, Store};
use tracing::{error, info, warn};

use super::plan::{Snapshot, day_index, plan_from};
use super::pricing::{TurnShape, price_turn};
use super::quota::Bearer;
use super::quota::{QuotaBook, poll};
use super::report::{self, QuotaStatus, ReportInputs, TrackerCounters};
use super::throttle::{rate_now, update_rate};
use super::{CostSettings, Fault, PlanThrottle, RecordTurn, RecordWorker, Shared, Throttle};
use crate::ActorError;

/// How often the day, the quota readings and the pause flag are looked at again.
pub(super) const TICK: Duration = Duration::from_secs(15);
/// Accounts not seen for this long are forgotten with their bearer.
pub(super) const FORGET_ACCOUNTS_AFTER: Duration = Duration::from_secs(6 * 3_600);

/// What the tracker keeps in memory of the ledger; reloaded from sled on every (re)start.
#[derive(Debug, Default)]
struct Ledger {
    today: String,
    spent_today: f64,
    rate: Option<RateState>,
    budget_api: Option<f64>,
}

impl Ledger {
    fn load(store: &Store, today: String) -> Result<Self, StorageError> {
        let spent_today = store
            .cost_days(&today)?
            .into_iter()
            .filter(|(day, _, _)| *day == today)
            .fold(0.0, |sum, (_, _, totals)| sum + totals.cost_usd);
        Ok(Self {
            today,
            spent_today,
            rate: store.cost_rate()?,
            budget_api: store.budget_setting()?.daily_usd,
        })
    }
}

/// The cost tracker. Start it with [`super::CostTrackerHandle::start`].
pub struct CostTracker {
    pub(super) store: Store,
    pub(super) settings: CostSettings,
    shared: Arc<Shared>,
    ledger: Ledger,
    pub(super) quota: QuotaBook,
    pub(super) client: Option<awc::Client>,
    pub(super) counters: TrackerCounters,
    fault_fired: bool,
    pub(super) restarted: bool,
}

impl CostTracker {
    pub(super) fn new(store: Store, settings: CostSettings, shared: Arc<Shared>) -> Self {
        Self {
            store,
            settings,
            shared,
            ledger: Ledger::default(),
            quota: QuotaBook::default(),
            client: None,
            counters: TrackerCounters::default(),
            fault_fired: false,
            restarted: false,
        }
    }

    /// Runs `work`; a panic inside it is logged and stops the actor (the supervisor restarts
    /// it), and `fallback` is answered.
    pub(super) fn guarded<R>(
        &mut self,
        ctx: &mut Context<Self>,
        fallback: R,
        work: impl FnOnce(&mut Self, &mut Context<Self>) -> R,
    ) -> R {
        match catch_unwind(AssertUnwindSafe(|| work(&mut *self, &mut *ctx))) {
            Ok(result) => result,
            Err(panic) => {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                error!(why, "the cost tracker failed; it is restarted from storage");
                self.counters.last_error = Some(format!("restarted after a failure: {why}"));
                ctx.stop();
                fallback
            }
        }
    }

    pub(super) fn fail(&mut self, what: &str, err: &StorageError) {
        self.counters.failures += 1;
        self.counters.last_error = Some(format!("{what}: {err}"));
        warn!(error = %err, "{what}");
    }

    fn budget(&self) -> Option<f64> {
        self.settings.budget_env.or(self.ledger.budget_api)
    }

    /// Publishes what the request path and the workers read without a message.
    pub(super) fn publish(&self) {
        let now = Instant::now();
        self.shared
            .budget_on
            .store(self.budget().is_some(), Ordering::Relaxed);
        let paused = self.quota.paused(now, &self.settings.quota);
        self.shared.paused.store(paused, Ordering::Relaxed);
        let snapshot = Snapshot {
            budget_usd: self.budget(),
            day: day_index(self.settings.clock.now_ms()),
            spent_today_usd: self.ledger.spent_today,
            rate: self.ledger.rate,
            quota: self.quota.pressures(now, &self.settings.quota),
        };
        *self
            .shared
            .snapshot
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = snapshot;
    }

    pub(super) fn reload(&mut self) {
        let today = self.settings.clock.today();
        match Ledger::load(&self.store, today.clone()) {
            Ok(ledger) => self.ledger = ledger,
            Err(err) => {
                self.fail("the cost ledger could not be read", &err);
                self.ledger = Ledger {
                    today,
                    ..Default::default()
                };
            }
        }
        self.publish();
    }

    /// Moves to a new UTC day when the clock passed midnight.
    fn roll_day(&mut self) {
        let today = self.settings.clock.today();
        if today != self.ledger.today {
            info!(day = %today, "a new UTC day: today's spend starts again");
            self.reload();
        }
    }

    fn add(&mut self, entry: &CostEntry<'_>) -> Result<(), StorageError> {
        let rate = update_rate(self.ledger.rate, entry.totals.cost_usd, entry.at_ms);
        self.store.add_cost(entry, Some(&rate))?;
        // Stored: from here on a failure loses nothing, the next start reloads it.
        self.ledger.rate = Some(rate);
        Ok(())
    }

    pub(super) fn record_turn(&mut self, msg: RecordTurn) {
        self.roll_day();
        let at_ms = self.settings.clock.shift(msg.at_ms);
        let day = day_of(at_ms);
        let price = self.settings.catalogue.lookup(&msg.model).price;
        let mut totals = price_turn(
            &price,
            &msg.usage,
            TurnShape {
                one_hour_writes: msg.one_hour_writes,
                passthrough_tokens: msg.passthrough_tokens,
                sent_tokens: msg.sent_tokens,
                layer_changed: msg.layer_changed,
            },
        );
        if msg.follow_up {
            totals.calls = 0;
        }
        let entry = CostEntry {
            day: &day,
            bucket: CONVERSATION,
            session_id: (!msg.session_id.is_empty()).then_some(msg.session_id.as_str()),
            project: msg.project.as_deref(),
            model: Some(&msg.model),
            at_ms,
            totals: &totals,
        };
        if let Err(err) = self.add(&entry) {
            self.fail("a turn's cost could not be stored", &err);
            return;
        }
        self.counters.turns += u64::from(!msg.follow_up);
        if let Some(Fault::PanicAfterTurn(n)) = self.settings.fault
            && !self.fault_fired
            && self.counters.turns == n
        {
            self.fault_fired = true;
            panic!("injected fault (LORE_TEST_COSTS_FAULT) after turn {n}");
        }
        self.count_today(&day, &totals);
        self.publish();
    }

    fn count_today(&mut self, day: &str, totals: &CostTotals) {
        if day == self.ledger.today {
            self.ledger.spent_today += totals.cost_usd;
        }
    }

    pub(super) fn record_worker(&mut self, msg: RecordWorker) {
        self.roll_day();
        let at_ms = self.settings.clock.shift(msg.at_ms);
        let day = day_of(at_ms);
        let totals = CostTotals::from_worker(&msg.usage);
        let entry = CostEntry {
            day: &day,
            bucket: msg.bucket.as_str(),
            session_id: msg.session_id.as_deref(),
            project: None,
            model: msg.model.as_deref(),
            at_ms,
            totals: &totals,
        };
        if let Err(err) = self.add(&entry) {
            self.fail("a worker call's cost could not be stored", &err);
            return;
        }
        self.counters.worker_calls += 1;
        self.count_today(&day, &totals);
        self.publish();
    }

    /// A plan asked by message (the handle computes the same on the caller's thread).
    pub(super) fn plan(&mut self, msg: PlanThrottle, ctx: &mut Context<Self>) -> Throttle {
        self.roll_day();
        self.counters.plans += 1;
        self.publish();
        let now_ms = self.settings.clock.now_ms();
        let bearer = msg.bearer.clone().filter(|_| self.settings.quota.enabled);
        let account = bearer.as_ref().map(Bearer::account);
        let throttle = plan_from(&self.snapshot(), &msg, account.as_deref(), now_ms);
        if let Some(bearer) = bearer {
            self.note_bearer(bearer, ctx);
        }
        if !throttle.delay.is_zero() {
            self.count_throttle(throttle.delay.as_millis() as u64);
        }
        throttle
    }

    fn snapshot(&self) -> Snapshot {
        self.shared
            .snapshot
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Notes a request's bearer and polls its account's quota when due.
    pub(super) fn note_bearer(&mut self, bearer: Bearer, ctx: &mut Context<Self>) {
        if !self.settings.quota.enabled {
            return;
        }
        let account = self.quota.note(bearer, Instant::now());
        self.maybe_poll(&account, ctx);
    }

    /// Counts a request the throttle held.
    pub(super) fn count_throttle(&mut self, delay_ms: u64) {
        self.roll_day();
        self.counters.throttled += 1;
        let today = self.ledger.today.clone();
        if let Err(err) = self.store.add_throttle(&today, delay_ms) {
            self.fail("a throttle event could not be counted", &err);
        }
    }

    fn maybe_poll(&mut self, account: &str, ctx: &mut Context<Self>) {
        let Some(client) = self.client.clone() else {
            return;
        };
        let Some(bearer) = self
            .quota
            .start_poll(account, Instant::now(), &self.settings.quota)
        else {
            return;
        };
        let settings = self.settings.quota.clone();
        self.counters.quota_polls += 1;
        let account = account.to_string();
        let work = async move { poll(&client, &settings, &bearer).await };
        ctx.spawn(work.into_actor(self).map(move |result, actor, ctx| {
            actor.guarded(ctx, (), |actor, _| {
                if let Err(why) = &result {
                    warn!(account = %account, why, "the OAuth quota could not be read");
                }
                let settings = actor.settings.quota.clone();
                actor
                    .quota
                    .finish_poll(&account, result, Instant::now(), &settings);
                actor.publish();
            })
        }));
    }

    pub(super) fn report(&mut self, days: u32) -> Result<report::CostsReport, ActorError> {
        self.roll_day();
        let now = Instant::now();
        let quota = QuotaStatus {
            enabled: self.settings.quota.enabled,
            background_paused: self.quota.paused(now, &self.settings.quota),
            accounts: self.quota.status(now, &self.settings.quota),
        };
        let now_ms = self.settings.clock.now_ms();
        let inputs = ReportInputs {
            now_ms,
            days,
            budget_env: self.settings.budget_env,
            rate_usd_per_hour: rate_now(self.ledger.rate, now_ms),
            quota,
            tracker: Some(self.counters.clone()),
        };
        Ok(report::build(&self.store, &inputs)?)
    }

    pub(super) fn set_budget(
        &mut self,
        daily_usd: Option<f64>,
    ) -> Result<report::BudgetStatus, ActorError> {
        if let Some(value) = daily_usd
            && !(value.is_finite() && value > 0.0)
        {
            return Err(ActorError::Invalid(format!(
                "a daily budget must be a positive number of US dollars (got {value}); send null to remove it"
            )));
        }
        self.store.set_budget_setting(&BudgetSetting {
            daily_usd,
            set_at_ms: self.settings.clock.now_ms(),
        })?;
        self.ledger.budget_api = daily_usd;
        self.publish();
        let now_ms = self.settings.clock.now_ms();
        let inputs = ReportInputs {
            now_ms,
            days: 1,
            budget_env: self.settings.budget_env,
            rate_usd_per_hour: rate_now(self.ledger.rate, now_ms),
            ..Default::default()
        };
        Ok(report::budget_status(
            &self.store,
            &inputs,
            self.ledger.spent_today,
        )?)
    }

    pub(super) fn tick(&mut self) {
        self.roll_day();
        self.quota
            .tidy(Instant::now(), FORGET_ACCOUNTS_AFTER, false);
        self.publish();
    }
}
