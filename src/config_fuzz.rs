//! Fuzzing of the configuration readers with proptest: random values (numbers out of range,
//! negative, huge, NaN, control characters, URLs with credentials, malformed header lines) for
//! every `LORE_*` variable the gateway and the memory workers read. Each set must give a
//! configuration or an error message naming a variable, never a panic, within two seconds.
//! `LORE_FUZZ_CASES` sets the cases (256 by default).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use proptest::prelude::*;

use crate::config::{GatewayConfig, Overrides};
use crate::gateway::headers::parse_extra_headers;
use crate::memory_config::MemoryConfig;

const VARIABLES: &[&str] = &[
    "LORE_CALLER_UPSTREAM_ALLOWLIST",
    "LORE_CARDS",
    "LORE_CARDS_BUDGET",
    "LORE_CARDS_FRAMING",
    "LORE_CARDS_PLACEMENT",
    "LORE_CARDS_SCAN_DEPTH",
    "LORE_CARDS_VAULT",
    "LORE_CURATE_AFTER_TURNS",
    "LORE_DATA_DIR",
    "LORE_EMBEDDINGS",
    "LORE_GATEWAY_AUTH_TOKEN",
    "LORE_HOSTED_MODE",
    "LORE_IDLE_TIMEOUT",
    "LORE_KEEPALIVE_SECS",
    "LORE_LISTEN_HOST",
    "LORE_LISTEN_PORT",
    "LORE_MAX_BODY_MB",
    "LORE_MEMORY",
    "LORE_MEMORY_RETRY_AFTER",
    "LORE_RECALL_TOOL",
    "LORE_REMOTE_GATEWAY",
    "LORE_SESSION_EVICTION_TIMEOUT",
    "LORE_UPSTREAM_ANTHROPIC",
    "LORE_UPSTREAM_CODEX",
    "LORE_UPSTREAM_EXTRA_HEADERS",
    "LORE_UPSTREAM_OLLAMA",
    "LORE_UPSTREAM_OPENAI",
    "LORE_UPSTREAM_RETRY_ATTEMPT_TIMEOUT_MS",
    "LORE_UPSTREAM_RETRY_MAX_ATTEMPTS",
    "LORE_UPSTREAM_RETRY_MAX_DELAY_MS",
    "LORE_UPSTREAM_RETRY_MIN_DELAY_MS",
    "LORE_UPSTREAM_VLLM",
    "LORE_WORKERS",
    "LORE_WORKER_API_KEY",
    "LORE_WORKER_MAX_ATTEMPTS",
    "LORE_WORKER_MODEL",
    "LORE_WORKER_PRICE",
    "LORE_WORKER_PROTOCOL",
    "LORE_WORKER_RETRY_BASE_MS",
    "LORE_WORKER_UPSTREAM",
];

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(
            &[
                "",
                "0",
                "-1",
                "1",
                "65536",
                "99999999999999999999",
                "1e9",
                "NaN",
                "inf",
                "0.2",
                "-0.5",
                "true",
                "false",
                "off",
                "on",
                "yes",
                "http://",
                "https://a.example",
                "https://u:p@a.example",
                "http://127.0.0.1:1/v1",
                "ftp://x",
                "0.0.0.0",
                "::",
                "localhost",
                "X-Team: a\nbad line\n: v\nK:",
                "anthropic",
                "openai",
                "responses",
                "1/2",
                "0.5,0.1",
                "https://a.example,https://a.example",
                "*",
            ][..]
        )
        .prop_map(str::to_string),
        "\\PC{0,40}",
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|n| n.to_string()),
    ]
}

fn environment() -> impl Strategy<Value = HashMap<String, String>> {
    prop::collection::vec((prop::sample::select(VARIABLES), value()), 0..16).prop_map(|pairs| {
        pairs
            .into_iter()
            .map(|(name, value)| (name.to_string(), value))
            .collect()
    })
}

fn config() -> ProptestConfig {
    let cases = std::env::var("LORE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn configuration_readers_answer_with_a_value_or_a_named_error(env in environment()) {
        let started = Instant::now();
        match GatewayConfig::build(&Overrides::default(), &env) {
            Ok(_) => {}
            Err(message) => prop_assert!(
                message.contains("LORE_") || message.contains("listen") || message.contains("upstream"),
                "an error that names nothing: {message}"
            ),
        }
        match MemoryConfig::from_env(&env) {
            Ok(_) => {}
            Err(message) => prop_assert!(message.contains("LORE_"), "an error that names nothing: {message}"),
        }
        if let Some(raw) = env.get("LORE_UPSTREAM_EXTRA_HEADERS") {
            for (name, _) in parse_extra_headers(raw) {
                prop_assert!(!name.is_empty());
            }
        }
        prop_assert!(started.elapsed() < Duration::from_secs(2));
    }
}
