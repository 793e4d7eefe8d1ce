//! The three writes of knowledge: [`create_or_merge`] (new knowledge, or a better version of an
//! entry it repeats), [`update`] (an edit of named fields) and [`forget`] (a soft delete).
//! Every write applies the [`limits`](super::limits), raises the version by one (the old version
//! moves to the history in the same transaction) and records who wrote it; a write that would
//! change nothing writes nothing and answers [`Change::Unchanged`].

use lore_storage::memory::{Category, KnowledgeEntry, new_memory_id};
use lore_storage::{Store, now_ms};

use super::dedup::find_duplicate;
use super::limits::{clean_confidence, clean_content, clean_draft, clean_title};
use super::{Change, Draft, not_found};
use crate::error::ActorError;

/// Creates an entry, or updates its near-duplicate instead: an entry of the same project whose
/// title is equal ignoring case and surrounding whitespace or overlaps enough
/// ([`find_duplicate`]), or else the entry `similar` names (an id the caller found by embedding
/// similarity; ignored if it does not exist or is forgotten). An update is a full rewrite of
/// title, content, confidence and category, version + 1.
pub fn create_or_merge(
    store: &Store,
    draft: Draft,
    by: &str,
    similar: Option<&str>,
) -> Result<Change, ActorError> {
    let draft = clean_draft(draft)?;
    let live: Vec<KnowledgeEntry> = store
        .all_knowledge()?
        .into_iter()
        .filter(|entry| !entry.deleted)
        .collect();
    let target = match find_duplicate(&live, &draft) {
        Some(entry) => Some(entry.clone()),
        None => match similar {
            Some(id) => store.knowledge_entry(id)?.filter(|entry| !entry.deleted),
            None => None,
        },
    };
    write_draft(store, draft, by, target)
}

/// Edits an entry: each given field replaces the stored one. An unknown or forgotten id is
/// [`ActorError::NotFound`].
pub fn update(
    store: &Store,
    id: &str,
    title: Option<String>,
    content: Option<String>,
    confidence: Option<f32>,
    by: &str,
) -> Result<Change, ActorError> {
    let before = live_entry(store, id)?;
    let fields = Fields {
        title: title.map(|t| clean_title(&t)).transpose()?,
        content: content.map(|c| clean_content(&c)).transpose()?,
        confidence: confidence.map(clean_confidence),
        category: None,
    };
    rewrite(store, before, fields, None, by)
}

/// Forgets an entry: it stays stored, marked deleted at version + 1, and the history keeps the
/// version it replaced. An unknown or already forgotten id is [`ActorError::NotFound`].
pub fn forget(store: &Store, id: &str, by: &str) -> Result<Change, ActorError> {
    let before = live_entry(store, id)?;
    let after = KnowledgeEntry {
        version: before.version + 1,
        deleted: true,
        updated_by: by.to_string(),
        updated_at_ms: now_ms(),
        ..before
    };
    store.save_knowledge(&after)?;
    Ok(Change::Deleted(after))
}

/// The fields a rewrite replaces; `None` keeps the stored value. Values are already cleaned.
#[derive(Debug, Default)]
pub(crate) struct Fields {
    pub title: Option<String>,
    pub content: Option<String>,
    pub confidence: Option<f32>,
    pub category: Option<Category>,
}

/// Stores a cleaned draft: as a rewrite of `target` when there is one, else as a new entry.
pub(crate) fn write_draft(
    store: &Store,
    draft: Draft,
    by: &str,
    target: Option<KnowledgeEntry>,
) -> Result<Change, ActorError> {
    if let Some(before) = target {
        let fields = Fields {
            title: Some(draft.title),
            content: Some(draft.content),
            confidence: Some(draft.confidence),
            category: Some(draft.category),
        };
        return rewrite(store, before, fields, draft.source_session, by);
    }
    let now = now_ms();
    let entry = KnowledgeEntry {
        id: new_memory_id(),
        version: 1,
        project: draft.project,
        category: draft.category,
        title: draft.title,
        content: draft.content,
        confidence: draft.confidence,
        source_session: draft.source_session,
        updated_by: by.to_string(),
        created_at_ms: now,
        updated_at_ms: now,
        deleted: false,
    };
    store.save_knowledge(&entry)?;
    Ok(Change::Created(entry))
}

/// Writes `before` with `fields` replaced as the next version, or nothing when no field
/// differs. A new source session is recorded only along with a real change.
pub(crate) fn rewrite(
    store: &Store,
    before: KnowledgeEntry,
    fields: Fields,
    source_session: Option<String>,
    by: &str,
) -> Result<Change, ActorError> {
    let mut after = before.clone();
    if let Some(title) = fields.title {
        after.title = title;
    }
    if let Some(content) = fields.content {
        after.content = content;
    }
    if let Some(confidence) = fields.confidence {
        after.confidence = confidence;
    }
    if let Some(category) = fields.category {
        after.category = category;
    }
    let same = after.title == before.title
        && after.content == before.content
        && after.confidence.to_bits() == before.confidence.to_bits()
        && after.category == before.category;
    if same {
        return Ok(Change::Unchanged(before));
    }
    if source_session.is_some() {
        after.source_session = source_session;
    }
    after.version = before.version + 1;
    after.updated_by = by.to_string();
    after.updated_at_ms = now_ms();
    store.save_knowledge(&after)?;
    Ok(Change::Updated { before, after })
}

/// The current version of a live entry, or [`ActorError::NotFound`].
fn live_entry(store: &Store, id: &str) -> Result<KnowledgeEntry, ActorError> {
    store
        .knowledge_entry(id)?
        .filter(|entry| !entry.deleted)
        .ok_or_else(|| not_found(id))
}
