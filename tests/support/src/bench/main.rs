//! `lore-bench`: measures the gateway against the fake upstream side by side, in one run.
//!
//! Every figure is a difference between requests sent straight to the fake upstream and the
//! same requests sent through the gateway (capture on), interleaved one by one so machine noise
//! hits both alike. Run it through `scripts/bench`, which builds the release binaries first.

mod backfill;
mod client;
mod soak;
mod stats;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use client::{Connection, Timing};
use stats::{Samples, us};

struct Options {
    bin_dir: PathBuf,
    quick: bool,
    /// Stored messages to backfill while the scenarios run (`--backfill N`), instead of the
    /// default run.
    backfill: Option<usize>,
    /// Seconds of the streaming soak (`--soak SECONDS`), instead of the default run.
    soak: Option<u64>,
}

fn main() {
    let mut options = Options {
        bin_dir: PathBuf::from("target/release"),
        quick: false,
        backfill: None,
        soak: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bin-dir" => {
                options.bin_dir = PathBuf::from(args.next().expect("--bin-dir needs a value"))
            }
            "--quick" => options.quick = true,
            "--backfill" => {
                let count = args.next().and_then(|n| n.parse().ok());
                options.backfill = Some(count.expect("--backfill needs a message count"));
            }
            "--soak" => {
                let seconds = args.next().and_then(|n| n.parse().ok());
                options.soak = Some(seconds.expect("--soak needs a number of seconds"));
            }
            other => panic!(
                "unknown argument {other}; use --bin-dir DIR, --quick, --backfill MESSAGES and --soak SECONDS"
            ),
        }
    }
    if let Some(seconds) = options.soak {
        soak::run(&options.bin_dir, seconds);
        return;
    }
    match options.backfill {
        Some(messages) => backfill::run(
            &options.bin_dir,
            messages,
            if options.quick { 1 } else { 4 },
        ),
        None => run(&options),
    }
}

/// A child process killed on drop.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn start_upstream(bin: &Path, extra: &[&str]) -> (Process, u16) {
    let port = free_port();
    let child = Command::new(bin.join("lore-fake-upstream"))
        .args(["--port", &port.to_string(), "--workers", "1"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start lore-fake-upstream");
    wait_for_port(port, Duration::from_secs(10));
    (Process(child), port)
}

fn start_gateway(bin: &Path, data: &Path, upstream: u16) -> (Process, u16, Duration) {
    start_gateway_with(bin, data, upstream, &[])
}

fn start_gateway_with(
    bin: &Path,
    data: &Path,
    upstream: u16,
    env: &[(&str, String)],
) -> (Process, u16, Duration) {
    let port = free_port();
    let upstream = format!("http://127.0.0.1:{upstream}");
    let started = Instant::now();
    let child = Command::new(bin.join("lore"))
        .args(["start", "--port", &port.to_string(), "--data-dir"])
        .arg(data)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("LORE_UPSTREAM_ANTHROPIC", &upstream)
        .env("LORE_UPSTREAM_OPENAI", &upstream)
        .env("LORE_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(gateway_log())
        .spawn()
        .expect("start lore");
    wait_for_port(port, Duration::from_secs(10));
    (Process(child), port, started.elapsed())
}

/// Where the gateway's warnings go: appended to the file `LORE_BENCH_GATEWAY_LOG` names, so a
/// slow request can be explained afterwards; nowhere without it.
fn gateway_log() -> Stdio {
    let Some(path) = std::env::var_os("LORE_BENCH_GATEWAY_LOG") else {
        return Stdio::null();
    };
    match std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        Ok(file) => Stdio::from(file),
        Err(err) => {
            eprintln!(
                "cannot open {}: {err}; the gateway's log is dropped",
                path.to_string_lossy()
            );
            Stdio::null()
        }
    }
}

fn wait_for_port(port: u16, limit: Duration) {
    let deadline = Instant::now() + limit;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_micros(500));
    }
}

fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

const HEADERS: &[(&str, &str)] = &[
    ("x-api-key", "sk-bench"),
    ("anthropic-version", "2023-06-01"),
];

fn small_body(stream: bool) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "model": "claude-sonnet-5", "max_tokens": 64, "stream": stream,
        "messages": [{"role": "user", "content": "hello from the benchmark"}]
    }))
    .expect("json")
}

fn large_body() -> Vec<u8> {
    let filler =
        "The quick brown fox edits src/gateway/relay.rs and runs cargo test again. ".repeat(68);
    let messages: Vec<serde_json::Value> = (0..200)
        .map(|i| serde_json::json!({"role": if i % 2 == 0 {"user"} else {"assistant"}, "content": format!("{i}: {filler}")}))
        .collect();
    serde_json::to_vec(
        &serde_json::json!({"model": "claude-sonnet-5", "max_tokens": 64, "messages": messages}),
    )
    .expect("json")
}

/// Sends `n` interleaved request pairs (direct, then gateway) and returns both timings.
fn interleaved(
    direct: u16,
    gateway: u16,
    n: usize,
    body: &[u8],
    headers: &[(&str, &str)],
    gateway_headers: &[(&str, &str)],
) -> (Vec<Timing>, Vec<Timing>) {
    let mut to_direct = Connection::open(direct).expect("connect upstream");
    let mut to_gateway = Connection::open(gateway).expect("connect gateway");
    let mut direct_timings = Vec::with_capacity(n);
    let mut gateway_timings = Vec::with_capacity(n);
    for _ in 0..n {
        let timing = to_direct
            .post("/v1/messages", headers, body)
            .expect("direct request");
        assert_eq!(timing.status, 200);
        direct_timings.push(timing);
        let timing = to_gateway
            .post("/v1/messages", gateway_headers, body)
            .expect("gateway request");
        assert_eq!(timing.status, 200);
        gateway_timings.push(timing);
    }
    (direct_timings, gateway_timings)
}

/// Like [`interleaved`], but between two gateways.
fn interleaved_gateways(
    first: u16,
    second: u16,
    n: usize,
    body: &[u8],
) -> (Vec<Timing>, Vec<Timing>) {
    interleaved(first, second, n, body, HEADERS, HEADERS)
}

/// Writes `count` people cards (`Person<i>`) into a fresh vault.
fn write_vault(root: &Path, count: usize) {
    for index in 0..count {
        let folder = root.join("people");
        std::fs::create_dir_all(&folder).expect("vault folder");
        let text = format!(
            "---\ntitle: Person{index}\nkeywords: [Person{index}, proj-{index}]\n---\n## who\nPerson{index} leads project {index}.\n"
        );
        std::fs::write(folder.join(format!("person{index}.md")), text).expect("card");
    }
}

/// Waits until the gateway reports `count` loaded cards.
fn wait_for_cards(port: u16, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let health = lore_test_support::http_client::get(
            &format!("http://127.0.0.1:{port}"),
            "/health",
            &[],
        );
        if health.json()["cards"]["loaded"].as_u64() == Some(count as u64) {
            return;
        }
        assert!(Instant::now() < deadline, "the card book did not load");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn row(name: &str, direct: &Samples, gateway: &Samples) {
    let (d50, d99, g50, g99) = (
        direct.quantile(0.5),
        direct.quantile(0.99),
        gateway.quantile(0.5),
        gateway.quantile(0.99),
    );
    println!(
        "| {name} | {} | {} / {} | {} / {} | **{}** / **{}** |",
        direct.len(),
        us(d50),
        us(d99),
        us(g50),
        us(g99),
        us(g50 - d50),
        us(g99 - d99)
    );
}

/// Runs `threads` keep-alive clients for `duration`; returns requests per second and latencies.
fn load(port: u16, threads: usize, duration: Duration, body: &[u8]) -> (f64, Samples) {
    let deadline = Instant::now() + duration;
    let started = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let body = body.to_vec();
            std::thread::spawn(move || {
                let mut connection = Connection::open(port).expect("connect");
                let mut latencies = Vec::new();
                while Instant::now() < deadline {
                    let timing = connection
                        .post("/v1/messages", HEADERS, &body)
                        .expect("request");
                    assert_eq!(timing.status, 200);
                    latencies.push(timing.total);
                }
                latencies
            })
        })
        .collect();
    let latencies: Vec<Duration> = workers
        .into_iter()
        .flat_map(|worker| worker.join().expect("worker"))
        .collect();
    let rps = latencies.len() as f64 / started.elapsed().as_secs_f64();
    (rps, Samples::new(latencies))
}

fn run(options: &Options) {
    let bin = &options.bin_dir;
    let scale = if options.quick { 1 } else { 4 };
    let scratch = std::env::temp_dir().join(format!("lore-bench-{}", std::process::id()));
    let (_upstream, upstream) = start_upstream(bin, &[]);
    let (_paced, paced) =
        start_upstream(bin, &["--stream-events", "20", "--event-interval-ms", "10"]);

    let mut startups = Vec::new();
    for round in 0..5 {
        let (gateway, _, elapsed) =
            start_gateway(bin, &scratch.join(format!("startup-{round}")), upstream);
        startups.push(elapsed);
        drop(gateway);
    }
    let (gateway_process, gateway, _) = start_gateway(bin, &scratch.join("run"), upstream);
    let pid = gateway_process.0.id();
    std::thread::sleep(Duration::from_millis(500));
    let idle_rss = rss_mb(pid);

    println!("| scenario | pairs | direct p50 / p99 | gateway p50 / p99 | added p50 / p99 |");
    println!("|---|---|---|---|---|");
    let small = small_body(false);
    interleaved(upstream, gateway, 200, &small, HEADERS, HEADERS);
    let (direct, through) = interleaved(upstream, gateway, 1000 * scale, &small, HEADERS, HEADERS);
    row(
        "small body, non-streaming, c=1",
        &Samples::new(direct.iter().map(|t| t.total)),
        &Samples::new(through.iter().map(|t| t.total)),
    );

    let mut no_store = HEADERS.to_vec();
    no_store.push(("x-lore-no-store", "true"));
    let (direct, through) =
        interleaved(upstream, gateway, 1000 * scale, &small, HEADERS, &no_store);
    row(
        "small body, capture off (x-lore-no-store), c=1",
        &Samples::new(direct.iter().map(|t| t.total)),
        &Samples::new(through.iter().map(|t| t.total)),
    );

    let large = large_body();
    let (direct, through) = interleaved(upstream, gateway, 15 * scale, &large, HEADERS, HEADERS);
    row(
        &format!("{:.2} MB conversation body, c=1", large.len() as f64 / 1e6),
        &Samples::new(direct.iter().map(|t| t.total)),
        &Samples::new(through.iter().map(|t| t.total)),
    );

    let streamed = small_body(true);
    let (direct, through) =
        interleaved(upstream, gateway, 250 * scale, &streamed, HEADERS, HEADERS);
    row(
        "streaming, time to first event",
        &Samples::new(direct.iter().map(|t| t.first_byte)),
        &Samples::new(through.iter().map(|t| t.first_byte)),
    );

    let paced_url = format!("http://127.0.0.1:{paced}");
    let mut paced_headers = HEADERS.to_vec();
    paced_headers.push(("x-lore-upstream-url", paced_url.as_str()));
    let (direct, through) = interleaved(
        paced,
        gateway,
        10 * scale,
        &streamed,
        HEADERS,
        &paced_headers,
    );
    let gaps = |timings: &[Timing]| {
        Samples::new(
            timings
                .iter()
                .flat_map(|t| t.events.windows(2).map(|w| w[1] - w[0]).collect::<Vec<_>>()),
        )
    };
    row(
        "paced stream (20 events, 10 ms apart), gap between events",
        &gaps(&direct),
        &gaps(&through),
    );
    let events: usize = through.iter().map(|t| t.events.len()).sum();
    let reads: usize = through.iter().map(|t| t.reads).sum();

    // Cost accounting: gateways with the tracker off, on (the default, every reply's usage
    // recorded) and with a daily budget set (a throttle plan asked before every request; the
    // budget is too large to ever delay one).
    let (_off, costs_off, _) = start_gateway_with(
        bin,
        &scratch.join("costs-off"),
        upstream,
        &[("LORE_COSTS", "off".to_string())],
    );
    let (_budget, budgeted, _) = start_gateway_with(
        bin,
        &scratch.join("budget"),
        upstream,
        &[("LORE_DAILY_BUDGET", "1000000".to_string())],
    );
    interleaved_gateways(costs_off, budgeted, 200, &small);
    let (off, on) = interleaved_gateways(costs_off, gateway, 1000 * scale, &small);
    row(
        "small body: cost tracker off vs on (usage of every reply recorded), no budget",
        &Samples::new(off.iter().map(|t| t.total)),
        &Samples::new(on.iter().map(|t| t.total)),
    );
    let (on, planned) = interleaved_gateways(gateway, budgeted, 1000 * scale, &small);
    row(
        "small body: no budget vs a daily budget set (a throttle plan before every request)",
        &Samples::new(on.iter().map(|t| t.total)),
        &Samples::new(planned.iter().map(|t| t.total)),
    );
    let (direct, planned) = interleaved(upstream, budgeted, 1000 * scale, &small, HEADERS, HEADERS);
    row(
        "small body, non-streaming, c=1, daily budget set",
        &Samples::new(direct.iter().map(|t| t.total)),
        &Samples::new(planned.iter().map(|t| t.total)),
    );

    // Cards: a second gateway with a 1,000-card vault; the request names one card.
    let vault = scratch.join("vault");
    write_vault(&vault, 1000);
    let (_carded, carded, _) = start_gateway_with(
        bin,
        &scratch.join("cards"),
        upstream,
        &[("LORE_CARDS_VAULT", vault.display().to_string())],
    );
    wait_for_cards(carded, 1000);
    let naming = serde_json::to_vec(&serde_json::json!({
        "model": "claude-sonnet-5", "max_tokens": 64,
        "messages": [{"role": "user", "content": "What did Person7 decide about the rollout?"}]
    }))
    .expect("json");
    let (plain, carded_timings) = interleaved_gateways(gateway, carded, 250 * scale, &naming);
    row(
        "card injection (1,000-card vault, one card fires) vs the same gateway without cards",
        &Samples::new(plain.iter().map(|t| t.total)),
        &Samples::new(carded_timings.iter().map(|t| t.total)),
    );

    let seconds = Duration::from_secs(if options.quick { 2 } else { 5 });
    let mut throughput = Vec::new();
    for threads in [1, 32] {
        let (direct_rps, direct_latency) = load(upstream, threads, seconds, &small);
        let (gateway_rps, gateway_latency) = load(gateway, threads, seconds, &small);
        throughput.push((
            threads,
            direct_rps,
            gateway_rps,
            direct_latency,
            gateway_latency,
        ));
    }
    let loaded_rss = rss_mb(pid);

    println!();
    println!(
        "| load (small body, {}s each) | direct req/s | gateway req/s | direct p50 / p99 | gateway p50 / p99 |",
        seconds.as_secs()
    );
    println!("|---|---|---|---|---|");
    for (threads, direct_rps, gateway_rps, direct_latency, gateway_latency) in &throughput {
        println!(
            "| concurrency {threads} | {direct_rps:.0} | {gateway_rps:.0} | {} / {} | {} / {} |",
            us(direct_latency.quantile(0.5)),
            us(direct_latency.quantile(0.99)),
            us(gateway_latency.quantile(0.5)),
            us(gateway_latency.quantile(0.99))
        );
    }
    let startup = Samples::new(startups);
    println!();
    println!("| process | figure |");
    println!("|---|---|");
    println!(
        "| start to first accepted connection (5 starts) | p50 {} / max {} |",
        us(startup.quantile(0.5)),
        us(startup.quantile(1.0))
    );
    println!("| idle RSS after start | {idle_rss:.1} MB |");
    println!("| RSS after all the load above | {loaded_rss:.1} MB |");
    println!(
        "| paced stream through the gateway: body reads / events | {reads} / {events} (every event flushed on arrival when equal) |"
    );
    // The gateways stop before their data directories go.
    drop((gateway_process, _off, _budget, _carded));
    let _ = std::fs::remove_dir_all(&scratch);
}
