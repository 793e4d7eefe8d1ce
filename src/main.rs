//! Entry point of the `lore` binary: parse the command line and dispatch.

use clap::Parser;
use lore::cli::{Cli, Command};

// mimalloc returns freed memory to the system and keeps per-thread heaps compact: with the
// system allocator, a gateway spread over a dozen actor and worker threads kept most of what
// thousands of short sessions had freed (see docs/benchmarks.md, "Memory").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc reads its options from the environment once, before `main`.
const EAGER_COMMIT: &str = "MIMALLOC_ARENA_EAGER_COMMIT";

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Start { .. }) {
        with_lazy_arenas();
    }
    match lore::commands::dispatch(cli.command) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("lore: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The long-running gateway commits its allocator's arenas on demand: an eagerly committed
/// arena is purged by resetting its pages, which the kernel keeps counting as resident until it
/// needs them, so the RSS users see kept what was freed long ago (docs/benchmarks.md,
/// "Memory"). The option is only read at start, so the process executes itself again with it
/// set (same pid, same arguments); if that fails it carries on with the defaults.
fn with_lazy_arenas() {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        if std::env::var_os(EAGER_COMMIT).is_some() {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let err = std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env(EAGER_COMMIT, "0")
            .exec();
        eprintln!("lore: could not restart with {EAGER_COMMIT}=0 ({err}); going on without it");
    }
}
