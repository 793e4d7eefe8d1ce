//! The context manager's settings from the environment: `LORE_CONTEXT` (on/off),
//! `LORE_TARGET_CACHE_READ_COST` (dollars of cache reads a layer-0 turn may cost, 0.10; 0
//! disables the cap), `LORE_MAX_LAYER0_TOKENS` (pins the cap), `LORE_CACHE_TTL` (`auto`, `5m`,
//! `1h`), `LORE_IDLE_RESUME_MINUTES` (5), `LORE_LTM` (long-term knowledge in the prompt, on/off;
//! `each-turn` is the benchmarks' baseline that searches system[2] again every turn) and `LORE_MODEL_OVERRIDES` (the model catalogue's corrections). A malformed value is refused at start with a message that names it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use lore_actors::catalogue::{Catalogue, parse_overrides};
use lore_actors::gradient::{ContextSettings, TtlMode};
use lore_actors::turn::ContextServices;

use crate::config::number;

fn value<'a>(env: &'a HashMap<String, String>, name: &str) -> Option<&'a str> {
    env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// Reads the context settings and the catalogue.
pub fn from_env(env: &HashMap<String, String>) -> Result<Arc<ContextServices>, String> {
    let defaults = ContextSettings::default();
    let enabled = match value(env, "LORE_CONTEXT")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("on" | "1" | "true") => true,
        Some("off" | "0" | "false") => false,
        Some(other) => {
            return Err(format!(
                "LORE_CONTEXT=`{other}` is not known; use on (default) or off"
            ));
        }
    };
    let target: f64 = number(
        env,
        "LORE_TARGET_CACHE_READ_COST",
        defaults.target_cache_read_cost,
    )?;
    if !target.is_finite() || target < 0.0 {
        return Err(format!(
            "LORE_TARGET_CACHE_READ_COST=`{target}` must be zero or more dollars per turn (0.10 by default; 0 disables the cap)"
        ));
    }
    let max_layer0_tokens = match value(env, "LORE_MAX_LAYER0_TOKENS") {
        None => None,
        Some(raw) => match raw.parse::<u64>() {
            Ok(tokens) if tokens >= 1_000 => Some(tokens),
            _ => {
                return Err(format!(
                    "LORE_MAX_LAYER0_TOKENS=`{raw}` must be a whole number of tokens, at least 1000"
                ));
            }
        },
    };
    let ttl = match value(env, "LORE_CACHE_TTL")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("auto") => TtlMode::Auto,
        Some("5m") => TtlMode::FiveMinutes,
        Some("1h") => TtlMode::OneHour,
        Some(other) => {
            return Err(format!(
                "LORE_CACHE_TTL=`{other}` is not known; use auto (default), 5m or 1h"
            ));
        }
    };
    let idle_minutes: f64 = number(env, "LORE_IDLE_RESUME_MINUTES", 5.0)?;
    if !idle_minutes.is_finite() || !(0.0..=1_440.0).contains(&idle_minutes) {
        return Err(format!(
            "LORE_IDLE_RESUME_MINUTES=`{idle_minutes}` must be between 0 and 1440 minutes"
        ));
    }
    let overrides = parse_overrides(value(env, "LORE_MODEL_OVERRIDES").unwrap_or(""))
        .map_err(|err| err.to_string())?;
    let (ltm, ltm_each_turn) = match value(env, "LORE_LTM")
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        None | Some("on" | "1" | "true") => (true, false),
        Some("off" | "0" | "false") => (false, false),
        // The benchmarks' baseline: system[2] searched and rendered again every turn.
        Some("each-turn") => (true, true),
        Some(other) => {
            return Err(format!(
                "LORE_LTM=`{other}` is not known; use on (default), off or each-turn (a benchmark baseline)"
            ));
        }
    };
    Ok(Arc::new(ContextServices {
        catalogue: Arc::new(Catalogue::with_overrides(overrides)),
        settings: ContextSettings {
            enabled,
            target_cache_read_cost: target,
            max_layer0_tokens,
            ttl,
            idle_resume: Duration::from_secs_f64(idle_minutes * 60.0),
        },
        ltm,
        ltm_each_turn,
        finder: None,
    }))
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
    fn defaults_and_overrides_are_read() {
        let services = from_env(&env(&[])).unwrap();
        assert!(services.settings.enabled);
        assert_eq!(services.settings.target_cache_read_cost, 0.10);
        let services = from_env(&env(&[
            ("LORE_CONTEXT", "off"),
            ("LORE_TARGET_CACHE_READ_COST", "0"),
            ("LORE_MAX_LAYER0_TOKENS", "30000"),
            ("LORE_CACHE_TTL", "1h"),
            (
                "LORE_MODEL_OVERRIDES",
                r#"{"claude-sonnet-4-6":{"context":64000,"output":8192}}"#,
            ),
        ]))
        .unwrap();
        assert!(!services.settings.enabled);
        assert_eq!(services.settings.max_layer0_tokens, Some(30_000));
        assert_eq!(services.settings.ttl, TtlMode::OneHour);
        assert_eq!(
            services.catalogue.lookup("claude-sonnet-4-6").context,
            64_000
        );
        assert!(services.ltm && !services.ltm_each_turn);
        let services = from_env(&env(&[("LORE_LTM", "each-turn")])).unwrap();
        assert!(services.ltm && services.ltm_each_turn);
        let services = from_env(&env(&[("LORE_LTM", "off")])).unwrap();
        assert!(!services.ltm);
    }

    #[test]
    fn bad_values_are_named() {
        for (name, value) in [
            ("LORE_CONTEXT", "maybe"),
            ("LORE_TARGET_CACHE_READ_COST", "-1"),
            ("LORE_TARGET_CACHE_READ_COST", "cheap"),
            ("LORE_MAX_LAYER0_TOKENS", "12"),
            ("LORE_CACHE_TTL", "2h"),
            ("LORE_IDLE_RESUME_MINUTES", "-3"),
            ("LORE_LTM", "sometimes"),
            ("LORE_MODEL_OVERRIDES", r#"{"m":{"contxt":1}}"#),
        ] {
            let err = from_env(&env(&[(name, value)])).unwrap_err();
            assert!(err.contains(name), "{name}: {err}");
        }
    }
}
