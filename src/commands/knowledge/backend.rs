//! Where `lore knowledge` reads and writes: the running gateway's API when a gateway answers for
//! the data directory, else the files themselves: the store, and for writes the search index
//! writer too, so recall stays consistent (vectors of changed entries are dropped and embedded
//! again by the next gateway's backfill or `lore reindex`).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use lore_actors::indexer::rebuild_from;
use lore_actors::knowledge::{self, Change, ImportError};
use lore_storage::{SearchIndex, StorageErrorKind, Store};
use serde_json::Value;

use crate::client;
use crate::commands::live_port;
use crate::commands::recall::encode;
use crate::knowledge::json::{detail_json, entry_json, summary_json};
use crate::knowledge::parse_category;
use lore_actors::knowledge::index_work;

/// Who writes through the CLI.
const USER: &str = "user";

/// The running gateway, or the data directory's files.
pub enum Backend {
    /// A gateway answers on this port.
    Gateway(u16),
    /// No gateway runs: the files are opened directly.
    Offline(PathBuf),
}

/// What an import answered.
pub enum Imported {
    /// The summary JSON (`created`, `updated`, `deleted`, `unchanged`, `changes`).
    Done(Value),
    /// The file's problems as (line, message); nothing was written.
    Problems(Vec<(u64, String)>),
}

impl Backend {
    /// The gateway of this data directory if one answers, else the files.
    pub fn for_data_dir(dir: PathBuf) -> Self {
        match live_port(&dir) {
            Some(port) => Backend::Gateway(port),
            None => Backend::Offline(dir),
        }
    }

    /// Live entries as JSON, by category then title.
    pub fn list(
        &self,
        project: Option<&str>,
        category: Option<&str>,
        include_global: bool,
    ) -> anyhow::Result<Vec<Value>> {
        match self {
            Backend::Gateway(port) => {
                let mut path = format!("/api/v1/knowledge?include_global={include_global}");
                if let Some(project) = project {
                    path.push_str(&format!("&project={}", encode(project)));
                }
                if let Some(category) = category {
                    path.push_str(&format!("&category={}", encode(category)));
                }
                let answer = answer(client::get(*port, &path)?)?;
                answer
                    .as_array()
                    .cloned()
                    .context("the gateway did not answer a list of entries")
            }
            Backend::Offline(dir) => {
                let category = category
                    .map(parse_category)
                    .transpose()
                    .map_err(anyhow::Error::msg)?;
                let store = open_store(dir)?;
                let entries = knowledge::live_entries(&store, project, include_global)?;
                Ok(entries
                    .iter()
                    .filter(|entry| category.is_none_or(|c| entry.category == c))
                    .map(entry_json)
                    .collect())
            }
        }
    }

    /// One entry (id or unique prefix) with its `history`.
    pub fn show(&self, id: &str) -> anyhow::Result<Value> {
        match self {
            Backend::Gateway(port) => answer(client::get(
                *port,
                &format!("/api/v1/knowledge/{}", encode(id)),
            )?),
            Backend::Offline(dir) => {
                let store = open_store(dir)?;
                let entry = knowledge::resolve_id(&store, id)?;
                let history = store.knowledge_history(&entry.id)?;
                Ok(detail_json(&entry, &history))
            }
        }
    }

    /// The project's `.lore.md` text.
    pub fn export(&self, project: &str) -> anyhow::Result<String> {
        match self {
            Backend::Gateway(port) => {
                let path = format!("/api/v1/knowledge/export?project={}", encode(project));
                let (status, body) = client::get(*port, &path)?;
                if status != 200 {
                    bail!("{}", error_message(status, &body));
                }
                Ok(body)
            }
            Backend::Offline(dir) => Ok(knowledge::export(&open_store(dir)?, project)?),
        }
    }

    /// Applies a `.lore.md` text to the project.
    pub fn import(&self, project: &str, text: &str) -> anyhow::Result<Imported> {
        match self {
            Backend::Gateway(port) => {
                let path = format!("/api/v1/knowledge/import?project={}", encode(project));
                let (status, body) = client::post_body(
                    *port,
                    &path,
                    text.as_bytes(),
                    "text/markdown; charset=utf-8",
                )?;
                if status == 400
                    && let Ok(answer) = serde_json::from_str::<Value>(&body)
                    && let Some(problems) = answer["error"]["problems"].as_array()
                {
                    return Ok(Imported::Problems(
                        problems
                            .iter()
                            .map(|p| {
                                let line = p["line"].as_u64().unwrap_or(0);
                                (line, p["message"].as_str().unwrap_or("").to_string())
                            })
                            .collect(),
                    ));
                }
                Ok(Imported::Done(answer((status, body))?))
            }
            Backend::Offline(dir) => {
                let store = open_store(dir)?;
                match knowledge::import(&store, project, text) {
                    Ok(summary) => {
                        apply_to_index(dir, &store, &summary.changes)?;
                        Ok(Imported::Done(summary_json(&summary)))
                    }
                    Err(ImportError::Problems(problems)) => Ok(Imported::Problems(
                        problems
                            .into_iter()
                            .map(|p| (p.line as u64, p.message))
                            .collect(),
                    )),
                    Err(ImportError::Failed(err)) => Err(err.into()),
                }
            }
        }
    }

    /// Forgets an entry (id or unique prefix); answers it as now stored.
    pub fn forget(&self, id: &str) -> anyhow::Result<Value> {
        match self {
            Backend::Gateway(port) => answer(client::delete(
                *port,
                &format!("/api/v1/knowledge/{}", encode(id)),
            )?),
            Backend::Offline(dir) => {
                let store = open_store(dir)?;
                let entry = knowledge::resolve_id(&store, id)?;
                let change = knowledge::forget(&store, &entry.id, USER)?;
                apply_to_index(dir, &store, std::slice::from_ref(&change))?;
                Ok(entry_json(change.entry()))
            }
        }
    }
}

/// The JSON of a 200 answer, or the gateway's error message.
fn answer((status, body): (u16, String)) -> anyhow::Result<Value> {
    if status != 200 {
        bail!("{}", error_message(status, &body));
    }
    serde_json::from_str(&body).context("the gateway sent malformed JSON")
}

/// The message of an error answer.
fn error_message(status: u16, body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|answer| answer["error"]["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| format!("the gateway answered {status}: {body}"))
}

/// Opens the store of a data directory no gateway answers for.
fn open_store(dir: &Path) -> anyhow::Result<Store> {
    Store::open(&dir.join("db")).map_err(|err| {
        if err.kind == StorageErrorKind::Locked {
            anyhow::anyhow!(
                "no gateway answers for {}, yet another lore process holds its database (a gateway that is starting or stuck, or another command); wait a moment and try again, or stop it with `lore stop`",
                dir.display()
            )
        } else {
            anyhow::anyhow!("{err}")
        }
    })
}

/// Brings the search index up to date with changes written offline, then flushes the store.
fn apply_to_index(dir: &Path, store: &Store, changes: &[Change]) -> anyhow::Result<()> {
    store.flush().map_err(|err| anyhow::anyhow!("{err}"))?;
    let (docs, removed) = index_work(changes);
    if docs.is_empty() && removed.is_empty() {
        return Ok(());
    }
    // A changed or forgotten entry's vector is stale: drop it; a gateway's backfill (or
    // `lore reindex`) embeds the new text.
    let vectors = store.vectors();
    for change in changes {
        if matches!(change, Change::Updated { .. } | Change::Deleted(_)) {
            vectors
                .remove(&change.entry().doc_id())
                .map_err(|err| anyhow::anyhow!("{err}"))?;
        }
    }
    let indexed = SearchIndex::open(&dir.join("index")).and_then(|(index, rebuilt)| {
        if rebuilt {
            // A new index holds nothing yet: fill it from storage, these changes included.
            return rebuild_from(store, &index)
                .map(|_| ())
                .map_err(|message| lore_storage::StorageError::new(StorageErrorKind::Io, message));
        }
        index.add(&docs)?;
        index.remove(&removed)?;
        index.commit()
    });
    store.flush().map_err(|err| anyhow::anyhow!("{err}"))?;
    if let Err(err) = indexed {
        eprintln!(
            "warning: the knowledge is stored, but the search index could not be updated ({err}); run `lore reindex`"
        );
    }
    Ok(())
}
