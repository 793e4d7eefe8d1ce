//! Embedding and vector-search figures on this machine:
//! `cargo run --release -p lore-actors --example embed_bench`.
//!
//! Embedding throughput at batch 32 over ~1,000 coding sentences and single-sentence latency
//! (with 1 intra-op thread, as a pool worker, and with every core), RSS before and after loading
//! the model, and `VectorStore::search` latency at 10k and 100k random unit vectors with the
//! RSS their in-memory copy adds. Prints a markdown table.
#![allow(clippy::unwrap_used)]

use std::time::Instant;

use lore_actors::embedder::{EmbedderConfig, EmbeddingModel, MODEL_DIM, Purpose};
use lore_storage::{DocKind, SearchFilter, Store, VectorDoc};

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn sentences() -> Vec<String> {
    let subjects = [
        "the proxy",
        "the storage crate",
        "the indexer",
        "this test",
        "the release build",
        "the session actor",
        "the tokenizer",
        "our CI job",
        "the sled database",
        "the HTTP handler",
    ];
    let problems = [
        "fails with a borrow checker error when the closure captures self",
        "times out after thirty seconds on the second request",
        "panics on an empty input string",
        "returns 502 when the upstream closes the stream early",
        "uses too much memory after a hundred thousand messages",
        "needs a retry with exponential backoff",
        "should flush to disk before the process exits",
        "must skip the thinking blocks when counting tokens",
        "breaks when the project path contains spaces",
        "can be refactored into a smaller pure function",
    ];
    let asks = [
        "How do I fix it?",
        "Can you write a test for it?",
        "Explain why.",
        "",
        "Show me the diff.",
        "Is there a cheaper way?",
        "What does the log say?",
        "Please keep the public API unchanged.",
        "Run cargo clippy afterwards.",
        "Use tracing, not println.",
    ];
    let mut out = Vec::new();
    for (i, subject) in subjects.iter().enumerate() {
        for (j, problem) in problems.iter().enumerate() {
            for ask in asks {
                out.push(format!(
                    "In commit {}{}, {subject} {problem}. {ask}",
                    i * 7 + j,
                    ask.len()
                ));
            }
        }
    }
    out
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }
    fn unit(&mut self) -> Vec<f32> {
        let v: Vec<f32> = (0..MODEL_DIM).map(|_| self.next()).collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }
}

fn embedding_rows(rows: &mut Vec<(String, String)>) {
    let config = EmbedderConfig::from_env();
    let texts = sentences();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let before = rss_mb();
    let started = Instant::now();
    let model = EmbeddingModel::load(&config).unwrap();
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut model = model;
    model.embed(&refs[..32], Purpose::Document).unwrap();
    let after = rss_mb();
    drop(model);
    rows.push((
        "RSS before loading the model".into(),
        format!("{before:.0} MB"),
    ));
    rows.push((
        "RSS after loading (1 session, warmed up)".into(),
        format!("{after:.0} MB (+{:.0} MB)", after - before),
    ));
    rows.push(("model load time".into(), format!("{load_ms:.0} ms")));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for threads in [1, cores] {
        let mut model = EmbeddingModel::load_with_threads(&config, threads).unwrap();
        model.embed(&refs[..32], Purpose::Document).unwrap();
        let started = Instant::now();
        let vectors = model.embed(&refs, Purpose::Document).unwrap();
        let secs = started.elapsed().as_secs_f64();
        assert_eq!(vectors.len(), refs.len());
        rows.push((
            format!(
                "embed {} sentences, batch 32, {threads} thread(s)",
                refs.len()
            ),
            format!("{:.0} sentences/s", refs.len() as f64 / secs),
        ));
        let started = Instant::now();
        for text in refs.iter().take(200) {
            model.embed(&[text], Purpose::Query).unwrap();
        }
        let ms = started.elapsed().as_secs_f64() * 1e3 / 200.0;
        rows.push((
            format!("embed one query, {threads} thread(s)"),
            format!("{ms:.2} ms/sentence"),
        ));
    }
}

fn search_rows(rows: &mut Vec<(String, String)>, count: usize) {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ count as u64);
    {
        let store = Store::open(dir.path()).unwrap();
        let vectors = store.vectors();
        vectors.ensure_model("bench", MODEL_DIM).unwrap();
        let started = Instant::now();
        for chunk in 0..count.div_ceil(1000) {
            let items: Vec<_> = (chunk * 1000..((chunk + 1) * 1000).min(count))
                .map(|i| {
                    let session = format!("s{}", i % 500);
                    let doc = VectorDoc {
                        id: format!("t:{session}:{i}"),
                        kind: DocKind::Message,
                        session,
                        project: format!("/p{}", i % 7),
                        created_at_ms: i as u64,
                    };
                    (doc, rng.unit())
                })
                .collect();
            vectors.put_many(&items).unwrap();
        }
        store.flush().unwrap();
        rows.push((
            format!("{count}: store vectors in sled"),
            format!("{:.1} s", started.elapsed().as_secs_f64()),
        ));
    }
    let store = Store::open(dir.path()).unwrap();
    let vectors = store.vectors();
    let before = rss_mb();
    let started = Instant::now();
    vectors.warm().unwrap();
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let added = rss_mb() - before;
    rows.push((
        format!("{count}: load the int8 copy from sled"),
        format!(
            "{load_ms:.0} ms, +{added:.0} MB RSS ({:.0} MB estimated)",
            vectors.memory_bytes() as f64 / 1048576.0
        ),
    ));
    for (label, filter) in [
        ("no filter", SearchFilter::default()),
        (
            "project filter",
            SearchFilter {
                project: Some("/p3".into()),
                ..SearchFilter::default()
            },
        ),
    ] {
        let mut times = Vec::new();
        for _ in 0..300 {
            let query = rng.unit();
            let started = Instant::now();
            let hits = vectors.search(&query, &filter, 10).unwrap();
            times.push(started.elapsed().as_secs_f64() * 1e3);
            assert_eq!(hits.len(), 10);
        }
        times.sort_by(f64::total_cmp);
        rows.push((
            format!("{count}: search top 10, {label}"),
            format!(
                "p50 {:.2} ms, p99 {:.2} ms",
                percentile(&times, 0.5),
                percentile(&times, 0.99)
            ),
        ));
    }
}

fn main() {
    let mut rows = Vec::new();
    embedding_rows(&mut rows);
    search_rows(&mut rows, 10_000);
    search_rows(&mut rows, 100_000);
    println!("| measure | result |\n|---|---|");
    for (measure, result) in rows {
        println!("| {measure} | {result} |");
    }
}
