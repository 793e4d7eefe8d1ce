//! `lore-context-bench`: the context manager measured against the real release `lore` and the
//! in-process fake upstream (its prompt-cache oracle and per-model context windows).
//!
//! - `economics`: a generated long coding session ([`session`]) three ways ([`economics`]):
//!   through Lore, straight to the provider until it overflows, and keeping the newest messages
//!   that fit; cost at list prices from the oracle's usage, cache-read share, busts, the largest
//!   prompt, and how many facts stated in the first turns the model still sees at the end; the
//!   same over the turns passthrough completed, and the busts by cause ([`busts`]).
//! - `speed`: a 5,580-message session with a 200K window ([`speed`]): the time from the client
//!   sending a turn to the upstream having it, through Lore against straight to the upstream,
//!   warm, after restarts and on first sight; the gateway's RSS.
//!
//! - `knowledge`: long-term knowledge in the prompt ([`knowledge`]): conventions of one session
//!   in a fresh session's first prompt against the recall engine alone, and the cache-read
//!   share of a 30-turn session while knowledge changes, pinned against searched every turn.
//!
//! Run through `scripts/bench-context`.

mod busts;
mod client;
mod economics;
mod knowledge;
mod session;
mod speed;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};

const USAGE: &str =
    "usage: lore-context-bench economics|speed|knowledge|all [--lore PATH] [--work-dir DIR]
       [--turns N] [--window TOKENS] [--tool-time-ms N]      (economics; defaults 120, 64000, 150)
       [--messages N] [--warm N] [--restarts N]              (speed; defaults 5580, 30, 10)";

struct Options {
    what: String,
    lore: PathBuf,
    work: PathBuf,
    turns: usize,
    window: u64,
    tool_time: Duration,
    messages: usize,
    warm: usize,
    restarts: usize,
}

fn options() -> anyhow::Result<Options> {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_default();
    if !matches!(what.as_str(), "economics" | "speed" | "knowledge" | "all") {
        bail!("{USAGE}");
    }
    let mut options = Options {
        what,
        lore: PathBuf::from("target/release/lore"),
        work: std::env::temp_dir().join(format!("lore-context-bench-{}", std::process::id())),
        turns: 120,
        window: 64_000,
        tool_time: Duration::from_millis(150),
        messages: 5_580,
        warm: 30,
        restarts: 10,
    };
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .with_context(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--lore" => options.lore = PathBuf::from(value()?),
            "--work-dir" => options.work = PathBuf::from(value()?),
            "--turns" => options.turns = value()?.parse()?,
            "--window" => options.window = value()?.parse()?,
            "--tool-time-ms" => options.tool_time = Duration::from_millis(value()?.parse()?),
            "--messages" => options.messages = value()?.parse()?,
            "--warm" => options.warm = value()?.parse()?,
            "--restarts" => options.restarts = value()?.parse()?,
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    Ok(options)
}

fn main() -> anyhow::Result<()> {
    let options = options()?;
    if !options.lore.exists() {
        bail!(
            "{} does not exist; build it with cargo build --release -p lore",
            options.lore.display()
        );
    }
    std::fs::create_dir_all(&options.work)?;
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_default();
    println!("# Context manager benchmark (commit {commit})\n");
    if matches!(options.what.as_str(), "economics" | "all") {
        let session = session::generate(options.turns);
        let figures = economics::run(
            &options.lore,
            &options.work,
            &session,
            options.window,
            options.tool_time,
        )?;
        println!(
            "## Economics\n\n{}",
            economics::report(&figures, options.window, options.turns)
        );
    }
    if matches!(options.what.as_str(), "knowledge" | "all") {
        let push = knowledge::push(&options.lore, &options.work)?;
        let pinned = knowledge::cache(&options.lore, &options.work, "on")?;
        let each_turn = knowledge::cache(&options.lore, &options.work, "each-turn")?;
        println!(
            "## Long-term knowledge in the prompt\n\n{}",
            knowledge::report(&push, &[pinned, each_turn])
        );
    }
    if matches!(options.what.as_str(), "speed" | "all") {
        let figures = speed::run(
            &options.lore,
            &options.work,
            options.messages,
            options.warm,
            options.restarts,
        )?;
        println!("## Speed\n\n{}", speed::report(&figures));
    }
    if let Err(err) = std::fs::remove_dir_all(&options.work) {
        eprintln!("could not remove {}: {err}", options.work.display());
    }
    Ok(())
}
