//! Owns the borrowed JSON model of the hot-path request parsers: strings borrow from the body
//! when they have no escapes, objects are plain field lists (no hashing), tool `input` is kept as
//! raw JSON text, and any node can be turned back into a `serde_json::Value` when kept verbatim.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::canonical::Part;
use crate::error::ProtoError;

/// A string borrowed from the body when it has no escapes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Str<'a>(pub Cow<'a, str>);

impl Str<'_> {
    pub(crate) fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(V)
    }
}

/// A borrowed JSON value.
#[derive(Debug)]
pub(crate) enum Fast<'a> {
    Str(Cow<'a, str>),
    List(Vec<Fast<'a>>),
    Obj(Node<'a>),
    /// Raw JSON text (tool `input`), kept unparsed.
    Raw(&'a RawValue),
    /// null, booleans and numbers.
    Scalar(Value),
}

/// A borrowed JSON object: its fields in order.
#[derive(Debug, Default)]
pub(crate) struct Node<'a> {
    fields: Vec<(Cow<'a, str>, Fast<'a>)>,
}

struct FastVisitor;

impl<'de> Visitor<'de> for FastVisitor {
    type Value = Fast<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any json value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Fast::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Fast::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Fast::Str(Cow::Owned(v)))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Fast::Scalar(Value::Bool(v)))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Fast::Scalar(Value::from(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Fast::Scalar(Value::from(v)))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Fast::Scalar(Value::from(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Fast::Scalar(Value::Null))
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Fast::Scalar(Value::Null))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4));
        while let Some(item) = seq.next_element::<Fast<'de>>()? {
            items.push(item);
        }
        Ok(Fast::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Vec::with_capacity(map.size_hint().unwrap_or(6));
        while let Some(Str(key)) = map.next_key::<Str<'de>>()? {
            let value = if key == "input" {
                Fast::Raw(map.next_value::<&'de RawValue>()?)
            } else {
                map.next_value::<Fast<'de>>()?
            };
            fields.push((key, value));
        }
        Ok(Fast::Obj(Node { fields }))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Fast<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FastVisitor)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Node<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match deserializer.deserialize_map(FastVisitor)? {
            Fast::Obj(node) => Ok(node),
            _ => Err(de::Error::custom("expected an object")),
        }
    }
}

impl<'a> Fast<'a> {
    /// The string, if this is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Fast::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The owned string, if this is one.
    pub(crate) fn into_string(self) -> Option<String> {
        match self {
            Fast::Str(s) => Some(s.into_owned()),
            _ => None,
        }
    }

    /// The string, or the `text` of text-like blocks (no type, or a type ending in `text`)
    /// joined with `"\n"`.
    pub(crate) fn joined_text(self) -> String {
        match self {
            Fast::Str(s) => s.into_owned(),
            Fast::List(items) => {
                let texts: Vec<Cow<'a, str>> = items
                    .into_iter()
                    .filter_map(|item| match item {
                        Fast::Obj(mut node) => {
                            let is_text = node.str("type").is_none_or(|k| k.ends_with("text"));
                            match node.take("text") {
                                Some(Fast::Str(text)) if is_text => Some(text),
                                _ => None,
                            }
                        }
                        _ => None,
                    })
                    .collect();
                texts.join("\n")
            }
            _ => String::new(),
        }
    }

    /// The value as a `serde_json::Value`.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Fast::Str(s) => Value::String(s.into_owned()),
            Fast::List(items) => Value::Array(items.into_iter().map(Fast::into_value).collect()),
            Fast::Obj(node) => node.into_value(),
            Fast::Raw(raw) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
            Fast::Scalar(v) => v,
        }
    }
}

impl<'a> Node<'a> {
    /// The value of a field.
    pub(crate) fn get(&self, key: &str) -> Option<&Fast<'a>> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The string value of a field.
    pub(crate) fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Fast::as_str)
    }

    /// Moves a field's value out (the field is then gone).
    pub(crate) fn take(&mut self, key: &str) -> Option<Fast<'a>> {
        let pos = self.fields.iter().position(|(k, _)| k == key)?;
        Some(self.fields.swap_remove(pos).1)
    }

    /// Moves a string field out as an owned string.
    pub(crate) fn take_string(&mut self, key: &str) -> Option<String> {
        self.take(key).and_then(Fast::into_string)
    }

    /// The object as a `serde_json::Value`.
    pub(crate) fn into_value(self) -> Value {
        Value::Object(
            self.fields
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.into_value()))
                .collect(),
        )
    }

    /// The whole object kept verbatim as a [`Part::Other`].
    pub(crate) fn into_other(self) -> Part {
        let kind = self.str("type").unwrap_or("unknown").to_owned();
        Part::Other {
            kind,
            raw: self.into_value(),
        }
    }
}

/// Reads a message's content: absent, null, a string or an array; anything else is an error.
pub(crate) fn content_of<'a>(node: &mut Node<'a>) -> Result<Option<Fast<'a>>, ProtoError> {
    match node.take("content") {
        None | Some(Fast::Scalar(Value::Null)) => Ok(None),
        Some(c @ (Fast::Str(_) | Fast::List(_))) => Ok(Some(c)),
        Some(_) => Err(ProtoError::InvalidShape(
            "message content is neither a string nor an array".into(),
        )),
    }
}

/// Reads a message's role, which must be a string.
pub(crate) fn role_of<'n>(node: &'n Node<'_>) -> Result<&'n str, ProtoError> {
    node.str("role")
        .ok_or_else(|| ProtoError::InvalidShape("message has no role".into()))
}

/// A count of array elements that ignores their content.
pub(crate) type Ignored = Vec<de::IgnoredAny>;

/// Validates UTF-8 once for the whole body (faster than per string while parsing).
pub(crate) fn utf8(body: &[u8]) -> Result<&str, ProtoError> {
    std::str::from_utf8(body)
        .map_err(|e| ProtoError::InvalidShape(format!("request body is not utf-8: {e}")))
}

/// Rejects bodies that are not a JSON object (typed structs would also accept arrays).
pub(crate) fn ensure_object(body: &[u8]) -> Result<(), ProtoError> {
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => Ok(()),
        _ => Err(ProtoError::InvalidShape(
            "request body is not a json object".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_to_value() {
        let v =
            json!({"a": "x\"y", "input": {"k": [1, 2.5, null]}, "b": [true, {"c": "d"}], "n": -3});
        let text = v.to_string();
        let fast: Fast<'_> = serde_json::from_str(&text).unwrap();
        assert_eq!(fast.into_value(), v);
    }

    #[test]
    fn joins_text_blocks() {
        let text = json!([{"type": "text", "text": "a"}, {"type": "image"}, {"text": "b"}, {"type": "input_text", "text": "c"}]).to_string();
        let fast: Fast<'_> = serde_json::from_str(&text).unwrap();
        assert_eq!(fast.joined_text(), "a\nb\nc");
    }
}
