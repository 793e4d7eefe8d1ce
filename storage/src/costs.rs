//! The cost ledger: what every conversation turn and every worker call cost, per UTC day and
//! bucket and per session, the day's throttle counters, the cost-rate average and the daily
//! budget set through the API. The `CostTracker` actor is its writer.
//!
//! Tree `costs`, key layouts:
//! - `day/<YYYY-MM-DD>/<bucket>` → [`CostTotals`] (buckets: `conversation`, `distillation`,
//!   `curation`, `query_expansion`, and any later worker kind: the bucket is a name, not an
//!   enum, so an older build reads what a newer one wrote);
//! - `session/<session id>` → [`SessionCostRecord`] (totals per bucket, the recent cache-read
//!   cost per turn);
//! - `throttle/<YYYY-MM-DD>` → [`ThrottleDay`];
//! - `state/rate` → [`RateState`]; `state/budget` → [`BudgetSetting`];
//! - `state/worker_usage_migrated` → empty, once the old `worker_usage` tree was folded in.
//!
//! A turn's day row, its session row and the rate are written in one transaction, so a crash
//! never counts a turn in one and not the other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sled::transaction::{ConflictableTransactionError, TransactionError};

use crate::error::StorageError;
use crate::memory::UsageTotals;
use crate::records::{decode, encode};
use crate::store::Store;

const COSTS: &str = "costs";
/// The tree of the worker ledger before it became part of this one.
const OLD_WORKER_USAGE: &str = "worker_usage";
const RATE_KEY: &str = "state/rate";
const BUDGET_KEY: &str = "state/budget";
const MIGRATED_KEY: &str = "state/worker_usage_migrated";
/// Conversation turns kept for the measured cache-read cost per turn.
pub const RECENT_TURNS: usize = 8;

/// The bucket of conversation turns (the client's own requests).
pub const CONVERSATION: &str = "conversation";

/// Tokens, dollars and savings summed over turns or calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CostTotals {
    /// Turns (or worker calls) that got an answer.
    pub calls: u64,
    /// Worker calls that failed after their retries.
    #[serde(default)]
    pub failures: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the cache with the 5-minute lifetime.
    pub cache_write_tokens: u64,
    /// Input tokens written to the cache with the 1-hour lifetime.
    #[serde(default)]
    pub cache_write_1h_tokens: u64,
    /// What it cost, US dollars.
    pub cost_usd: f64,
    /// Of which cache reads.
    #[serde(default)]
    pub cache_read_usd: f64,
    /// Of which cache writes.
    #[serde(default)]
    pub cache_write_usd: f64,
    /// Cache reads priced at the input price, minus what they cost.
    #[serde(default)]
    pub cache_savings_usd: f64,
    /// Prompt tokens a passthrough proxy would have sent (session actor's estimate).
    #[serde(default)]
    pub passthrough_tokens: u64,
    /// Prompt tokens actually sent (same estimator).
    #[serde(default)]
    pub sent_tokens: u64,
    /// The tokens not sent, priced at what the turn paid per input token.
    #[serde(default)]
    pub gradient_savings_usd: f64,
    /// Turns whose context layers changed (a cache write caused by Lore).
    #[serde(default)]
    pub layer_changes: u64,
    /// The cache writes of those turns.
    #[serde(default)]
    pub layer_change_write_usd: f64,
}

impl CostTotals {
    /// Adds `other` to these totals.
    pub fn add(&mut self, other: &CostTotals) {
        self.calls += other.calls;
        self.failures += other.failures;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.cache_write_1h_tokens += other.cache_write_1h_tokens;
        self.cost_usd += other.cost_usd;
        self.cache_read_usd += other.cache_read_usd;
        self.cache_write_usd += other.cache_write_usd;
        self.cache_savings_usd += other.cache_savings_usd;
        self.passthrough_tokens += other.passthrough_tokens;
        self.sent_tokens += other.sent_tokens;
        self.gradient_savings_usd += other.gradient_savings_usd;
        self.layer_changes += other.layer_changes;
        self.layer_change_write_usd += other.layer_change_write_usd;
    }

    /// A worker call's usage (already priced by the worker client).
    pub fn from_worker(usage: &UsageTotals) -> Self {
        Self {
            calls: usage.calls,
            failures: usage.failures,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            cost_usd: usage.cost_usd,
            ..Default::default()
        }
    }

    /// The worker-ledger view of these totals.
    pub fn to_worker(&self) -> UsageTotals {
        UsageTotals {
            calls: self.calls,
            failures: self.failures,
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_tokens,
            cache_write_tokens: self.cache_write_tokens + self.cache_write_1h_tokens,
            cost_usd: self.cost_usd,
        }
    }
}

/// What one session cost, per bucket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionCostRecord {
    /// The session.
    pub session_id: String,
    /// Its project, when known.
    #[serde(default)]
    pub project: Option<String>,
    /// The model of its latest turn.
    #[serde(default)]
    pub model: Option<String>,
    /// First and latest cost, ms since the epoch.
    pub first_ms: u64,
    /// Latest cost, ms since the epoch.
    pub last_ms: u64,
    /// Totals per bucket.
    pub buckets: BTreeMap<String, CostTotals>,
    /// Cache-read dollars of the latest conversation turns (at most [`RECENT_TURNS`]).
    #[serde(default)]
    pub recent_cache_read_usd: Vec<f64>,
}

impl SessionCostRecord {
    /// Everything the session cost, all buckets.
    pub fn total(&self) -> CostTotals {
        let mut total = CostTotals::default();
        for totals in self.buckets.values() {
            total.add(totals);
        }
        total
    }
}

/// The throttle's counters of one day.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThrottleDay {
    /// Requests delayed.
    pub events: u64,
    /// Their delays, summed, in ms.
    pub total_delay_ms: u64,
}

/// The cost-rate average at the latest cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RateState {
    /// US dollars per hour.
    pub usd_per_hour: f64,
    /// When it was last updated, ms since the epoch.
    pub last_ms: u64,
}

/// The daily budget set through the API (`LORE_DAILY_BUDGET` beats it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetSetting {
    /// US dollars per UTC day; `None` is no budget.
    pub daily_usd: Option<f64>,
    /// When it was set, ms since the epoch.
    pub set_at_ms: u64,
}

/// One cost to add to the ledger.
#[derive(Debug, Clone, Copy)]
pub struct CostEntry<'a> {
    /// UTC day it counts for (`YYYY-MM-DD`).
    pub day: &'a str,
    /// Bucket name.
    pub bucket: &'a str,
    /// Session it belongs to; `None` counts it per day only.
    pub session_id: Option<&'a str>,
    /// The session's project, when known.
    pub project: Option<&'a str>,
    /// The model that answered.
    pub model: Option<&'a str>,
    /// When, ms since the epoch.
    pub at_ms: u64,
    /// The amounts.
    pub totals: &'a CostTotals,
}

fn day_key(day: &str, bucket: &str) -> String {
    format!("day/{day}/{bucket}")
}

fn session_key(id: &str) -> String {
    format!("session/{id}")
}

fn throttle_key(day: &str) -> String {
    format!("throttle/{day}")
}

type TxResult<T> = Result<T, ConflictableTransactionError<StorageError>>;

fn tx_decode<T: serde::de::DeserializeOwned>(what: &str, raw: &[u8]) -> TxResult<T> {
    decode(what, raw).map_err(ConflictableTransactionError::Abort)
}

fn tx_encode<T: Serialize>(what: &str, value: &T) -> TxResult<Vec<u8>> {
    encode(what, value).map_err(ConflictableTransactionError::Abort)
}

fn from_tx(err: TransactionError<StorageError>) -> StorageError {
    match err {
        TransactionError::Storage(err) => StorageError::from(err),
        TransactionError::Abort(err) => err,
    }
}

impl Store {
    /// Adds one cost to its day and bucket and to its session, and stores the cost rate, in one
    /// transaction.
    pub fn add_cost(
        &self,
        entry: &CostEntry<'_>,
        rate: Option<&RateState>,
    ) -> Result<(), StorageError> {
        let tree = self.tree(COSTS)?;
        let day = day_key(entry.day, entry.bucket);
        tree.transaction(|tx| {
            let mut totals: CostTotals = match tx.get(day.as_bytes())? {
                Some(raw) => tx_decode("day costs", &raw)?,
                None => CostTotals::default(),
            };
            totals.add(entry.totals);
            tx.insert(day.as_bytes(), tx_encode("day costs", &totals)?)?;
            if let Some(id) = entry.session_id {
                let key = session_key(id);
                let mut record: SessionCostRecord = match tx.get(key.as_bytes())? {
                    Some(raw) => tx_decode("session costs", &raw)?,
                    None => SessionCostRecord {
                        session_id: id.to_string(),
                        first_ms: entry.at_ms,
                        ..Default::default()
                    },
                };
                record
                    .buckets
                    .entry(entry.bucket.to_string())
                    .or_default()
                    .add(entry.totals);
                record.last_ms = record.last_ms.max(entry.at_ms);
                if let Some(project) = entry.project {
                    record.project = Some(project.to_string());
                }
                if entry.bucket == CONVERSATION {
                    if let Some(model) = entry.model {
                        record.model = Some(model.to_string());
                    }
                    record
                        .recent_cache_read_usd
                        .push(entry.totals.cache_read_usd);
                    let extra = record
                        .recent_cache_read_usd
                        .len()
                        .saturating_sub(RECENT_TURNS);
                    record.recent_cache_read_usd.drain(..extra);
                }
                tx.insert(key.as_bytes(), tx_encode("session costs", &record)?)?;
            }
            if let Some(rate) = rate {
                tx.insert(RATE_KEY, tx_encode("cost rate", rate)?)?;
            }
            Ok(())
        })
        .map_err(from_tx)
    }

    /// Every `(day, bucket, totals)` from `from_day` on (inclusive), oldest day first.
    pub fn cost_days(
        &self,
        from_day: &str,
    ) -> Result<Vec<(String, String, CostTotals)>, StorageError> {
        let tree = self.tree(COSTS)?;
        let mut out = Vec::new();
        for item in tree.range(format!("day/{from_day}").into_bytes()..b"day0".to_vec()) {
            let (key, raw) = item?;
            let key = String::from_utf8_lossy(&key).into_owned();
            let rest = key.strip_prefix("day/").unwrap_or(&key);
            let (day, bucket) = rest.split_once('/').unwrap_or((rest, ""));
            out.push((
                day.to_string(),
                bucket.to_string(),
                decode("day costs", &raw)?,
            ));
        }
        Ok(out)
    }

    /// One session's costs.
    pub fn session_costs(&self, id: &str) -> Result<Option<SessionCostRecord>, StorageError> {
        self.tree(COSTS)?
            .get(session_key(id).as_bytes())?
            .map(|raw| decode("session costs", &raw))
            .transpose()
    }

    /// Every session's costs.
    pub fn all_session_costs(&self) -> Result<Vec<SessionCostRecord>, StorageError> {
        let mut out = Vec::new();
        for item in self.tree(COSTS)?.scan_prefix(b"session/") {
            let (_, raw) = item?;
            out.push(decode("session costs", &raw)?);
        }
        Ok(out)
    }

    /// Counts one delayed request of `day`.
    pub fn add_throttle(&self, day: &str, delay_ms: u64) -> Result<ThrottleDay, StorageError> {
        let tree = self.tree(COSTS)?;
        let key = throttle_key(day);
        tree.transaction(|tx| {
            let mut counters: ThrottleDay = match tx.get(key.as_bytes())? {
                Some(raw) => tx_decode("throttle counters", &raw)?,
                None => ThrottleDay::default(),
            };
            counters.events += 1;
            counters.total_delay_ms += delay_ms;
            tx.insert(key.as_bytes(), tx_encode("throttle counters", &counters)?)?;
            Ok(counters)
        })
        .map_err(from_tx)
    }

    /// The throttle counters of `day`.
    pub fn throttle_day(&self, day: &str) -> Result<ThrottleDay, StorageError> {
        Ok(self
            .tree(COSTS)?
            .get(throttle_key(day).as_bytes())?
            .map(|raw| decode("throttle counters", &raw))
            .transpose()?
            .unwrap_or_default())
    }

    /// The stored cost rate, if any cost was ever recorded.
    pub fn cost_rate(&self) -> Result<Option<RateState>, StorageError> {
        self.tree(COSTS)?
            .get(RATE_KEY)?
            .map(|raw| decode("cost rate", &raw))
            .transpose()
    }

    /// The budget set through the API.
    pub fn budget_setting(&self) -> Result<BudgetSetting, StorageError> {
        Ok(self
            .tree(COSTS)?
            .get(BUDGET_KEY)?
            .map(|raw| decode("budget", &raw))
            .transpose()?
            .unwrap_or_default())
    }

    /// Stores the budget set through the API.
    pub fn set_budget_setting(&self, setting: &BudgetSetting) -> Result<(), StorageError> {
        self.tree(COSTS)?
            .insert(BUDGET_KEY, encode("budget", setting)?)?;
        Ok(())
    }

    /// Folds the worker ledger of earlier builds (tree `worker_usage`, `<day>/<bucket>` →
    /// [`UsageTotals`]) into this one, once; returns the rows moved. The old tree is emptied in
    /// the same transaction, so nothing is counted twice.
    pub fn migrate_worker_usage(&self) -> Result<usize, StorageError> {
        let costs = self.tree(COSTS)?;
        if costs.contains_key(MIGRATED_KEY)? {
            return Ok(0);
        }
        let old = self.tree(OLD_WORKER_USAGE)?;
        let mut rows = Vec::new();
        for item in old.iter() {
            let (key, raw) = item?;
            let text = String::from_utf8_lossy(&key).into_owned();
            let (day, bucket) = text.split_once('/').unwrap_or((text.as_str(), "worker"));
            let usage: UsageTotals = decode("worker usage", &raw)?;
            rows.push((key.to_vec(), day_key(day, bucket), usage));
        }
        use sled::Transactional;
        (&costs, &old)
            .transaction(|(costs, old)| {
                for (old_key, new_key, usage) in &rows {
                    let mut totals: CostTotals = match costs.get(new_key.as_bytes())? {
                        Some(raw) => tx_decode("day costs", &raw)?,
                        None => CostTotals::default(),
                    };
                    totals.add(&CostTotals::from_worker(usage));
                    costs.insert(new_key.as_bytes(), tx_encode("day costs", &totals)?)?;
                    old.remove(old_key.as_slice())?;
                }
                costs.insert(MIGRATED_KEY, &[] as &[u8])?;
                Ok(())
            })
            .map_err(from_tx)?;
        Ok(rows.len())
    }
}

#[cfg(test)]
#[path = "costs_tests.rs"]
mod tests;
