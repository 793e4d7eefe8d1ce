//! Drives the real `lore` binary: `lore reindex` on a data directory, and a foreground
//! `lore start` on a free loopback port that is asked recall queries over HTTP, measured for
//! RSS, and stopped with `lore stop` (killed if it does not go).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use lore_test_support::http_client;

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

/// A running gateway; killed on drop if [`Gateway::stop`] was not called.
pub struct Gateway {
    child: Child,
    lore: PathBuf,
    data_dir: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
    /// From spawn to the first `200` of `/health`.
    pub ready_after: Duration,
}

fn free_port() -> anyhow::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Gateway {
    /// Starts `lore start --port <free> --data-dir DIR` and waits for `/health`.
    pub fn start(lore: &Path, data_dir: &Path) -> anyhow::Result<Gateway> {
        let port = free_port()?;
        let log = std::fs::File::create(data_dir.join("eval-gateway.log"))?;
        let started = Instant::now();
        let child = Command::new(lore)
            .args(["start", "--port", &port.to_string(), "--data-dir"])
            .arg(data_dir)
            .env("LORE_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("start {}", lore.display()))?;
        let mut gateway = Gateway {
            child,
            lore: lore.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
            port,
            ready_after: Duration::ZERO,
        };
        let deadline = started + Duration::from_secs(300);
        loop {
            if let Some(status) = gateway.child.try_wait()? {
                bail!("lore start exited ({status}): {}", gateway.log_tail());
            }
            let health = http_client::request(&gateway.base(), "GET", "/health", &[], b"");
            if health.is_ok_and(|r| r.status == 200) {
                gateway.ready_after = started.elapsed();
                return Ok(gateway);
            }
            if Instant::now() > deadline {
                bail!("/health never answered: {}", gateway.log_tail());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log_tail(&self) -> String {
        let log =
            std::fs::read_to_string(self.data_dir.join("eval-gateway.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    }

    /// The gateway's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident set size of the gateway in MB (`VmRSS`), 0 when unreadable.
    pub fn rss_mb(&self) -> f64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }

    /// `GET /api/v1/recall?q=…&limit=…&scope=all&mode=…`: the result ids, best first.
    pub fn recall(&self, query: &str, mode: &str, limit: usize) -> anyhow::Result<Vec<String>> {
        let path = format!(
            "/api/v1/recall?q={}&limit={limit}&scope=all&mode={mode}",
            encode(query)
        );
        let response = http_client::request(&self.base(), "GET", &path, &[], b"")?;
        if response.status != 200 {
            bail!("recall answered {}: {}", response.status, response.text());
        }
        let body: serde_json::Value = serde_json::from_slice(&response.body)
            .with_context(|| format!("recall sent malformed JSON: {}", response.text()))?;
        let results = body["results"]
            .as_array()
            .with_context(|| format!("no `results` array in {body}"))?;
        Ok(results
            .iter()
            .filter_map(|hit| hit["id"].as_str().map(str::to_string))
            .collect())
    }

    /// `lore stop --data-dir DIR`, then waits up to 15 s before killing.
    pub fn stop(mut self) -> anyhow::Result<()> {
        let _ = Command::new(&self.lore)
            .arg("stop")
            .arg("--data-dir")
            .arg(&self.data_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("lore stop did not stop pid {}; killing it", self.pid());
        self.child.kill()?;
        self.child.wait()?;
        Ok(())
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Percent-encodes a query-string value.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
