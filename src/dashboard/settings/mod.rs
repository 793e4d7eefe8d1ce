//! The effective configuration, each value with where it came from: a command-line flag, an
//! environment variable, or the default (`GET /api/v1/settings`). Secrets (the gateway token,
//! the worker key, extra upstream headers) are shown as set or not, never their value.
//!
//! - [`context`]: the rows of the context manager and the cost tracker.
//! - [`catalogue`]: the model catalogue in force (the one the context manager, the cost
//!   tracker and the workers price from), each entry with where it came from.

pub mod catalogue;
pub mod context;

use serde::Serialize;

use crate::config::GatewayConfig;
use catalogue::CatalogueRow;

/// One setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SettingRow {
    /// The environment variable (or flag) that sets it.
    pub name: &'static str,
    /// The value in force.
    pub value: String,
    /// `flag --x`, `environment` or `default`.
    pub source: String,
    /// What it does.
    pub about: &'static str,
}

/// The settings page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// Every setting, grouped as the README lists them.
    pub settings: Vec<SettingRow>,
    /// The model catalogue in force: every entry with the overrides applied, then overrides
    /// that match no entry, then the default of any other model.
    pub model_catalogue: Vec<CatalogueRow>,
    /// Entries `LORE_MODEL_OVERRIDES` changed or added.
    pub overridden: usize,
}

/// Where a value came from: the flag when given, the environment when set, else the default.
pub fn source_of(config: &GatewayConfig, flag: Option<(&str, bool)>, env: &str) -> String {
    if let Some((name, true)) = flag {
        return format!("flag {name}");
    }
    if config.env_set.contains(env) {
        return "environment".into();
    }
    "default".into()
}

/// A secret shown as set or not.
pub fn secret(set: bool) -> String {
    if set {
        "set (hidden)".into()
    } else {
        "not set".into()
    }
}

/// A duration in seconds.
pub fn seconds(d: std::time::Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// The rows of a configuration.
pub fn load(config: &GatewayConfig) -> Settings {
    let flags = &config.flags;
    let source = |flag: Option<(&str, bool)>, env: &str| source_of(config, flag, env);
    let mut rows = Vec::new();
    let mut row = |name: &'static str, value: String, source: String, about: &'static str| {
        rows.push(SettingRow {
            name,
            value,
            source,
            about,
        });
    };
    row(
        "LORE_LISTEN_HOST",
        config.host.clone(),
        source(Some(("--host", flags.host.is_some())), "LORE_LISTEN_HOST"),
        "address the gateway listens on",
    );
    row(
        "LORE_LISTEN_PORT",
        config.port.to_string(),
        source(Some(("--port", flags.port.is_some())), "LORE_LISTEN_PORT"),
        "port (0 picks a free one)",
    );
    row(
        "LORE_DATA_DIR",
        config.data_dir.display().to_string(),
        source(
            Some(("--data-dir", flags.data_dir.is_some())),
            "LORE_DATA_DIR",
        ),
        "sled database, search index, pid and port files",
    );
    row(
        "LORE_GATEWAY_AUTH_TOKEN",
        secret(config.auth_token.is_some()),
        source(None, "LORE_GATEWAY_AUTH_TOKEN"),
        "token remote clients must send; required beyond loopback",
    );
    row(
        "LORE_REMOTE_GATEWAY",
        config.remote.to_string(),
        source(None, "LORE_REMOTE_GATEWAY"),
        "remote mode (also on for a non-loopback host)",
    );
    row(
        "LORE_UPSTREAM_ANTHROPIC",
        config.upstream.anthropic.clone(),
        source(None, "LORE_UPSTREAM_ANTHROPIC"),
        "Anthropic upstream",
    );
    row(
        "LORE_UPSTREAM_OPENAI",
        config.upstream.openai.clone(),
        source(None, "LORE_UPSTREAM_OPENAI"),
        "OpenAI upstream",
    );
    row(
        "LORE_UPSTREAM_CODEX",
        config.upstream.codex.clone(),
        source(None, "LORE_UPSTREAM_CODEX"),
        "ChatGPT/Codex backend",
    );
    row(
        "LORE_UPSTREAM_EXTRA_HEADERS",
        if config.extra_headers.is_empty() {
            "not set".into()
        } else {
            format!("{} header(s), values hidden", config.extra_headers.len())
        },
        source(None, "LORE_UPSTREAM_EXTRA_HEADERS"),
        "headers added to upstream calls",
    );
    row(
        "LORE_UPSTREAM_RETRY_MAX_ATTEMPTS",
        config.retry.max_attempts.to_string(),
        source(None, "LORE_UPSTREAM_RETRY_MAX_ATTEMPTS"),
        "attempts before the first byte, the first included",
    );
    row(
        "LORE_UPSTREAM_RETRY_MIN_DELAY_MS",
        config.retry.min_delay.as_millis().to_string(),
        source(None, "LORE_UPSTREAM_RETRY_MIN_DELAY_MS"),
        "first backoff (ms)",
    );
    row(
        "LORE_UPSTREAM_RETRY_MAX_DELAY_MS",
        config.retry.max_delay.as_millis().to_string(),
        source(None, "LORE_UPSTREAM_RETRY_MAX_DELAY_MS"),
        "backoff cap (ms)",
    );
    row(
        "LORE_UPSTREAM_RETRY_ATTEMPT_TIMEOUT_MS",
        config.retry.attempt_timeout.as_millis().to_string(),
        source(None, "LORE_UPSTREAM_RETRY_ATTEMPT_TIMEOUT_MS"),
        "longest wait for response headers (ms)",
    );
    row(
        "LORE_KEEPALIVE_SECS",
        seconds(config.keepalive_after),
        source(None, "LORE_KEEPALIVE_SECS"),
        "upstream silence before a keepalive to a streaming client",
    );
    row(
        "LORE_SESSION_EVICTION_TIMEOUT",
        seconds(config.eviction_after),
        source(None, "LORE_SESSION_EVICTION_TIMEOUT"),
        "idle time before a session's actor stops",
    );
    row(
        "LORE_EMBEDDINGS",
        if config.embeddings {
            "on".into()
        } else {
            "off".into()
        },
        source(None, "LORE_EMBEDDINGS"),
        "the embedding model (vector recall)",
    );
    row(
        "LORE_RECALL_TOOL",
        if config.recall_tool {
            "on".into()
        } else {
            "off".into()
        },
        source(None, "LORE_RECALL_TOOL"),
        "the recall tool on tool-bearing requests",
    );
    row(
        "LORE_WORKERS",
        config.workers.to_string(),
        source(None, "LORE_WORKERS"),
        "HTTP worker threads",
    );
    row(
        "LORE_MAX_BODY_MB",
        (config.max_body_bytes / (1024 * 1024)).to_string(),
        source(None, "LORE_MAX_BODY_MB"),
        "largest request body after decompression (MB)",
    );
    let cards_source = if config.env_set.contains("LORE_CARDS") {
        source(None, "LORE_CARDS")
    } else {
        source(None, "LORE_CARDS_VAULT")
    };
    row(
        "LORE_CARDS_VAULT",
        config.cards_vault.as_ref().map_or_else(
            || "off (LORE_CARDS=off)".into(),
            |p| p.display().to_string(),
        ),
        cards_source,
        "the card vault",
    );
    row(
        "LORE_CARDS_PLACEMENT",
        format!("{:?}", config.card_settings.placement).to_lowercase(),
        source(None, "LORE_CARDS_PLACEMENT"),
        "where card blocks go",
    );
    row(
        "LORE_CARDS_BUDGET",
        config.card_settings.budget_tokens.to_string(),
        source(None, "LORE_CARDS_BUDGET"),
        "token budget of a card block",
    );
    row(
        "LORE_CARDS_SCAN_DEPTH",
        config.card_settings.scan_depth.to_string(),
        source(None, "LORE_CARDS_SCAN_DEPTH"),
        "turns scanned for keywords",
    );
    row(
        "LORE_CARDS_FRAMING",
        format!("{:?}", config.card_settings.framing),
        source(None, "LORE_CARDS_FRAMING"),
        "text before the first card",
    );
    let memory = &config.memory;
    row(
        "LORE_MEMORY",
        if memory.enabled {
            "on".into()
        } else {
            "off".into()
        },
        source(None, "LORE_MEMORY"),
        "distillation and curation",
    );
    row(
        "LORE_IDLE_TIMEOUT",
        seconds(memory.settings.idle_after),
        source(None, "LORE_IDLE_TIMEOUT"),
        "quiet time before a session is distilled",
    );
    row(
        "LORE_CURATE_AFTER_TURNS",
        memory.settings.curate_after_turns.to_string(),
        source(None, "LORE_CURATE_AFTER_TURNS"),
        "turns between curations",
    );
    row(
        "LORE_MEMORY_RETRY_AFTER",
        seconds(memory.settings.retry_after),
        source(None, "LORE_MEMORY_RETRY_AFTER"),
        "wait after a failed job",
    );
    row(
        "LORE_WORKER_UPSTREAM",
        memory
            .upstream
            .as_ref()
            .map_or_else(|| "each session's own provider".into(), |u| u.url.clone()),
        source(None, "LORE_WORKER_UPSTREAM"),
        "where worker calls go",
    );
    row(
        "LORE_WORKER_API_KEY",
        secret(
            memory
                .upstream
                .as_ref()
                .is_some_and(|u| u.api_key.is_some()),
        ),
        source(None, "LORE_WORKER_API_KEY"),
        "key for the worker upstream",
    );
    row(
        "LORE_WORKER_MODEL",
        memory
            .model
            .clone()
            .unwrap_or_else(|| "the session's model family default".into()),
        source(None, "LORE_WORKER_MODEL"),
        "worker model",
    );
    row(
        "LORE_WORKER_MAX_ATTEMPTS",
        memory.settings.worker.max_attempts.to_string(),
        source(None, "LORE_WORKER_MAX_ATTEMPTS"),
        "attempts of a worker call",
    );
    row(
        "LORE_WORKER_RETRY_BASE_MS",
        memory.settings.worker.base_delay.as_millis().to_string(),
        source(None, "LORE_WORKER_RETRY_BASE_MS"),
        "first worker backoff (ms)",
    );
    rows.extend(context::rows(config));
    let model_catalogue = catalogue::rows(&config.context.catalogue);
    Settings {
        overridden: model_catalogue.iter().filter(|r| r.overridden).count(),
        settings: rows,
        model_catalogue,
    }
}
