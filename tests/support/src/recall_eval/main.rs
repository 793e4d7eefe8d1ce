//! `lore-recall-eval`: the retrieval benchmark of Lore's recall, against the real binary.
//!
//! - `quality`: recall@5, recall@10 and MRR@10 of both halves of the labelled set (tuning and
//!   held-out) per mode and question group, and whether snippets show the answer.
//! - `latency`: recall latency (client-side, over HTTP), reindex time and RSS at 10k/100k
//!   stored messages.
//! - `dump-set FILE`: writes the labelled set as JSON.
//!
//! The set, the filler and the loader live in `lore_test_support::retrieval`. Run it through
//! `scripts/bench-recall`, which builds the release binaries and fetches the embedding model.

mod gateway;
mod latency;
mod quality;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use lore_test_support::retrieval::RetrievalSet;

const USAGE: &str = "usage:
  lore-recall-eval quality [--lore PATH] [--modes bm25,vector,hybrid,hybrid+rerank] [--halves tuning,held-out] [--report FILE] [--keep]
  lore-recall-eval latency [--lore PATH] [--compare PATH,…] [--rounds N] [--messages 10000,100000] [--queries 500] [--modes …] [--data-dir DIR] [--keep]
  lore-recall-eval dump-set FILE
options:
  --lore PATH       the lore binary (default target/release/lore)
  --work-dir DIR    where the scratch data directories go (default the system temp dir)
  --keep            keep the scratch data directories
  --halves LIST     the halves of the labelled set `quality` asks (default both; both are loaded)
  --compare LIST    latency: more lore binaries timed on the same data directory, back to back
                    with --lore (each round starts each binary in turn; sled allows one at a time)
  --rounds N        latency: rounds of the binaries (default 1)
  --data-dir DIR    latency, one size only: build the data directory there, or reuse it if an
                    earlier run left it complete (never deleted; a 100k reindex takes ~25 min)
modes: bm25, vector or hybrid; `+rerank` asks for the cross-encoder reranker (off otherwise),
  `+rerank@W` with weight W against the fused order, `+rerank:DxC` (or `@W:DxC`) reading the
  top D candidates, at most C chunks each";

/// Options shared by the subcommands.
pub struct Options {
    /// The `lore` binary.
    pub lore: PathBuf,
    /// Recall modes to evaluate.
    pub modes: Vec<String>,
    /// Halves of the labelled set `quality` asks (`tuning`, `held-out`).
    pub halves: Vec<String>,
    /// Corpus sizes of the latency run.
    pub messages: Vec<usize>,
    /// Timed queries per mode and size.
    pub queries: usize,
    /// Where per-question ranks of `quality` go.
    pub report: Option<PathBuf>,
    /// Parent of the scratch data directories.
    pub work_dir: PathBuf,
    /// Keep the scratch directories.
    pub keep: bool,
    /// More `lore` binaries the latency run times on the same data, after `lore`.
    pub compare: Vec<PathBuf>,
    /// Rounds of the binaries in the latency run.
    pub rounds: usize,
    /// The latency run's data directory (one size), reused when complete.
    pub data_dir: Option<PathBuf>,
}

impl Options {
    /// A fresh, empty scratch data directory.
    pub fn scratch(&self, label: &str) -> anyhow::Result<PathBuf> {
        let dir = self
            .work_dir
            .join(format!("lore-recall-eval-{}-{label}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
        Ok(dir)
    }

    /// Removes a scratch directory unless `--keep`.
    pub fn clean(&self, dir: &Path) {
        if self.keep {
            eprintln!("kept {}", dir.display());
        } else if let Err(err) = std::fs::remove_dir_all(dir) {
            eprintln!("could not remove {}: {err}", dir.display());
        }
    }
}

fn list<T: std::str::FromStr>(value: &str) -> anyhow::Result<Vec<T>> {
    value
        .split(',')
        .map(|item| {
            item.trim()
                .replace('_', "")
                .parse()
                .map_err(|_| anyhow::anyhow!("bad list item {item:?}"))
        })
        .collect()
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let Some(command) = args.next() else {
        bail!("{USAGE}");
    };
    let mut options = Options {
        lore: PathBuf::from("target/release/lore"),
        modes: vec![
            "bm25".into(),
            "vector".into(),
            "hybrid".into(),
            "hybrid+rerank".into(),
        ],
        halves: vec!["tuning".into(), "held-out".into()],
        messages: vec![10_000, 100_000],
        queries: 500,
        report: None,
        work_dir: std::env::temp_dir(),
        keep: false,
        compare: Vec::new(),
        rounds: 1,
        data_dir: None,
    };
    let mut positional = Vec::new();
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--lore" => options.lore = PathBuf::from(value()?),
            "--modes" => options.modes = list(&value()?)?,
            "--halves" => options.halves = list(&value()?)?,
            "--messages" => options.messages = list(&value()?)?,
            "--queries" => options.queries = value()?.parse().context("--queries")?,
            "--report" => options.report = Some(PathBuf::from(value()?)),
            "--work-dir" => options.work_dir = PathBuf::from(value()?),
            "--keep" => options.keep = true,
            "--compare" => {
                options.compare = value()?.split(',').map(PathBuf::from).collect();
            }
            "--rounds" => options.rounds = value()?.parse().context("--rounds")?,
            "--data-dir" => options.data_dir = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other if other.starts_with("--") => bail!("unknown option {other}\n{USAGE}"),
            other => positional.push(other.to_string()),
        }
    }
    match command.as_str() {
        "quality" | "latency" => {
            for lore in std::iter::once(&options.lore).chain(&options.compare) {
                if !lore.is_file() {
                    bail!(
                        "{} does not exist; build it with `cargo build --release -p lore` or pass --lore PATH",
                        lore.display()
                    );
                }
            }
            if command == "quality" {
                quality::run(&options)
            } else {
                latency::run(&options)
            }
        }
        "dump-set" => {
            let [file] = positional.as_slice() else {
                bail!("dump-set needs exactly one FILE\n{USAGE}");
            };
            let set = RetrievalSet::generate();
            let json = set.to_json();
            std::fs::write(file, &json).with_context(|| format!("write {file}"))?;
            eprintln!(
                "{}: {} sessions, {} messages, {} questions, {} bytes",
                file,
                set.sessions.len(),
                set.message_count(),
                set.questions.len(),
                json.len()
            );
            Ok(())
        }
        "-h" | "--help" | "help" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown command {other}\n{USAGE}"),
    }
}
