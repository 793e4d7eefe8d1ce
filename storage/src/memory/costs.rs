//! UTC days, and the worker-spend view of the cost ledger ([`crate::costs`]): what
//! `lore status` and `/api/v1/actors` show as worker usage.

use super::records::{UsageTotals, WorkerBucket};
use crate::costs::{CONVERSATION, CostEntry, CostTotals};
use crate::error::StorageError;
use crate::records::decode;
use crate::store::Store;

/// The worker ledger of builds before the cost ledger; folded in by
/// [`Store::migrate_worker_usage`].
const OLD_USAGE: &str = "worker_usage";

/// The UTC date (`YYYY-MM-DD`) of a time in ms since the epoch.
pub fn day_of(ms: u64) -> String {
    // Howard Hinnant's days-to-civil algorithm.
    let days = (ms / 86_400_000) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

impl Store {
    /// Adds one worker call's usage to its day and bucket in the cost ledger (what the
    /// `CostTracker` does for every worker call; used directly when no tracker runs).
    pub fn record_worker_usage(
        &self,
        day: &str,
        bucket: WorkerBucket,
        usage: &UsageTotals,
    ) -> Result<(), StorageError> {
        let totals = CostTotals::from_worker(usage);
        let entry = CostEntry {
            day,
            bucket: bucket.as_str(),
            session_id: None,
            project: None,
            model: None,
            at_ms: 0,
            totals: &totals,
        };
        self.add_cost(&entry, None)
    }

    /// Worker spend: every `(day, bucket, totals)` of the cost ledger's worker buckets (every
    /// bucket but `conversation`), oldest day first, with rows of the pre-ledger `worker_usage`
    /// tree that were not folded in yet.
    pub fn worker_usage(&self) -> Result<Vec<(String, String, UsageTotals)>, StorageError> {
        let mut out: Vec<(String, String, UsageTotals)> = self
            .cost_days("")?
            .into_iter()
            .filter(|(_, bucket, _)| bucket != CONVERSATION)
            .map(|(day, bucket, totals)| (day, bucket, totals.to_worker()))
            .collect();
        for item in self.tree(OLD_USAGE)?.iter() {
            let (key, raw) = item?;
            let key = String::from_utf8_lossy(&key).into_owned();
            let (day, bucket) = key.split_once('/').unwrap_or((key.as_str(), ""));
            let usage: UsageTotals = decode("worker usage", &raw)?;
            match out.iter_mut().find(|(d, b, _)| d == day && b == bucket) {
                Some((_, _, totals)) => totals.add(&usage),
                None => out.push((day.to_string(), bucket.to_string(), usage)),
            }
        }
        out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn days_are_utc_calendar_dates() {
        assert_eq!(day_of(0), "1970-01-01");
        assert_eq!(day_of(951_782_400_000), "2000-02-29");
        assert_eq!(day_of(1_795_996_800_000 - 1), "2026-11-29");
    }

    #[test]
    fn usage_adds_up_per_day_and_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let call = UsageTotals {
            calls: 1,
            input_tokens: 100,
            output_tokens: 10,
            cost_usd: 0.5,
            ..Default::default()
        };
        store
            .record_worker_usage("2026-11-30", WorkerBucket::Distillation, &call)
            .unwrap();
        store
            .record_worker_usage("2026-11-30", WorkerBucket::Distillation, &call)
            .unwrap();
        store
            .record_worker_usage("2026-11-30", WorkerBucket::Curation, &call)
            .unwrap();
        let usage = store.worker_usage().unwrap();
        assert_eq!(usage.len(), 2);
        assert_eq!(usage[1].1, "distillation");
        assert_eq!(usage[1].2.input_tokens, 200);
        assert!((usage[1].2.cost_usd - 1.0).abs() < 1e-9);
    }
}
