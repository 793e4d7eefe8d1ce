//! Drives the real `lore` binary: `lore reindex` on a data directory, and a foreground
//! `lore start` on a free loopback port that is asked recall queries over HTTP, measured for
//! RSS, and stopped with `lore stop` (killed if it does not go).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use lore_test_support::http_client;
use lore_test_support::lore_process::{LoreProcess, encode};

/// Runs `lore reindex --data-dir DIR`; returns how long it took and what it printed.
pub fn reindex(lore: &Path, data_dir: &Path) -> anyhow::Result<(Duration, String)> {
    let started = Instant::now();
    let output = Command::new(lore)
        .arg("reindex")
        .arg("--data-dir")
        .arg(data_dir)
        .env("LORE_LOG", "warn")
        .output()
        .with_context(|| format!("run {} reindex", lore.display()))?;
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if !output.status.success() {
        bail!(
            "lore reindex failed ({}): {stdout} {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok((elapsed, stdout))
}

/// One recall result as the eval reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document id.
    pub id: String,
    /// The snippet the API shows for it.
    pub snippet: String,
}

/// The answer of one recall.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The results, best first.
    pub hits: Vec<Hit>,
    /// Whether the reranker reordered them (it was asked for and finished in time).
    pub reranked: bool,
}

/// A running gateway; killed on drop if [`Gateway::stop`] was not called.
pub struct Gateway {
    process: LoreProcess,
    /// From spawn to the first `200` of `/health`.
    pub ready_after: Duration,
}

impl Gateway {
    /// Starts `lore start --port <free> --data-dir DIR` and waits for `/health`.
    pub fn start(lore: &Path, data_dir: &Path) -> anyhow::Result<Gateway> {
        let started = Instant::now();
        let process = LoreProcess::spawn(lore, data_dir, "eval-gateway.log", &[])?;
        let mut gateway = Gateway {
            process,
            ready_after: Duration::ZERO,
        };
        let deadline = started + Duration::from_secs(300);
        loop {
            if let Some(status) = gateway.process.exited()? {
                bail!(
                    "lore start exited ({status}): {}",
                    gateway.process.log_tail()
                );
            }
            let health = http_client::request(&gateway.base(), "GET", "/health", &[], b"");
            if let Ok(health) = health
                && health.status == 200
            {
                if gateway.ready_after.is_zero() {
                    gateway.ready_after = started.elapsed();
                }
                // Until the embedding model has loaded, vector and hybrid answer with BM25
                // alone: wait for it to be ready or reported missing for another reason.
                let body: serde_json::Value =
                    serde_json::from_slice(&health.body).unwrap_or_default();
                let embeddings = &body["embeddings"];
                let loading = embeddings["state"] == "unavailable"
                    && embeddings["missing"]
                        .as_str()
                        .is_some_and(|missing| missing.contains("still loading"));
                if !loading {
                    return Ok(gateway);
                }
            }
            if Instant::now() > deadline {
                bail!("/health never answered: {}", gateway.process.log_tail());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn base(&self) -> String {
        self.process.base()
    }

    /// Resident set size of the gateway in MB (`VmRSS`), 0 when unreadable.
    pub fn rss_mb(&self) -> f64 {
        self.process.rss_mb()
    }

    /// `GET /api/v1/recall?q=…&limit=…&scope=all&mode=…`: the result ids, best first.
    pub fn recall(&self, query: &str, mode: &str, limit: usize) -> anyhow::Result<Vec<String>> {
        Ok(self
            .recall_hits(query, mode, limit)?
            .hits
            .into_iter()
            .map(|hit| hit.id)
            .collect())
    }

    /// The same, with each result's snippet. `mode` is a recall mode (`bm25`, `vector`,
    /// `hybrid`), optionally with `+rerank` (the reranker on) or `+rerank@W` (on, with weight
    /// `W` against the fused order, a number or `inf`), then optionally `:DxC` (the top `D`
    /// candidates, at most `C` chunks each); without it the reranker is off.
    pub fn recall_hits(&self, query: &str, mode: &str, limit: usize) -> anyhow::Result<Answer> {
        let (mode, rerank, rest) = match mode.split_once("+rerank") {
            Some((mode, rest)) => (mode, "on", rest),
            None => (mode, "off", ""),
        };
        let (rest, shape) = match rest.split_once(':') {
            Some((rest, shape)) => (rest, shape.split_once('x')),
            None => (rest, None),
        };
        let weight = rest.strip_prefix('@');
        let mut path = format!(
            "/api/v1/recall?q={}&limit={limit}&scope=all&mode={mode}&rerank={rerank}",
            encode(query)
        );
        if let Some(weight) = weight {
            path.push_str(&format!("&rerank_weight={weight}"));
        }
        if let Some((depth, chunks)) = shape {
            path.push_str(&format!("&rerank_depth={depth}&rerank_chunks={chunks}"));
        }
        let response = http_client::request(&self.base(), "GET", &path, &[], b"")?;
        if response.status != 200 {
            bail!("recall answered {}: {}", response.status, response.text());
        }
        let body: serde_json::Value = serde_json::from_slice(&response.body)
            .with_context(|| format!("recall sent malformed JSON: {}", response.text()))?;
        if rerank == "on" && body["reranker"]["state"] == "unavailable" {
            bail!(
                "the reranker is unavailable: {}",
                body["reranker"].to_string().replace('|', "/")
            );
        }
        let results = body["results"]
            .as_array()
            .with_context(|| format!("no `results` array in {body}"))?;
        let hits = results
            .iter()
            .filter_map(|hit| {
                Some(Hit {
                    id: hit["id"].as_str()?.to_string(),
                    snippet: hit["snippet"].as_str().unwrap_or_default().to_string(),
                })
            })
            .collect();
        Ok(Answer {
            hits,
            reranked: body["reranked"] == true,
        })
    }

    /// `lore stop --data-dir DIR`, then waits up to 15 s before killing.
    pub fn stop(self) -> anyhow::Result<()> {
        self.process.stop()
    }
}
