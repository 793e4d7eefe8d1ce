//! The `CostTracker`'s actor lifecycle (start, restart by its supervisor) and its message
//! handlers, each inside the panic guard of [`CostTracker::guarded`].

use std::time::Instant;

use actix::prelude::*;
use tracing::{info, warn};

use super::report::{self, SessionCosts};
use super::tracker::{CostTracker, FORGET_ACCOUNTS_AFTER, TICK};
use super::{
    CostsQuery, CountThrottle, InjectFault, NoteBearer, Observe, PlanThrottle, RecordTurn,
    RecordWorker, SessionCost, SetBudget, Throttle,
};
use crate::ActorError;

impl Actor for CostTracker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // awc's rustls connector needs a process-wide crypto provider; a second install is
        // harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let connector = awc::Connector::new()
            .timeout(self.settings.quota.timeout)
            .limit(4);
        self.client = Some(
            awc::Client::builder()
                .connector(connector)
                .no_default_headers()
                .max_redirects(0)
                .finish(),
        );
        if !self.restarted {
            match self.store.migrate_worker_usage() {
                Ok(0) => {}
                Ok(rows) => info!(
                    rows,
                    "the worker usage ledger was folded into the cost ledger"
                ),
                Err(err) => self.fail("the worker usage ledger could not be folded in", &err),
            }
        }
        self.reload();
        ctx.run_interval(TICK, |actor, ctx| actor.guarded(ctx, (), |a, _| a.tick()));
    }
}

impl Supervised for CostTracker {
    fn restarting(&mut self, _: &mut Self::Context) {
        self.restarted = true;
        self.counters.restarts += 1;
        self.quota.tidy(Instant::now(), FORGET_ACCOUNTS_AFTER, true);
        warn!(restarts = self.counters.restarts, "cost tracker restarting");
    }
}

impl Handler<RecordTurn> for CostTracker {
    type Result = ();

    fn handle(&mut self, msg: RecordTurn, ctx: &mut Self::Context) {
        self.guarded(ctx, (), |actor, _| actor.record_turn(msg));
    }
}

impl Handler<RecordWorker> for CostTracker {
    type Result = ();

    fn handle(&mut self, msg: RecordWorker, ctx: &mut Self::Context) {
        self.guarded(ctx, (), |actor, _| actor.record_worker(msg));
    }
}

impl Handler<PlanThrottle> for CostTracker {
    type Result = MessageResult<PlanThrottle>;

    fn handle(&mut self, msg: PlanThrottle, ctx: &mut Self::Context) -> Self::Result {
        let fallback = Throttle {
            reason: "the cost tracker failed; forwarded without delay".into(),
            ..Default::default()
        };
        MessageResult(self.guarded(ctx, fallback, |actor, ctx| actor.plan(msg, ctx)))
    }
}

impl Handler<NoteBearer> for CostTracker {
    type Result = ();

    fn handle(&mut self, msg: NoteBearer, ctx: &mut Self::Context) {
        self.guarded(ctx, (), |actor, ctx| actor.note_bearer(msg.0, ctx));
    }
}

impl Handler<CountThrottle> for CostTracker {
    type Result = ();

    fn handle(&mut self, msg: CountThrottle, ctx: &mut Self::Context) {
        self.guarded(ctx, (), |actor, _| actor.count_throttle(msg.delay_ms));
    }
}

fn restarted_error() -> ActorError {
    ActorError::Mailbox("the cost tracker failed and is restarting; ask again".into())
}

impl Handler<CostsQuery> for CostTracker {
    type Result = Result<report::CostsReport, ActorError>;

    fn handle(&mut self, msg: CostsQuery, ctx: &mut Self::Context) -> Self::Result {
        self.guarded(ctx, Err(restarted_error()), |actor, _| {
            actor.report(msg.days)
        })
    }
}

impl Handler<SessionCost> for CostTracker {
    type Result = Result<SessionCosts, ActorError>;

    fn handle(&mut self, msg: SessionCost, ctx: &mut Self::Context) -> Self::Result {
        self.guarded(ctx, Err(restarted_error()), |actor, _| {
            let record = actor.store.session_costs(&msg.session_id)?;
            Ok(SessionCosts::from_record(&msg.session_id, record))
        })
    }
}

impl Handler<SetBudget> for CostTracker {
    type Result = Result<report::BudgetStatus, ActorError>;

    fn handle(&mut self, msg: SetBudget, ctx: &mut Self::Context) -> Self::Result {
        self.guarded(ctx, Err(restarted_error()), |actor, _| {
            actor.set_budget(msg.daily_usd)
        })
    }
}

impl Handler<Observe> for CostTracker {
    type Result = MessageResult<Observe>;

    fn handle(&mut self, _: Observe, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.counters.clone())
    }
}

impl Handler<InjectFault> for CostTracker {
    type Result = ();

    fn handle(&mut self, _: InjectFault, ctx: &mut Self::Context) {
        self.guarded(ctx, (), |_, _| panic!("injected fault (InjectFault)"));
    }
}
