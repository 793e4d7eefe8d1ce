//! `lore-ui-bench --lore PATH [--requests N] [--keep]`: render time of every dashboard page
//! on a data directory of 1,000 sessions and 100,000 messages (`ui_seed::Plan::BENCH`), against
//! the release `lore` over real HTTP. Each page request is paired with a `/health` request (the
//! baseline: the same connection set-up and HTTP path, no page), interleaved one pair at a
//! time, so machine noise hits both alike. Prints a Markdown table of p50, p95 and max.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use lore_test_support::http_client;
use lore_test_support::lore_process::LoreProcess;
use lore_test_support::ui_seed::{Plan, seed};
use serde_json::Value;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn timed(base: &str, path: &str) -> anyhow::Result<(Duration, usize)> {
    let started = Instant::now();
    let response = http_client::request(base, "GET", path, &[], b"")?;
    let elapsed = started.elapsed();
    anyhow::ensure!(
        response.status == 200,
        "{path} answered {}: {}",
        response.status,
        response.text()
    );
    Ok((elapsed, response.body.len()))
}

fn json(base: &str, path: &str) -> anyhow::Result<Value> {
    let response = http_client::request(base, "GET", path, &[], b"")?;
    anyhow::ensure!(
        response.status == 200,
        "{path} answered {}",
        response.status
    );
    Ok(response.json())
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let (mut lore, mut requests, mut keep) = (None, 200usize, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lore" => lore = args.next().map(PathBuf::from),
            "--requests" => requests = args.next().and_then(|n| n.parse().ok()).unwrap_or(requests),
            "--keep" => keep = true,
            other => anyhow::bail!(
                "unknown argument {other}; usage: lore-ui-bench --lore PATH [--requests N] [--keep]"
            ),
        }
    }
    let lore = lore.context("--lore PATH of the release lore binary is required")?;
    let dir = tempfile::Builder::new()
        .prefix("lore-ui-bench-")
        .tempdir()?;
    let data = dir.path().to_path_buf();
    let started = Instant::now();
    let seeded = seed(&data, Plan::BENCH, Some(&data.join("cards")))?;
    eprintln!(
        "seeded {} sessions, {} messages, {} knowledge entries, {} entities in {:.1} s",
        seeded.sessions.len(),
        seeded.messages,
        seeded.knowledge.len(),
        seeded.entities.len(),
        started.elapsed().as_secs_f64()
    );
    let gateway = LoreProcess::spawn(
        &lore,
        &data,
        "bench-gateway.log",
        &[("LORE_EMBEDDINGS", "off"), ("LORE_MEMORY", "off")],
    )?;
    let base = gateway.base();
    let deadline = Instant::now() + Duration::from_secs(300);
    // The index is rebuilt from sled after start; wait until it holds every message so the
    // rebuild does not run during the measurement.
    loop {
        anyhow::ensure!(
            Instant::now() < deadline,
            "the index was not rebuilt in time: {}",
            gateway.log_tail()
        );
        if let Ok(overview) = json(&base, "/api/v1/overview")
            && overview["health"]["index"]["documents"]
                .as_u64()
                .unwrap_or(0)
                >= seeded.messages as u64
            && overview["stats"]["cards"].as_u64() == Some(2)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let rss_before = gateway.rss_mb();
    let project = json(&base, "/api/v1/projects")?["projects"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let session = &seeded.sessions[seeded.sessions.len() / 2];
    let pages = [
        "/ui".to_string(),
        "/ui/projects".into(),
        format!("/ui/projects/{project}"),
        format!("/ui/sessions/{session}"),
        "/ui/knowledge".into(),
        format!("/ui/knowledge/{}", seeded.knowledge[0]),
        "/ui/entities".into(),
        format!("/ui/entities/{}", seeded.entities[1]),
        "/ui/search?q=invoice+backoff&mode=bm25".into(),
        "/ui/cards".into(),
        "/ui/cards/people/Priya".into(),
        "/ui/costs".into(),
        "/ui/settings".into(),
        "/api/v1/overview".into(),
        format!("/api/v1/sessions/{session}/conversation"),
    ];
    println!("| page | bytes | p50 | p95 | max | `/health` p95 (same run) |");
    println!("|---|---|---|---|---|---|");
    let mut worst = Duration::ZERO;
    for page in &pages {
        for _ in 0..5 {
            timed(&base, page)?;
        }
        let (mut times, mut baseline, mut bytes) = (Vec::new(), Vec::new(), 0);
        for _ in 0..requests {
            let (took, size) = timed(&base, page)?;
            times.push(took);
            bytes = size;
            baseline.push(timed(&base, "/health")?.0);
        }
        times.sort();
        baseline.sort();
        worst = worst.max(percentile(&times, 95.0));
        println!(
            "| `{page}` | {bytes} | {} | {} | {} | {} |",
            ms(percentile(&times, 50.0)),
            ms(percentile(&times, 95.0)),
            ms(*times.last().unwrap_or(&Duration::ZERO)),
            ms(percentile(&baseline, 95.0))
        );
    }
    println!();
    println!(
        "{} requests per page after 5 warm-up requests; slowest p95 {}; gateway RSS {:.1} MB after the index rebuild, {:.1} MB after the pages",
        requests,
        ms(worst),
        rss_before,
        gateway.rss_mb()
    );
    gateway.stop()?;
    if keep {
        let kept = dir.keep();
        eprintln!("kept {}", kept.display());
    }
    Ok(())
}
