//! Gateway settings: command-line flags over environment variables over defaults.
//!
//! The environment is passed in as a map, so precedence is testable without touching the
//! process environment. Every setting that can be wrong produces an error that names it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use lore_actors::injection::{CardSettings, Placement};

use crate::gateway::headers::parse_extra_headers;
use crate::gateway::upstream::UpstreamConfig;

/// Default listening port, as Lore's.
pub const DEFAULT_PORT: u16 = 3207;

/// Retries of upstream calls that failed before any byte reached the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (`LORE_UPSTREAM_RETRY_MAX_ATTEMPTS`, default 4).
    pub max_attempts: u32,
    /// First backoff delay (`LORE_UPSTREAM_RETRY_MIN_DELAY_MS`, default 250).
    pub min_delay: Duration,
    /// Cap of the exponential backoff and of an honoured `retry-after` (`LORE_UPSTREAM_RETRY_MAX_DELAY_MS`, default 8000).
    pub max_delay: Duration,
    /// Longest wait for response headers of one attempt (`LORE_UPSTREAM_RETRY_ATTEMPT_TIMEOUT_MS`,
    /// default 10 minutes: a non-streaming reply only sends headers when generation ends).
    pub attempt_timeout: Duration,
}

impl RetryPolicy {
    /// Delay before attempt `attempt` (1 = the first retry): exponential, capped.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        self.min_delay.saturating_mul(factor).min(self.max_delay)
    }
}

/// Everything the running gateway needs to know.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Address to listen on.
    pub host: String,
    /// Port to listen on; 0 picks a free one (written to `gateway.port`).
    pub port: u16,
    /// Data directory: sled database, pid and port files, log.
    pub data_dir: PathBuf,
    /// `LORE_GATEWAY_AUTH_TOKEN`: required from clients when listening beyond loopback.
    pub auth_token: Option<String>,
    /// True when the gateway listens beyond loopback (remote mode).
    pub remote: bool,
    /// Upstream resolution settings.
    pub upstream: UpstreamConfig,
    /// `LORE_UPSTREAM_EXTRA_HEADERS`, parsed.
    pub extra_headers: Vec<(String, String)>,
    /// Upstream retry policy.
    pub retry: RetryPolicy,
    /// Upstream silence after which a keepalive is sent to a streaming client (`LORE_KEEPALIVE_SECS`, 30).
    pub keepalive_after: Duration,
    /// Idle time after which a session's actor is stopped (`LORE_SESSION_EVICTION_TIMEOUT`, seconds, 1800).
    pub eviction_after: Duration,
    /// Whether the embedding model is loaded (`LORE_EMBEDDINGS`, default on).
    pub embeddings: bool,
    /// Whether tool-bearing requests get the `recall` tool (`LORE_RECALL_TOOL`, default on).
    pub recall_tool: bool,
    /// Whether recall reranks its top candidates with the cross-encoder (`LORE_RERANK`,
    /// `on`, `off` or `auto`; default off).
    pub rerank: lore_actors::reranker::RerankSetting,
    /// HTTP worker threads (`LORE_WORKERS`, default: one per core).
    pub workers: usize,
    /// Largest accepted request body after decompression (`LORE_MAX_BODY_MB`, 64).
    pub max_body_bytes: usize,
    /// The gateway's own working directory: the provisional project of unattributed sessions.
    pub gateway_cwd: PathBuf,
    /// The card vault (`LORE_CARDS_VAULT`, else `<data dir>/cards`); `None` when `LORE_CARDS=off`.
    pub cards_vault: Option<PathBuf>,
    /// How cards are injected (`LORE_CARDS_BUDGET` tokens, `LORE_CARDS_SCAN_DEPTH` turns,
    /// `LORE_CARDS_FRAMING`).
    pub card_settings: CardSettings,
    /// The memory workers (distillation, curation) and where their calls go.
    pub memory: crate::memory_config::MemoryConfig,
    /// The context manager's settings and the model catalogue (`LORE_MODEL_OVERRIDES`).
    pub context: std::sync::Arc<lore_actors::turn::ContextServices>,
    /// The flags given on the command line, so the settings page can say where a value came from.
    pub flags: Overrides,
    /// Names of the `LORE_*` variables set (non-empty) when the gateway started; no values.
    pub env_set: std::collections::BTreeSet<String>,
    /// Retention and the size cap of the raw conversation data.
    pub retention: lore_actors::pruner::RetentionSettings,
    /// The cost tracker: budget, quota polls, the test clock.
    pub costs: crate::costs_config::CostsConfig,
}

/// Flags given on the command line; `None` means "not given".
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--host`.
    pub host: Option<String>,
    /// `--port`.
    pub port: Option<u16>,
    /// `--data-dir`.
    pub data_dir: Option<PathBuf>,
}

/// Resolves the data directory: flag, `LORE_DATA_DIR`, `$XDG_DATA_HOME/lore`, `~/.local/share/lore`.
pub fn data_dir(flag: Option<&Path>, env: &HashMap<String, String>) -> PathBuf {
    if let Some(dir) = flag {
        return dir.to_path_buf();
    }
    let non_empty = |name: &str| env.get(name).filter(|value| !value.trim().is_empty());
    if let Some(dir) = non_empty("LORE_DATA_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = non_empty("XDG_DATA_HOME") {
        return Path::new(dir).join("lore");
    }
    let home = non_empty("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    home.join(".local/share/lore")
}

/// A number from the environment, or `default` when unset or empty; a malformed value is an
/// error that names the variable.
pub(crate) fn number<T: std::str::FromStr>(
    env: &HashMap<String, String>,
    name: &str,
    default: T,
) -> Result<T, String> {
    match env
        .get(name)
        .map(|value| value.trim())
        .filter(|value| !value.is_empty())
    {
        None => Ok(default),
        Some(raw) => raw
            .parse()
            .map_err(|_| format!("{name}=`{raw}` is not a valid number")),
    }
}

/// True for addresses only this machine can reach.
pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl GatewayConfig {
    /// Builds the configuration from flags and an environment map.
    pub fn build(overrides: &Overrides, env: &HashMap<String, String>) -> Result<Self, String> {
        let host = overrides
            .host
            .clone()
            .or_else(|| env.get("LORE_LISTEN_HOST").cloned())
            .unwrap_or_else(|| "127.0.0.1".to_string());
        let port = match overrides.port {
            Some(port) => port,
            None => number(env, "LORE_LISTEN_PORT", DEFAULT_PORT)?,
        };
        let remote = !is_loopback_host(&host)
            || env
                .get("LORE_REMOTE_GATEWAY")
                .is_some_and(|v| v == "1" || v == "true")
            || env
                .get("LORE_HOSTED_MODE")
                .is_some_and(|v| v == "1" || v == "true");
        let auth_token = env
            .get("LORE_GATEWAY_AUTH_TOKEN")
            .map(|token| token.trim().to_string())
            .filter(|token| !token.is_empty());
        if remote {
            match &auth_token {
                None => {
                    return Err(format!(
                        "refusing to listen on {host} without LORE_GATEWAY_AUTH_TOKEN: anyone who can reach this address could use your provider keys. \
                         Set LORE_GATEWAY_AUTH_TOKEN to a long random value (e.g. `openssl rand -hex 32`) or listen on 127.0.0.1"
                    ));
                }
                Some(token) if token.len() < 16 => {
                    return Err("LORE_GATEWAY_AUTH_TOKEN is too short; use at least 16 characters (e.g. `openssl rand -hex 32`)".into());
                }
                Some(_) => {}
            }
        }
        let upstream = UpstreamConfig::from_env(env, remote)?;
        let extra_headers = env
            .get("LORE_UPSTREAM_EXTRA_HEADERS")
            .map(|raw| parse_extra_headers(raw))
            .unwrap_or_default();
        let retry = RetryPolicy {
            max_attempts: number(env, "LORE_UPSTREAM_RETRY_MAX_ATTEMPTS", 4u32)?.clamp(1, 20),
            min_delay: Duration::from_millis(number(
                env,
                "LORE_UPSTREAM_RETRY_MIN_DELAY_MS",
                250u64,
            )?),
            max_delay: Duration::from_millis(number(
                env,
                "LORE_UPSTREAM_RETRY_MAX_DELAY_MS",
                8_000u64,
            )?),
            attempt_timeout: Duration::from_millis(number(
                env,
                "LORE_UPSTREAM_RETRY_ATTEMPT_TIMEOUT_MS",
                600_000u64,
            )?),
        };
        let data_dir = data_dir(overrides.data_dir.as_deref(), env);
        let cards_off = env
            .get("LORE_CARDS")
            .is_some_and(|v| v == "off" || v == "0" || v == "false");
        let cards_vault = (!cards_off).then(|| {
            match env.get("LORE_CARDS_VAULT").filter(|v| !v.trim().is_empty()) {
                Some(vault) => PathBuf::from(vault),
                None => data_dir.join("cards"),
            }
        });
        let defaults = CardSettings::default();
        let placement = match env
            .get("LORE_CARDS_PLACEMENT")
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("") | Some("user") => Placement::User,
            Some("system") => Placement::System,
            Some(other) => {
                return Err(format!(
                    "LORE_CARDS_PLACEMENT=`{other}` is not known; use user (default, cache-stable) or system"
                ));
            }
        };
        let card_settings = CardSettings {
            placement,
            budget_tokens: number(env, "LORE_CARDS_BUDGET", defaults.budget_tokens)?
                .clamp(50, 20_000),
            scan_depth: number(env, "LORE_CARDS_SCAN_DEPTH", defaults.scan_depth)?.min(10),
            framing: env
                .get("LORE_CARDS_FRAMING")
                .cloned()
                .unwrap_or(defaults.framing),
        };
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2);
        let gateway_cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let context = crate::context_config::from_env(env)?;
        // One catalogue for the context manager and the cost tracker.
        let mut costs = crate::costs_config::CostsConfig::from_env(env)?;
        costs.settings.catalogue = std::sync::Arc::clone(&context.catalogue);
        let mut memory = crate::memory_config::MemoryConfig::from_env(env)?;
        memory.settings.worker.catalogue = std::sync::Arc::clone(&context.catalogue);
        Ok(Self {
            host,
            port,
            data_dir,
            auth_token,
            remote,
            upstream,
            extra_headers,
            retry,
            keepalive_after: Duration::from_secs(number(env, "LORE_KEEPALIVE_SECS", 30u64)?.max(1)),
            eviction_after: Duration::from_secs(
                number(env, "LORE_SESSION_EVICTION_TIMEOUT", 1800u64)?.max(1),
            ),
            embeddings: !env
                .get("LORE_EMBEDDINGS")
                .is_some_and(|v| v == "off" || v == "0" || v == "false"),
            recall_tool: !env
                .get("LORE_RECALL_TOOL")
                .is_some_and(|v| v == "off" || v == "0" || v == "false"),
            rerank: match env
                .get("LORE_RERANK")
                .map(|v| v.trim())
                .filter(|v| !v.is_empty())
            {
                Some(value) => value.parse()?,
                None => lore_actors::reranker::RerankSetting::default(),
            },
            workers: number(env, "LORE_WORKERS", cores)?.clamp(1, 64),
            max_body_bytes: number(env, "LORE_MAX_BODY_MB", 64usize)?.clamp(1, 1024) * 1024 * 1024,
            gateway_cwd,
            cards_vault,
            card_settings,
            memory,
            context,
            flags: overrides.clone(),
            env_set: env
                .iter()
                .filter(|(name, value)| name.starts_with("LORE_") && !value.trim().is_empty())
                .map(|(name, _)| name.clone())
                .collect(),
            retention: crate::retention::settings_from_env(env)?,
            costs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn flags_beat_environment_beats_defaults() {
        let e = env(&[
            ("LORE_LISTEN_PORT", "4000"),
            ("LORE_DATA_DIR", "/d"),
            ("HOME", "/h"),
        ]);
        let cfg = GatewayConfig::build(&Overrides::default(), &e).unwrap();
        assert_eq!((cfg.host.as_str(), cfg.port), ("127.0.0.1", 4000));
        assert_eq!(cfg.data_dir, PathBuf::from("/d"));
        let flags = Overrides {
            port: Some(5),
            data_dir: Some("/f".into()),
            ..Default::default()
        };
        let cfg = GatewayConfig::build(&flags, &e).unwrap();
        assert_eq!((cfg.port, cfg.data_dir), (5, PathBuf::from("/f")));
        let cfg = GatewayConfig::build(&Overrides::default(), &env(&[("HOME", "/h")])).unwrap();
        assert_eq!(
            (cfg.port, cfg.data_dir),
            (DEFAULT_PORT, PathBuf::from("/h/.local/share/lore"))
        );
        assert!(!cfg.remote);
    }

    #[test]
    fn a_public_bind_needs_a_token() {
        let flags = Overrides {
            host: Some("0.0.0.0".into()),
            ..Default::default()
        };
        let err = GatewayConfig::build(&flags, &env(&[])).unwrap_err();
        assert!(err.contains("LORE_GATEWAY_AUTH_TOKEN"), "{err}");
        let cfg = GatewayConfig::build(
            &flags,
            &env(&[("LORE_GATEWAY_AUTH_TOKEN", "0123456789abcdef0123")]),
        )
        .unwrap();
        assert!(cfg.remote);
    }

    #[test]
    fn bad_numbers_are_named() {
        let err =
            GatewayConfig::build(&Overrides::default(), &env(&[("LORE_LISTEN_PORT", "http")]))
                .unwrap_err();
        assert!(err.contains("LORE_LISTEN_PORT"), "{err}");
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let policy = RetryPolicy {
            max_attempts: 5,
            min_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            attempt_timeout: Duration::from_secs(1),
        };
        assert_eq!(policy.backoff(1), Duration::from_millis(100));
        assert_eq!(policy.backoff(2), Duration::from_millis(200));
        assert_eq!(policy.backoff(3), Duration::from_millis(300));
    }
}
