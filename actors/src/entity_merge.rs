//! Merging two entities the curator kept apart (the user knows `billing` and `billing-api` are
//! one service): the survivor takes the other's name and aliases as aliases, its relations and
//! description when it has none; every relation pointing at the merged entity points at the
//! survivor; the merged entity is deleted. Pure rules over [`Store`]; the caller sends the
//! returned documents to the index.

use lore_storage::memory::{Alias, Entity, Relation};
use lore_storage::{IndexDoc, Store, now_ms};

use crate::documents::entity_doc;
use crate::error::ActorError;

/// What a merge did.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The survivor, as stored now.
    pub into: Entity,
    /// Id of the entity that was merged and deleted.
    pub removed: String,
    /// Other entities whose relations were repointed.
    pub repointed: usize,
    /// Documents to index (the survivor and the repointed entities).
    pub docs: Vec<IndexDoc>,
    /// Document id to remove (the merged entity).
    pub removed_doc: String,
}

fn add_alias(entity: &mut Entity, alias: Alias) {
    let duplicate = alias.value.eq_ignore_ascii_case(&entity.canonical_name)
        || entity
            .aliases
            .iter()
            .any(|a| a.value.eq_ignore_ascii_case(&alias.value));
    if !duplicate && !alias.value.trim().is_empty() {
        entity.aliases.push(alias);
    }
}

fn add_relation(entity: &mut Entity, relation: Relation) {
    if relation.other != entity.id && !entity.relations.contains(&relation) {
        entity.relations.push(relation);
    }
}

/// Merges the entity `from` into `into`.
pub fn merge_entities(store: &Store, from: &str, into: &str) -> Result<Merged, ActorError> {
    if from == into {
        return Err(ActorError::Invalid(
            "an entity cannot be merged into itself; pick two different entities".into(),
        ));
    }
    let missing = |id: &str| {
        ActorError::NotFound(format!(
            "no entity has the id `{id}`; list them with GET /api/v1/entities"
        ))
    };
    let source = store.entity(from)?.ok_or_else(|| missing(from))?;
    let mut target = store.entity(into)?.ok_or_else(|| missing(into))?;
    add_alias(
        &mut target,
        Alias {
            kind: "name".into(),
            value: source.canonical_name.clone(),
        },
    );
    for alias in source.aliases.iter().cloned() {
        add_alias(&mut target, alias);
    }
    for relation in source.relations.iter().cloned() {
        add_relation(&mut target, relation);
    }
    target.relations.retain(|r| r.other != source.id);
    if target.description.trim().is_empty() {
        target.description = source.description.clone();
    }
    target.updated_at_ms = now_ms();
    let mut changed = vec![target.clone()];
    for mut other in store.all_entities()? {
        if other.id == source.id || other.id == target.id {
            continue;
        }
        if !other.relations.iter().any(|r| r.other == source.id) {
            continue;
        }
        let relations = std::mem::take(&mut other.relations);
        for mut relation in relations {
            if relation.other == source.id {
                relation.other = target.id.clone();
            }
            add_relation(&mut other, relation);
        }
        other.updated_at_ms = now_ms();
        changed.push(other);
    }
    store.save_entities(&changed)?;
    store.delete_entity(&source.id)?;
    Ok(Merged {
        docs: changed.iter().map(entity_doc).collect(),
        repointed: changed.len() - 1,
        into: target,
        removed_doc: source.doc_id(),
        removed: source.id,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn entity(id: &str, name: &str, relations: &[(&str, &str)]) -> Entity {
        Entity {
            id: id.into(),
            project: None,
            entity_type: "service".into(),
            canonical_name: name.into(),
            aliases: vec![],
            description: String::new(),
            relations: relations
                .iter()
                .map(|(other, relation)| Relation {
                    other: other.to_string(),
                    relation: relation.to_string(),
                })
                .collect(),
            updated_at_ms: 0,
        }
    }

    #[test]
    fn a_merge_moves_names_and_repoints_relations() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut billing = entity("b", "billing", &[("db", "uses")]);
        billing.description = "charges customers".into();
        billing.aliases.push(Alias {
            kind: "name".into(),
            value: "billing-svc".into(),
        });
        store
            .save_entities(&[
                entity("api", "billing-api", &[("b", "same as")]),
                billing,
                entity("db", "postgres", &[]),
                entity("alice", "Alice", &[("b", "owns")]),
            ])
            .unwrap();
        let merged = merge_entities(&store, "b", "api").unwrap();
        let names: Vec<&str> = merged
            .into
            .aliases
            .iter()
            .map(|a| a.value.as_str())
            .collect();
        assert_eq!(names, ["billing", "billing-svc"]);
        assert_eq!(merged.into.description, "charges customers");
        assert_eq!(merged.into.relations.len(), 1, "no relation to itself");
        assert_eq!(merged.into.relations[0].other, "db");
        assert_eq!(merged.repointed, 1);
        let alice = store.entity("alice").unwrap().unwrap();
        assert_eq!(alice.relations[0].other, "api");
        assert!(store.entity("b").unwrap().is_none());
        assert_eq!(merged.removed_doc, "e:b");
        assert!(matches!(
            merge_entities(&store, "api", "api"),
            Err(ActorError::Invalid(_))
        ));
        assert!(matches!(
            merge_entities(&store, "b", "api"),
            Err(ActorError::NotFound(_))
        ));
    }
}
