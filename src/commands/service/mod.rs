//! `lore service install|uninstall|status`: run the gateway as a user service that starts at
//! login and restarts after a failure: a systemd user unit on Linux, a launchd agent on macOS.
//!
//! The unit runs `lore start --data-dir <dir>` with this executable, appends its output to
//! `<data dir>/lore.log` (what `lore logs` reads), and carries the `LORE_*` settings and
//! `ORT_DYLIB_PATH` of the shell that installed it, except anything that looks like a secret:
//! those go in `~/.config/lore/service.env` (systemd), which the unit reads but Lore never writes.

mod launchd;
mod systemd;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

use crate::cli::{DataDirArg, ServiceCommand};
use crate::commands::{data_dir, environment, live_port};
use crate::server;

/// What the service runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceSpec {
    /// The `lore` executable.
    pub exe: PathBuf,
    /// The data directory.
    pub data_dir: PathBuf,
    /// Where its output goes.
    pub log_file: PathBuf,
    /// Environment variables set for it.
    pub env: Vec<(String, String)>,
}

/// Which service manager the unit is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    /// systemd user units (Linux).
    Systemd,
    /// launchd agents (macOS).
    Launchd,
}

impl Manager {
    /// The manager of this platform, or the one `name` asks for.
    pub fn pick(name: Option<&str>) -> anyhow::Result<Self> {
        match name {
            None if cfg!(target_os = "macos") => Ok(Self::Launchd),
            None => Ok(Self::Systemd),
            Some("systemd") => Ok(Self::Systemd),
            Some("launchd") => Ok(Self::Launchd),
            Some(other) => bail!("unknown service manager `{other}`; use systemd or launchd"),
        }
    }

    fn file(self, home: &Path, env: &std::collections::HashMap<String, String>) -> PathBuf {
        match self {
            Self::Systemd => systemd::unit_path(
                home,
                env.get("XDG_CONFIG_HOME")
                    .filter(|dir| !dir.is_empty())
                    .map(Path::new),
            ),
            Self::Launchd => launchd::plist_path(home),
        }
    }

    fn render(self, spec: &ServiceSpec) -> String {
        match self {
            Self::Systemd => systemd::unit(spec),
            Self::Launchd => launchd::plist(spec),
        }
    }
}

/// True for variable names that may hold a credential; they are never written into a unit.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "TOKEN", "SECRET", "PASSWORD", "HEADERS", "AUTH"]
        .iter()
        .any(|word| upper.contains(word))
}

/// The variables carried into the unit (sorted), and the names left out as secrets.
pub fn service_env(
    env: &std::collections::HashMap<String, String>,
) -> (Vec<(String, String)>, Vec<String>) {
    let mut kept = Vec::new();
    let mut secret = Vec::new();
    for (name, value) in env {
        let wanted =
            (name.starts_with("LORE_") && name != "LORE_DATA_DIR") || name == "ORT_DYLIB_PATH";
        if !wanted {
            continue;
        }
        if looks_secret(name) {
            secret.push(name.clone());
        } else {
            kept.push((name.clone(), value.clone()));
        }
    }
    kept.sort();
    secret.sort();
    (kept, secret)
}

fn home(env: &std::collections::HashMap<String, String>) -> anyhow::Result<PathBuf> {
    match env.get("HOME") {
        Some(home) if !home.is_empty() => Ok(PathBuf::from(home)),
        _ => bail!("HOME is not set; lore service needs it to find the user's service folder"),
    }
}

/// Runs `lore service …`.
pub fn run(command: ServiceCommand, data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let env = environment();
    let dir = data_dir(data);
    match command {
        ServiceCommand::Install { manager, no_start } => {
            install(Manager::pick(manager.as_deref())?, no_start, &dir, &env)
        }
        ServiceCommand::Uninstall { manager, no_stop } => {
            uninstall(Manager::pick(manager.as_deref())?, no_stop, &env)
        }
        ServiceCommand::Status { manager } => {
            status(Manager::pick(manager.as_deref())?, &dir, &env)
        }
    }
}

fn install(
    manager: Manager,
    no_start: bool,
    dir: &Path,
    env: &std::collections::HashMap<String, String>,
) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("cannot find the lore executable")?;
    let (kept, secret) = service_env(env);
    let spec = ServiceSpec {
        exe,
        data_dir: dir.to_path_buf(),
        log_file: server::log_file(dir),
        env: kept,
    };
    let path = manager.file(&home(env)?, env);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    std::fs::write(&path, manager.render(&spec))
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {}", path.display());
    if !secret.is_empty() {
        println!(
            "left out of the unit because they look like secrets: {} (put them in ~/.config/lore/service.env as NAME=value lines; launchd: set them with `launchctl setenv`)",
            secret.join(", ")
        );
    }
    if no_start {
        println!("not started (--no-start)");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(port) = live_port(dir) {
        println!(
            "a gateway already runs on port {port} for {}; stop it with `lore stop`, then the service starts it",
            dir.display()
        );
    }
    let started = match manager {
        Manager::Systemd => manage("systemctl", &["--user", "daemon-reload"]).and_then(|()| {
            manage(
                "systemctl",
                &["--user", "enable", "--now", systemd::UNIT_NAME],
            )
        }),
        Manager::Launchd => uid().and_then(|uid| {
            let domain = format!("gui/{uid}");
            let _ = manage(
                "launchctl",
                &["bootout", &format!("{domain}/{}", launchd::LABEL)],
            );
            manage(
                "launchctl",
                &["bootstrap", &domain, &path.display().to_string()],
            )
        }),
    };
    started.with_context(|| {
        format!(
            "{} is written, but the service manager did not enable and start it (no user session here?); run `lore service install` again from a login session, or `lore start --daemon` now",
            path.display()
        )
    })?;
    println!("service started; `lore service status` and `lore logs -f` show how it runs");
    Ok(ExitCode::SUCCESS)
}

fn uninstall(
    manager: Manager,
    no_stop: bool,
    env: &std::collections::HashMap<String, String>,
) -> anyhow::Result<ExitCode> {
    let path = manager.file(&home(env)?, env);
    if !no_stop {
        // Stopping a service that is not loaded fails; that is fine here.
        let _ = match manager {
            Manager::Systemd => manage(
                "systemctl",
                &["--user", "disable", "--now", systemd::UNIT_NAME],
            ),
            Manager::Launchd => manage(
                "launchctl",
                &["bootout", &format!("gui/{}/{}", uid()?, launchd::LABEL)],
            ),
        };
    }
    if path.exists() {
        std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
        println!("removed {}", path.display());
        if manager == Manager::Systemd && !no_stop {
            let _ = manage("systemctl", &["--user", "daemon-reload"]);
        }
    } else {
        println!("no service installed ({} does not exist)", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn status(
    manager: Manager,
    dir: &Path,
    env: &std::collections::HashMap<String, String>,
) -> anyhow::Result<ExitCode> {
    let path = manager.file(&home(env)?, env);
    if path.exists() {
        println!("installed: {}", path.display());
    } else {
        println!(
            "not installed ({} does not exist); `lore service install` writes it",
            path.display()
        );
    }
    let state = match manager {
        Manager::Systemd => query("systemctl", &["--user", "is-active", systemd::UNIT_NAME]),
        Manager::Launchd => uid().ok().and_then(|uid| {
            query(
                "launchctl",
                &["print", &format!("gui/{uid}/{}", launchd::LABEL)],
            )
            .map(|_| "loaded".to_string())
        }),
    };
    match state {
        Some(state) => println!("service manager: {state}"),
        None => println!("service manager: not reachable or the service is not loaded"),
    }
    match live_port(dir) {
        Some(port) => println!("gateway: answering on http://127.0.0.1:{port}"),
        None => println!("gateway: not running for {}", dir.display()),
    }
    Ok(ExitCode::SUCCESS)
}

/// Runs a service-manager command; an error names the command and its output.
fn manage(program: &str, args: &[&str]) -> anyhow::Result<()> {
    let output = Command::new(program).args(args).output().with_context(|| {
        format!("cannot run `{program}`; is the service manager installed? (`--no-start` only writes the file)")
    })?;
    if !output.status.success() {
        bail!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// The first line of a command's output when it succeeds.
fn query(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let first = text.lines().next().unwrap_or("").trim().to_string();
    if output.status.success() {
        Some(if first.is_empty() { "ok".into() } else { first })
    } else if !first.is_empty() {
        Some(first)
    } else {
        None
    }
}

fn uid() -> anyhow::Result<String> {
    let output = Command::new("id")
        .arg("-u")
        .output()
        .context("cannot run `id -u`")?;
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_reach_the_unit() {
        let env: std::collections::HashMap<String, String> = [
            ("LORE_LISTEN_PORT", "3300"),
            ("LORE_WORKER_API_KEY", "sk-1"),
            ("LORE_GATEWAY_AUTH_TOKEN", "t"),
            ("LORE_UPSTREAM_EXTRA_HEADERS", "x-api-key: k"),
            ("LORE_DATA_DIR", "/elsewhere"),
            ("ORT_DYLIB_PATH", "/m/libonnxruntime.so"),
            ("PATH", "/bin"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let (kept, secret) = service_env(&env);
        assert_eq!(
            kept,
            vec![
                ("LORE_LISTEN_PORT".to_string(), "3300".to_string()),
                (
                    "ORT_DYLIB_PATH".to_string(),
                    "/m/libonnxruntime.so".to_string()
                ),
            ]
        );
        assert_eq!(
            secret,
            [
                "LORE_GATEWAY_AUTH_TOKEN",
                "LORE_UPSTREAM_EXTRA_HEADERS",
                "LORE_WORKER_API_KEY"
            ]
        );
    }
}
