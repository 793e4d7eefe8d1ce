//! `lore stop`: ask the gateway to shut down (SIGTERM), wait for it, and clean up stale files.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::cli::DataDirArg;
use crate::commands::data_dir;
use crate::server;

/// Stops the gateway of a data directory.
pub fn stop(data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    let Some((pid, _)) = server::running_gateway(&dir) else {
        println!("no gateway is running for {}", dir.display());
        return Ok(ExitCode::SUCCESS);
    };
    let target = Pid::from_raw(pid as i32);
    if kill(target, None).is_err() {
        let _ = std::fs::remove_file(dir.join(server::PID_FILE));
        let _ = std::fs::remove_file(dir.join(server::PORT_FILE));
        println!("the gateway (pid {pid}) was not running; removed its stale files");
        return Ok(ExitCode::SUCCESS);
    }
    kill(target, Signal::SIGTERM)
        .map_err(|err| anyhow::anyhow!("cannot signal pid {pid}: {err}"))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if kill(target, None).is_err() {
            println!("lore gateway stopped (pid {pid})");
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    anyhow::bail!(
        "the gateway (pid {pid}) did not stop within 10 s; it may be finishing long streams. Try again, or `kill -9 {pid}` (captured data is safe)"
    )
}
