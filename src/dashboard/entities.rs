//! Entities for the dashboard: the list (filter by project, type and name, a window of it),
//! one entity with its relations both ways and the knowledge that names it, and merging two.

use std::collections::HashMap;

use lore_actors::entity_merge::{Merged, merge_entities};
use lore_storage::Store;
use lore_storage::memory::Entity;
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::knowledge::EntryRow;
use super::paging::{Page, PageQuery};

/// A relation with the other entity's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RelationView {
    /// The other entity's id.
    pub other: String,
    /// Its name (the id when it no longer exists).
    pub other_name: String,
    /// `colleague`, `uses`, …
    pub relation: String,
}

/// One entity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntityRow {
    /// Stable id.
    pub id: String,
    /// The name it is known by.
    pub name: String,
    /// `person`, `service`, …
    pub entity_type: String,
    /// Project path; `None` when known everywhere.
    pub project: Option<String>,
    /// Other names, as `kind: value`.
    pub aliases: Vec<String>,
    /// One line saying what it is.
    pub description: String,
    /// Its relations to others.
    pub relations: Vec<RelationView>,
    /// Last change, ms since the epoch.
    pub updated_at_ms: u64,
}

fn row(entity: &Entity, names: &HashMap<&str, &str>) -> EntityRow {
    EntityRow {
        id: entity.id.clone(),
        name: entity.canonical_name.clone(),
        entity_type: entity.entity_type.clone(),
        project: entity.project.clone(),
        aliases: entity
            .aliases
            .iter()
            .map(|a| format!("{}: {}", a.kind, a.value))
            .collect(),
        description: entity.description.clone(),
        relations: entity
            .relations
            .iter()
            .map(|r| RelationView {
                other: r.other.clone(),
                other_name: names
                    .get(r.other.as_str())
                    .map_or_else(|| r.other.clone(), |n| n.to_string()),
                relation: r.relation.clone(),
            })
            .collect(),
        updated_at_ms: entity.updated_at_ms,
    }
}

/// The filters of the list.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Filter {
    /// Only entities of this project (and those known everywhere).
    #[serde(default)]
    pub project: Option<String>,
    /// Only this type.
    #[serde(default, rename = "type")]
    pub entity_type: Option<String>,
    /// Name or alias contains this (case-insensitive).
    #[serde(default)]
    pub q: Option<String>,
}

/// A window of the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityList {
    /// The entities shown, by name.
    pub entities: Vec<EntityRow>,
    /// Where they sit.
    pub page: Page,
    /// Every type present, for the filter.
    pub types: Vec<String>,
}

/// Lists the entities that pass the filter.
pub fn list(store: &Store, filter: &Filter, page: PageQuery) -> Result<EntityList, ApiError> {
    let all = store.all_entities()?;
    let names: HashMap<&str, &str> = all
        .iter()
        .map(|e| (e.id.as_str(), e.canonical_name.as_str()))
        .collect();
    let mut types: Vec<String> = all.iter().map(|e| e.entity_type.clone()).collect();
    types.sort();
    types.dedup();
    let project = filter
        .project
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let kind = filter
        .entity_type
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let q = filter
        .q
        .as_deref()
        .map(|q| q.trim().to_lowercase())
        .filter(|q| !q.is_empty());
    let mut kept: Vec<&Entity> = all
        .iter()
        .filter(|e| project.is_none_or(|p| e.project.as_deref().is_none_or(|ep| ep == p)))
        .filter(|e| kind.is_none_or(|t| e.entity_type == t))
        .filter(|e| {
            q.as_deref().is_none_or(|q| {
                e.canonical_name.to_lowercase().contains(q)
                    || e.aliases.iter().any(|a| a.value.to_lowercase().contains(q))
            })
        })
        .collect();
    kept.sort_by(|a, b| {
        a.canonical_name
            .to_lowercase()
            .cmp(&b.canonical_name.to_lowercase())
            .then(a.id.cmp(&b.id))
    });
    let page = Page::new(page, kept.len(), 50, 500);
    Ok(EntityList {
        entities: page
            .slice(kept)
            .into_iter()
            .map(|e| row(e, &names))
            .collect(),
        page,
        types,
    })
}

/// One entity with what points at it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EntityDetail {
    /// The entity.
    pub entity: EntityRow,
    /// Relations of other entities to this one.
    pub referenced_by: Vec<RelationView>,
    /// Live knowledge whose title or content names it (at most 20).
    pub knowledge: Vec<EntryRow>,
    /// Every other entity, for the merge form, by name.
    pub others: Vec<(String, String)>,
}

/// Loads one entity.
pub fn detail(store: &Store, id: &str) -> Result<EntityDetail, ApiError> {
    let all = store.all_entities()?;
    let names: HashMap<&str, &str> = all
        .iter()
        .map(|e| (e.id.as_str(), e.canonical_name.as_str()))
        .collect();
    let entity = all.iter().find(|e| e.id == id).ok_or_else(|| {
        ApiError::not_found(format!(
            "no entity has the id `{id}`; list them with GET /api/v1/entities"
        ))
    })?;
    let referenced_by = all
        .iter()
        .flat_map(|other| {
            other
                .relations
                .iter()
                .filter(|r| r.other == entity.id)
                .map(|r| RelationView {
                    other: other.id.clone(),
                    other_name: other.canonical_name.clone(),
                    relation: r.relation.clone(),
                })
        })
        .collect();
    let mut terms: Vec<String> = vec![entity.canonical_name.to_lowercase()];
    terms.extend(entity.aliases.iter().map(|a| a.value.to_lowercase()));
    terms.retain(|t| t.chars().count() >= 3);
    let knowledge = store
        .all_knowledge()?
        .iter()
        .filter(|k| !k.deleted)
        .filter(|k| {
            let text = format!("{} {}", k.title, k.content).to_lowercase();
            terms.iter().any(|t| text.contains(t.as_str()))
        })
        .take(20)
        .map(EntryRow::from)
        .collect();
    let mut others: Vec<(String, String)> = all
        .iter()
        .filter(|e| e.id != entity.id)
        .map(|e| (e.id.clone(), e.canonical_name.clone()))
        .collect();
    others.sort_by_key(|(_, name)| name.to_lowercase());
    Ok(EntityDetail {
        entity: row(entity, &names),
        referenced_by,
        knowledge,
        others,
    })
}

/// The body of `POST /api/v1/entities/merge`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MergeBody {
    /// The entity merged away.
    pub from: String,
    /// The entity that stays.
    pub into: String,
}

/// Merges two entities.
pub fn merge(store: &Store, body: &MergeBody) -> Result<Merged, ApiError> {
    Ok(merge_entities(store, body.from.trim(), body.into.trim())?)
}
