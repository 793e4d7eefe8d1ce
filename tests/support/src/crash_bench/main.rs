//! `lore-crash-bench`: crash safety under load. 50 clients each hold one conversation with the
//! real release `lore` in front of the fake upstream (Anthropic Messages, the whole history every
//! turn, a session header per client); meanwhile the gateway is killed with SIGKILL at random
//! moments and restarted on the same data directory. A client whose request fails re-sends the
//! same turn once the gateway is back, as a harness would. After the last kill every client
//! finishes its turns, the gateway is stopped cleanly, and an independent verifier opens the
//! data directory with `lore-storage` and checks that each client's conversation is stored in
//! exactly one session whose path is exactly what the client holds: every acknowledged turn and
//! every re-sent one once, in order, nothing missing, nothing doubled.
//!
//! Usage: `lore-crash-bench --lore target/release/lore [--clients 50] [--turns 10] [--kills 10]
//! [--seed N]`; prints a Markdown table and exits non-zero when anything is lost or doubled.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lore_proto::Part;
use lore_test_support::FakeUpstream;
use lore_test_support::http_client;
use lore_test_support::lore_process::LoreProcess;
use serde_json::{Value, json};

struct Options {
    lore: PathBuf,
    clients: usize,
    turns: usize,
    kills: usize,
    seed: u64,
}

fn options() -> Options {
    let mut options = Options {
        lore: PathBuf::from("target/release/lore"),
        clients: 50,
        turns: 10,
        kills: 10,
        seed: 0x4352_4153_4821,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--lore" => options.lore = PathBuf::from(value()),
            "--clients" => options.clients = value().parse().expect("--clients N"),
            "--turns" => options.turns = value().parse().expect("--turns N"),
            "--kills" => options.kills = value().parse().expect("--kills N"),
            "--seed" => options.seed = value().parse().expect("--seed N"),
            other => panic!("unknown argument {other}"),
        }
    }
    options
}

/// What the clients did, summed.
#[derive(Default)]
struct Counts {
    acknowledged: AtomicU64,
    resent: AtomicU64,
    failed_attempts: AtomicU64,
}

/// A tiny deterministic generator for the kill times.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
}

fn wait_healthy(port: u16) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if http_client::request(
            &format!("http://127.0.0.1:{port}"),
            "GET",
            "/health",
            &[],
            b"",
        )
        .is_ok_and(|r| r.status == 200)
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

fn start(lore: &std::path::Path, data: &std::path::Path, upstream: &str, n: usize) -> LoreProcess {
    let env = [
        ("LORE_UPSTREAM_ANTHROPIC", upstream),
        ("LORE_EMBEDDINGS", "off"),
        ("LORE_MEMORY", "off"),
    ];
    let process = LoreProcess::spawn(lore, data, &format!("gateway-{n}.log"), &env)
        .expect("start the gateway");
    assert!(
        wait_healthy(process.port),
        "the gateway did not come up: {}",
        process.log_tail()
    );
    process
}

/// One client's conversation: turns until the kills are over (`done`) and at least `turns`
/// were made, then two more against the last gateway; returns the history it holds.
fn client(
    index: usize,
    turns: usize,
    port: Arc<AtomicU16>,
    counts: Arc<Counts>,
    done: Arc<AtomicBool>,
) -> Vec<String> {
    let session = format!("crash-client-{index}");
    let mut history: Vec<Value> = Vec::new();
    let mut texts = Vec::new();
    let mut after_done = 0;
    for turn in 0.. {
        if turn >= turns && done.load(Ordering::SeqCst) {
            if after_done == 2 {
                break;
            }
            after_done += 1;
        }
        let text = format!("client {index} turn {turn}: please continue the refactor");
        history.push(json!({"role": "user", "content": text}));
        texts.push(text);
        let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": history})
            .to_string();
        let mut attempt = 0;
        loop {
            let current = port.load(Ordering::SeqCst);
            if current == 0 {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            attempt += 1;
            let answer = http_client::request(
                &format!("http://127.0.0.1:{current}"),
                "POST",
                "/v1/messages",
                &[
                    ("content-type", "application/json"),
                    ("x-api-key", "sk-crash-bench"),
                    ("anthropic-version", "2023-06-01"),
                    ("x-lore-session-id", &session),
                ],
                body.as_bytes(),
            );
            let reply = answer
                .ok()
                .filter(|r| r.status == 200 && r.complete)
                .and_then(|r| {
                    serde_json::from_slice::<Value>(&r.body).ok()?["content"][0]["text"]
                        .as_str()
                        .map(str::to_string)
                });
            match reply {
                Some(reply) => {
                    if attempt > 1 {
                        counts.resent.fetch_add(1, Ordering::Relaxed);
                    }
                    counts.acknowledged.fetch_add(1, Ordering::Relaxed);
                    history.push(json!({"role": "assistant", "content": reply}));
                    texts.push(reply);
                    break;
                }
                None => {
                    counts.failed_attempts.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
    }
    texts
}

/// The text of a stored message (its text parts joined).
fn text_of(message: &lore_proto::Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("")
}

fn main() {
    let options = options();
    let scratch = tempfile_dir();
    let data = scratch.join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    let upstream = FakeUpstream::start();
    let upstream_url = upstream.url();
    let mut restarts = 0usize;
    let mut gateway = Some(start(&options.lore, &data, &upstream_url, restarts));
    let port = Arc::new(AtomicU16::new(gateway.as_ref().map_or(0, |g| g.port)));
    let counts = Arc::new(Counts::default());
    let started = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..options.clients)
        .map(|index| {
            let (port, counts, done) = (Arc::clone(&port), Arc::clone(&counts), Arc::clone(&done));
            let turns = options.turns;
            std::thread::spawn(move || client(index, turns, port, counts, done))
        })
        .collect();
    let mut rng = Lcg(options.seed);
    let mut kills = Vec::new();
    for _ in 0..options.kills {
        std::thread::sleep(Duration::from_millis(200 + rng.below(1300)));
        let acknowledged = counts.acknowledged.load(Ordering::SeqCst);
        port.store(0, Ordering::SeqCst);
        // Dropping the process kills it with SIGKILL.
        drop(gateway.take());
        kills.push(acknowledged);
        restarts += 1;
        let restarted = Instant::now();
        let next = start(&options.lore, &data, &upstream_url, restarts);
        eprintln!(
            "kill {restarts}: after {acknowledged} acknowledged turns; back in {} ms",
            restarted.elapsed().as_millis()
        );
        port.store(next.port, Ordering::SeqCst);
        gateway = Some(next);
    }
    done.store(true, Ordering::SeqCst);
    let histories: Vec<Vec<String>> = clients
        .into_iter()
        .map(|client| client.join().expect("client thread"))
        .collect();
    let elapsed = started.elapsed();
    if let Some(gateway) = gateway.take() {
        gateway.stop().expect("stop the gateway");
    }

    // The verifier: the data directory as it is on disk, read with the storage crate.
    let store = lore_storage::Store::open(&data.join("db")).expect("open the stored data");
    let mut by_client: BTreeMap<usize, Vec<Vec<String>>> = BTreeMap::new();
    for record in store.list_sessions().expect("list sessions") {
        let messages = store.session_messages(&record).expect("read a session");
        let texts: Vec<String> = messages.iter().map(|m| text_of(&m.message)).collect();
        let owner = texts.first().and_then(|first| {
            first
                .strip_prefix("client ")?
                .split(' ')
                .next()?
                .parse::<usize>()
                .ok()
        });
        if let Some(owner) = owner {
            by_client.entry(owner).or_default().push(texts);
        }
    }
    let (mut exact, mut missing, mut doubled, mut split) = (0usize, 0usize, 0usize, 0usize);
    for (index, expected) in histories.iter().enumerate() {
        let sessions = by_client.get(&index).cloned().unwrap_or_default();
        if sessions.len() != 1 {
            split += 1;
        }
        let stored: Vec<String> = sessions.into_iter().flatten().collect();
        if &stored == expected {
            exact += 1;
            continue;
        }
        for text in expected.iter().filter(|t| t.starts_with("client ")) {
            match stored.iter().filter(|s| *s == text).count() {
                0 => missing += 1,
                1 => {}
                _ => doubled += 1,
            }
        }
        eprintln!(
            "client {index}: stored {} messages in {} session(s), expected {}",
            stored.len(),
            by_client.get(&index).map_or(0, Vec::len),
            expected.len()
        );
    }
    let acknowledged = counts.acknowledged.load(Ordering::SeqCst);
    println!("| crash safety under load (`lore-crash-bench`) | figure |");
    println!("|---|---|");
    println!(
        "| clients (each at least {} turns, turning until the kills are over, then two more) | {} |",
        options.turns, options.clients
    );
    println!(
        "| SIGKILLs and restarts | {} (acknowledged turns at each kill: {:?}) |",
        kills.len(),
        kills
    );
    println!("| turns acknowledged | {acknowledged} |");
    println!(
        "| turns re-sent after a failed attempt (then acknowledged) | {} |",
        counts.resent.load(Ordering::SeqCst)
    );
    println!(
        "| failed attempts (connection refused or cut by a kill) | {} |",
        counts.failed_attempts.load(Ordering::SeqCst)
    );
    println!("| wall time | {:.1} s |", elapsed.as_secs_f64());
    println!(
        "| conversations stored exactly (one session, every message once, in order) | **{exact} / {}** |",
        options.clients
    );
    println!(
        "| user turns missing / stored twice / conversations split over sessions | **{missing} / {doubled} / {split}** |"
    );
    // Disk use: the data directory as stored, after compaction, and after pruning half the
    // sessions (the oldest) and compacting again.
    let messages = store.message_count().unwrap_or(0).max(1);
    let sessions = store.list_sessions().map(|s| s.len()).unwrap_or(0).max(1) as u64;
    let index_bytes = lore_storage::disk_usage(&data.join("index"));
    let stored = store.disk_bytes();
    let (_, compacted) = store.compact().unwrap_or((stored, stored));
    let mut oldest: Vec<_> = store.list_sessions().unwrap_or_default();
    oldest.reverse();
    let half: Vec<String> = oldest
        .iter()
        .take(oldest.len() / 2)
        .map(|s| s.id.clone())
        .collect();
    let pruned = store.prune_sessions(&half).unwrap_or_default();
    let (_, after_prune) = store.compact().unwrap_or((compacted, compacted));
    let left = store.message_count().unwrap_or(0).max(1);
    println!(
        "| database on disk as the gateway left it: bytes, per session, per message ({sessions} sessions, {messages} messages) | {stored}, {}, {} |",
        stored / sessions,
        stored / messages
    );
    println!(
        "| search index on disk | {index_bytes} bytes, {} per message |",
        index_bytes / messages
    );
    println!(
        "| database after compaction | {compacted} bytes, {} per message |",
        compacted / messages
    );
    println!(
        "| after pruning the older half ({} sessions, {} messages) and compacting | {after_prune} bytes, {} per remaining message |",
        pruned.sessions,
        pruned.messages,
        after_prune / left
    );
    let _ = std::fs::remove_dir_all(&scratch);
    if exact != options.clients {
        std::process::exit(1);
    }
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lore-crash-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}
