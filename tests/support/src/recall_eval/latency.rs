//! `latency`: for each corpus size, a fresh data directory with the labelled set plus filler,
//! `lore reindex` (timed), a gateway, 20 warm-up queries, then sequential timed recall queries
//! per mode (question texts of both halves, shuffled and cycled). Prints client-side p50/p99/max over HTTP,
//! the gateway's RSS, and recall@10 of the questions asked at that size.
//!
//! With `--compare`, each further binary is started on the same data directory after the
//! first (one gateway at a time), `--rounds` times, so a change is timed back to back with its
//! baseline; with `--data-dir` the (expensive) directory is built once and reused.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use lore_test_support::retrieval::filler::Filler;
use lore_test_support::retrieval::held_out::HeldOutSet;
use lore_test_support::retrieval::{Question, RetrievalSet, Rng, SEED, loader};

use crate::Options;
use crate::gateway::{Gateway, reindex};
use crate::quality::rank_of;

const WARM_UP: usize = 20;

/// Nearest-rank quantile in milliseconds (`sorted` ascending, non-empty).
fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e3
}

/// Written into a `--data-dir` once it is loaded and reindexed: the message count.
const READY_MARKER: &str = "lore-recall-eval.ready";

struct SizeRow {
    messages: usize,
    binary: String,
    load: Duration,
    reindex: Duration,
    ready: Duration,
    rss_ready: f64,
    rss_after: f64,
}

struct ModeRow {
    messages: usize,
    binary: String,
    mode: String,
    outcome: Result<Timed, String>,
}

/// Runs the latency benchmark and prints the tables.
pub fn run(options: &Options) -> anyhow::Result<()> {
    let set = RetrievalSet::generate();
    let held = HeldOutSet::generate();
    let questions: Vec<Question> = set
        .questions
        .iter()
        .chain(&held.questions)
        .cloned()
        .collect();
    let mut order: Vec<usize> = (0..questions.len()).collect();
    Rng::new(SEED ^ 0x5155_4552_5953).shuffle(&mut order);
    let mut sizes = Vec::new();
    let mut modes = Vec::new();
    for &messages in &options.messages {
        let labelled = set.message_count() + held.message_count();
        anyhow::ensure!(
            messages >= labelled,
            "--messages {messages} is below the {labelled} labelled messages"
        );
        let (dir, load, took) = prepare(options, &set, &held, messages)?;
        let binaries: Vec<_> = std::iter::once(&options.lore)
            .chain(&options.compare)
            .collect();
        for round in 1..=options.rounds.max(1) {
            for lore in &binaries {
                let binary = if options.rounds > 1 {
                    format!("{} (round {round})", lore.display())
                } else {
                    lore.display().to_string()
                };
                eprintln!("timing {binary} on {messages} messages; {}", load_average());
                let gateway = Gateway::start(lore, &dir)?;
                std::thread::sleep(Duration::from_millis(500));
                let rss_ready = gateway.rss_mb();
                for mode in &options.modes {
                    let outcome = time_mode(&gateway, &questions, &order, mode, options.queries);
                    if let Err(err) = &outcome {
                        eprintln!("mode {mode} unavailable: {err}");
                    }
                    modes.push(ModeRow {
                        messages,
                        binary: binary.clone(),
                        mode: mode.clone(),
                        outcome,
                    });
                }
                let rss_after = gateway.rss_mb();
                let ready = gateway.ready_after;
                gateway.stop()?;
                eprintln!("done; {}", load_average());
                sizes.push(SizeRow {
                    messages,
                    binary,
                    load,
                    reindex: took,
                    ready,
                    rss_ready,
                    rss_after,
                });
            }
        }
        if options.data_dir.is_none() {
            options.clean(&dir);
        }
    }
    println!("{}", load_average());
    print_tables(&sizes, &modes, options.queries);
    Ok(())
}

/// The data directory of one size: loaded and reindexed (both timed), or, with `--data-dir`,
/// reused as an earlier run left it (times then zero).
fn prepare(
    options: &Options,
    set: &RetrievalSet,
    held: &HeldOutSet,
    messages: usize,
) -> anyhow::Result<(PathBuf, Duration, Duration)> {
    let dir = match &options.data_dir {
        Some(dir) => {
            anyhow::ensure!(
                options.messages.len() == 1,
                "--data-dir takes one --messages size"
            );
            let marker = std::fs::read_to_string(dir.join(READY_MARKER)).unwrap_or_default();
            if marker.trim() == messages.to_string() {
                eprintln!("reusing {} ({messages} messages, reindexed)", dir.display());
                return Ok((dir.clone(), Duration::ZERO, Duration::ZERO));
            }
            anyhow::ensure!(
                !dir.exists() || std::fs::read_dir(dir)?.next().is_none(),
                "{} exists but is not a complete {messages}-message directory; remove it",
                dir.display()
            );
            std::fs::create_dir_all(dir)?;
            dir.clone()
        }
        None => options.scratch(&format!("latency-{messages}"))?,
    };
    let labelled = set.message_count() + held.message_count();
    let started = Instant::now();
    let filler = Filler::new(SEED ^ messages as u64, messages - labelled);
    let store = loader::open(&dir)?;
    let labelled_sessions = set.sessions.iter().chain(&held.sessions).cloned();
    for session in labelled_sessions.chain(filler) {
        loader::write_session(&store, &session)?;
    }
    store.flush()?;
    drop(store);
    let load = started.elapsed();
    eprintln!("{messages} messages loaded in {load:.2?}; reindexing");
    let (took, said) = reindex(&options.lore, &dir)?;
    eprintln!("lore reindex took {took:.2?} ({said})");
    if options.data_dir.is_some() {
        std::fs::write(dir.join(READY_MARKER), messages.to_string())?;
    }
    Ok((dir, load, took))
}

/// `/proc/loadavg`'s first three fields, for the record of a timing.
pub fn load_average() -> String {
    let raw = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let fields: Vec<&str> = raw.split_whitespace().take(3).collect();
    format!("load average {}", fields.join(" "))
}

/// What one mode measured: sorted timings of the answered queries, hits@10, failed queries.
struct Timed {
    timings: Vec<Duration>,
    hits: usize,
    failed: usize,
}

/// Warm-up, then `queries` timed sequential queries. A failed query (HTTP error) is counted,
/// not timed; the mode is unavailable when the warm-up fails entirely.
fn time_mode(
    gateway: &Gateway,
    questions: &[Question],
    order: &[usize],
    mode: &str,
    queries: usize,
) -> Result<Timed, String> {
    let question = |i: usize| &questions[order[i % order.len()]];
    // Warm up on the questions asked last, so the first timed ones are not cached answers.
    let warm: Vec<_> = (0..WARM_UP.min(order.len()))
        .map(|i| gateway.recall(&question(order.len() - 1 - i).text, mode, 10))
        .collect();
    if let Some(Err(err)) = warm.iter().find(|r| r.is_err())
        && warm.iter().all(Result::is_err)
    {
        return Err(err.to_string());
    }
    let mut timed = Timed {
        timings: Vec::with_capacity(queries),
        hits: 0,
        failed: 0,
    };
    for i in 0..queries {
        let asked = question(i);
        let started = Instant::now();
        match gateway.recall(&asked.text, mode, 10) {
            Ok(ids) => {
                timed.timings.push(started.elapsed());
                timed.hits += usize::from(rank_of(&ids, &asked.answer_id).is_some());
            }
            Err(_) => timed.failed += 1,
        }
    }
    timed.timings.sort();
    Ok(timed)
}

fn print_tables(sizes: &[SizeRow], modes: &[ModeRow], queries: usize) {
    println!(
        "| messages | binary | load into sled | lore reindex | start to /health | gateway RSS after start | RSS after queries |"
    );
    println!("|---|---|---|---|---|---|---|");
    for row in sizes {
        println!(
            "| {} | {} | {:.1} s | {:.1} s | {:.2} s | {:.0} MB | {:.0} MB |",
            row.messages,
            row.binary,
            row.load.as_secs_f64(),
            row.reindex.as_secs_f64(),
            row.ready.as_secs_f64(),
            row.rss_ready,
            row.rss_after
        );
    }
    println!();
    println!(
        "| messages | binary | mode | queries | p50 | p99 | max | recall@10 of the questions asked | failed |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for row in modes {
        match &row.outcome {
            Ok(timed) if !timed.timings.is_empty() => println!(
                "| {} | {} | {} | {} | {:.2} ms | {:.2} ms | {:.2} ms | {:.3} | {} |",
                row.messages,
                row.binary,
                row.mode,
                queries,
                quantile_ms(&timed.timings, 0.5),
                quantile_ms(&timed.timings, 0.99),
                quantile_ms(&timed.timings, 1.0),
                timed.hits as f64 / queries.max(1) as f64,
                timed.failed
            ),
            Ok(timed) => println!(
                "| {} | {} | {} | {queries} | | | | | {} |",
                row.messages, row.binary, row.mode, timed.failed
            ),
            Err(err) => println!(
                "| {} | {} | {} | {queries} | unavailable: {} | | | | |",
                row.messages,
                row.binary,
                row.mode,
                err.replace('|', "/")
            ),
        }
    }
}
