//! How vector records are encoded: the kind codes of the in-memory copy and the f32 vector as
//! one binary value.

use crate::index::DocKind;

/// The one-byte code of a kind in the in-memory copy.
pub(super) fn kind_code(kind: DocKind) -> u8 {
    match kind {
        DocKind::Message => 0,
        DocKind::Distillation => 1,
        DocKind::Knowledge => 2,
        DocKind::Entity => 3,
    }
}

/// The kind of a stored kind name.
pub(super) fn parse_kind(name: &str) -> Option<DocKind> {
    [
        DocKind::Message,
        DocKind::Distillation,
        DocKind::Knowledge,
        DocKind::Entity,
    ]
    .into_iter()
    .find(|kind| kind.as_str() == name)
}

/// A `Vec<f32>` as one MessagePack binary of little-endian floats (4 bytes a value).
pub(super) mod f32_bytes {
    use serde::de::{Error, SeqAccess, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(values: &[f32], serializer: S) -> Result<S::Ok, S::Error> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        serializer.serialize_bytes(&bytes)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<f32>, D::Error> {
        deserializer.deserialize_bytes(FloatsVisitor)
    }

    struct FloatsVisitor;

    impl<'de> Visitor<'de> for FloatsVisitor {
        type Value = Vec<f32>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("little-endian f32 bytes")
        }

        fn visit_bytes<E: Error>(self, bytes: &[u8]) -> Result<Vec<f32>, E> {
            if !bytes.len().is_multiple_of(4) {
                return Err(E::custom("vector bytes are not a multiple of 4"));
            }
            Ok(bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect())
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<f32>, A::Error> {
            let mut values = Vec::new();
            while let Some(value) = seq.next_element::<f32>()? {
                values.push(value);
            }
            Ok(values)
        }
    }
}
