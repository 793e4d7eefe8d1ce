//! The worker usage ledger: tokens and dollars per UTC day and bucket.

use super::records::{UsageTotals, WorkerBucket};
use crate::error::StorageError;
use crate::records::{decode, encode};
use crate::store::Store;

const USAGE: &str = "worker_usage";

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
    /// Adds one call's usage to its day and bucket.
    pub fn record_worker_usage(
        &self,
        day: &str,
        bucket: WorkerBucket,
        usage: &UsageTotals,
    ) -> Result<(), StorageError> {
        let key = format!("{day}/{}", bucket.as_str());
        let tree = self.tree(USAGE)?;
        let mut failure = None;
        tree.update_and_fetch(key.as_bytes(), |old| {
            let mut totals = old
                .and_then(|raw| decode::<UsageTotals>("worker usage", raw).ok())
                .unwrap_or_default();
            totals.add(usage);
            match encode("worker usage", &totals) {
                Ok(bytes) => Some(bytes),
                Err(err) => {
                    failure = Some(err);
                    old.map(<[u8]>::to_vec)
                }
            }
        })?;
        failure.map_or(Ok(()), Err)
    }

    /// Every `(day, bucket, totals)`, oldest day first.
    pub fn worker_usage(&self) -> Result<Vec<(String, String, UsageTotals)>, StorageError> {
        let mut out = Vec::new();
        for item in self.tree(USAGE)?.iter() {
            let (key, raw) = item?;
            let key = String::from_utf8_lossy(&key).into_owned();
            let (day, bucket) = key.split_once('/').unwrap_or((key.as_str(), ""));
            out.push((
                day.to_string(),
                bucket.to_string(),
                decode("worker usage", &raw)?,
            ));
        }
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
