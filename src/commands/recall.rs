//! `lore recall` and `lore reindex`: through the running gateway, or on the files when it is
//! not running.

use std::process::ExitCode;

use anyhow::{Context, bail};
use lore_actors::indexer::rebuild_from;
use lore_storage::{SearchIndex, Store};
use serde_json::Value;

use crate::cli::DataDirArg;
use crate::client;
use crate::commands::{data_dir, live_port};
use crate::recall::{filter_for, run};

/// Searches captured conversations.
pub fn recall(
    query: &str,
    scope: &str,
    session: Option<&str>,
    project: Option<&str>,
    limit: usize,
    as_json: bool,
    data: &DataDirArg,
) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    let filter = filter_for(Some(scope), session, project).map_err(anyhow::Error::msg)?;
    let results: Vec<Value> = match live_port(&dir) {
        Some(port) => {
            let mut path = format!(
                "/api/v1/recall?q={}&scope={scope}&limit={limit}",
                encode(query)
            );
            if let Some(session) = session {
                path.push_str(&format!("&session={}", encode(session)));
            }
            if let Some(project) = project {
                path.push_str(&format!("&project={}", encode(project)));
            }
            let (status, body) = client::get(port, &path)?;
            if status != 200 {
                bail!("the gateway answered {status}: {body}");
            }
            let parsed: Value =
                serde_json::from_str(&body).context("the gateway sent malformed JSON")?;
            parsed["results"].as_array().cloned().unwrap_or_default()
        }
        None => {
            let index = SearchIndex::open_read_only(&dir.join("index"))
                .map_err(|err| anyhow::anyhow!("{err}"))?;
            run(&index, query, &filter, limit).map_err(anyhow::Error::msg)?
        }
    };
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"results": results}))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if results.is_empty() {
        println!("nothing found for \"{query}\"");
    }
    for hit in &results {
        let snippet = hit["snippet"].as_str().unwrap_or("").replace('\n', " ");
        println!(
            "- ({}, {:.2}) {} ({})",
            hit["role"].as_str().unwrap_or(""),
            hit["score"].as_f64().unwrap_or(0.0),
            snippet,
            hit["id"].as_str().unwrap_or("")
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
        println!("search index rebuilt by the running gateway: {body}");
        return Ok(ExitCode::SUCCESS);
    }
    let store = Store::open(&dir.join("db")).map_err(|err| anyhow::anyhow!("{err}"))?;
    let (index, _) =
        SearchIndex::open(&dir.join("index")).map_err(|err| anyhow::anyhow!("{err}"))?;
    let count = rebuild_from(&store, &index).map_err(anyhow::Error::msg)?;
    println!("search index rebuilt: {count} messages");
    Ok(ExitCode::SUCCESS)
}

fn encode(text: &str) -> String {
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
