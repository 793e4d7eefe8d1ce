//! Projects: every project directory a session is attributed to or knowledge belongs to, with
//! its counts (`GET /api/v1/projects`), and one project with its knowledge, sessions and
//! observation logs (`GET /api/v1/projects/{id}`). A project's id is the first 12 hex digits of
//! the SHA-256 of its path, so it fits in a URL; `?path=` works too.

use std::collections::BTreeMap;

use lore_storage::memory::{Distillation, KnowledgeEntry};
use lore_storage::{SessionSummary, Store};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::error::ApiError;
use super::paging::{Page, PageQuery};

/// The URL id of a project path.
pub fn project_id(path: &str) -> String {
    hex::encode(&Sha256::digest(path.as_bytes())[..6])
}

/// One project in the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectRow {
    /// URL id.
    pub id: String,
    /// Project directory.
    pub path: String,
    /// Sessions attributed to it.
    pub sessions: usize,
    /// Messages on those sessions' current paths.
    pub messages: usize,
    /// Live knowledge entries of the project (global ones not counted).
    pub knowledge: usize,
    /// True when every session of it is attributed only provisionally (the gateway's own
    /// working directory, a guess).
    pub provisional: bool,
    /// Latest session change, ms since the epoch (0 when it has knowledge only).
    pub last_active_ms: u64,
}

/// Every project, most recently active first.
pub fn list(sessions: &[SessionSummary], knowledge: &[KnowledgeEntry]) -> Vec<ProjectRow> {
    let mut rows: BTreeMap<String, ProjectRow> = BTreeMap::new();
    let row = |rows: &mut BTreeMap<String, ProjectRow>, path: &str| -> ProjectRow {
        rows.remove(path).unwrap_or_else(|| ProjectRow {
            id: project_id(path),
            path: path.to_string(),
            sessions: 0,
            messages: 0,
            knowledge: 0,
            provisional: true,
            last_active_ms: 0,
        })
    };
    for session in sessions {
        let Some(path) = &session.project else {
            continue;
        };
        let mut entry = row(&mut rows, path);
        entry.sessions += 1;
        entry.messages += session.messages;
        entry.provisional &= session.project_provisional;
        entry.last_active_ms = entry.last_active_ms.max(session.updated_at_ms);
        rows.insert(path.clone(), entry);
    }
    for entry in knowledge.iter().filter(|e| !e.deleted) {
        let Some(path) = &entry.project else {
            continue;
        };
        let mut project = row(&mut rows, path);
        project.knowledge += 1;
        if project.sessions == 0 {
            project.provisional = false;
        }
        rows.insert(path.clone(), project);
    }
    let mut out: Vec<ProjectRow> = rows.into_values().collect();
    out.sort_by(|a, b| {
        b.last_active_ms
            .cmp(&a.last_active_ms)
            .then(a.path.cmp(&b.path))
    });
    out
}

/// Finds the path of a project by id or path.
pub fn resolve(
    sessions: &[SessionSummary],
    knowledge: &[KnowledgeEntry],
    id_or_path: &str,
) -> Result<String, ApiError> {
    let wanted = id_or_path.trim();
    let paths = sessions
        .iter()
        .filter_map(|s| s.project.as_deref())
        .chain(knowledge.iter().filter_map(|k| k.project.as_deref()));
    for path in paths {
        if path == wanted || project_id(path) == wanted {
            return Ok(path.to_string());
        }
    }
    Err(ApiError::not_found(format!(
        "no project has the id or path `{wanted}`; list them with GET /api/v1/projects"
    )))
}

/// One session in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionRow {
    /// Session id.
    pub id: String,
    /// Model of the latest request.
    pub model: Option<String>,
    /// Project directory.
    pub project: Option<String>,
    /// True when the project is a guess.
    pub provisional: bool,
    /// Messages on the current path.
    pub messages: usize,
    /// Completed turns.
    pub turns: u64,
    /// History rewrites.
    pub forks: usize,
    /// Created, ms since the epoch.
    pub created_at_ms: u64,
    /// Last change, ms since the epoch.
    pub updated_at_ms: u64,
}

impl From<&SessionSummary> for SessionRow {
    fn from(s: &SessionSummary) -> Self {
        Self {
            id: s.id.clone(),
            model: s.model.clone(),
            project: s.project.clone(),
            provisional: s.project_provisional,
            messages: s.messages,
            turns: s.turns,
            forks: s.forks,
            created_at_ms: s.created_at_ms,
            updated_at_ms: s.updated_at_ms,
        }
    }
}

/// One observation log or consolidation in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DistillationRow {
    /// Search document id (`d:<session>:<n>`).
    pub id: String,
    /// Session it distils.
    pub session: String,
    /// Its position among the session's distillations.
    pub n: u64,
    /// 0 for an observation log, more for a consolidation.
    pub generation: u32,
    /// Folded into a consolidation.
    pub archived: bool,
    /// Estimated tokens of the source and of the observations.
    pub source_tokens: u64,
    /// Estimated tokens of the observations.
    pub tokens: u64,
    /// Written, ms since the epoch.
    pub created_at_ms: u64,
    /// The observations.
    pub observations: String,
}

impl From<&Distillation> for DistillationRow {
    fn from(d: &Distillation) -> Self {
        Self {
            id: d.doc_id(),
            session: d.session_id.clone(),
            n: d.n,
            generation: d.generation,
            archived: d.archived,
            source_tokens: d.source_tokens,
            tokens: d.tokens,
            created_at_ms: d.created_at_ms,
            observations: d.observations.clone(),
        }
    }
}

/// One project with what Lore knows about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectDetail {
    /// The project's row.
    pub project: ProjectRow,
    /// Its live knowledge (the project's own), by category then title.
    pub knowledge: Vec<super::knowledge::EntryRow>,
    /// A window of its sessions, most recent first.
    pub sessions: Vec<SessionRow>,
    /// Where that window is.
    pub sessions_page: Page,
    /// Its newest observation logs and consolidations (at most 20).
    pub distillations: Vec<DistillationRow>,
    /// All its distillations.
    pub distillations_total: usize,
}

/// Most distillations shown on a project.
const DISTILLATIONS_SHOWN: usize = 20;

/// Loads one project.
pub fn detail(store: &Store, id_or_path: &str, page: PageQuery) -> Result<ProjectDetail, ApiError> {
    let sessions = store.session_summaries()?;
    let knowledge = store.all_knowledge()?;
    let path = resolve(&sessions, &knowledge, id_or_path)?;
    let project = list(&sessions, &knowledge)
        .into_iter()
        .find(|row| row.path == path)
        .ok_or_else(|| ApiError::not_found(format!("project `{path}` has nothing stored")))?;
    let mine: Vec<&SessionSummary> = sessions
        .iter()
        .filter(|s| s.project.as_deref() == Some(path.as_str()))
        .collect();
    let sessions_page = Page::new(page, mine.len(), 50, 500);
    let shown: Vec<SessionRow> = sessions_page
        .slice(mine.clone())
        .into_iter()
        .map(SessionRow::from)
        .collect();
    let mut distillations: Vec<Distillation> = Vec::new();
    for session in &mine {
        distillations.extend(store.session_distillations(&session.id)?);
    }
    distillations.sort_by_key(|d| std::cmp::Reverse(d.created_at_ms));
    let mut entries: Vec<&KnowledgeEntry> = knowledge
        .iter()
        .filter(|e| !e.deleted && e.project.as_deref() == Some(path.as_str()))
        .collect();
    entries.sort_by(|a, b| {
        lore_actors::knowledge::category_rank(a.category)
            .cmp(&lore_actors::knowledge::category_rank(b.category))
            .then_with(|| a.title.to_lowercase().cmp(&b.title.to_lowercase()))
    });
    Ok(ProjectDetail {
        project,
        knowledge: entries
            .into_iter()
            .map(super::knowledge::EntryRow::from)
            .collect(),
        sessions: shown,
        sessions_page,
        distillations_total: distillations.len(),
        distillations: distillations
            .iter()
            .take(DISTILLATIONS_SHOWN)
            .map(DistillationRow::from)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_short_stable_and_differ() {
        assert_eq!(project_id("/a").len(), 12);
        assert_eq!(project_id("/a"), project_id("/a"));
        assert_ne!(project_id("/a"), project_id("/b"));
    }
}
