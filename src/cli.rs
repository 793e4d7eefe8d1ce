//! The command line, as clap structures only; `main.rs` dispatches to `commands`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Lore: a local memory gateway for AI coding harnesses.
#[derive(Debug, Parser)]
#[command(name = "lore", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Where the data lives; shared by every command.
#[derive(Debug, Clone, Args)]
pub struct DataDirArg {
    /// Data directory (default: $LORE_DATA_DIR, else $XDG_DATA_HOME/lore, else ~/.local/share/lore).
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the gateway (in the foreground unless --daemon).
    Start {
        /// Address to listen on (default 127.0.0.1; anything else needs LORE_GATEWAY_AUTH_TOKEN).
        #[arg(long)]
        host: Option<String>,
        /// Port to listen on (default 3207; 0 picks a free port).
        #[arg(long, short)]
        port: Option<u16>,
        /// Detach and run in the background; logs go to <data dir>/lore.log.
        #[arg(long, alias = "bg")]
        daemon: bool,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Stop a running gateway.
    Stop {
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Show whether the gateway runs, where, and what it holds.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// List captured sessions, most recent first.
    Sessions {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Show the conversation of one session (an id or a unique prefix of one).
    Log {
        /// Session id or unique prefix.
        session: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Start (or reuse) the gateway, then run an agent through it.
    Run {
        /// claude, codex, opencode, pi or hermes (default: the first one installed).
        agent: Option<String>,
        /// Arguments passed to the agent.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Check the installation and say how to fix what is missing.
    Doctor {
        #[command(flatten)]
        data: DataDirArg,
    },
}
