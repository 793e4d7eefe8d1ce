//! Owns the building blocks of the lossless wire types: [`Tolerant`] (known shape or verbatim
//! JSON), [`Field`] (absent / null / value, so explicit nulls survive a round trip) and [`Extra`]
//! (unknown fields kept through `#[serde(flatten)]`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Unknown fields of a wire struct, kept verbatim.
pub type Extra = serde_json::Map<String, Value>;

/// A value of a known shape, or the JSON kept verbatim when it does not fit (unknown block,
/// item or event types): nothing is ever dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Tolerant<T> {
    /// The value matched the known shape.
    Known(T),
    /// The value did not match; kept as received.
    Unknown(Value),
}

impl<T> Tolerant<T> {
    /// The known value, if the shape matched.
    pub fn known(&self) -> Option<&T> {
        match self {
            Tolerant::Known(t) => Some(t),
            Tolerant::Unknown(_) => None,
        }
    }
}

/// An optional field that distinguishes "absent" from an explicit `null`, so both survive a
/// round trip. Use with `#[serde(default, skip_serializing_if = "Field::is_absent")]`.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Field<T> {
    /// The key was not present.
    #[default]
    Absent,
    /// The key was present with `null`.
    Null,
    /// The key was present with a value.
    Value(T),
}

impl<T> Field<T> {
    /// True when the key was not present.
    pub fn is_absent(&self) -> bool {
        matches!(self, Field::Absent)
    }

    /// The value, if present and not null.
    pub fn as_option(&self) -> Option<&T> {
        match self {
            Field::Value(v) => Some(v),
            _ => None,
        }
    }
}

impl<T> From<Option<T>> for Field<T> {
    fn from(value: Option<T>) -> Self {
        value.map_or(Field::Absent, Field::Value)
    }
}

impl<T: Serialize> Serialize for Field<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Field::Value(v) => v.serialize(serializer),
            Field::Absent | Field::Null => serializer.serialize_none(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(deserializer)?.map_or(Field::Null, Field::Value))
    }
}

#[cfg(test)]
pub(crate) mod testgen {
    //! Proptest strategies shared by the wire round-trip tests.
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    /// Arbitrary JSON values (no floats, to keep equality exact).
    pub fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            "[a-z \\n\"é]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map("[a-z]{1,4}", inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Extra fields whose names cannot collide with known fields.
    pub fn extra() -> impl Strategy<Value = Map<String, Value>> {
        prop::collection::btree_map("x_[a-z]{1,5}", json_value(), 0..3)
            .prop_map(|m| m.into_iter().collect())
    }

    /// Splits `s` at arbitrary char boundaries chosen by `cuts`.
    pub fn split_text(s: &str, cuts: &[prop::sample::Index]) -> Vec<String> {
        let bounds: Vec<usize> = (0..=s.len()).filter(|&i| s.is_char_boundary(i)).collect();
        let mut points: Vec<usize> = cuts.iter().map(|c| bounds[c.index(bounds.len())]).collect();
        points.push(0);
        points.push(s.len());
        points.sort_unstable();
        points.dedup();
        points
            .windows(2)
            .map(|w| s[w[0]..w[1]].to_owned())
            .collect()
    }

    /// Decodes an encoded SSE stream delivered in chunks cut at arbitrary byte offsets.
    pub fn decode_chunked(text: &str, cuts: &[prop::sample::Index]) -> Vec<crate::sse::SseEvent> {
        let bytes = text.as_bytes();
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        points.push(0);
        points.push(bytes.len());
        points.sort_unstable();
        let mut decoder = crate::sse::SseDecoder::new();
        let mut out = Vec::new();
        for w in points.windows(2) {
            out.extend(decoder.push(&bytes[w[0]..w[1]]));
        }
        out.extend(decoder.finish());
        out
    }

    /// Decodes a whole encoded SSE stream.
    pub fn decode_all_events(text: &str) -> Vec<crate::sse::SseEvent> {
        decode_chunked(text, &[])
    }

    /// Arbitrary text, including multi-byte characters and JSON-significant ones.
    pub fn text() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9 \\n\"{}:é漢🙂]{0,24}"
    }

    /// Arbitrary compact JSON object text, used as tool arguments.
    pub fn arguments() -> impl Strategy<Value = String> {
        prop::collection::btree_map("[a-z]{1,4}", json_value(), 0..4).prop_map(|m| {
            serde_json::to_string(&Value::Object(m.into_iter().collect())).unwrap_or_default()
        })
    }

    /// Merges extra fields into an object value.
    pub fn with_extra(mut v: Value, extra: Map<String, Value>) -> Value {
        if let Value::Object(obj) = &mut v {
            obj.extend(extra);
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct S {
        #[serde(default, skip_serializing_if = "Field::is_absent")]
        f: Field<u64>,
        #[serde(flatten)]
        extra: Extra,
    }

    #[test]
    fn field_keeps_absent_null_and_value() {
        for text in [r#"{}"#, r#"{"f":null}"#, r#"{"f":3,"z":[1]}"#] {
            let v: Value = serde_json::from_str(text).unwrap();
            let s: S = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&s).unwrap(), v);
            let t: Tolerant<S> = serde_json::from_value(v.clone()).unwrap();
            assert!(t.known().is_some());
            assert_eq!(serde_json::to_value(&t).unwrap(), v);
        }
    }

    #[test]
    fn tolerant_keeps_mismatches() {
        let v = serde_json::json!({"f": "not a number"});
        let t: Tolerant<S> = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(t, Tolerant::Unknown(v.clone()));
        assert_eq!(serde_json::to_value(&t).unwrap(), v);
    }
}
