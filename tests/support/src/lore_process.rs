//! The real `lore` binary as a child process for the benchmark drivers: a foreground `lore
//! start` on a free loopback port and a given data directory, its log tail, its RSS, and a stop
//! with `lore stop` (killed if it does not go, and on drop). Readiness is the caller's: each
//! benchmark waits for what it needs.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;

/// A running `lore start`.
pub struct LoreProcess {
    child: Child,
    lore: PathBuf,
    data_dir: PathBuf,
    log_file: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
}

impl LoreProcess {
    /// Spawns `lore start --port <free> --data-dir DIR` with `LORE_LOG=warn` and `env` on top
    /// of the inherited environment; its stderr goes to `DIR/<log_name>`.
    pub fn spawn(
        lore: &Path,
        data_dir: &Path,
        log_name: &str,
        env: &[(&str, &str)],
    ) -> anyhow::Result<Self> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let log_file = data_dir.join(log_name);
        let log = std::fs::File::create(&log_file)?;
        let child = Command::new(lore)
            .args(["start", "--port", &port.to_string(), "--data-dir"])
            .arg(data_dir)
            .env_remove("LORE_DATA_DIR")
            .env("LORE_LOG", "warn")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("start {}", lore.display()))?;
        Ok(Self {
            child,
            lore: lore.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
            log_file,
            port,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, if the process has exited.
    pub fn exited(&mut self) -> anyhow::Result<Option<ExitStatus>> {
        Ok(self.child.try_wait()?)
    }

    /// The last ten lines of its log.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log_file).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(10)..].join("\n")
    }

    /// Resident set size in MB (`VmRSS`), 0 when unreadable.
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

impl Drop for LoreProcess {
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
