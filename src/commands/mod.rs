//! The CLI commands. Data commands ask the running gateway's management API and, when no
//! gateway runs, open the storage directly (sled allows one process at a time).

pub(crate) mod cards;
mod costs;
mod doctor;
mod hook;
mod import;
mod inspect;
mod knowledge;
mod logs;
mod mcp;
mod models;
mod recall;
mod run;
mod service;
mod setup;
mod start;
mod stop;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::{Command, DataDirArg};
use crate::config;

/// Runs a command and returns the process exit code.
pub fn dispatch(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Start {
            host,
            port,
            daemon,
            data,
        } => start::start(host, port, daemon, &data),
        Command::Stop { data } => stop::stop(&data),
        Command::Status { json, data } => inspect::status(json, &data),
        Command::Sessions { json, data } => inspect::sessions(json, &data),
        Command::Log {
            session,
            json,
            data,
        } => inspect::log(&session, json, &data),
        Command::Run { agent, args, data } => run::run(agent.as_deref(), &args, &data),
        Command::Models { json } => models::models(json),
        Command::Costs {
            days,
            json,
            set_budget,
            data,
        } => costs::costs(days, json, set_budget.as_deref(), &data),
        Command::Doctor { data } => doctor::doctor(&data),
        Command::Logs {
            follow,
            lines,
            data,
        } => logs::logs(lines, follow, &data),
        Command::Service { command, data } => service::run(command, &data),
        Command::Import {
            harness,
            path,
            dry_run,
            json,
            data,
        } => import::run(
            &import::ImportArgs {
                harness,
                path,
                dry_run,
                json,
            },
            &data,
        ),
        Command::Setup {
            harness,
            undo,
            status,
            url,
            data,
        } => setup::run(
            &setup::SetupArgs {
                harness,
                undo,
                status,
                url,
            },
            &data,
        ),
        Command::Recall {
            query,
            scope,
            session,
            project,
            limit,
            mode,
            json,
            data,
        } => recall::recall(
            &recall::RecallArgs {
                query: &query,
                scope: &scope,
                session: session.as_deref(),
                project: project.as_deref(),
                limit,
                mode: &mode,
                json,
            },
            &data,
        ),
        Command::Reindex { data } => recall::reindex(&data),
        Command::Knowledge { command, data } => knowledge::run(command, &data),
        Command::Cards { command, vault } => cards::run(command, &vault),
        Command::Hook {
            budget,
            scan_depth,
            vault,
        } => hook::run(budget, scan_depth, &vault),
        Command::Mcp { http, port, vault } => mcp::run(http, port, &vault),
    }
}

/// The process environment as a map.
pub(crate) fn environment() -> HashMap<String, String> {
    std::env::vars().collect()
}

/// The data directory a command works on.
pub(crate) fn data_dir(arg: &DataDirArg) -> PathBuf {
    config::data_dir(arg.data_dir.as_deref(), &environment())
}

/// The card vault a command works on: `--vault`, `$LORE_CARDS_VAULT`, `<data dir>/cards`.
pub(crate) fn vault_dir(arg: &crate::cli::VaultArg) -> PathBuf {
    if let Some(vault) = &arg.vault {
        return vault.clone();
    }
    match std::env::var("LORE_CARDS_VAULT") {
        Ok(vault) if !vault.trim().is_empty() => PathBuf::from(vault),
        _ => data_dir(&arg.data).join("cards"),
    }
}

/// The port of a gateway that runs and answers `/health` for this data directory.
pub(crate) fn live_port(data_dir: &std::path::Path) -> Option<u16> {
    let (_, port) = crate::server::running_gateway(data_dir)?;
    match crate::client::get(port, "/health") {
        Ok((200, _)) => Some(port),
        _ => None,
    }
}

/// The log filter used when `LORE_LOG` is not set: Lore's own crates at `level`, everything else
/// (ONNX Runtime's ~300 start-up lines, tantivy, sled, actix) at `warn`.
pub(crate) fn default_log_filter(level: &str) -> String {
    let ours = ["lore", "lore_actors", "lore_storage", "lore_proto"]
        .iter()
        .map(|krate| format!("{krate}={level}"))
        .collect::<Vec<_>>()
        .join(",");
    format!("warn,{ours}")
}

/// Sets up logging to stderr; `LORE_LOG` takes a tracing filter (default: Lore at `default`,
/// third-party crates at `warn`).
pub(crate) fn init_logging(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("LORE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_log_filter(default)));
    use tracing_subscriber::prelude::*;
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                // A daemon's stderr is its log file: no colour codes there.
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .with_filter(filter),
        )
        .with(crate::recent_errors::layer())
        .try_init();
}
