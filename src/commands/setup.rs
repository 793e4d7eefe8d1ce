//! `lore setup [harness] [--undo] [--status] [--url URL]`: write (or put back) the harness's own
//! config so it goes through the gateway without `lore run`. Without a harness, every harness
//! on `PATH` (for `--undo`, every one that was set up).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;

use crate::cli::DataDirArg;
use crate::commands::{data_dir, environment, live_port};
use crate::harness::setup::backup::{self, Restored};
use crate::harness::setup::{self, FileState, Places};
use crate::harness::{ALL, Harness, configured_base_url, which};

/// Options of `lore setup`.
#[derive(Debug, Clone, Default)]
pub struct SetupArgs {
    /// One harness, or all.
    pub harness: Option<String>,
    /// Put the files back.
    pub undo: bool,
    /// Only report.
    pub status: bool,
    /// The gateway's URL (default from `LORE_LISTEN_HOST`/`LORE_LISTEN_PORT`).
    pub url: Option<String>,
}

fn chosen(name: Option<&str>, fallback: impl Fn(Harness) -> bool) -> anyhow::Result<Vec<Harness>> {
    match name {
        Some(name) => match Harness::from_name(name) {
            Some(harness) => Ok(vec![harness]),
            None => bail!(
                "unknown harness `{name}`; lore setup knows {}",
                Harness::known()
            ),
        },
        None => Ok(ALL.into_iter().filter(|h| fallback(*h)).collect()),
    }
}

/// Runs `lore setup`.
pub fn run(args: &SetupArgs, data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    let env = environment();
    let home = match env.get("HOME") {
        Some(home) if !home.is_empty() => PathBuf::from(home),
        _ => bail!("HOME is not set; lore setup needs it to find the harnesses' config files"),
    };
    if args.status {
        return status(&dir, args.harness.as_deref());
    }
    if args.undo {
        let harnesses = chosen(args.harness.as_deref(), |h| {
            backup::load(&dir, h.name()).is_ok_and(|m| m.is_some())
        })?;
        if harnesses.is_empty() {
            println!("nothing to undo: no harness was set up by lore setup");
        }
        for harness in harnesses {
            match backup::undo(&dir, harness.name())? {
                None => println!(
                    "{}: not set up by lore setup; nothing to undo",
                    harness.name()
                ),
                Some(done) => {
                    for entry in done {
                        match entry {
                            Restored::Restored(path) => {
                                println!("{}: restored {}", harness.name(), path.display())
                            }
                            Restored::Removed(path) => {
                                println!(
                                    "{}: removed {} (lore had created it)",
                                    harness.name(),
                                    path.display()
                                )
                            }
                            Restored::KeptEdited(path, kept) => println!(
                                "{}: {} was edited after setup; that version is kept at {}",
                                harness.name(),
                                path.display(),
                                kept.display()
                            ),
                        }
                    }
                }
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let base_url = args
        .url
        .clone()
        .unwrap_or_else(|| configured_base_url(&env))
        .trim_end_matches('/')
        .trim_end_matches("/v1")
        .to_string();
    let harnesses = chosen(args.harness.as_deref(), |h| which(h.program()).is_some())?;
    if harnesses.is_empty() {
        bail!(
            "none of {} is on PATH; name one: `lore setup claude`",
            Harness::known()
        );
    }
    let places = Places {
        home: &home,
        env: &env,
    };
    let mut failed = false;
    for harness in harnesses {
        match setup::plan(harness, &base_url, &places) {
            Ok(files) => {
                backup::apply(&dir, harness.name(), &files)?;
                for (path, _) in &files {
                    println!("{}: wrote {}", harness.name(), path.display());
                }
            }
            Err(err) => {
                failed = true;
                eprintln!("{}: not set up: {err}", harness.name());
            }
        }
    }
    println!(
        "the harnesses now talk to {base_url}; `lore setup --undo` puts their files back. Keep the gateway running: `lore service install` (or `lore start --daemon`)"
    );
    if live_port(&dir).is_none() {
        println!("note: no gateway answers for {} right now", dir.display());
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn status(dir: &Path, name: Option<&str>) -> anyhow::Result<ExitCode> {
    for harness in chosen(name, |_| true)? {
        match setup::status(dir, harness)? {
            None => println!("{}: not set up", harness.name()),
            Some(files) => {
                for (path, state) in files {
                    let state = match state {
                        FileState::AsWritten => "set up",
                        FileState::Edited => "set up, edited since",
                        FileState::Missing => "set up, but the file is gone",
                    };
                    println!("{}: {state}: {}", harness.name(), path.display());
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
