//! The user's edits of an entry from the dashboard or the API: [`edit`] (title, content,
//! confidence and category, any subset) and [`change_scope`] (the project it holds in, or every
//! project). Both are versioned writes like every other: version + 1, the replaced version kept
//! in the history, nothing written when nothing changes.

use lore_storage::memory::{Category, KnowledgeEntry};
use lore_storage::{Store, now_ms};

use super::limits::{clean_confidence, clean_content, clean_title};
use super::write::{Fields, rewrite};
use super::{Change, not_found};
use crate::error::ActorError;

/// The fields an edit replaces; `None` keeps the stored value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Edit {
    /// New title (at most 120 characters).
    pub title: Option<String>,
    /// New content (at most 1,200 characters).
    pub content: Option<String>,
    /// New confidence, clamped to 0–1.
    pub confidence: Option<f32>,
    /// New category.
    pub category: Option<Category>,
}

fn live(store: &Store, id: &str) -> Result<KnowledgeEntry, ActorError> {
    store
        .knowledge_entry(id)?
        .filter(|entry| !entry.deleted)
        .ok_or_else(|| not_found(id))
}

/// Applies an edit to a live entry.
pub fn edit(store: &Store, id: &str, edit: Edit, by: &str) -> Result<Change, ActorError> {
    let before = live(store, id)?;
    let fields = Fields {
        title: edit.title.map(|t| clean_title(&t)).transpose()?,
        content: edit.content.map(|c| clean_content(&c)).transpose()?,
        confidence: edit.confidence.map(clean_confidence),
        category: edit.category,
    };
    rewrite(store, before, fields, None, by)
}

/// Moves a live entry to `project`, or makes it hold in every project with `None`. A project
/// must be an absolute path, as the gateway attributes sessions.
pub fn change_scope(
    store: &Store,
    id: &str,
    project: Option<String>,
    by: &str,
) -> Result<Change, ActorError> {
    let project = project
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty());
    if let Some(path) = &project
        && !path.starts_with('/')
    {
        return Err(ActorError::Invalid(format!(
            "the project `{path}` is not an absolute path; give the project directory as the gateway shows it (e.g. /home/me/repo), or no project for knowledge that holds everywhere"
        )));
    }
    let before = live(store, id)?;
    if before.project == project {
        return Ok(Change::Unchanged(before));
    }
    let after = KnowledgeEntry {
        version: before.version + 1,
        project,
        updated_by: by.to_string(),
        updated_at_ms: now_ms(),
        ..before.clone()
    };
    store.save_knowledge(&after)?;
    Ok(Change::Updated { before, after })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::knowledge::{Draft, create_or_merge};

    fn entry(store: &Store) -> KnowledgeEntry {
        let draft = Draft {
            category: Category::Decision,
            title: "Use sled for the log".into(),
            content: "Embedded, no server.".into(),
            project: Some("/repo".into()),
            confidence: 0.8,
            source_session: None,
        };
        create_or_merge(store, draft, "curator", None)
            .unwrap()
            .entry()
            .clone()
    }

    #[test]
    fn an_edit_is_a_new_version_and_keeps_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let first = entry(&store);
        let change = edit(
            &store,
            &first.id,
            Edit {
                content: Some("Embedded, no server, crash-safe.".into()),
                category: Some(Category::Architecture),
                ..Edit::default()
            },
            "user",
        )
        .unwrap();
        let after = change.entry();
        assert_eq!(change.kind(), "updated");
        assert_eq!((after.version, after.category), (2, Category::Architecture));
        assert_eq!(after.title, first.title);
        assert_eq!(
            store.knowledge_history(&first.id).unwrap(),
            vec![first.clone()]
        );
        let same = edit(&store, &first.id, Edit::default(), "user").unwrap();
        assert_eq!(same.kind(), "unchanged");
        let blank = edit(
            &store,
            &first.id,
            Edit {
                title: Some("   ".into()),
                ..Edit::default()
            },
            "user",
        );
        assert!(matches!(blank, Err(ActorError::Invalid(_))));
    }

    #[test]
    fn scope_changes_are_versioned_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let first = entry(&store);
        let global = change_scope(&store, &first.id, None, "user").unwrap();
        assert_eq!(global.entry().project, None);
        assert_eq!(global.entry().version, 2);
        let back = change_scope(&store, &first.id, Some("/other".into()), "user").unwrap();
        assert_eq!(back.entry().project.as_deref(), Some("/other"));
        assert_eq!(store.knowledge_history(&first.id).unwrap().len(), 2);
        assert!(matches!(
            change_scope(&store, &first.id, Some("relative".into()), "user"),
            Err(ActorError::Invalid(_))
        ));
        assert_eq!(
            change_scope(&store, &first.id, Some("/other".into()), "user")
                .unwrap()
                .kind(),
            "unchanged"
        );
        assert!(matches!(
            change_scope(&store, "missing", None, "user"),
            Err(ActorError::NotFound(_))
        ));
    }
}
