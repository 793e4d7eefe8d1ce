//! The entity graph: people, services, tools and the like, with aliases and relations.

use super::records::Entity;
use crate::error::StorageError;
use crate::records::{decode, encode};
use crate::store::Store;

pub(crate) const ENTITIES: &str = "entities";

impl Store {
    /// Writes an entity.
    pub fn save_entity(&self, entity: &Entity) -> Result<(), StorageError> {
        self.tree(ENTITIES)?
            .insert(entity.id.as_bytes(), encode("entity", entity)?)?;
        Ok(())
    }

    /// One entity.
    pub fn entity(&self, id: &str) -> Result<Option<Entity>, StorageError> {
        self.tree(ENTITIES)?
            .get(id.as_bytes())?
            .map(|raw| decode("entity", &raw))
            .transpose()
    }

    /// Every entity.
    pub fn all_entities(&self) -> Result<Vec<Entity>, StorageError> {
        let mut out = Vec::new();
        for item in self.tree(ENTITIES)?.iter() {
            let (_, raw) = item?;
            out.push(decode("entity", &raw)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::memory::Alias;

    #[test]
    fn entities_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let entity = Entity {
            id: "e1".into(),
            project: None,
            entity_type: "service".into(),
            canonical_name: "billing-api".into(),
            aliases: vec![Alias {
                kind: "name".into(),
                value: "billing".into(),
            }],
            description: "charges customers".into(),
            relations: Vec::new(),
            updated_at_ms: 3,
        };
        store.save_entity(&entity).unwrap();
        assert_eq!(store.entity("e1").unwrap(), Some(entity.clone()));
        assert_eq!(store.all_entities().unwrap(), vec![entity]);
    }
}
