//! Settings of the memory workers from the environment: thresholds and timings
//! (`LORE_IDLE_TIMEOUT`, `LORE_CURATE_AFTER_TURNS`, …) and where worker calls go
//! (`LORE_WORKER_UPSTREAM`, `LORE_WORKER_API_KEY`, `LORE_WORKER_MODEL`, `LORE_WORKER_PROTOCOL`).

use std::collections::HashMap;
use std::time::Duration;

use lore_actors::distiller::MemorySettings;

use crate::config::number;
use lore_actors::catalogue::Price;
use lore_actors::worker::{WorkerProtocol, WorkerSettings};

/// A worker upstream the operator configured instead of each session's own provider.
#[derive(Clone, PartialEq, Eq)]
pub struct WorkerUpstream {
    /// Full endpoint URL.
    pub url: String,
    /// Its wire protocol.
    pub protocol: WorkerProtocol,
    /// `LORE_WORKER_API_KEY`; without it the session's credential is used only when the
    /// session talks to the same origin.
    pub api_key: Option<String>,
}

impl std::fmt::Debug for WorkerUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerUpstream")
            .field("url", &self.url)
            .field("protocol", &self.protocol)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .finish()
    }
}

/// Everything the memory workers are configured with.
#[derive(Debug, Clone)]
pub struct MemoryConfig {
    /// False with `LORE_MEMORY=off`: nothing is distilled or curated.
    pub enabled: bool,
    /// Thresholds and timings.
    pub settings: MemorySettings,
    /// `LORE_WORKER_UPSTREAM`, when set.
    pub upstream: Option<WorkerUpstream>,
    /// `LORE_WORKER_MODEL`, when set.
    pub model: Option<String>,
}

fn seconds(env: &HashMap<String, String>, name: &str, default: f64) -> Result<Duration, String> {
    match env.get(name).map(|v| v.trim()).filter(|v| !v.is_empty()) {
        None => Ok(Duration::from_secs_f64(default)),
        Some(raw) => match raw.parse::<f64>() {
            // At most a year: larger values would overflow a `Duration`.
            Ok(value) if value.is_finite() && (0.0..=31_536_000.0).contains(&value) => {
                Ok(Duration::from_secs_f64(value))
            }
            _ => Err(format!(
                "{name}=`{raw}` is not a number of seconds up to a year (e.g. 60 or 0.5)"
            )),
        },
    }
}

fn non_empty(env: &HashMap<String, String>, name: &str) -> Option<String> {
    env.get(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The endpoint URL and protocol of `LORE_WORKER_UPSTREAM`: a full endpoint is kept; a base
/// URL gets the path of the protocol (`LORE_WORKER_PROTOCOL`, else Anthropic for an
/// anthropic.com host and OpenAI Chat otherwise).
fn worker_endpoint(base: &str, protocol: Option<&str>) -> Result<(String, WorkerProtocol), String> {
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(format!(
            "LORE_WORKER_UPSTREAM=`{base}` is not an http(s) URL; use e.g. https://openrouter.ai/api/v1"
        ));
    }
    let authority = base
        .split_once("://")
        .map_or("", |(_, rest)| rest.split('/').next().unwrap_or(""));
    if authority.contains('@') {
        return Err(
            "LORE_WORKER_UPSTREAM must not carry credentials; put the key in LORE_WORKER_API_KEY"
                .into(),
        );
    }
    if base.contains('?') || base.contains('#') {
        return Err(format!(
            "LORE_WORKER_UPSTREAM=`{base}` has a query or fragment; give the base URL or the endpoint only"
        ));
    }
    let base = base.trim_end_matches('/');
    let protocol = match protocol.map(str::to_ascii_lowercase).as_deref() {
        Some("anthropic") => WorkerProtocol::Anthropic,
        Some("openai") | Some("chat") => WorkerProtocol::OpenAiChat,
        Some("responses") => WorkerProtocol::OpenAiResponses,
        Some(other) => {
            return Err(format!(
                "LORE_WORKER_PROTOCOL=`{other}` is not known; use anthropic, openai or responses"
            ));
        }
        None if base.ends_with("/messages") || base.contains("anthropic.com") => {
            WorkerProtocol::Anthropic
        }
        None if base.ends_with("/responses") => WorkerProtocol::OpenAiResponses,
        None => WorkerProtocol::OpenAiChat,
    };
    let suffix = match protocol {
        WorkerProtocol::Anthropic => "/messages",
        WorkerProtocol::OpenAiChat => "/chat/completions",
        WorkerProtocol::OpenAiResponses => "/responses",
    };
    if base.ends_with(suffix) {
        return Ok((base.to_string(), protocol));
    }
    let versioned = if base.ends_with("/v1") {
        base.to_string()
    } else {
        format!("{base}/v1")
    };
    Ok((format!("{versioned}{suffix}"), protocol))
}

impl MemoryConfig {
    /// Reads the settings; a malformed value is an error that names it.
    pub fn from_env(env: &HashMap<String, String>) -> Result<Self, String> {
        let defaults = MemorySettings::default();
        let idle_after = seconds(env, "LORE_IDLE_TIMEOUT", 60.0)?;
        let tick = (idle_after / 4).clamp(Duration::from_millis(100), defaults.tick);
        let base = WorkerSettings::default();
        let price_override = match non_empty(env, "LORE_WORKER_PRICE") {
            None => None,
            Some(raw) => Some(Price::parse(&raw)?),
        };
        let worker = WorkerSettings {
            max_attempts: (number(
                env,
                "LORE_WORKER_MAX_ATTEMPTS",
                u64::from(base.max_attempts),
            )?
            .clamp(1, 10)) as u32,
            base_delay: Duration::from_millis(number(
                env,
                "LORE_WORKER_RETRY_BASE_MS",
                base.base_delay.as_millis() as u64,
            )?),
            price_override,
            ..base
        };
        let settings = MemorySettings {
            idle_after,
            worker,
            tick,
            curate_after_turns: number(
                env,
                "LORE_CURATE_AFTER_TURNS",
                defaults.curate_after_turns,
            )?
            .max(1),
            retry_after: seconds(env, "LORE_MEMORY_RETRY_AFTER", 60.0)?,
            ..defaults
        };
        let upstream = match non_empty(env, "LORE_WORKER_UPSTREAM") {
            None => None,
            Some(base) => {
                let protocol = non_empty(env, "LORE_WORKER_PROTOCOL");
                let (url, protocol) = worker_endpoint(&base, protocol.as_deref())?;
                Some(WorkerUpstream {
                    url,
                    protocol,
                    api_key: non_empty(env, "LORE_WORKER_API_KEY"),
                })
            }
        };
        Ok(Self {
            enabled: !env
                .get("LORE_MEMORY")
                .is_some_and(|v| v == "off" || v == "0" || v == "false"),
            settings,
            upstream,
            model: non_empty(env, "LORE_WORKER_MODEL"),
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
    fn defaults_follow_the_seed() {
        let config = MemoryConfig::from_env(&env(&[])).unwrap();
        assert!(config.enabled);
        assert_eq!(config.settings.idle_after, Duration::from_secs(60));
        assert_eq!(config.settings.min_messages, 5);
        assert_eq!(config.settings.meta_threshold, 20);
        assert!(config.upstream.is_none());
    }

    #[test]
    fn worker_upstreams_get_their_endpoint_and_keys_stay_out_of_debug() {
        let config = MemoryConfig::from_env(&env(&[
            ("LORE_WORKER_UPSTREAM", "https://openrouter.ai/api/v1"),
            ("LORE_WORKER_API_KEY", "sk-secret"),
            ("LORE_IDLE_TIMEOUT", "0.5"),
        ]))
        .unwrap();
        let upstream = config.upstream.clone().unwrap();
        assert_eq!(
            upstream.url,
            "https://openrouter.ai/api/v1/chat/completions"
        );
        assert_eq!(upstream.protocol, WorkerProtocol::OpenAiChat);
        assert!(!format!("{config:?}").contains("sk-secret"));
        assert_eq!(config.settings.idle_after, Duration::from_millis(500));
        let (url, protocol) = worker_endpoint("https://api.anthropic.com", None).unwrap();
        assert_eq!(
            (url.as_str(), protocol),
            (
                "https://api.anthropic.com/v1/messages",
                WorkerProtocol::Anthropic
            )
        );
    }

    #[test]
    fn bad_values_are_named() {
        let err = MemoryConfig::from_env(&env(&[("LORE_IDLE_TIMEOUT", "soon")])).unwrap_err();
        assert!(err.contains("LORE_IDLE_TIMEOUT"), "{err}");
        let err = MemoryConfig::from_env(&env(&[(
            "LORE_WORKER_UPSTREAM",
            "https://me:sk-secret@openrouter.ai/api",
        )]))
        .unwrap_err();
        assert!(
            err.contains("LORE_WORKER_API_KEY") && !err.contains("sk-secret"),
            "{err}"
        );
        let err =
            MemoryConfig::from_env(&env(&[("LORE_WORKER_UPSTREAM", "openrouter.ai")])).unwrap_err();
        assert!(err.contains("not an http(s) URL"), "{err}");
        let err = MemoryConfig::from_env(&env(&[
            ("LORE_WORKER_UPSTREAM", "https://x"),
            ("LORE_WORKER_PROTOCOL", "grpc"),
        ]))
        .unwrap_err();
        assert!(err.contains("LORE_WORKER_PROTOCOL"), "{err}");
    }
}
