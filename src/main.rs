//! Entry point of the `lore` binary: parse the command line and dispatch.

use clap::Parser;
use lore::cli::Cli;

// mimalloc returns freed memory to the system and keeps per-thread heaps compact: with the
// system allocator, a gateway spread over a dozen actor and worker threads kept most of what
// thousands of short sessions had freed (see docs/benchmarks.md, "Memory").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match lore::commands::dispatch(cli.command) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("lore: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
