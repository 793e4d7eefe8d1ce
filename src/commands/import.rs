//! `lore import claude-code|codex|opencode [--path P] [--dry-run] [--json]`: the harness's local
//! transcripts become Lore sessions, attributed to the directory each records, idempotently (a
//! second import adds nothing; a transcript that grew adds only what is new). Through the
//! running gateway's management API (it owns the database), else straight into the store, the
//! index and, when the model is installed, the vectors. A progress bar on a terminal.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use lore_actors::indexer::message_doc;
use lore_storage::{ImportSession, SearchIndex, Store};
use serde_json::{Value, json};

use crate::cli::DataDirArg;
use crate::client;
use crate::commands::recall::embed_offline;
use crate::commands::{data_dir, environment, live_port};
use crate::import::{self, Source};
use crate::import_api::outcome_json;

/// Options of `lore import`.
#[derive(Debug, Clone)]
pub struct ImportArgs {
    /// claude-code, codex or opencode.
    pub harness: String,
    /// A transcript file or folder (default: the harness's own).
    pub path: Option<PathBuf>,
    /// Report what would be imported; write nothing.
    pub dry_run: bool,
    /// Print JSON.
    pub json: bool,
}

/// Largest batch sent to the gateway in one request (the sessions' JSON).
const BATCH_BYTES: usize = 4 * 1024 * 1024;

fn bar(len: usize, prefix: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(len as u64).with_prefix(prefix);
    let style = ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// Runs `lore import`.
pub fn run(args: &ImportArgs, data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let Some(source) = Source::from_name(&args.harness) else {
        bail!(
            "unknown harness `{}`; lore import reads claude-code, codex and opencode",
            args.harness
        );
    };
    let env = environment();
    let home = PathBuf::from(env.get("HOME").cloned().unwrap_or_default());
    let root = args
        .path
        .clone()
        .unwrap_or_else(|| source.default_path(&env, &home));
    if !root.exists() {
        bail!(
            "no transcripts at {}; pass --path to the folder (or file) that holds them",
            root.display()
        );
    }
    let files = import::find(source, &root).map_err(anyhow::Error::msg)?;
    let reading = bar(files.len(), "reading");
    let mut sessions = Vec::new();
    let mut failed: Vec<(String, String)> = Vec::new();
    for unit in &files {
        match import::read(source, unit, &root) {
            Ok(Some(session)) => sessions.push(session),
            Ok(None) => {}
            Err(err) => failed.push((unit.label(), err)),
        }
        reading.inc(1);
    }
    reading.finish_and_clear();

    let dir = data_dir(data);
    let (results, note) = match live_port(&dir) {
        Some(port) => through_gateway(port, &sessions, args.dry_run)?,
        None => on_the_files(&dir, &sessions, args.dry_run)?,
    };
    report(args, &files, &results, &failed, &note)?;
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn through_gateway(
    port: u16,
    sessions: &[ImportSession],
    dry_run: bool,
) -> anyhow::Result<(Vec<Value>, String)> {
    let path = if dry_run {
        "/api/v1/import?dry_run=1"
    } else {
        "/api/v1/import"
    };
    let sending = bar(sessions.len(), "importing");
    let mut results = Vec::new();
    let mut note = String::new();
    let mut batch: Vec<&ImportSession> = Vec::new();
    let mut size = 0;
    let mut send = |batch: &mut Vec<&ImportSession>| -> anyhow::Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let body = serde_json::to_vec(&json!({"sessions": batch}))?;
        let (status, reply) = client::post_body(port, path, &body, "application/json")?;
        if status != 200 {
            bail!("the gateway answered {status}: {reply}");
        }
        let reply: Value =
            serde_json::from_str(&reply).context("the gateway sent malformed JSON")?;
        if let Some(items) = reply["results"].as_array() {
            results.extend(items.iter().cloned());
        }
        note = reply["distillation"]["note"]
            .as_str()
            .unwrap_or("")
            .to_string();
        sending.inc(batch.len() as u64);
        batch.clear();
        Ok(())
    };
    for session in sessions {
        let bytes = serde_json::to_vec(session)?.len();
        if size + bytes > BATCH_BYTES {
            send(&mut batch)?;
            size = 0;
        }
        batch.push(session);
        size += bytes;
    }
    send(&mut batch)?;
    sending.finish_and_clear();
    Ok((results, note))
}

fn on_the_files(
    dir: &std::path::Path,
    sessions: &[ImportSession],
    dry_run: bool,
) -> anyhow::Result<(Vec<Value>, String)> {
    let store = Store::open(&dir.join("db")).map_err(|err| anyhow::anyhow!("{err}"))?;
    let index = if dry_run {
        None
    } else {
        Some(
            SearchIndex::open(&dir.join("index"))
                .map_err(|err| anyhow::anyhow!("{err}"))?
                .0,
        )
    };
    let writing = bar(sessions.len(), "importing");
    let mut results = Vec::new();
    let mut added = 0;
    for session in sessions {
        match store.import_session(session, dry_run) {
            Ok(outcome) => {
                if let Some(index) = &index
                    && !outcome.added.is_empty()
                {
                    let project = session.project.clone().unwrap_or_default();
                    let docs: Vec<_> = outcome
                        .added
                        .iter()
                        .map(|stored| message_doc(stored, &project))
                        .collect();
                    index.add(&docs).map_err(|err| anyhow::anyhow!("{err}"))?;
                }
                added += outcome.added.len();
                results.push(outcome_json(session, &outcome));
            }
            Err(err) => results.push(json!({
                "harness": session.harness,
                "external_id": session.external_id,
                "status": "failed",
                "error": err.to_string(),
            })),
        }
        writing.inc(1);
    }
    writing.finish_and_clear();
    let mut note = "not distilled yet: run `lore import` again while the gateway runs with LORE_WORKER_UPSTREAM and LORE_WORKER_API_KEY set (a transcript holds no credential)".to_string();
    if let Some(index) = &index {
        index.commit().map_err(|err| anyhow::anyhow!("{err}"))?;
        store.flush().map_err(|err| anyhow::anyhow!("{err}"))?;
        if added > 0 {
            note = format!("{}; {note}", embed_offline(&store)?);
        }
    }
    Ok((results, note))
}

fn report(
    args: &ImportArgs,
    files: &[import::Unit],
    results: &[Value],
    failed: &[(String, String)],
    note: &str,
) -> anyhow::Result<()> {
    let mut by_status: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_project: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    let mut added = 0;
    for result in results {
        let status = result["status"].as_str().unwrap_or("failed").to_string();
        *by_status.entry(status).or_default() += 1;
        let count = result["added"].as_u64().unwrap_or(0);
        added += count;
        let project = result["project"]
            .as_str()
            .unwrap_or("(no directory)")
            .to_string();
        let entry = by_project.entry(project).or_default();
        entry.0 += 1;
        entry.1 += count;
    }
    if args.json {
        let failures: Vec<Value> = failed
            .iter()
            .map(|(unit, err)| json!({"file": unit, "error": err}))
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "dry_run": args.dry_run,
                "files": files.len(),
                "sessions": results,
                "added": added,
                "unreadable": failures,
                "distillation": note,
            }))?
        );
        return Ok(());
    }
    let verb = if args.dry_run { "would add" } else { "added" };
    println!(
        "{}: {} transcripts, {} sessions; {verb} {added} messages ({})",
        args.harness,
        files.len(),
        results.len(),
        by_status
            .iter()
            .map(|(status, n)| format!("{n} {status}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (project, (sessions, messages)) in &by_project {
        println!("  {project}: {sessions} sessions, {messages} messages");
    }
    for (unit, err) in failed {
        eprintln!("unreadable: {unit}: {err}");
    }
    if !args.dry_run && added > 0 && !note.is_empty() {
        println!("{note}");
    }
    Ok(())
}
