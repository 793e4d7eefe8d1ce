//! Starting the real `lore` binary on a free port with its own data directory, and talking to it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use lore_test_support::FakeUpstream;
use lore_test_support::http_client::{self, Response};
use serde_json::{Value, json};

/// A running gateway process.
pub struct Gateway {
    child: Option<Child>,
    /// Owns the data directory; removed when the gateway is dropped.
    _data: tempfile::TempDir,
    data_dir: PathBuf,
    env: Vec<(String, String)>,
    pub port: u16,
}

impl Gateway {
    /// Starts a gateway in front of `upstream` for both protocols.
    pub fn start(upstream: &FakeUpstream) -> Gateway {
        Gateway::start_with(&upstream.url(), &[])
    }

    /// Starts a gateway in front of `upstream_url` with extra environment variables.
    pub fn start_with(upstream_url: &str, extra_env: &[(&str, &str)]) -> Gateway {
        Gateway::start_prepared(upstream_url, extra_env, |_| {})
    }

    /// Like [`Gateway::start_with`], after `prepare` wrote into the fresh data directory (a
    /// seeded store, a card vault).
    pub fn start_prepared(
        upstream_url: &str,
        extra_env: &[(&str, &str)],
        prepare: impl FnOnce(&Path),
    ) -> Gateway {
        let data = tempfile::tempdir().expect("temp dir");
        prepare(data.path());
        Gateway::start_in(data, upstream_url, extra_env)
    }

    /// [`Gateway::start_with`] on a data directory the caller prepared (a small filesystem
    /// mounted on it, a damaged database).
    pub fn start_in(
        data: tempfile::TempDir,
        upstream_url: &str,
        extra_env: &[(&str, &str)],
    ) -> Gateway {
        let data_dir = data.path().to_path_buf();
        let mut env = vec![
            (
                "LORE_UPSTREAM_ANTHROPIC".to_string(),
                upstream_url.to_string(),
            ),
            ("LORE_UPSTREAM_OPENAI".to_string(), upstream_url.to_string()),
            ("LORE_UPSTREAM_CODEX".to_string(), upstream_url.to_string()),
            (
                "LORE_UPSTREAM_RETRY_MIN_DELAY_MS".to_string(),
                "20".to_string(),
            ),
            (
                "LORE_UPSTREAM_RETRY_MAX_DELAY_MS".to_string(),
                "100".to_string(),
            ),
            ("LORE_LOG".to_string(), "info".to_string()),
            // Most tests are not about embeddings; those that are turn them on.
            ("LORE_EMBEDDINGS".to_string(), "off".to_string()),
            // Nor about the memory workers, whose own upstream calls would show in the
            // recordings; those that are turn them on.
            ("LORE_MEMORY".to_string(), "off".to_string()),
        ];
        env.extend(
            extra_env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        let mut gateway = Gateway {
            child: None,
            _data: data,
            data_dir,
            env,
            port: 0,
        };
        gateway.spawn();
        gateway
    }

    fn spawn(&mut self) {
        let _ = std::fs::remove_file(self.data_dir.join("gateway.port"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.data_dir.join("test-gateway.log"))
            .expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_lore"))
            .args(["start", "--port", "0", "--data-dir"])
            .arg(&self.data_dir)
            .env_remove("LORE_DATA_DIR")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("spawn lore");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(port) = std::fs::read_to_string(self.data_dir.join("gateway.port"))
                && let Ok(port) = port.trim().parse::<u16>()
                && http_client::request(
                    &format!("http://127.0.0.1:{port}"),
                    "GET",
                    "/health",
                    &[],
                    b"",
                )
                .is_ok_and(|r| r.status == 200)
            {
                self.port = port;
                return;
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("lore exited at start ({status}):\n{}", self.log());
            }
            assert!(
                Instant::now() < deadline,
                "lore did not start:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The gateway's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.data_dir.join("test-gateway.log")).unwrap_or_default()
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// `kill -9`: no shutdown, no flush.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM and wait for a clean exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGTERM,
            );
            let _ = child.wait();
        }
    }

    /// Starts the same data directory again (after `kill9` or `stop`).
    pub fn restart(&mut self) {
        self.kill9();
        self.spawn();
    }

    /// Restarts with some environment variables changed.
    pub fn restart_with(&mut self, env: &[(&str, &str)]) {
        self.kill9();
        for (key, value) in env {
            self.env.push((key.to_string(), value.to_string()));
        }
        self.spawn();
    }

    pub fn post(&self, path: &str, headers: &[(&str, &str)], body: &Value) -> Response {
        http_client::post_json(&self.url(), path, headers, body)
    }

    pub fn get(&self, path: &str) -> Response {
        http_client::get(&self.url(), path, &[])
    }

    /// `GET /api/v1/sessions` → the `sessions` array.
    pub fn sessions(&self) -> Vec<Value> {
        let response = self.get("/api/v1/sessions");
        assert_eq!(response.status, 200, "{}", response.text());
        response.json()["sessions"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// `GET /api/v1/sessions/{id}/messages`.
    pub fn session(&self, id: &str) -> Value {
        let response = self.get(&format!("/api/v1/sessions/{id}/messages"));
        assert_eq!(response.status, 200, "{}", response.text());
        response.json()
    }

    /// The texts of a session's messages, in order, as `role: text`.
    pub fn transcript(&self, id: &str) -> Vec<String> {
        self.session(id)["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|m| {
                format!(
                    "{}: {}",
                    m["role"].as_str().unwrap_or(""),
                    m["text"].as_str().unwrap_or("")
                )
            })
            .collect()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Waits until `check` holds (captures finish asynchronously after the reply).
pub fn eventually<T>(what: &str, check: impl FnMut() -> Option<T>) -> T {
    eventually_within(Duration::from_secs(10), what, check)
}

/// [`eventually`] with its own deadline, for background work that runs at low priority.
pub fn eventually_within<T>(
    limit: Duration,
    what: &str,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An Anthropic request body.
pub fn anthropic_body(messages: Value, stream: bool) -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 256, "stream": stream, "messages": messages})
}

/// An OpenAI chat request body.
pub fn chat_body(messages: Value, stream: bool) -> Value {
    json!({"model": "gpt-4o", "stream": stream, "messages": messages})
}

/// Standard Anthropic headers with a key.
pub fn anthropic_headers(key: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![("x-api-key", key), ("anthropic-version", "2023-06-01")]
}

/// The headers as an owned list that further headers can be pushed onto.
pub fn view(headers: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    headers.to_vec()
}

/// The only session, once it holds `count` messages.
pub fn single_session_with(gateway: &Gateway, count: usize) -> Value {
    eventually(&format!("one session with {count} messages"), || {
        let sessions = gateway.sessions();
        (sessions.len() == 1 && sessions[0]["messages"].as_u64() == Some(count as u64))
            .then(|| sessions[0].clone())
    })
}

/// Runs the `lore` CLI on a data directory (`--data-dir` right after the subcommand, since
/// `lore run` passes what follows the agent on); returns exit code, stdout and stderr.
pub fn lore(
    args: &[&str],
    data_dir: &std::path::Path,
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_lore"))
        .arg(args[0])
        .arg("--data-dir")
        .arg(data_dir)
        .args(&args[1..])
        .env_remove("LORE_DATA_DIR")
        .envs(env.iter().copied())
        .output()
        .expect("run lore");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
