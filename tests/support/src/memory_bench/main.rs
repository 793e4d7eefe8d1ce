//! `lore-memory-bench`: the memory workers on a long synthetic coding session, against the real
//! release `lore` binary and the in-process fake upstream (whose default worker answers play the
//! worker model: an extractive observer, a consolidation keeping the newest 60 % of bullets, and
//! empty curation).
//!
//! 1. [`session`] generates the session (eight tasks, over 400 turns, tool outputs short and
//!    long) with 30 planted facts ([`facts`]), each with a paraphrased question.
//! 2. A gateway with `LORE_MEMORY=off` captures the whole session; the 30 questions are asked
//!    (`GET /api/v1/recall`, scope session): the *before* figures.
//! 3. A second gateway, memory on (`LORE_IDLE_TIMEOUT=0.2`), captures it again while the driver
//!    pauses at task steps until the idle distillation caught up; at the end the distillations,
//!    the worker calls and the same 30 questions give the *after* figures.
//!
//! Prints a Markdown report ([`report`]). Run it through `scripts/bench-memory`.

mod drive;
mod facts;
mod filler;
mod gateway;
mod logs;
mod measure;
mod plan;
mod recall_report;
mod report;
mod session;
mod tasks;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use lore_test_support::FakeUpstream;

use gateway::Gateway;
use measure::Tokens;
use report::{Memory, Phase, Run, SessionFigures};
use session::{Session, message_text};

const USAGE: &str =
    "usage: lore-memory-bench [--lore PATH] [--work-dir DIR] [--no-embeddings] [--keep]
  --lore PATH        the lore binary (default target/release/lore)
  --work-dir DIR     where the scratch data directories go (default the system temp dir)
  --no-embeddings    LORE_EMBEDDINGS=off (BM25 only) even when the model is installed
  --keep             keep the scratch data directories";

struct Options {
    lore: PathBuf,
    work_dir: PathBuf,
    embeddings: bool,
    keep: bool,
}

impl Options {
    fn scratch(&self, label: &str) -> anyhow::Result<PathBuf> {
        let dir = self
            .work_dir
            .join(format!("lore-memory-bench-{}-{label}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
        Ok(dir)
    }

    fn clean(&self, dir: &Path) {
        if self.keep {
            eprintln!("kept {}", dir.display());
        } else if let Err(err) = std::fs::remove_dir_all(dir) {
            eprintln!("could not remove {}: {err}", dir.display());
        }
    }

    fn embeddings(&self) -> &'static str {
        if self.embeddings { "on" } else { "off" }
    }
}

fn figures(session: &Session, tokens: &Tokens) -> SessionFigures {
    let mut out = SessionFigures {
        turns: session.turns.len(),
        user_requests: session.user_requests(),
        ..SessionFigures::default()
    };
    for (i, task) in tasks::TASKS.iter().enumerate() {
        let turns = session.turns.iter().filter(|t| t.task == i).count();
        out.tasks.push((task.name, task.steps.len(), turns));
    }
    let messages = session.messages();
    out.stated_in = session
        .locate()
        .iter()
        .map(|(_, at)| at.first().map_or(0, |&m| messages[m].0 + 1))
        .collect();
    for (_, message) in messages {
        let text = message_text(&message);
        out.messages += 1;
        out.raw_tokens += tokens.count(&text);
        out.raw_estimate += measure::estimate(&text);
        if message["content"][0]["type"] == "tool_result" {
            out.tool_results.0 += 1;
            out.tool_results.1 += usize::from(text.chars().count() > 4_000);
        }
    }
    out
}

/// Memory off: capture the session, then ask the questions.
fn before(options: &Options, session: &Session) -> anyhow::Result<Phase> {
    let upstream = FakeUpstream::start();
    let dir = options.scratch("before")?;
    let gateway = Gateway::start(
        &options.lore,
        &dir,
        &upstream.url(),
        &[
            ("LORE_MEMORY", "off"),
            ("LORE_EMBEDDINGS", options.embeddings()),
        ],
    )?;
    eprintln!(
        "memory off: driving {} turns (embeddings ready: {})",
        session.turns.len(),
        gateway.embeddings_ready()
    );
    let drive = drive::drive(session, &gateway, &upstream, "memory-bench-before", false)?;
    let waited = Instant::now();
    gateway.settle_index(Duration::from_secs(600))?;
    let index_wait = waited.elapsed();
    let docs = measure::documents(&gateway, &drive.session_id, &[])?;
    let (asked, vectors) = measure::ask_all(&gateway, &drive.session_id, &docs)?;
    if !upstream.worker_calls().is_empty() {
        bail!("the gateway with LORE_MEMORY=off made worker calls");
    }
    gateway.stop()?;
    options.clean(&dir);
    Ok(Phase {
        drive,
        asked,
        vectors,
        index_wait,
    })
}

/// Memory on: capture the session with pauses, let everything be distilled, measure.
fn after(options: &Options, session: &Session, tokens: &Tokens) -> anyhow::Result<(Phase, Memory)> {
    let upstream = FakeUpstream::start();
    let dir = options.scratch("after")?;
    let env = [
        ("LORE_MEMORY", "on"),
        ("LORE_IDLE_TIMEOUT", "0.2"),
        ("LORE_MEMORY_RETRY_AFTER", "1"),
        ("LORE_WORKER_MODEL", "claude-haiku-4-5"),
        ("LORE_EMBEDDINGS", options.embeddings()),
    ];
    let gateway = Gateway::start(&options.lore, &dir, &upstream.url(), &env)?;
    eprintln!(
        "memory on: driving {} turns with pauses",
        session.turns.len()
    );
    let drive = drive::drive(session, &gateway, &upstream, "memory-bench-after", true)?;
    if !drive::caught_up(&gateway, &drive.session_id, drive.messages as u64)? {
        eprintln!("the distiller had not caught up at the end; figures are what it wrote");
    }
    let waited = Instant::now();
    gateway.settle_index(Duration::from_secs(600))?;
    let index_wait = waited.elapsed();
    let distilled = measure::distillations(&gateway, &drive.session_id)?;
    let docs = measure::documents(&gateway, &drive.session_id, &distilled)?;
    let (asked, vectors) = measure::ask_all(&gateway, &drive.session_id, &docs)?;
    let workers = measure::workers(&upstream, &gateway, tokens)?;
    let actors = gateway.get("/api/v1/actors")?;
    let cursor = gateway.get(&format!("/api/v1/sessions/{}/memory", drive.session_id))?["distilled_through_seq"]
        .as_u64()
        .unwrap_or(0);
    gateway.stop()?;
    options.clean(&dir);
    let memory = Memory {
        distilled,
        workers,
        actors,
        cursor,
    };
    Ok((
        Phase {
            drive,
            asked,
            vectors,
            index_wait,
        },
        memory,
    ))
}

fn main() -> anyhow::Result<()> {
    let mut options = Options {
        lore: PathBuf::from("target/release/lore"),
        work_dir: std::env::temp_dir(),
        embeddings: true,
        keep: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--lore" => options.lore = PathBuf::from(value()?),
            "--work-dir" => options.work_dir = PathBuf::from(value()?),
            "--no-embeddings" => options.embeddings = false,
            "--keep" => options.keep = true,
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    if !options.lore.is_file() {
        bail!(
            "{} does not exist; build it with `cargo build --release -p lore` or pass --lore PATH",
            options.lore.display()
        );
    }
    let started = Instant::now();
    let tokens = Tokens::new()?;
    let session = Session::generate();
    let figures = figures(&session, &tokens);
    let before = before(&options, &session)?;
    let (after, memory) = after(&options, &session, &tokens)?;
    let run = Run {
        session: figures,
        before,
        after,
        memory,
        elapsed: started.elapsed(),
    };
    println!("{}", report::render(&run, &tokens));
    Ok(())
}
