//! What Lore spent and saved, from the `CostTracker`'s ledger (the report `GET /api/v1/costs`
//! serves, [`crate::costs_api::report`], priced once by `lore_actors::costs`): spend per day and
//! bucket, the budget and who set it, the throttle's counters, the savings with how each was
//! computed, the dearest sessions (`GET /api/v1/costs/page`); today's spend and savings for the
//! overview; and the worker calls alone (`GET /api/v1/worker-usage`). With `LORE_COSTS=off` the
//! ledger is still read (what earlier runs recorded) and the page says that nothing new is
//! counted and no budget can be set.

use lore_actors::costs::CostsReport;
use lore_storage::Store;
use lore_storage::costs::CONVERSATION;
use lore_storage::memory::UsageTotals;
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use crate::costs_api::{COSTS_OFF, ENV_BUDGET_WINS, MAX_DAYS, report};
use crate::server::AppState;

/// Days the costs page shows unless asked otherwise.
pub const DAYS_SHOWN: u32 = 30;
/// Days of worker calls `GET /api/v1/worker-usage` lists (the latest with calls).
const WORKER_DAYS_SHOWN: usize = 30;

/// `?days=` of the costs page.
#[derive(Debug, Default, Deserialize)]
pub struct CostsQuery {
    /// Days shown, today included.
    #[serde(default)]
    pub days: Option<u32>,
}

/// The costs page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostsView {
    /// Days shown, today included.
    pub days: u32,
    /// False with `LORE_COSTS=off`: nothing new is counted and no budget can be set.
    pub tracking: bool,
    /// What the reader must know (tracking off, the environment's budget winning).
    pub notes: Vec<String>,
    /// Whether the budget form can change anything.
    pub budget_settable: bool,
    /// `LORE_DAILY_BUDGET`, which wins over a budget set here.
    pub budget_env_usd: Option<f64>,
    /// The chart's series, in stacking order: conversation, then the workers' buckets by name.
    pub buckets: Vec<String>,
    /// The tracker's report.
    pub report: CostsReport,
}

/// The buckets of a report, conversation first.
pub fn buckets(report: &CostsReport) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for day in &report.days {
        for bucket in &day.buckets {
            if !names.contains(&bucket.bucket) {
                names.push(bucket.bucket.clone());
            }
        }
    }
    names.sort_by(|a, b| (a != CONVERSATION, a).cmp(&(b != CONVERSATION, b)));
    names
}

/// Loads the costs page.
pub async fn load(state: &AppState, days: Option<u32>) -> Result<CostsView, ApiError> {
    let days = days.unwrap_or(DAYS_SHOWN).clamp(1, MAX_DAYS);
    let report = report(state, days).await?;
    let tracking = state.costs.is_some();
    let budget_env_usd = state.config.costs.settings.budget_env;
    let mut notes = Vec::new();
    if !tracking {
        notes.push(format!(
            "Cost tracking is off (LORE_COSTS=off): nothing new is counted, nothing is throttled, and the figures below are what earlier runs recorded. {COSTS_OFF}."
        ));
    }
    if budget_env_usd.is_some() {
        notes.push(format!("{ENV_BUDGET_WINS}."));
    }
    Ok(CostsView {
        days,
        tracking,
        notes,
        budget_settable: tracking,
        budget_env_usd,
        buckets: buckets(&report),
        report,
    })
}

/// Today's spend and savings, for the overview.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TodayCosts {
    /// Every bucket, US dollars (UTC day).
    pub spent_usd: f64,
    /// Of which the conversation turns.
    pub conversation_usd: f64,
    /// Of which the memory workers.
    pub worker_usd: f64,
    /// What the provider's prompt cache saved.
    pub cache_savings_usd: f64,
    /// What the context manager saved against a passthrough proxy.
    pub gradient_savings_usd: f64,
    /// The gradient's saving minus what Lore's own work cost.
    pub net_savings_usd: f64,
    /// The budget in force.
    pub budget_usd: Option<f64>,
    /// False with `LORE_COSTS=off`.
    pub tracking: bool,
    /// Why the figures could not be read (they are zero then).
    pub unavailable: Option<String>,
}

/// Today's figures from the same report as the costs page.
pub async fn today(state: &AppState) -> TodayCosts {
    let tracking = state.costs.is_some();
    match report(state, 1).await {
        Ok(report) => {
            let conversation_usd = report
                .days
                .iter()
                .filter(|day| day.day == report.today)
                .flat_map(|day| day.buckets.iter())
                .filter(|bucket| bucket.bucket == CONVERSATION)
                .map(|bucket| bucket.totals.cost_usd)
                .sum();
            let spent_usd = report.budget.spent_today_usd;
            TodayCosts {
                spent_usd,
                conversation_usd,
                worker_usd: spent_usd - conversation_usd,
                cache_savings_usd: report.savings.cache.usd,
                gradient_savings_usd: report.savings.gradient.usd,
                net_savings_usd: report.savings.net_usd,
                budget_usd: report.budget.daily_usd,
                tracking,
                unavailable: None,
            }
        }
        Err(err) => TodayCosts {
            tracking,
            unavailable: Some(format!("today's costs could not be read: {err}")),
            ..TodayCosts::default()
        },
    }
}

/// One UTC day of worker calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayUsage {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Usage per bucket that day.
    pub buckets: Vec<(String, UsageTotals)>,
    /// Cost that day, US dollars.
    pub cost_usd: f64,
}

/// The worker calls of the ledger, every day (`GET /api/v1/worker-usage`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerUsage {
    /// The latest days with worker calls, oldest first.
    pub days: Vec<DayUsage>,
    /// Every day summed, per bucket.
    pub totals: Vec<(String, UsageTotals)>,
    /// Every day summed, US dollars.
    pub total_cost_usd: f64,
}

/// Loads the worker calls.
pub fn worker_usage(store: &Store) -> Result<WorkerUsage, ApiError> {
    let mut days: Vec<DayUsage> = Vec::new();
    let mut totals: Vec<(String, UsageTotals)> = Vec::new();
    for (day, bucket, usage) in store.worker_usage()? {
        match totals.iter_mut().find(|(b, _)| *b == bucket) {
            Some((_, sum)) => sum.add(&usage),
            None => totals.push((bucket.clone(), usage.clone())),
        }
        if days.last().is_none_or(|d| d.day != day) {
            days.push(DayUsage {
                day: day.clone(),
                buckets: Vec::new(),
                cost_usd: 0.0,
            });
        }
        if let Some(last) = days.last_mut() {
            last.cost_usd += usage.cost_usd;
            last.buckets.push((bucket, usage));
        }
    }
    let total_cost_usd = totals.iter().map(|(_, t)| t.cost_usd).sum();
    let skip = days.len().saturating_sub(WORKER_DAYS_SHOWN);
    Ok(WorkerUsage {
        days: days.into_iter().skip(skip).collect(),
        totals,
        total_cost_usd,
    })
}
