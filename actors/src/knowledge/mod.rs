//! Long-term knowledge as every writer changes it: the Curator, `lore knowledge import` and the
//! user through the API. Pure functions over [`Store`], so each writer keeps the same rules:
//!
//! - [`limits`]: what every write cleans and refuses (title and content length, confidence).
//! - [`dedup`]: which stored entry a draft repeats ([`find_duplicate`]).
//! - [`write`]: [`create_or_merge`], [`update`] and [`forget`], each answering a [`Change`].
//! - [`edit`]: the user's [`edit::edit`] and [`edit::change_scope`] from the dashboard and API.
//! - [`lore_md`]: the `.lore.md` file format, rendered and parsed (no IO).
//! - [`import`]: a whole `.lore.md` applied to a project, all or nothing, and its export.
//!
//! Nothing here touches the search index: callers send the documents of the [`Change`]s they
//! get (created and updated entries indexed, forgotten ones removed).

pub mod dedup;
pub mod edit;
pub mod import;
pub mod limits;
pub mod lore_md;
pub mod write;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_import;
#[cfg(test)]
mod tests_lore_md;

use lore_storage::memory::{Category, KnowledgeEntry};
use lore_storage::{IndexDoc, Store};

use crate::documents::knowledge_doc;
use crate::error::ActorError;

pub use dedup::find_duplicate;
pub use import::{ImportError, ImportSummary, export, import};
pub use write::{create_or_merge, forget, update};

/// Knowledge a writer wants stored: new, or a better version of an entry it repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    /// What kind of knowledge it is.
    pub category: Category,
    /// Specific, searchable title.
    pub title: String,
    /// The knowledge itself.
    pub content: String,
    /// Project path; `None` for knowledge that holds in every project.
    pub project: Option<String>,
    /// 0.0–1.0.
    pub confidence: f32,
    /// Session it was learnt in.
    pub source_session: Option<String>,
}

/// What a write did.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A new entry (version 1).
    Created(KnowledgeEntry),
    /// An entry rewritten to a new version.
    Updated {
        /// The version it replaced (now in the history).
        before: KnowledgeEntry,
        /// The version now stored.
        after: KnowledgeEntry,
    },
    /// An entry forgotten; it holds the stored version, marked deleted.
    Deleted(KnowledgeEntry),
    /// Nothing differed, so nothing was written.
    Unchanged(KnowledgeEntry),
}

impl Change {
    /// The entry after the change.
    pub fn entry(&self) -> &KnowledgeEntry {
        match self {
            Change::Created(entry) | Change::Deleted(entry) | Change::Unchanged(entry) => entry,
            Change::Updated { after, .. } => after,
        }
    }

    /// `created`, `updated`, `deleted` or `unchanged`.
    pub fn kind(&self) -> &'static str {
        match self {
            Change::Created(_) => "created",
            Change::Updated { .. } => "updated",
            Change::Deleted(_) => "deleted",
            Change::Unchanged(_) => "unchanged",
        }
    }
}

/// The entries not forgotten, sorted by category (in [`Category::ALL`] order), then title
/// (case-insensitive), then id. With a project, only that project's entries, plus those of
/// every project when `include_global`; without one, every live entry.
pub fn live_entries(
    store: &Store,
    project: Option<&str>,
    include_global: bool,
) -> Result<Vec<KnowledgeEntry>, ActorError> {
    let mut entries: Vec<KnowledgeEntry> = store
        .all_knowledge()?
        .into_iter()
        .filter(|entry| !entry.deleted)
        .filter(|entry| match project {
            None => true,
            Some(project) => match &entry.project {
                Some(own) => own == project,
                None => include_global,
            },
        })
        .collect();
    entries.sort_by(|a, b| {
        category_rank(a.category)
            .cmp(&category_rank(b.category))
            .then_with(|| a.title.to_lowercase().cmp(&b.title.to_lowercase()))
            .then_with(|| a.id.cmp(&b.id))
    });
    Ok(entries)
}

/// Position of a category in [`Category::ALL`].
pub fn category_rank(category: Category) -> usize {
    Category::ALL
        .iter()
        .position(|c| *c == category)
        .unwrap_or(Category::ALL.len())
}

/// The entry an id, or a unique prefix of one, names (forgotten entries included, so their
/// history can be shown).
pub fn resolve_id(store: &Store, id: &str) -> Result<KnowledgeEntry, ActorError> {
    let id = id.trim();
    if id.is_empty() {
        return Err(ActorError::Invalid(
            "no knowledge id given; list the ids with `lore knowledge list`".into(),
        ));
    }
    if let Some(entry) = store.knowledge_entry(id)? {
        return Ok(entry);
    }
    let mut matches: Vec<KnowledgeEntry> = store
        .all_knowledge()?
        .into_iter()
        .filter(|entry| entry.id.starts_with(id))
        .collect();
    if matches.len() > 1 {
        // A prefix shared by a live entry and forgotten ones names the live one.
        let live: Vec<KnowledgeEntry> = matches.iter().filter(|e| !e.deleted).cloned().collect();
        if live.len() == 1 {
            matches = live;
        }
    }
    match matches.len() {
        0 => Err(not_found(id)),
        1 => Ok(matches.remove(0)),
        n => Err(ActorError::Invalid(format!(
            "the id prefix `{id}` matches {n} knowledge entries ({}); give more of the id",
            matches
                .iter()
                .take(5)
                .map(|entry| entry.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The error for an id that names no live entry.
pub(crate) fn not_found(id: &str) -> ActorError {
    ActorError::NotFound(format!(
        "no knowledge entry has the id `{id}` (or it was forgotten); list the ids with `lore knowledge list` or GET /api/v1/knowledge"
    ))
}

/// The documents to index and the ids to remove after these changes.
pub fn index_work(changes: &[Change]) -> (Vec<IndexDoc>, Vec<String>) {
    let mut docs = Vec::new();
    let mut removed = Vec::new();
    for change in changes {
        match change {
            Change::Created(entry) | Change::Updated { after: entry, .. } => {
                docs.push(knowledge_doc(entry));
            }
            Change::Deleted(entry) => removed.push(entry.doc_id()),
            Change::Unchanged(_) => {}
        }
    }
    (docs, removed)
}
