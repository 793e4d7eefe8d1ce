//! Applying a curator reply: knowledge operations through [`crate::knowledge`] (near-duplicates
//! become updates), entities merged by name or alias, relations between them, and every change
//! sent to the search index.

use actix::Addr;
use lore_storage::memory::new_memory_id;
use lore_storage::memory::{Alias, Category, Entity, Relation};
use lore_storage::{DocKind, SearchFilter, Store, now_ms};

use super::parse::{CuratorReply, EntityOp, Op};
use crate::ActorError;
use crate::distiller::job::Stop;
use crate::documents::entity_doc;
use crate::embedder::{EmbedderHandle, Purpose};
use crate::indexer::{IndexDocs, Indexer, RemoveDocs};
use crate::knowledge::{self, Change, Draft};

/// Cosine similarity above which a new entry updates an existing one.
const SIMILAR: f32 = 0.935;
/// The same for preferences, which are phrased in more ways.
const SIMILAR_PREFERENCE: f32 = 0.88;

/// Where a reply is applied.
pub struct Context<'a> {
    /// Storage.
    pub store: &'a Store,
    /// The session's project.
    pub project: Option<String>,
    /// The session.
    pub session_id: &'a str,
    /// The search index writer.
    pub indexer: Option<&'a Addr<Indexer>>,
    /// Ids of the entries the curator was shown: the only ones it may update or delete.
    pub shown: std::collections::HashSet<String>,
}

/// What a reply changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Entries created.
    pub created: u64,
    /// Entries updated.
    pub updated: u64,
    /// Entries forgotten.
    pub deleted: u64,
    /// Operations that changed nothing.
    pub unchanged: u64,
    /// Entities created or changed.
    pub entities: u64,
    /// Operations skipped (malformed, or naming an unknown entry).
    pub skipped: u64,
}

impl Context<'_> {
    fn reindex(&self, change: &Change) {
        let Some(indexer) = self.indexer else { return };
        let (docs, ids) = knowledge::index_work(std::slice::from_ref(change));
        if !docs.is_empty() {
            indexer.do_send(IndexDocs { docs });
        }
        if !ids.is_empty() {
            indexer.do_send(RemoveDocs { ids });
        }
    }

    /// An existing entry of the same project whose embedding is close to the draft's.
    async fn similar(&self, draft: &Draft, embedder: Option<&EmbedderHandle>) -> Option<String> {
        let embedder = embedder?;
        let text = format!("{}\n{}", draft.title, draft.content);
        let vector = embedder
            .embed(vec![text], Purpose::Document)
            .await
            .ok()?
            .into_iter()
            .next()?;
        let filter = SearchFilter {
            kind: Some(DocKind::Knowledge),
            project: Some(draft.project.clone().unwrap_or_default()),
            session: None,
        };
        let hit = self
            .store
            .vectors()
            .search(&vector, &filter, 1)
            .ok()?
            .into_iter()
            .next()?;
        let threshold = if draft.category == Category::Preference {
            SIMILAR_PREFERENCE
        } else {
            SIMILAR
        };
        (hit.score >= threshold).then(|| hit.id.trim_start_matches("k:").to_string())
    }
}

fn count(applied: &mut Applied, change: &Change) {
    match change {
        Change::Created(_) => applied.created += 1,
        Change::Updated { .. } => applied.updated += 1,
        Change::Deleted(_) => applied.deleted += 1,
        Change::Unchanged(_) => applied.unchanged += 1,
    }
}

/// Applies every operation, then the entities and relations. An operation naming an unknown
/// entry is skipped; a storage failure stops and is returned (what was applied stays).
pub async fn apply(
    ctx: &Context<'_>,
    reply: CuratorReply,
    embedder: Option<&EmbedderHandle>,
) -> Result<Applied, Stop> {
    let mut applied = Applied {
        skipped: reply.skipped.len() as u64,
        ..Default::default()
    };
    for op in reply.ops {
        let result = match op {
            Op::Create {
                category,
                title,
                content,
                cross_project,
                confidence,
            } => {
                let draft = Draft {
                    category,
                    title,
                    content,
                    project: if cross_project {
                        None
                    } else {
                        ctx.project.clone()
                    },
                    confidence,
                    source_session: Some(ctx.session_id.to_string()),
                };
                let similar = ctx.similar(&draft, embedder).await;
                knowledge::create_or_merge(ctx.store, draft, "curator", similar.as_deref())
            }
            Op::Update {
                id,
                content,
                title,
                confidence,
            } if ctx.shown.contains(&id) => {
                knowledge::update(ctx.store, &id, title, content, confidence, "curator")
            }
            Op::Delete { id } if ctx.shown.contains(&id) => {
                knowledge::forget(ctx.store, &id, "curator")
            }
            Op::Update { .. } | Op::Delete { .. } => {
                applied.skipped += 1;
                continue;
            }
        };
        match result {
            Ok(change) => {
                count(&mut applied, &change);
                ctx.reindex(&change);
            }
            Err(ActorError::Storage(err)) => return Err(Stop::Failed(ActorError::Storage(err))),
            Err(_) => applied.skipped += 1,
        }
    }
    let mut known = ctx.store.all_entities()?;
    for op in &reply.entities {
        let entity = merge_entity(&mut known, op, ctx.project.as_deref());
        ctx.store.save_entity(&entity)?;
        if let Some(indexer) = ctx.indexer {
            indexer.do_send(IndexDocs {
                docs: vec![entity_doc(&entity)],
            });
        }
        applied.entities += 1;
    }
    for relation in &reply.relations {
        let find = |name: &str| find_entity(&known, name, ctx.project.as_deref());
        let (Some(a), Some(b)) = (find(&relation.a), find(&relation.b)) else {
            applied.skipped += 1;
            continue;
        };
        let other = known[b].id.clone();
        let entity = &mut known[a];
        let edge = Relation {
            other,
            relation: relation.relation.clone(),
        };
        if !entity.relations.contains(&edge) {
            entity.relations.push(edge);
            entity.updated_at_ms = now_ms();
            ctx.store.save_entity(entity)?;
        }
    }
    Ok(applied)
}

fn find_entity(known: &[Entity], name: &str, project: Option<&str>) -> Option<usize> {
    let name = name.trim().to_lowercase();
    known.iter().position(|entity| {
        (entity.project.is_none() || entity.project.as_deref() == project)
            && (entity.canonical_name.to_lowercase() == name
                || entity
                    .aliases
                    .iter()
                    .any(|a| a.value.to_lowercase() == name))
    })
}

/// The entity an operation names, merged into the known one with that name or alias, or new.
fn merge_entity(known: &mut Vec<Entity>, op: &EntityOp, project: Option<&str>) -> Entity {
    let index = find_entity(known, &op.canonical_name, project).or_else(|| {
        op.aliases
            .iter()
            .find_map(|(_, value)| find_entity(known, value, project))
    });
    let index = match index {
        Some(index) => index,
        None => {
            known.push(Entity {
                id: new_memory_id(),
                project: project.map(str::to_string),
                entity_type: op.entity_type.clone(),
                canonical_name: op.canonical_name.clone(),
                aliases: Vec::new(),
                description: String::new(),
                relations: Vec::new(),
                updated_at_ms: now_ms(),
            });
            known.len() - 1
        }
    };
    let entity = &mut known[index];
    for (kind, value) in &op.aliases {
        let duplicate = value.eq_ignore_ascii_case(&entity.canonical_name)
            || entity
                .aliases
                .iter()
                .any(|a| a.value.eq_ignore_ascii_case(value));
        if !duplicate {
            entity.aliases.push(Alias {
                kind: kind.clone(),
                value: value.clone(),
            });
        }
    }
    if !op.description.is_empty() {
        entity.description = op.description.clone();
    }
    entity.updated_at_ms = now_ms();
    entity.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_merge_by_name_or_alias() {
        let mut known = Vec::new();
        let op = EntityOp {
            entity_type: "service".into(),
            canonical_name: "billing-api".into(),
            aliases: vec![("name".into(), "billing".into())],
            description: String::new(),
        };
        let first = merge_entity(&mut known, &op, Some("/p"));
        let again = EntityOp {
            entity_type: "service".into(),
            canonical_name: "Billing".into(),
            aliases: vec![("url".into(), "billing.internal".into())],
            description: "charges customers".into(),
        };
        let merged = merge_entity(&mut known, &again, Some("/p"));
        assert_eq!(known.len(), 1);
        assert_eq!(merged.id, first.id);
        assert_eq!(merged.aliases.len(), 2);
        assert_eq!(merged.description, "charges customers");
        // Another project's entity is another entity.
        merge_entity(&mut known, &op, Some("/q"));
        assert_eq!(known.len(), 2);
    }
}
