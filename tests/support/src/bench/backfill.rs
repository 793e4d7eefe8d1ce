//! `lore-bench --backfill N`: the request scenarios against two gateways, each interleaved with
//! the direct baseline in the same run: one with an empty data directory, one started on a data
//! directory seeded with `N` stored messages that have no vectors yet, so it embeds (and
//! indexes) all of them in the background while the scenarios run. Both have embeddings on; the
//! backlog's progress and the backfilling gateway's peak RSS are printed with the tables.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lore_test_support::retrieval::{filler::Filler, loader};
use serde_json::Value;

use super::stats::{Samples, us};
use super::{
    HEADERS, interleaved, large_body, load, rss_mb, small_body, start_gateway_with, start_upstream,
};

/// One scenario's figures: direct and gateway samples.
struct Figures {
    name: String,
    direct: Samples,
    gateway: Samples,
}

/// Throughput at one concurrency.
struct Throughput {
    threads: usize,
    direct_rps: f64,
    gateway_rps: f64,
}

/// Runs the comparison; `scale` 1 is the quick run.
pub fn run(bin: &Path, messages: usize, scale: usize) {
    let scratch = std::env::temp_dir().join(format!("lore-bench-backfill-{}", std::process::id()));
    let seeded = scratch.join("seeded");
    let started = Instant::now();
    let sessions: Vec<_> = Filler::new(0x4241_434B_4649_4C4C, messages).collect();
    let written = loader::load(&seeded, &sessions).expect("seed the data directory");
    drop(sessions);
    eprintln!(
        "seeded {written} messages in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let (_upstream, upstream) = start_upstream(bin, &[]);
    let env = [("LORE_LOG", "warn".to_string())];

    let (plain_process, plain, _) = start_gateway_with(bin, &scratch.join("plain"), upstream, &env);
    wait_embeddings(plain);
    let (plain_rows, plain_load) = scenarios(upstream, plain, scale);
    let plain_rss = rss_mb(plain_process.0.id());
    drop(plain_process);

    let (busy_process, busy, _) = start_gateway_with(bin, &seeded, upstream, &env);
    let pid = busy_process.0.id();
    let peak = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, stop) = (Arc::clone(&peak), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let kb = (rss_mb(pid) * 1024.0) as u64;
                peak.fetch_max(kb, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let planned = wait_backfill_started(busy);
    // First the backfill alone, no request: its own memory and pace.
    let quiet = Duration::from_secs(if scale == 1 { 15 } else { 90 });
    let quiet_started = Instant::now();
    std::thread::sleep(quiet);
    let quiet_peak = peak.load(Ordering::Relaxed) as f64 / 1024.0;
    let before = vectors(busy);
    let quiet_rate = before["backfill_done"].as_u64().unwrap_or(0) as f64
        / quiet_started.elapsed().as_secs_f64();
    let (busy_rows, busy_load) = scenarios(upstream, busy, scale);
    let after = vectors(busy);
    stop.store(true, Ordering::Relaxed);
    let _ = sampler.join();
    let busy_rss = rss_mb(pid);

    println!(
        "| scenario | pairs | direct p50 / p99 | no backfill: added p50 / p99 | during the backfill: direct p50 / p99 | during the backfill: added p50 / p99 |"
    );
    println!("|---|---|---|---|---|---|");
    for (plain, busy) in plain_rows.iter().zip(&busy_rows) {
        let added = |f: &Figures, q: f64| f.gateway.quantile(q) - f.direct.quantile(q);
        println!(
            "| {} | {} | {} / {} | **{}** / **{}** | {} / {} | **{}** / **{}** |",
            plain.name,
            plain.direct.len(),
            us(plain.direct.quantile(0.5)),
            us(plain.direct.quantile(0.99)),
            us(added(plain, 0.5)),
            us(added(plain, 0.99)),
            us(busy.direct.quantile(0.5)),
            us(busy.direct.quantile(0.99)),
            us(added(busy, 0.5)),
            us(added(busy, 0.99)),
        );
    }
    println!();
    println!(
        "| load (small body) | no backfill: direct / gateway req/s | gateway / direct | during the backfill: direct / gateway req/s | gateway / direct |"
    );
    println!("|---|---|---|---|---|");
    for (plain, busy) in plain_load.iter().zip(&busy_load) {
        println!(
            "| concurrency {} | {:.0} / {:.0} | {:.2} | {:.0} / {:.0} | {:.2} |",
            plain.threads,
            plain.direct_rps,
            plain.gateway_rps,
            plain.gateway_rps / plain.direct_rps,
            busy.direct_rps,
            busy.gateway_rps,
            busy.gateway_rps / busy.direct_rps,
        );
    }
    println!();
    println!("| backfill | figure |");
    println!("|---|---|");
    println!("| messages seeded (no vectors) | {written} |");
    println!(
        "| backfill alone for {} s before the scenarios: peak RSS, documents embedded per second | {quiet_peak:.1} MB, {quiet_rate:.1} |",
        quiet.as_secs()
    );
    println!(
        "| vectorizer when the scenarios started: done / total, pending live | {} / {}, {} |",
        before["backfill_done"], before["backfill_total"], before["pending"]
    );
    let _ = planned;
    println!(
        "| vectorizer when they ended: done / total, embedded, shed, timeouts | {} / {}, {}, {}, {} |",
        after["backfill_done"],
        after["backfill_total"],
        after["embedded"],
        after["shed"],
        after["timeouts"]
    );
    println!(
        "| peak RSS of the backfilling gateway over the whole run, scenarios included (sampled every 100 ms) | {:.1} MB |",
        peak.load(Ordering::Relaxed) as f64 / 1024.0
    );
    println!(
        "| RSS at the end: backfilling gateway / gateway without backlog | {busy_rss:.1} MB / {plain_rss:.1} MB |"
    );
    let still_running = after["backfill_done"].as_u64() < after["backfill_total"].as_u64();
    println!(
        "| the backfill was still running when the last scenario ended | {} |",
        if still_running { "yes" } else { "**no**" }
    );
    drop(busy_process);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Small body c=1, 1 MB body, streaming time to first event, then throughput at 1 and 32.
fn scenarios(upstream: u16, gateway: u16, scale: usize) -> (Vec<Figures>, Vec<Throughput>) {
    let mut rows = Vec::new();
    let small = small_body(false);
    interleaved(upstream, gateway, 100, &small, HEADERS, HEADERS);
    let (direct, through) = interleaved(upstream, gateway, 500 * scale, &small, HEADERS, HEADERS);
    rows.push(Figures {
        name: "small body, non-streaming, c=1".into(),
        direct: Samples::new(direct.iter().map(|t| t.total)),
        gateway: Samples::new(through.iter().map(|t| t.total)),
    });
    let large = large_body();
    let (direct, through) = interleaved(upstream, gateway, 10 * scale, &large, HEADERS, HEADERS);
    rows.push(Figures {
        name: format!("{:.2} MB conversation body, c=1", large.len() as f64 / 1e6),
        direct: Samples::new(direct.iter().map(|t| t.total)),
        gateway: Samples::new(through.iter().map(|t| t.total)),
    });
    let streamed = small_body(true);
    let (direct, through) =
        interleaved(upstream, gateway, 250 * scale, &streamed, HEADERS, HEADERS);
    rows.push(Figures {
        name: "streaming, time to first event".into(),
        direct: Samples::new(direct.iter().map(|t| t.first_byte)),
        gateway: Samples::new(through.iter().map(|t| t.first_byte)),
    });
    let seconds = Duration::from_secs(if scale == 1 { 2 } else { 5 });
    let mut throughput = Vec::new();
    for threads in [1, 32] {
        let (direct_rps, _) = load(upstream, threads, seconds, &small);
        let (gateway_rps, _) = load(gateway, threads, seconds, &small);
        throughput.push(Throughput {
            threads,
            direct_rps,
            gateway_rps,
        });
    }
    (rows, throughput)
}

fn health(port: u16) -> Value {
    lore_test_support::http_client::get(&format!("http://127.0.0.1:{port}"), "/health", &[]).json()
}

fn vectors(port: u16) -> Value {
    health(port)["vectors"].clone()
}

/// Waits until the gateway's embedder is ready (panics with what is missing otherwise).
fn wait_embeddings(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let health = health(port);
        if health["embeddings"]["state"] == "ready" && !health["vectors"].is_null() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "embeddings never became ready (run scripts/setup; ORT_DYLIB_PATH and LORE_MODELS_DIR): {}",
            health["embeddings"]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the backfill has planned its work; returns the vectorizer counters then.
fn wait_backfill_started(port: u16) -> Value {
    wait_embeddings(port);
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let vectors = vectors(port);
        if vectors["backfill_total"].as_u64().unwrap_or(0) > 0 {
            return vectors;
        }
        assert!(
            Instant::now() < deadline,
            "the backfill never started: {vectors}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
