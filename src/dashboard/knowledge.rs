//! Knowledge for the dashboard: the filtered list (project, category, scope, a window of it),
//! one entry with its history as word diffs between consecutive versions, and the user's
//! edits (fields, scope) and forgetting, each sent to the index by the caller.

use lore_actors::knowledge::edit::{Edit, change_scope, edit};
use lore_actors::knowledge::{Change, category_rank, forget, resolve_id};
use lore_storage::Store;
use lore_storage::memory::{Category, KnowledgeEntry};
use serde::{Deserialize, Serialize};
use similar::{ChangeTag, TextDiff};

use super::error::ApiError;
use super::paging::{Page, PageQuery};

/// Who writes through the dashboard and the API.
pub const USER: &str = "user";

/// One entry in a list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntryRow {
    /// Stable id.
    pub id: String,
    /// Current version.
    pub version: u32,
    /// Project path; `None` when it holds in every project.
    pub project: Option<String>,
    /// Category name.
    pub category: &'static str,
    /// Title.
    pub title: String,
    /// Content.
    pub content: String,
    /// 0–1, rounded to two decimals.
    pub confidence: f64,
    /// Session it was learnt in.
    pub source_session: Option<String>,
    /// Who wrote the current version.
    pub updated_by: String,
    /// When the current version was written.
    pub updated_at_ms: u64,
    /// Forgotten.
    pub deleted: bool,
}

impl From<&KnowledgeEntry> for EntryRow {
    fn from(e: &KnowledgeEntry) -> Self {
        Self {
            id: e.id.clone(),
            version: e.version,
            project: e.project.clone(),
            category: e.category.as_str(),
            title: e.title.clone(),
            content: e.content.clone(),
            confidence: (f64::from(e.confidence) * 100.0).round() / 100.0,
            source_session: e.source_session.clone(),
            updated_by: e.updated_by.clone(),
            updated_at_ms: e.updated_at_ms,
            deleted: e.deleted,
        }
    }
}

/// The filters of the list.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Filter {
    /// Only this project (and, with scope `all`, global entries).
    #[serde(default)]
    pub project: Option<String>,
    /// Only this category.
    #[serde(default)]
    pub category: Option<String>,
    /// `all` (default), `global` (entries of every project) or `project` (entries of one).
    #[serde(default)]
    pub scope: Option<String>,
    /// Words the title or content must contain (case-insensitive).
    #[serde(default)]
    pub q: Option<String>,
}

/// A window of the filtered list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KnowledgeList {
    /// The entries shown.
    pub entries: Vec<EntryRow>,
    /// Where they sit in the list.
    pub page: Page,
    /// Every project that has knowledge, for the filter.
    pub projects: Vec<String>,
    /// Every category, for the filter.
    pub categories: Vec<&'static str>,
}

fn scope_matches(
    scope: &str,
    entry: &KnowledgeEntry,
    project: Option<&str>,
) -> Result<bool, ApiError> {
    Ok(match scope {
        "all" => project.is_none_or(|p| entry.project.as_deref().is_none_or(|e| e == p)),
        "global" => entry.project.is_none(),
        "project" => match project {
            Some(p) => entry.project.as_deref() == Some(p),
            None => entry.project.is_some(),
        },
        other => {
            return Err(ApiError::bad_request(format!(
                "unknown scope `{other}`; use all, global or project"
            )));
        }
    })
}

/// The live entries that pass the filter, by category then title.
pub fn list(store: &Store, filter: &Filter, page: PageQuery) -> Result<KnowledgeList, ApiError> {
    let category = match filter.category.as_deref().filter(|c| !c.trim().is_empty()) {
        Some(name) => Some(crate::knowledge::parse_category(name).map_err(ApiError::bad_request)?),
        None => None,
    };
    let project = filter
        .project
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let scope = filter
        .scope
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .unwrap_or("all");
    let words: Vec<String> = filter
        .q
        .as_deref()
        .unwrap_or("")
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    let all = store.all_knowledge()?;
    let mut projects: Vec<String> = all
        .iter()
        .filter(|e| !e.deleted)
        .filter_map(|e| e.project.clone())
        .collect();
    projects.sort();
    projects.dedup();
    let mut kept = Vec::new();
    for entry in all.into_iter().filter(|e| !e.deleted) {
        if category.is_some_and(|c| entry.category != c) || !scope_matches(scope, &entry, project)?
        {
            continue;
        }
        if !words.is_empty() {
            let text = format!("{} {}", entry.title, entry.content).to_lowercase();
            if !words.iter().all(|w| text.contains(w.as_str())) {
                continue;
            }
        }
        kept.push(entry);
    }
    kept.sort_by(|a, b| {
        category_rank(a.category)
            .cmp(&category_rank(b.category))
            .then_with(|| a.title.to_lowercase().cmp(&b.title.to_lowercase()))
            .then_with(|| a.id.cmp(&b.id))
    });
    let page = Page::new(page, kept.len(), 50, 500);
    Ok(KnowledgeList {
        entries: page.slice(kept).iter().map(EntryRow::from).collect(),
        page,
        projects,
        categories: Category::ALL.iter().map(|c| c.as_str()).collect(),
    })
}

/// One run of words in a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffPart {
    /// `same`, `added` or `removed`.
    pub change: &'static str,
    /// The words.
    pub text: String,
}

/// What one version changed from the one before.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VersionDiff {
    /// The version this diff leads to.
    pub version: u32,
    /// Who wrote it.
    pub updated_by: String,
    /// When.
    pub updated_at_ms: u64,
    /// Word diff of the title (empty when unchanged).
    pub title: Vec<DiffPart>,
    /// Word diff of the content (empty when unchanged).
    pub content: Vec<DiffPart>,
    /// Other fields that changed, as `field: before → after`.
    pub fields: Vec<String>,
}

/// One entry with its versions and what each changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntryDetail {
    /// The current version.
    pub entry: EntryRow,
    /// Every earlier version, oldest first.
    pub history: Vec<EntryRow>,
    /// What each version changed, newest first (version 1 is the creation and has no diff).
    pub diffs: Vec<VersionDiff>,
    /// Every category, for the edit form.
    pub categories: Vec<&'static str>,
}

/// A word diff of two texts; empty when they are equal.
pub fn word_diff(before: &str, after: &str) -> Vec<DiffPart> {
    if before == after {
        return Vec::new();
    }
    let diff = TextDiff::from_words(before, after);
    let mut parts: Vec<DiffPart> = Vec::new();
    for change in diff.iter_all_changes() {
        let tag = match change.tag() {
            ChangeTag::Equal => "same",
            ChangeTag::Insert => "added",
            ChangeTag::Delete => "removed",
        };
        match parts.last_mut() {
            Some(last) if last.change == tag => last.text.push_str(change.value()),
            _ => parts.push(DiffPart {
                change: tag,
                text: change.value().to_string(),
            }),
        }
    }
    parts
}

fn version_diff(before: &KnowledgeEntry, after: &KnowledgeEntry) -> VersionDiff {
    let mut fields = Vec::new();
    let scope = |p: &Option<String>| p.clone().unwrap_or_else(|| "every project".into());
    if before.category != after.category {
        fields.push(format!(
            "category: {} → {}",
            before.category.as_str(),
            after.category.as_str()
        ));
    }
    if before.confidence.to_bits() != after.confidence.to_bits() {
        fields.push(format!(
            "confidence: {:.2} → {:.2}",
            before.confidence, after.confidence
        ));
    }
    if before.project != after.project {
        fields.push(format!(
            "scope: {} → {}",
            scope(&before.project),
            scope(&after.project)
        ));
    }
    if before.deleted != after.deleted {
        fields.push(if after.deleted {
            "forgotten".to_string()
        } else {
            "restored".to_string()
        });
    }
    VersionDiff {
        version: after.version,
        updated_by: after.updated_by.clone(),
        updated_at_ms: after.updated_at_ms,
        title: word_diff(&before.title, &after.title),
        content: word_diff(&before.content, &after.content),
        fields,
    }
}

/// One entry (an id or a unique prefix), forgotten ones included.
pub fn detail(store: &Store, id: &str) -> Result<EntryDetail, ApiError> {
    let entry = resolve_id(store, id)?;
    let history = store.knowledge_history(&entry.id)?;
    let mut versions: Vec<&KnowledgeEntry> = history.iter().collect();
    versions.push(&entry);
    let mut diffs: Vec<VersionDiff> = versions
        .windows(2)
        .map(|pair| version_diff(pair[0], pair[1]))
        .collect();
    diffs.reverse();
    Ok(EntryDetail {
        entry: EntryRow::from(&entry),
        history: history.iter().map(EntryRow::from).collect(),
        diffs,
        categories: Category::ALL.iter().map(|c| c.as_str()).collect(),
    })
}

/// The body of `PATCH /api/v1/knowledge/{id}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditBody {
    /// New title.
    #[serde(default)]
    pub title: Option<String>,
    /// New content.
    #[serde(default)]
    pub content: Option<String>,
    /// New confidence, 0–1.
    #[serde(default)]
    pub confidence: Option<f32>,
    /// New category.
    #[serde(default)]
    pub category: Option<String>,
}

/// Applies an edit.
pub fn apply_edit(store: &Store, id: &str, body: EditBody) -> Result<Change, ApiError> {
    let category = body
        .category
        .as_deref()
        .map(crate::knowledge::parse_category)
        .transpose()
        .map_err(ApiError::bad_request)?;
    if body.confidence.is_some_and(|c| !c.is_finite()) {
        return Err(ApiError::bad_request(
            "confidence must be a number from 0 to 1",
        ));
    }
    let entry = resolve_id(store, id)?;
    let change = edit(
        store,
        &entry.id,
        Edit {
            title: body.title,
            content: body.content,
            confidence: body.confidence,
            category,
        },
        USER,
    )?;
    Ok(change)
}

/// The body of `POST /api/v1/knowledge/{id}/scope`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeBody {
    /// The project it holds in; `null` or absent for every project.
    #[serde(default)]
    pub project: Option<String>,
}

/// Changes an entry's scope.
pub fn apply_scope(store: &Store, id: &str, body: ScopeBody) -> Result<Change, ApiError> {
    let entry = resolve_id(store, id)?;
    Ok(change_scope(store, &entry.id, body.project, USER)?)
}

/// Forgets an entry.
pub fn apply_forget(store: &Store, id: &str) -> Result<Change, ApiError> {
    let entry = resolve_id(store, id)?;
    Ok(forget(store, &entry.id, USER)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_diffs_group_runs() {
        let parts = word_diff("use sled for the log", "use sled for the message log");
        let shown: Vec<(&str, &str)> = parts.iter().map(|p| (p.change, p.text.as_str())).collect();
        assert_eq!(
            shown,
            [
                ("same", "use sled for the "),
                ("added", "message "),
                ("same", "log")
            ]
        );
        assert!(word_diff("same", "same").is_empty());
    }
}
