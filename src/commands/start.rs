//! `lore start`: run the gateway in the foreground, or detach it with `--daemon`.

use std::os::unix::process::CommandExt;
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::cli::DataDirArg;
use crate::commands::{data_dir, environment, init_logging, live_port};
use crate::config::{GatewayConfig, Overrides};
use crate::server;

/// Starts the gateway.
pub fn start(
    host: Option<String>,
    port: Option<u16>,
    daemon: bool,
    data: &DataDirArg,
) -> anyhow::Result<ExitCode> {
    if !daemon {
        init_logging("info");
    }
    let dir = data_dir(data);
    let overrides = Overrides {
        host,
        port,
        data_dir: Some(dir.clone()),
    };
    // Validate before detaching, so configuration errors reach the terminal.
    let config = GatewayConfig::build(&overrides, &environment()).map_err(anyhow::Error::msg)?;
    if let Some(port) = live_port(&dir) {
        println!(
            "lore gateway already running on http://127.0.0.1:{port} (data {})",
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if daemon {
        let port = spawn_daemon(&overrides, &dir)?;
        println!(
            "lore gateway running on http://{}:{port} (logs: {})",
            config.host,
            server::log_file(&dir).display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    actix_rt::System::new().block_on(server::run(config))?;
    Ok(ExitCode::SUCCESS)
}

/// Starts a detached gateway and waits until it answers; returns its port.
pub(crate) fn spawn_daemon(overrides: &Overrides, dir: &std::path::Path) -> anyhow::Result<u16> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let log_path = server::log_file(dir);
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("cannot open {}", log_path.display()))?;
    let exe = std::env::current_exe().context("cannot find the lore executable")?;
    let mut command = std::process::Command::new(exe);
    command.arg("start").arg("--data-dir").arg(dir);
    if let Some(host) = &overrides.host {
        command.arg("--host").arg(host);
    }
    if let Some(port) = overrides.port {
        command.arg("--port").arg(port.to_string());
    }
    let _ = std::fs::remove_file(dir.join(server::PORT_FILE));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .context("cannot start the gateway process")?;
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait()? {
            bail!(
                "the gateway exited at start ({status}); see {}",
                log_path.display()
            );
        }
        if let Some(port) = live_port(dir) {
            return Ok(port);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!(
        "the gateway did not answer within 15 s; see {}",
        log_path.display()
    )
}
