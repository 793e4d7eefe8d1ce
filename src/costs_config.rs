//! Settings of the cost tracker from the environment: `LORE_COSTS` (on unless `off`),
//! `LORE_DAILY_BUDGET` (US dollars per UTC day), `LORE_QUOTA` (on unless `off`),
//! `LORE_QUOTA_URL` (the OAuth usage endpoint), the catalogue's `LORE_MODEL_OVERRIDES`, and
//! two variables only the integration tests set: `LORE_TEST_CLOCK_OFFSET_MS` (read by
//! [`test_clock`], the one test-clock helper) and `LORE_TEST_COSTS_FAULT`.

use std::collections::HashMap;
use std::sync::Arc;

use lore_actors::catalogue::{Catalogue, parse_overrides};
use lore_actors::costs::{Clock, CostSettings, Fault, QuotaSettings};

/// Everything the cost tracker is configured with.
#[derive(Debug, Clone)]
pub struct CostsConfig {
    /// False with `LORE_COSTS=off`: no accounting, no throttle, no quota polls.
    pub enabled: bool,
    /// The tracker's settings.
    pub settings: CostSettings,
}

fn value<'a>(env: &'a HashMap<String, String>, name: &str) -> Option<&'a str> {
    env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
}

fn off(env: &HashMap<String, String>, name: &str) -> bool {
    value(env, name).is_some_and(|v| matches!(v, "off" | "0" | "false"))
}

/// The clock "today" is read from: wall time, shifted by `LORE_TEST_CLOCK_OFFSET_MS` when a
/// test sets it (so a test can cross a UTC midnight).
pub fn test_clock(env: &HashMap<String, String>) -> Result<Clock, String> {
    match value(env, "LORE_TEST_CLOCK_OFFSET_MS") {
        None => Ok(Clock::system()),
        Some(raw) => raw.parse::<i64>().map(Clock::with_offset).map_err(|_| {
            format!("LORE_TEST_CLOCK_OFFSET_MS=`{raw}` is not a whole number of milliseconds")
        }),
    }
}

fn fault(env: &HashMap<String, String>) -> Result<Option<Fault>, String> {
    let Some(raw) = value(env, "LORE_TEST_COSTS_FAULT") else {
        return Ok(None);
    };
    raw.strip_prefix("panic_after_turn:")
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|n| *n > 0)
        .map(|n| Some(Fault::PanicAfterTurn(n)))
        .ok_or_else(|| {
            format!(
                "LORE_TEST_COSTS_FAULT=`{raw}` is not known; the tests use panic_after_turn:<n>"
            )
        })
}

fn budget(env: &HashMap<String, String>) -> Result<Option<f64>, String> {
    let Some(raw) = value(env, "LORE_DAILY_BUDGET") else {
        return Ok(None);
    };
    let raw = raw.trim_start_matches('$');
    match raw.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(Some(v)),
        _ => Err(format!(
            "LORE_DAILY_BUDGET=`{raw}` is not a positive number of US dollars (e.g. 20 for $20 a day); unset it for no budget"
        )),
    }
}

impl CostsConfig {
    /// Reads the settings; a malformed value is an error that names it.
    pub fn from_env(env: &HashMap<String, String>) -> Result<Self, String> {
        let overrides = parse_overrides(value(env, "LORE_MODEL_OVERRIDES").unwrap_or(""))
            .map_err(|err| format!("LORE_MODEL_OVERRIDES: {err}"))?;
        let mut quota = QuotaSettings {
            enabled: !off(env, "LORE_QUOTA"),
            ..Default::default()
        };
        if let Some(url) = value(env, "LORE_QUOTA_URL") {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "LORE_QUOTA_URL=`{url}` is not an http(s) URL; the default is {}",
                    quota.url
                ));
            }
            quota.url = url.to_string();
        }
        Ok(Self {
            enabled: !off(env, "LORE_COSTS"),
            settings: CostSettings {
                budget_env: budget(env)?,
                catalogue: Arc::new(Catalogue::with_overrides(overrides)),
                quota,
                clock: test_clock(env)?,
                fault: fault(env)?,
            },
        })
    }
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
    fn defaults_are_on_without_a_budget() {
        let config = CostsConfig::from_env(&env(&[])).unwrap();
        assert!(config.enabled);
        assert_eq!(config.settings.budget_env, None);
        assert!(config.settings.quota.enabled);
        assert_eq!(
            config.settings.quota.url,
            "https://api.anthropic.com/api/oauth/usage"
        );
        assert_eq!(config.settings.clock, Clock::system());
        assert_eq!(config.settings.fault, None);
    }

    #[test]
    fn every_setting_is_read_and_bad_ones_are_named() {
        let config = CostsConfig::from_env(&env(&[
            ("LORE_DAILY_BUDGET", "$20"),
            ("LORE_QUOTA_URL", "http://127.0.0.1:9/api/oauth/usage"),
            ("LORE_QUOTA", "off"),
            ("LORE_TEST_CLOCK_OFFSET_MS", "-5000"),
            ("LORE_TEST_COSTS_FAULT", "panic_after_turn:3"),
        ]))
        .unwrap();
        assert_eq!(config.settings.budget_env, Some(20.0));
        assert!(!config.settings.quota.enabled);
        assert_eq!(config.settings.clock.offset_ms(), -5000);
        assert_eq!(config.settings.fault, Some(Fault::PanicAfterTurn(3)));
        assert!(
            !CostsConfig::from_env(&env(&[("LORE_COSTS", "off")]))
                .unwrap()
                .enabled
        );
        for (name, bad) in [
            ("LORE_DAILY_BUDGET", "-1"),
            ("LORE_DAILY_BUDGET", "twenty"),
            ("LORE_QUOTA_URL", "api.anthropic.com"),
            ("LORE_TEST_CLOCK_OFFSET_MS", "soon"),
            ("LORE_TEST_COSTS_FAULT", "crash"),
            ("LORE_MODEL_OVERRIDES", "not json"),
        ] {
            let err = CostsConfig::from_env(&env(&[(name, bad)])).unwrap_err();
            assert!(err.contains(name), "{err}");
        }
    }
}
