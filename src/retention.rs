//! Retention and the size cap: `LORE_RETENTION_DAYS` (default 120, 0 keeps everything),
//! `LORE_MAX_STORAGE_MB` (default 1024, 0 for no cap), `LORE_PRUNE_INTERVAL_SECS` (default 600)
//! and `LORE_PRUNE_KEEP_RECENT_SECS` (default 3600: sessions active since are never pruned), and
//! the start of the `Pruner` on a low-priority arbiter of its own.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use actix::Actor;
use lore_actors::pruner::{Pruner, PrunerCounters, RetentionSettings};
use lore_storage::{SearchIndex, Store};

use crate::config::number;

/// Reads the retention settings; a malformed value is an error that names it.
pub fn settings_from_env(env: &HashMap<String, String>) -> Result<RetentionSettings, String> {
    let days: f64 = number(env, "LORE_RETENTION_DAYS", 120.0)?;
    if !days.is_finite() || days < 0.0 {
        return Err(format!(
            "LORE_RETENTION_DAYS=`{days}` must be a number of days ≥ 0 (0 keeps everything)"
        ));
    }
    let mb: u64 = number(env, "LORE_MAX_STORAGE_MB", 1024)?;
    let interval: u64 = number(env, "LORE_PRUNE_INTERVAL_SECS", 600)?;
    let keep_recent: u64 = number(env, "LORE_PRUNE_KEEP_RECENT_SECS", 3600)?;
    Ok(RetentionSettings {
        retention: (days > 0.0).then(|| Duration::from_secs_f64(days * 86_400.0)),
        max_bytes: (mb > 0).then(|| mb.saturating_mul(1024 * 1024)),
        interval: Duration::from_secs(interval.max(1)),
        keep_recent: Duration::from_secs(keep_recent),
    })
}

/// Starts the pruner; returns where its counters are published.
pub fn start(
    settings: RetentionSettings,
    store: &Store,
    index: Option<Arc<SearchIndex>>,
    data_dir: &Path,
) -> Arc<RwLock<PrunerCounters>> {
    let pruner = Pruner::new(store.clone(), index, data_dir.to_path_buf(), settings);
    let counters = pruner.counters();
    let arbiter = lore_actors::background::low_priority_arbiter();
    Pruner::start_in_arbiter(&arbiter.handle(), move |_| pruner);
    // The arbiter runs until the system stops.
    drop(arbiter);
    counters
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_and_switches() {
        let defaults = settings_from_env(&env(&[])).unwrap();
        assert_eq!(defaults.retention, Some(Duration::from_secs(120 * 86_400)));
        assert_eq!(defaults.max_bytes, Some(1024 * 1024 * 1024));
        let off = settings_from_env(&env(&[
            ("LORE_RETENTION_DAYS", "0"),
            ("LORE_MAX_STORAGE_MB", "0"),
        ]))
        .unwrap();
        assert_eq!((off.retention, off.max_bytes), (None, None));
        for bad in [
            ("LORE_RETENTION_DAYS", "-1"),
            ("LORE_RETENTION_DAYS", "soon"),
            ("LORE_MAX_STORAGE_MB", "1.5"),
        ] {
            assert!(settings_from_env(&env(&[bad])).unwrap_err().contains(bad.0));
        }
    }
}
