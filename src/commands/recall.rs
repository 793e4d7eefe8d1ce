//! `lore recall` and `lore reindex`: through the running gateway, or on the files when it is
//! not running.

use std::process::ExitCode;

use anyhow::{Context, bail};
use lore_actors::embedder::{EmbedderConfig, EmbeddingModel};
use lore_actors::indexer::rebuild_from;
use lore_actors::vectorizer::backfill_blocking;
use lore_storage::{SearchIndex, Store};
use serde_json::Value;

use crate::cli::DataDirArg;
use crate::client;
use crate::commands::{data_dir, live_port};
use lore_actors::recall::{DEFAULT_CHAR_BUDGET, format_results};
use lore_storage::now_ms;

use crate::recall::build_request;
use crate::recall::corpus::{Corpus, hit_json, search};

/// What `lore recall` was asked.
pub struct RecallArgs<'a> {
    pub query: &'a str,
    pub scope: &'a str,
    pub session: Option<&'a str>,
    pub project: Option<&'a str>,
    pub limit: usize,
    pub mode: &'a str,
    pub json: bool,
}

/// Searches captured conversations: through the running gateway (hybrid when it has
/// embeddings), or on the index files (BM25) when no gateway runs.
pub fn recall(args: &RecallArgs<'_>, data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    let request = build_request(
        args.query,
        Some(args.scope),
        args.session,
        args.project,
        Some(args.limit),
        Some(args.mode),
    )
    .map_err(anyhow::Error::msg)?;
    if let Some(port) = live_port(&dir) {
        let mut path = format!(
            "/api/v1/recall?q={}&scope={}&limit={}&mode={}&format={}",
            encode(args.query),
            encode(args.scope),
            args.limit,
            encode(args.mode),
            if args.json { "json" } else { "markdown" }
        );
        if let Some(session) = args.session {
            path.push_str(&format!("&session={}", encode(session)));
        }
        if let Some(project) = args.project {
            path.push_str(&format!("&project={}", encode(project)));
        }
        let (status, body) = client::get(port, &path)?;
        if status != 200 {
            bail!("the gateway answered {status}: {body}");
        }
        if args.json {
            let parsed: Value =
                serde_json::from_str(&body).context("the gateway sent malformed JSON")?;
            println!("{}", serde_json::to_string_pretty(&parsed)?);
        } else {
            println!("{body}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let index =
        SearchIndex::open_read_only(&dir.join("index")).map_err(|err| anyhow::anyhow!("{err}"))?;
    // Offline, BM25 alone: every hit comes from the index itself.
    let corpus = Corpus {
        index: &index,
        vectors: None,
        store: None,
    };
    let outcome = search(&corpus, &request).map_err(anyhow::Error::msg)?;
    if args.json {
        let results: Vec<Value> = outcome.hits.iter().map(hit_json).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"results": results, "vectors": false})
            )?
        );
    } else {
        println!(
            "{}",
            format_results(args.query, &outcome, now_ms(), DEFAULT_CHAR_BUDGET)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Rebuilds the search index from storage.
pub fn reindex(data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    if let Some(port) = live_port(&dir) {
        let (status, body) = client::post(port, "/api/v1/reindex")?;
        if status != 200 {
            bail!("the gateway answered {status}: {body}");
        }
        let answer: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        println!(
            "search index rebuilt by the running gateway: {} messages",
            answer["indexed"]
        );
        if answer["embedding"].get("scheduled").is_some() {
            follow_backfill(port)?;
        } else {
            println!("embeddings: {}", answer["embedding"]);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let store = Store::open(&dir.join("db")).map_err(|err| anyhow::anyhow!("{err}"))?;
    let (index, _) =
        SearchIndex::open(&dir.join("index")).map_err(|err| anyhow::anyhow!("{err}"))?;
    let count = rebuild_from(&store, &index).map_err(anyhow::Error::msg)?;
    println!("search index rebuilt: {count} messages");
    println!("{}", embed_offline(&store)?);
    Ok(ExitCode::SUCCESS)
}

/// Embeds every stored document without a vector, on every core, without a gateway; returns
/// the line to print (what was embedded, or why nothing was).
pub(crate) fn embed_offline(store: &Store) -> anyhow::Result<String> {
    if std::env::var("LORE_EMBEDDINGS").is_ok_and(|v| matches!(v.as_str(), "off" | "0" | "false")) {
        return Ok("embeddings skipped: LORE_EMBEDDINGS=off".into());
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut model = match EmbeddingModel::load_with_threads(&EmbedderConfig::from_env(), cores) {
        Ok(model) => model,
        Err(err) => return Ok(format!("embeddings skipped: {err}; recall uses BM25 alone")),
    };
    let mut last_report = std::time::Instant::now();
    let embedded = backfill_blocking(store, &mut model, |done, total| {
        if done == total || last_report.elapsed() >= PROGRESS_EVERY {
            eprintln!("embedding: {done}/{total}");
            last_report = std::time::Instant::now();
        }
    })
    .map_err(anyhow::Error::msg)?;
    store.flush().map_err(|err| anyhow::anyhow!("{err}"))?;
    Ok(format!("embeddings: {embedded} messages embedded"))
}

/// How often progress is reported.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Progress may stall this long (nothing embedded, nothing waiting) before following stops.
const STALL_AFTER: std::time::Duration = std::time::Duration::from_secs(30);

/// Reports the running gateway's embedding backfill until it is done (or stops moving).
fn follow_backfill(port: u16) -> anyhow::Result<()> {
    let mut last_done = 0;
    let mut moved_at = std::time::Instant::now();
    loop {
        let (status, body) = client::get(port, "/api/v1/actors")?;
        if status != 200 {
            bail!("the gateway answered {status}: {body}");
        }
        let answer: Value =
            serde_json::from_str(&body).context("the gateway sent malformed JSON")?;
        let counters = &answer["vectorizer"];
        let done = counters["backfill_done"].as_u64().unwrap_or(0);
        let total = counters["backfill_total"].as_u64().unwrap_or(0);
        eprintln!("embedding: {done}/{total}");
        if done >= total {
            println!("embeddings: {} vectors stored", counters["stored"]);
            return Ok(());
        }
        if done != last_done || counters["pending"].as_u64().unwrap_or(0) > 0 {
            last_done = done;
            moved_at = std::time::Instant::now();
        } else if moved_at.elapsed() >= STALL_AFTER {
            bail!(
                "the embedding backfill stopped at {done}/{total} ({} vectors stored); see the gateway log, or run `lore reindex` again",
                counters["stored"]
            );
        }
        std::thread::sleep(PROGRESS_EVERY);
    }
}

/// Percent-encodes a query-string value.
pub(crate) fn encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
