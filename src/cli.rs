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
    #[arg(long, value_name = "DIR", global = true)]
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
    /// Print the model catalogue in force: windows, output limits and prices (with
    /// LORE_MODEL_OVERRIDES applied).
    Models {
        /// Print JSON.
        #[arg(long)]
        json: bool,
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
    /// Print the daemon's log (<data dir>/lore.log).
    Logs {
        /// Keep printing lines as they are written.
        #[arg(long, short)]
        follow: bool,
        /// How many of the last lines to print first.
        #[arg(long, short = 'n', default_value_t = 50)]
        lines: usize,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Run the gateway as a user service (systemd on Linux, launchd on macOS).
    Service {
        #[command(subcommand)]
        command: ServiceCommand,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Point a harness's own config at the gateway (works without `lore run`); --undo restores it.
    Setup {
        /// claude, codex, opencode, pi or hermes (default: every one on PATH).
        harness: Option<String>,
        /// Put back exactly what the files held before `lore setup`.
        #[arg(long, conflicts_with = "status")]
        undo: bool,
        /// Show which harnesses are set up and whether their files changed since.
        #[arg(long)]
        status: bool,
        /// The gateway's URL (default: http://127.0.0.1:3207, or LORE_LISTEN_HOST/PORT).
        #[arg(long)]
        url: Option<String>,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Import a harness's local transcripts (claude-code, codex, opencode) as Lore sessions.
    Import {
        /// claude-code, codex or opencode.
        harness: String,
        /// A transcript file or folder (default: the harness's own, e.g. ~/.claude/projects).
        #[arg(long)]
        path: Option<PathBuf>,
        /// Report what would be imported; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// What sessions cost per day and bucket, today's budget, what was saved, the top sessions.
    Costs {
        /// Days to show, today included.
        #[arg(long, default_value_t = 7)]
        days: u32,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Set the daily budget in US dollars (kept by the gateway; LORE_DAILY_BUDGET wins), or
        /// `off` to remove it.
        #[arg(long, value_name = "USD|off")]
        set_budget: Option<String>,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Search captured conversations (BM25 over every stored message).
    Recall {
        /// What to look for.
        query: String,
        /// all, session, project or knowledge.
        #[arg(long, default_value = "all")]
        scope: String,
        /// Session id for --scope session.
        #[arg(long)]
        session: Option<String>,
        /// Project path for --scope project.
        #[arg(long)]
        project: Option<String>,
        /// Most results.
        #[arg(long, default_value_t = 10)]
        limit: usize,
        /// hybrid (BM25 and vectors), bm25 or vector.
        #[arg(long, default_value = "hybrid")]
        mode: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Rebuild the search index from the stored conversations.
    Reindex {
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Long-term knowledge: list, show, forget, and edit it as `<project>/.lore.md`.
    Knowledge {
        #[command(subcommand)]
        command: KnowledgeCommand,
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Check the installation and say how to fix what is missing.
    Doctor {
        #[command(flatten)]
        data: DataDirArg,
    },
    /// Work with the card book (keyword-triggered lore cards).
    Cards {
        #[command(subcommand)]
        command: CardsCommand,
        #[command(flatten)]
        vault: VaultArg,
    },
    /// Claude Code UserPromptSubmit hook: reads the hook JSON on stdin, prints cards that fire.
    Hook {
        /// Token budget of the injected cards.
        #[arg(long, default_value_t = 600)]
        budget: usize,
        /// Turns of the transcript scanned.
        #[arg(long, default_value_t = 3)]
        scan_depth: u8,
        #[command(flatten)]
        vault: VaultArg,
    },
    /// MCP server for writing and reading cards (stdio by default).
    Mcp {
        /// Serve streamable HTTP on 127.0.0.1 instead of stdio.
        #[arg(long)]
        http: bool,
        /// Port for --http (0 picks a free one and prints it).
        #[arg(long, default_value_t = 3208)]
        port: u16,
        #[command(flatten)]
        vault: VaultArg,
    },
}

/// Where the card vault is; shared by the card commands.
#[derive(Debug, Clone, Args)]
pub struct VaultArg {
    /// Card vault folder (default: $LORE_CARDS_VAULT, else <data dir>/cards).
    #[arg(long, value_name = "DIR", global = true)]
    pub vault: Option<PathBuf>,
    #[command(flatten)]
    pub data: DataDirArg,
}

/// `lore cards …`.
#[derive(Debug, Subcommand)]
pub enum CardsCommand {
    /// Create a vault with one example card per kind.
    Init {
        /// Folder to create (default: the vault).
        dir: Option<PathBuf>,
    },
    /// List the cards.
    List {
        /// Only this kind (people, event, place, thing, slang, entry).
        #[arg(long)]
        kind: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a card file.
    Read {
        /// Card key (file name without .md).
        key: String,
    },
    /// Show what fires for a sentence, why, and the rendered block.
    Try {
        /// The sentence (the current user message).
        sentence: String,
        /// Earlier turns as JSON: [{"role": "user"|"assistant", "text": "…"}].
        #[arg(long)]
        turns: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Lint the vault; exit 1 when problems exist.
    Check {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Import a SillyTavern World Info JSON or a Character Card V2/V3.
    Import {
        /// The JSON file.
        file: PathBuf,
        /// Overwrite existing cards.
        #[arg(long)]
        force: bool,
        /// Kind to import into.
        #[arg(long)]
        kind: Option<String>,
    },
    /// Export the vault as SillyTavern World Info JSON.
    Export {
        /// Output file.
        file: PathBuf,
    },
}

/// `lore knowledge …`. `--project` defaults to the current directory.
#[derive(Debug, Subcommand)]
pub enum KnowledgeCommand {
    /// List the live entries of a project (and those that hold in every project).
    List {
        /// Project directory (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Only this category: decision, pattern, preference, architecture or gotcha.
        #[arg(long)]
        category: Option<String>,
        /// Every project's entries.
        #[arg(long, conflicts_with = "project")]
        all_projects: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one entry (an id or a unique prefix of one) with its earlier versions.
    Show {
        /// Entry id or unique prefix.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the project's knowledge to <project>/.lore.md (or print it).
    Export {
        /// Project directory (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Print the file instead of writing it.
        #[arg(long)]
        stdout: bool,
    },
    /// Apply an edited .lore.md: changed entries are updated, removed ones forgotten, new ones
    /// created; a file with problems changes nothing.
    Import {
        /// Project directory (default: the current directory).
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// The file (default: <project>/.lore.md).
        file: Option<PathBuf>,
    },
    /// Forget an entry (an id or a unique prefix); its history is kept.
    Forget {
        /// Entry id or unique prefix.
        id: String,
    },
}

/// `lore service …`.
#[derive(Debug, Subcommand)]
pub enum ServiceCommand {
    /// Write the service file, then enable and start it.
    Install {
        /// systemd or launchd (default: this platform's).
        #[arg(long)]
        manager: Option<String>,
        /// Only write the file.
        #[arg(long)]
        no_start: bool,
    },
    /// Stop and disable the service, then remove its file.
    Uninstall {
        /// systemd or launchd (default: this platform's).
        #[arg(long)]
        manager: Option<String>,
        /// Only remove the file.
        #[arg(long)]
        no_stop: bool,
    },
    /// Whether the service is installed, what the service manager says, whether it answers.
    Status {
        /// systemd or launchd (default: this platform's).
        #[arg(long)]
        manager: Option<String>,
    },
}
