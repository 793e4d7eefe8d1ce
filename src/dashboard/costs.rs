//! What Lore spent: the worker usage ledger (distillation, curation, query expansion) per UTC
//! day and bucket (`GET /api/v1/worker-usage`). Conversation costs, the daily budget and the
//! throttle are not built yet (issue 13); the page says so instead of showing zeros.

use lore_storage::Store;
use lore_storage::memory::UsageTotals;
use serde::Serialize;

use super::error::ApiError;

/// Days shown.
pub const DAYS_SHOWN: usize = 30;

/// One UTC day.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayUsage {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Usage per bucket that day.
    pub buckets: Vec<(String, UsageTotals)>,
    /// Cost that day, US dollars.
    pub cost_usd: f64,
}

/// The worker ledger.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerUsage {
    /// The latest days with usage, oldest first.
    pub days: Vec<DayUsage>,
    /// Every day summed, per bucket.
    pub totals: Vec<(String, UsageTotals)>,
    /// Every day summed, US dollars.
    pub total_cost_usd: f64,
    /// What is not built yet.
    pub not_built: &'static str,
}

/// Loads the ledger.
pub fn load(store: &Store) -> Result<WorkerUsage, ApiError> {
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
    let skip = days.len().saturating_sub(DAYS_SHOWN);
    let total_cost_usd = totals.iter().map(|(_, t)| t.cost_usd).sum();
    Ok(WorkerUsage {
        days: days.into_iter().skip(skip).collect(),
        totals,
        total_cost_usd,
        not_built: "conversation costs, savings, the daily budget and the throttle are not built yet (issue 13): only the memory workers' own calls are counted here",
    })
}
