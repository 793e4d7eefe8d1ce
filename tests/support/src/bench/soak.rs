//! `lore-bench --soak SECONDS`: memory under sustained streaming. One gateway with the embedding
//! model loaded serves 100 concurrent clients, each holding a conversation of paced streamed
//! turns (20 events 10 ms apart, so about 100 streams are open at any time; a conversation
//! starts over after 20 turns), for SECONDS. Session actors are evicted after 60 s idle
//! (`LORE_SESSION_EVICTION_TIMEOUT=60`; the default 30 minutes would keep every one of the soak's
//! tens of thousands of conversations alive for the whole run). The gateway's RSS is sampled
//! every second; the report gives the peak, the mean of the second tenth of the run (after
//! warm-up) and of the last tenth, and their ratio (flat means within ±10 %).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::client::Connection;
use super::{HEADERS, rss_mb, start_gateway_with, start_upstream};

/// Concurrent clients.
const CLIENTS: usize = 100;
/// Turns before a client starts a new conversation.
const TURNS: usize = 20;

/// Runs the soak for `seconds`.
pub fn run(bin: &Path, seconds: u64) {
    let scratch = std::env::temp_dir().join(format!("lore-bench-soak-{}", std::process::id()));
    let (_paced, paced) = start_upstream(
        bin,
        &[
            "--stream-events",
            "20",
            "--event-interval-ms",
            "10",
            "--workers",
            "2",
        ],
    );
    let (gateway_process, gateway, _) = start_gateway_with(
        bin,
        &scratch.join("data"),
        paced,
        &[
            ("LORE_LOG", "warn".to_string()),
            ("LORE_SESSION_EVICTION_TIMEOUT", "60".to_string()),
        ],
    );
    let pid = gateway_process.0.id();
    wait_model(gateway);
    let served = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|index| {
            let (served, failed, stop) = (Arc::clone(&served), Arc::clone(&failed), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut conversation = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    let Ok(mut connection) = Connection::open(gateway) else {
                        failed.fetch_add(1, Ordering::Relaxed);
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    };
                    let mut history = Vec::new();
                    for turn in 0..TURNS {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        history.push(json!({"role": "user", "content": format!(
                            "client {index} conversation {conversation} turn {turn}: what does the relay do when the upstream stalls?"
                        )}));
                        let body = serde_json::to_vec(&json!({
                            "model": "claude-sonnet-5", "max_tokens": 64, "stream": true, "messages": history
                        }))
                        .unwrap_or_default();
                        match connection.post("/v1/messages", HEADERS, &body) {
                            Ok(timing) if timing.status == 200 => {
                                served.fetch_add(1, Ordering::Relaxed);
                                history.push(json!({"role": "assistant", "content": "streamed answer"}));
                            }
                            _ => {
                                failed.fetch_add(1, Ordering::Relaxed);
                                break;
                            }
                        }
                    }
                    conversation += 1;
                }
            })
        })
        .collect();
    let started = Instant::now();
    let mut samples: Vec<f64> = Vec::new();
    while started.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(1));
        samples.push(rss_mb(pid));
    }
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        let _ = client.join();
    }
    let tenth = (samples.len() / 10).max(1);
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len().max(1) as f64;
    let first = mean(&samples[tenth.min(samples.len())..(2 * tenth).min(samples.len())]);
    let last = mean(&samples[samples.len().saturating_sub(tenth)..]);
    let peak = samples.iter().cloned().fold(0.0, f64::max);
    let vectors =
        lore_test_support::http_client::get(&format!("http://127.0.0.1:{gateway}"), "/health", &[])
            .json()["vectors"]
            .clone();
    println!(
        "| soak: {CLIENTS} concurrent streaming clients, model loaded, {seconds} s | figure |"
    );
    println!("|---|---|");
    println!(
        "| streamed turns served / failed | {} / {} |",
        served.load(Ordering::Relaxed),
        failed.load(Ordering::Relaxed)
    );
    println!("| RSS peak | {peak:.1} MB |");
    println!(
        "| RSS mean, second tenth (after warm-up) / last tenth of the run | {first:.1} MB / {last:.1} MB |"
    );
    println!(
        "| last / first | {:.3} ({}) |",
        last / first.max(1.0),
        if (last / first.max(1.0) - 1.0).abs() <= 0.10 {
            "flat within ±10 %"
        } else {
            "**not flat**"
        }
    );
    println!(
        "| vectorizer at the end: embedded, shed, pending | {}, {}, {} |",
        vectors["embedded"], vectors["shed"], vectors["pending"]
    );
    drop(gateway_process);
    let _ = std::fs::remove_dir_all(&scratch);
}

fn wait_model(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let health = lore_test_support::http_client::get(
            &format!("http://127.0.0.1:{port}"),
            "/health",
            &[],
        )
        .json();
        if health["embeddings"]["state"] == "ready" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the embedding model never loaded: {}",
            health["embeddings"]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
