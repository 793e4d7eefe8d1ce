//! What `GET /api/v1/costs` and `lore costs` show: spend per day and bucket, the budget's
//! state, quota pressure, the savings with how each was computed, and the top sessions. Built
//! from the ledger in storage plus what only the running tracker knows (rate, quota).

use lore_storage::costs::{CONVERSATION, CostTotals, SessionCostRecord, ThrottleDay};
use lore_storage::memory::day_of;
use lore_storage::{StorageError, Store};
use serde::{Deserialize, Serialize};

use super::quota::AccountStatus;
use super::throttle::{BudgetView, budget_delay, hours_left_in_utc_day};

/// Sessions listed under "top sessions".
const TOP_SESSIONS: usize = 10;
const MS_PER_DAY: u64 = 86_400_000;

/// One bucket of one day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BucketCosts {
    /// `conversation`, `distillation`, `curation`, `query_expansion`, …
    pub bucket: String,
    /// Its totals.
    pub totals: CostTotals,
}

/// One UTC day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DayCosts {
    /// `YYYY-MM-DD`.
    pub day: String,
    /// Every bucket's cost, summed.
    pub total_usd: f64,
    /// Per bucket, conversation first.
    pub buckets: Vec<BucketCosts>,
}

/// Where today's spending stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetStatus {
    /// The budget in force, US dollars per UTC day.
    pub daily_usd: Option<f64>,
    /// Where it comes from: `LORE_DAILY_BUDGET` or `api`.
    pub source: Option<String>,
    /// The budget stored through the API (the environment variable wins over it).
    pub stored_usd: Option<f64>,
    /// Spent today, every bucket.
    pub spent_today_usd: f64,
    /// What is left of the budget.
    pub remaining_usd: Option<f64>,
    /// Spent fraction of the budget.
    pub fraction: Option<f64>,
    /// Budget pressure (0 under half the budget, 1 at the whole of it).
    pub pressure: f64,
    /// The spend rate, US dollars per hour (exponential average).
    pub rate_usd_per_hour: f64,
    /// The rate the rest of the day can afford.
    pub target_rate_usd_per_hour: Option<f64>,
    /// Hours left in the UTC day.
    pub hours_left: f64,
    /// The delay a request would get now, seconds (before the TTL cap).
    pub delay_now_secs: f64,
    /// Requests delayed today and their delays (`throttle.events`, `throttle.total_delay_ms`).
    pub throttle: ThrottleDay,
}

/// OAuth quota pressure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QuotaStatus {
    /// Whether the usage endpoint is polled at all.
    pub enabled: bool,
    /// True while background work is paused (a reading at 95 % or more).
    pub background_paused: bool,
    /// The accounts seen (fingerprints, never tokens).
    pub accounts: Vec<AccountStatus>,
}

/// A saving and how it was computed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Saving {
    /// US dollars.
    pub usd: f64,
    /// The tokens it is made of.
    pub tokens: u64,
    /// How it was computed.
    pub how: String,
}

/// What Lore's own work cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoreCosts {
    /// The worker calls (distillation, curation, recall), US dollars.
    pub worker_usd: f64,
    /// Cache writes on turns whose context layers changed, US dollars.
    pub layer_change_writes_usd: f64,
    /// Those turns.
    pub layer_changes: u64,
    /// How it was computed.
    pub how: String,
}

/// Savings over the days shown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Savings {
    /// What the provider's prompt cache saved.
    pub cache: Saving,
    /// What the gradient saved against a passthrough proxy.
    pub gradient: Saving,
    /// What Lore's own work cost.
    pub lore_costs: LoreCosts,
    /// `gradient − worker − layer-change writes`: what Lore saved net (the cache saving is
    /// the provider's and is not counted in it).
    pub net_usd: f64,
}

/// One session's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionLine {
    /// The session.
    pub session_id: String,
    /// Its project.
    pub project: Option<String>,
    /// The model of its latest turn.
    pub model: Option<String>,
    /// Every bucket's cost.
    pub cost_usd: f64,
    /// Of which worker calls.
    pub worker_usd: f64,
    /// Conversation turns.
    pub turns: u64,
    /// Cache saving.
    pub cache_savings_usd: f64,
    /// Gradient saving.
    pub gradient_savings_usd: f64,
    /// Latest cost, ms since the epoch.
    pub last_ms: u64,
}

/// The tracker's own counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackerCounters {
    /// Conversation turns recorded since start.
    pub turns: u64,
    /// Worker calls recorded since start.
    pub worker_calls: u64,
    /// Throttle plans asked by message (the handle's own plans, computed on the caller's
    /// thread, are not counted; the requests they held are).
    pub plans: u64,
    /// Requests delayed since start.
    pub throttled: u64,
    /// Usage-endpoint polls made.
    pub quota_polls: u64,
    /// Times the tracker was restarted by its supervisor.
    pub restarts: u64,
    /// Ledger writes that failed.
    pub failures: u64,
    /// The latest failure.
    pub last_error: Option<String>,
}

/// Everything `GET /api/v1/costs` answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostsReport {
    /// Today's UTC date on the tracker's clock.
    pub today: String,
    /// Days shown, newest first.
    pub days: Vec<DayCosts>,
    /// Today's budget.
    pub budget: BudgetStatus,
    /// OAuth quota pressure.
    pub quota: QuotaStatus,
    /// Savings over the days shown.
    pub savings: Savings,
    /// The dearest sessions active in the days shown.
    pub top_sessions: Vec<SessionLine>,
    /// The tracker's counters (`None` offline).
    pub tracker: Option<TrackerCounters>,
}

/// One session's costs (`GET /api/v1/sessions/{id}/costs`), and the calibration signal the
/// session actor reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionCosts {
    /// The session.
    pub session_id: String,
    /// False when nothing was recorded for it.
    pub found: bool,
    /// Its project.
    pub project: Option<String>,
    /// The model of its latest turn.
    pub model: Option<String>,
    /// Every bucket together.
    pub total: CostTotals,
    /// Per bucket.
    pub buckets: Vec<BucketCosts>,
    /// Measured cache-read cost per conversation turn over the latest turns (the session
    /// actor tightens its layer-0 cap when this is dearer than the catalogue predicts).
    pub cache_read_usd_per_turn: Option<f64>,
}

impl SessionCosts {
    /// From the stored record (or its absence).
    pub fn from_record(session_id: &str, record: Option<SessionCostRecord>) -> Self {
        let Some(record) = record else {
            return Self {
                session_id: session_id.to_string(),
                ..Default::default()
            };
        };
        let recent = &record.recent_cache_read_usd;
        Self {
            session_id: record.session_id.clone(),
            found: true,
            project: record.project.clone(),
            model: record.model.clone(),
            total: record.total(),
            buckets: ordered(
                record
                    .buckets
                    .iter()
                    .map(|(bucket, totals)| BucketCosts {
                        bucket: bucket.clone(),
                        totals: totals.clone(),
                    })
                    .collect(),
            ),
            cache_read_usd_per_turn: (!recent.is_empty())
                .then(|| recent.iter().fold(0.0, |sum, v| sum + v) / recent.len() as f64),
        }
    }
}

/// What the report needs besides the ledger.
#[derive(Debug, Clone, Default)]
pub struct ReportInputs {
    /// Now on the tracker's clock, ms since the epoch.
    pub now_ms: u64,
    /// Days to show, today included (at least 1).
    pub days: u32,
    /// `LORE_DAILY_BUDGET`.
    pub budget_env: Option<f64>,
    /// The spend rate now, US dollars per hour.
    pub rate_usd_per_hour: f64,
    /// Quota state.
    pub quota: QuotaStatus,
    /// The tracker's counters.
    pub tracker: Option<TrackerCounters>,
}

/// Conversation first, then the others by name.
fn ordered(mut buckets: Vec<BucketCosts>) -> Vec<BucketCosts> {
    buckets.sort_by(|a, b| {
        (a.bucket != CONVERSATION, &a.bucket).cmp(&(b.bucket != CONVERSATION, &b.bucket))
    });
    buckets
}

/// The budget's state for `spent_today`.
pub fn budget_status(
    store: &Store,
    inputs: &ReportInputs,
    spent_today: f64,
) -> Result<BudgetStatus, StorageError> {
    let stored = store.budget_setting()?.daily_usd;
    let (daily, source) = match (inputs.budget_env, stored) {
        (Some(env), _) => (Some(env), Some("LORE_DAILY_BUDGET".to_string())),
        (None, Some(api)) => (Some(api), Some("api".to_string())),
        (None, None) => (None, None),
    };
    let hours_left = hours_left_in_utc_day(inputs.now_ms);
    let mut status = BudgetStatus {
        daily_usd: daily,
        source,
        stored_usd: stored,
        spent_today_usd: spent_today,
        rate_usd_per_hour: inputs.rate_usd_per_hour,
        hours_left,
        throttle: store.throttle_day(&day_of(inputs.now_ms))?,
        ..Default::default()
    };
    if let Some(budget) = daily {
        let delay = budget_delay(BudgetView {
            budget_usd: budget,
            spent_usd: spent_today,
            rate_usd_per_hour: inputs.rate_usd_per_hour,
            hours_left,
        });
        status.remaining_usd = Some((budget - spent_today).max(0.0));
        status.fraction = Some(delay.fraction);
        status.pressure = delay.pressure;
        status.target_rate_usd_per_hour = Some(delay.target_rate);
        status.delay_now_secs = delay.seconds;
    }
    Ok(status)
}

fn savings(totals: &CostTotals, worker_usd: f64) -> Savings {
    let unsent = totals.passthrough_tokens.saturating_sub(totals.sent_tokens);
    Savings {
        cache: Saving {
            usd: totals.cache_savings_usd,
            tokens: totals.cache_read_tokens,
            how: format!(
                "{} tokens read from the provider's cache, each priced at the model's input price minus the cache-read price actually paid; summed per turn",
                totals.cache_read_tokens
            ),
        },
        gradient: Saving {
            usd: totals.gradient_savings_usd,
            tokens: unsent,
            how: format!(
                "{} prompt tokens a passthrough proxy would have sent minus {} sent = {unsent} not sent, each priced at what its turn paid per prompt token (uncached, cache-read and cache-write tokens together)",
                totals.passthrough_tokens, totals.sent_tokens
            ),
        },
        lore_costs: LoreCosts {
            worker_usd,
            layer_change_writes_usd: totals.layer_change_write_usd,
            layer_changes: totals.layer_changes,
            how: format!(
                "worker calls (every bucket but conversation) as priced when made, plus the cache writes of the {} turns whose context layers changed",
                totals.layer_changes
            ),
        },
        net_usd: totals.gradient_savings_usd - worker_usd - totals.layer_change_write_usd,
    }
}

/// The report over `inputs.days` days ending today.
pub fn build(store: &Store, inputs: &ReportInputs) -> Result<CostsReport, StorageError> {
    let days = u64::from(inputs.days.max(1));
    let today = day_of(inputs.now_ms);
    let first_ms = inputs
        .now_ms
        .saturating_sub((days - 1) * MS_PER_DAY)
        .saturating_sub(inputs.now_ms % MS_PER_DAY);
    let first_day = day_of(first_ms);
    let mut by_day: Vec<DayCosts> = Vec::new();
    let mut conversation = CostTotals::default();
    let mut worker_usd = 0.0;
    for (day, bucket, totals) in store.cost_days(&first_day)? {
        if day > today {
            continue;
        }
        if bucket == CONVERSATION {
            conversation.add(&totals);
        } else {
            worker_usd += totals.cost_usd;
        }
        if by_day.last().is_none_or(|last| last.day != day) {
            by_day.push(DayCosts {
                day: day.clone(),
                total_usd: 0.0,
                buckets: Vec::new(),
            });
        }
        if let Some(entry) = by_day.last_mut() {
            entry.total_usd += totals.cost_usd;
            entry.buckets.push(BucketCosts { bucket, totals });
        }
    }
    for day in &mut by_day {
        day.buckets = ordered(std::mem::take(&mut day.buckets));
    }
    let spent_today = by_day
        .iter()
        .find(|d| d.day == today)
        .map_or(0.0, |d| d.total_usd);
    by_day.reverse();
    let mut sessions: Vec<SessionLine> = store
        .all_session_costs()?
        .into_iter()
        .filter(|record| record.last_ms >= first_ms)
        .map(|record| {
            let total = record.total();
            let conversation = record.buckets.get(CONVERSATION);
            SessionLine {
                worker_usd: total.cost_usd - conversation.map_or(0.0, |c| c.cost_usd),
                turns: conversation.map_or(0, |c| c.calls),
                session_id: record.session_id,
                project: record.project,
                model: record.model,
                cost_usd: total.cost_usd,
                cache_savings_usd: total.cache_savings_usd,
                gradient_savings_usd: total.gradient_savings_usd,
                last_ms: record.last_ms,
            }
        })
        .collect();
    sessions.sort_by(|a, b| b.cost_usd.total_cmp(&a.cost_usd));
    sessions.truncate(TOP_SESSIONS);
    for line in &mut sessions {
        if line.project.is_none() {
            line.project = store
                .load_session(&line.session_id)
                .ok()
                .flatten()
                .and_then(|s| s.project);
        }
    }
    Ok(CostsReport {
        budget: budget_status(store, inputs, spent_today)?,
        savings: savings(&conversation, worker_usd),
        today,
        days: by_day,
        quota: inputs.quota.clone(),
        top_sessions: sessions,
        tracker: inputs.tracker.clone(),
    })
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
