//! `lore run [harness] [args…]`: start or reuse the gateway, then replace this process with the
//! harness, pointed at the gateway for this launch only (see `crate::harness::launch` for what
//! each harness is given).

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};

use crate::cli::DataDirArg;
use crate::commands::start::spawn_daemon;
use crate::commands::{data_dir, environment, live_port};
use crate::config::Overrides;
use crate::harness::launch::{Context, Launch, launch};
use crate::harness::{self, ALL, Harness, which};

/// Runs a harness through the gateway.
pub fn run(agent: Option<&str>, args: &[String], data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let harness = match agent {
        Some(name) => match Harness::from_name(name) {
            Some(harness) => harness,
            None => bail!(
                "unknown agent `{name}`; lore run knows {}",
                Harness::known()
            ),
        },
        None => match ALL.iter().find(|h| which(h.program()).is_some()) {
            Some(harness) => *harness,
            None => bail!(
                "none of {} is installed; install one or name it: `lore run claude`",
                Harness::known()
            ),
        },
    };
    let Some(program) = which(harness.program()) else {
        bail!(
            "`{}` is not on PATH; install it first (see `lore doctor`)",
            harness.program()
        );
    };
    let dir = data_dir(data);
    let port = match live_port(&dir) {
        Some(port) => port,
        None => spawn_daemon(
            &Overrides {
                data_dir: Some(dir.clone()),
                ..Default::default()
            },
            &dir,
        )?,
    };
    let base_url = format!("http://127.0.0.1:{port}");
    let project = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let env = environment();
    let home = PathBuf::from(env.get("HOME").cloned().unwrap_or_default());
    let Launch {
        env: set,
        args: mut harness_args,
        files,
        notes,
    } = launch(
        harness,
        &Context {
            base_url: &base_url,
            project: &project,
            env: &env,
            home: &home,
            data_dir: &dir,
        },
    );
    for (path, text) in files {
        harness::setup::backup::write_atomic(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    for note in notes {
        eprintln!("lore: {note}");
    }
    harness_args.extend(args.iter().cloned());
    eprintln!(
        "lore: running {} through the gateway at {base_url}",
        harness.name()
    );
    let err = std::process::Command::new(program)
        .args(&harness_args)
        .envs(set)
        .exec();
    bail!("cannot start {}: {err}", harness.name())
}
