//! Entry point of the `lore` binary: parse the command line and dispatch.

use clap::Parser;
use lore::cli::Cli;

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
