//! Drives the real `lore` binary: a foreground `lore start` on a free loopback port and a fresh
//! data directory, in front of the in-process fake upstream, with the memory settings of the
//! run; JSON helpers for its management API; stopped with `lore stop` (killed if it does not go).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use lore_test_support::http_client::{self, Response};
use lore_test_support::lore_process::LoreProcess;
pub use lore_test_support::lore_process::encode;
use serde_json::Value;

/// A running gateway; killed on drop if [`Gateway::stop`] was not called.
pub struct Gateway {
    process: LoreProcess,
}

impl Gateway {
    /// Starts `lore start` on `data_dir` with `upstream` for every protocol and `env` on top
    /// of the inherited environment (so `ORT_DYLIB_PATH` and `LORE_MODELS_DIR` pass through);
    /// waits for `/health` and, when embeddings are on, for the model to load or fail.
    pub fn start(
        lore: &Path,
        data_dir: &Path,
        upstream: &str,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Gateway> {
        let mut all = vec![
            ("LORE_UPSTREAM_ANTHROPIC", upstream),
            ("LORE_UPSTREAM_OPENAI", upstream),
        ];
        all.extend_from_slice(env);
        let mut gateway = Gateway {
            process: LoreProcess::spawn(lore, data_dir, "bench-gateway.log", &all)?,
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(status) = gateway.process.exited()? {
                bail!("lore start exited ({status}): {}", gateway.log_tail());
            }
            if let Ok(health) = gateway.get("/health") {
                let state = health["embeddings"]["state"].as_str().unwrap_or("");
                let loading = health["embeddings"]["missing"]
                    .as_str()
                    .is_some_and(|m| m.contains("loading"));
                if state == "ready" || !loading {
                    return Ok(gateway);
                }
            }
            if Instant::now() > deadline {
                bail!("the gateway did not become ready: {}", gateway.log_tail());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        self.process.base()
    }

    /// The last lines of the gateway's log.
    pub fn log_tail(&self) -> String {
        self.process.log_tail()
    }

    /// `GET path` as JSON; an error unless the status is 200.
    pub fn get(&self, path: &str) -> anyhow::Result<Value> {
        let response = http_client::request(&self.base(), "GET", path, &[], b"")?;
        if response.status != 200 {
            bail!(
                "GET {path} answered {}: {}",
                response.status,
                response.text()
            );
        }
        serde_json::from_slice(&response.body)
            .with_context(|| format!("GET {path} sent malformed JSON: {}", response.text()))
    }

    /// `POST path` with a JSON body and headers.
    pub fn post(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> anyhow::Result<Response> {
        let mut all = vec![("content-type", "application/json")];
        all.extend_from_slice(headers);
        Ok(http_client::request(
            &self.base(),
            "POST",
            path,
            &all,
            body,
        )?)
    }

    /// Whether the embedding model is loaded.
    pub fn embeddings_ready(&self) -> bool {
        self.get("/health")
            .is_ok_and(|h| h["embeddings"]["state"] == "ready")
    }

    /// Waits until the vectorizer has nothing pending and the index writer had time to
    /// commit (it commits every 250 ms).
    pub fn settle_index(&self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let health = self.get("/health")?;
            let pending = health["vectors"]["pending"].as_u64().unwrap_or(0);
            if pending == 0 {
                std::thread::sleep(Duration::from_millis(1_000));
                let again = self.get("/health")?;
                if again["vectors"]["pending"].as_u64().unwrap_or(0) == 0 {
                    return Ok(());
                }
            }
            if Instant::now() > deadline {
                bail!("the vectorizer still has {pending} documents pending");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `lore stop --data-dir DIR`, then waits up to 15 s before killing.
    pub fn stop(self) -> anyhow::Result<()> {
        self.process.stop()
    }
}
