//! The search documents of what the memory workers write: distillations (`d:`), knowledge
//! entries (`k:`) and entities (`e:`). Messages (`t:`) are built in [`crate::indexer`].

use lore_storage::memory::{Distillation, Entity, KnowledgeEntry};
use lore_storage::{DocKind, IndexDoc, Store};

/// The document of a distillation; its title says its generation.
pub fn distillation_doc(distillation: &Distillation) -> IndexDoc {
    let title = if distillation.generation == 0 {
        "observations".to_string()
    } else {
        format!(
            "consolidated observations (generation {})",
            distillation.generation
        )
    };
    IndexDoc {
        id: distillation.doc_id(),
        kind: DocKind::Distillation,
        project: distillation.project.clone().unwrap_or_default(),
        session: distillation.session_id.clone(),
        title,
        body: distillation.observations.clone(),
        category: String::new(),
        created_at_ms: distillation.created_at_ms,
    }
}

/// The document of a knowledge entry: its title carries the highest weight.
pub fn knowledge_doc(entry: &KnowledgeEntry) -> IndexDoc {
    IndexDoc {
        id: entry.doc_id(),
        kind: DocKind::Knowledge,
        project: entry.project.clone().unwrap_or_default(),
        session: String::new(),
        title: entry.title.clone(),
        body: entry.content.clone(),
        category: entry.category.as_str().to_string(),
        created_at_ms: entry.updated_at_ms,
    }
}

/// The document of an entity: its name as the title, aliases and description as the body.
pub fn entity_doc(entity: &Entity) -> IndexDoc {
    let mut body = entity
        .aliases
        .iter()
        .map(|alias| alias.value.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if !entity.description.is_empty() {
        if !body.is_empty() {
            body.push_str(". ");
        }
        body.push_str(&entity.description);
    }
    IndexDoc {
        id: entity.doc_id(),
        kind: DocKind::Entity,
        project: entity.project.clone().unwrap_or_default(),
        session: String::new(),
        title: entity.canonical_name.clone(),
        body,
        category: entity.entity_type.clone(),
        created_at_ms: entity.updated_at_ms,
    }
}

/// Every stored distillation, live knowledge entry and entity, as documents.
pub fn memory_docs(store: &Store) -> Result<Vec<IndexDoc>, lore_storage::StorageError> {
    let mut docs: Vec<IndexDoc> = store
        .all_distillations()?
        .iter()
        .map(distillation_doc)
        .collect();
    docs.extend(
        store
            .all_knowledge()?
            .iter()
            .filter(|entry| !entry.deleted)
            .map(knowledge_doc),
    );
    docs.extend(store.all_entities()?.iter().map(entity_doc));
    Ok(docs)
}

/// The document `id` (`t:<session>:<seq>`, `d:<session>:<n>`, `k:<id>`, `e:<id>`) rebuilt from
/// storage, the source of truth: recall uses it for a hit whose document the index has not
/// committed yet (vectors are written as soon as a document is embedded, which may be before the
/// index's next commit). `None` for an unknown id or a forgotten knowledge entry.
pub fn stored_document(
    store: &Store,
    id: &str,
) -> Result<Option<IndexDoc>, lore_storage::StorageError> {
    let Some((prefix, rest)) = id.split_once(':') else {
        return Ok(None);
    };
    let session_and_number = || {
        rest.rsplit_once(':')
            .and_then(|(session, n)| Some((session, n.parse::<u64>().ok()?)))
    };
    match prefix {
        "t" => {
            let Some((session, seq)) = session_and_number() else {
                return Ok(None);
            };
            let Some(stored) = store.load_message(session, seq)? else {
                return Ok(None);
            };
            let project = store
                .load_session(session)?
                .and_then(|record| record.project)
                .unwrap_or_default();
            Ok(Some(crate::indexer::message_doc(&stored, &project)))
        }
        "d" => {
            let Some((session, n)) = session_and_number() else {
                return Ok(None);
            };
            Ok(store
                .distillation(session, n)?
                .map(|found| distillation_doc(&found)))
        }
        "k" => Ok(store
            .knowledge_entry(rest)?
            .filter(|entry| !entry.deleted)
            .map(|entry| knowledge_doc(&entry))),
        "e" => Ok(store.entity(rest)?.map(|entity| entity_doc(&entity))),
        _ => Ok(None),
    }
}
