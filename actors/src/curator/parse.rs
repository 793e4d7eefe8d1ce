//! Reading the curator's reply: JSON that may arrive in a code fence, after prose, with
//! trailing commas or cut off at the output limit is repaired where the intent is unambiguous,
//! then each operation is checked on its own. A reply that cannot be read at all is rejected as
//! a whole; an operation that is malformed is skipped and counted. Pure.

use lore_storage::memory::Category;
use serde_json::Value;

/// One knowledge operation the curator asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// A new entry (or an update of its near-duplicate).
    Create {
        /// Category.
        category: Category,
        /// Title.
        title: String,
        /// Content.
        content: String,
        /// True when it holds in every project.
        cross_project: bool,
        /// 0–1.
        confidence: f32,
    },
    /// A full rewrite of an entry.
    Update {
        /// Entry id.
        id: String,
        /// New content.
        content: Option<String>,
        /// New title.
        title: Option<String>,
        /// New confidence.
        confidence: Option<f32>,
    },
    /// Forget an entry.
    Delete {
        /// Entry id.
        id: String,
    },
}

/// An entity the curator named.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityOp {
    /// person, org, service, tool, repo or infra.
    pub entity_type: String,
    /// The name it is known by.
    pub canonical_name: String,
    /// `(kind, value)` aliases.
    pub aliases: Vec<(String, String)>,
    /// What it is.
    pub description: String,
}

/// A relation between two named entities.
#[derive(Debug, Clone, PartialEq)]
pub struct RelationOp {
    /// Canonical name of one side.
    pub a: String,
    /// Canonical name of the other.
    pub b: String,
    /// What they are to each other.
    pub relation: String,
}

/// Everything read from one reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CuratorReply {
    /// Knowledge operations, in order.
    pub ops: Vec<Op>,
    /// Entities.
    pub entities: Vec<EntityOp>,
    /// Relations.
    pub relations: Vec<RelationOp>,
    /// Items that were skipped, with why.
    pub skipped: Vec<String>,
}

/// Reads a reply; `Err` says why it could not be read at all.
pub fn parse_reply(text: &str) -> Result<CuratorReply, String> {
    let (value, cut) = parse_lenient(text)?;
    let (mut ops, mut entities, mut relations) = match value {
        Value::Array(ops) => (ops, Vec::new(), Vec::new()),
        Value::Object(mut object) => {
            let mut take = |key: &str| match object.remove(key) {
                Some(Value::Array(items)) => items,
                _ => Vec::new(),
            };
            (take("ops"), take("entities"), take("relations"))
        }
        other => {
            return Err(format!(
                "expected a JSON array of operations or an object with `ops`, got {}",
                kind_of(&other)
            ));
        }
    };
    let mut reply = CuratorReply::default();
    if cut {
        // The item being written when the reply was cut off may be incomplete: drop it.
        let last = ["\"ops\"", "\"entities\"", "\"relations\""]
            .iter()
            .enumerate()
            .filter_map(|(i, key)| text.rfind(key).map(|at| (at, i)))
            .max()
            .map_or(0, |(_, i)| i);
        let dropped = match last {
            1 => entities.pop(),
            2 => relations.pop(),
            _ => ops.pop(),
        };
        if dropped.is_some() {
            reply
                .skipped
                .push("the last item was cut off at the output limit".into());
        }
    }
    for (i, op) in ops.iter().enumerate() {
        match read_op(op) {
            Ok(op) => reply.ops.push(op),
            Err(why) => reply.skipped.push(format!("operation {}: {why}", i + 1)),
        }
    }
    for (i, entity) in entities.iter().enumerate() {
        match read_entity(entity) {
            Ok(entity) => reply.entities.push(entity),
            Err(why) => reply.skipped.push(format!("entity {}: {why}", i + 1)),
        }
    }
    for relation in &relations {
        let field = |key: &str| str_field(relation, key).filter(|v| !v.is_empty());
        match (field("entity_a"), field("entity_b"), field("relation")) {
            (Some(a), Some(b), Some(relation)) => {
                reply.relations.push(RelationOp { a, b, relation })
            }
            _ => reply
                .skipped
                .push("a relation without entity_a, entity_b and relation".into()),
        }
    }
    Ok(reply)
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn str_field(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(|s| s.trim().to_string())
}

fn confidence(value: &Value) -> Option<f32> {
    value
        .get("confidence")
        .and_then(Value::as_f64)
        .map(|c| c.clamp(0.0, 1.0) as f32)
}

fn read_op(op: &Value) -> Result<Op, String> {
    let kind = str_field(op, "op").ok_or("no `op`")?;
    let nonempty = |key: &str| str_field(op, key).filter(|v| !v.is_empty());
    match kind.to_ascii_lowercase().as_str() {
        "create" => {
            let category = str_field(op, "category").ok_or("no `category`")?;
            let category = Category::parse(&category)
                .ok_or_else(|| format!("unknown category `{category}`"))?;
            let cross_project = op
                .get("crossProject")
                .or_else(|| op.get("cross_project"))
                .and_then(Value::as_bool)
                .unwrap_or(false)
                || str_field(op, "scope").is_some_and(|s| s == "global");
            Ok(Op::Create {
                category,
                title: nonempty("title").ok_or("no `title`")?,
                content: nonempty("content").ok_or("no `content`")?,
                cross_project,
                confidence: confidence(op).unwrap_or(0.8),
            })
        }
        "update" => Ok(Op::Update {
            id: nonempty("id").ok_or("no `id`")?,
            content: nonempty("content"),
            title: nonempty("title"),
            confidence: confidence(op),
        }),
        "delete" => Ok(Op::Delete {
            id: nonempty("id").ok_or("no `id`")?,
        }),
        other => Err(format!("unknown op `{other}`")),
    }
}

fn read_entity(entity: &Value) -> Result<EntityOp, String> {
    let canonical_name = str_field(entity, "canonical_name")
        .filter(|v| !v.is_empty())
        .ok_or("no `canonical_name`")?;
    let aliases = entity
        .get("aliases")
        .and_then(Value::as_array)
        .map(|aliases| {
            aliases
                .iter()
                .filter_map(|alias| match alias {
                    Value::String(value) => Some(("name".to_string(), value.trim().to_string())),
                    _ => Some((
                        str_field(alias, "type").unwrap_or_else(|| "name".into()),
                        str_field(alias, "value")?,
                    )),
                })
                .filter(|(_, value)| !value.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let description = entity
        .get("metadata")
        .and_then(|m| str_field(m, "description"))
        .or_else(|| str_field(entity, "description"))
        .unwrap_or_default();
    Ok(EntityOp {
        entity_type: str_field(entity, "type").unwrap_or_else(|| "tool".into()),
        canonical_name,
        aliases,
        description,
    })
}

/// True for the shapes a curator reply may have: an object with operations, entities or
/// relations, or an array of operation objects.
fn is_reply_shape(value: &Value) -> bool {
    match value {
        Value::Object(object) => ["ops", "entities", "relations"]
            .iter()
            .any(|key| object.contains_key(*key)),
        Value::Array(items) => items.iter().all(Value::is_object),
        _ => false,
    }
}

/// True when `text` opens an object whose first key is `ops`, `entities` or `relations`, or an
/// array whose first item is an object.
fn looks_like_reply(text: &str) -> bool {
    let rest = text[1..].trim_start();
    if text.starts_with('[') {
        return rest.starts_with('{') || rest.starts_with(']');
    }
    ["\"ops\"", "\"entities\"", "\"relations\""]
        .iter()
        .any(|key| rest.starts_with(key))
}

/// Parses the reply's JSON, repairing what models commonly get wrong: prose or a fence around
/// it (each `[` or `{` is tried until one starts a value of the reply's shape), trailing commas,
/// a reply cut off at the output limit. The flag says whether it was cut off.
pub fn parse_lenient(text: &str) -> Result<(Value, bool), String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the reply was empty".into());
    }
    let starts: Vec<usize> = text.match_indices(['[', '{']).map(|(i, _)| i).collect();
    if starts.is_empty() {
        return Err("the reply holds no JSON array or object".into());
    }
    for &start in &starts {
        let body = &text[start..];
        // One complete value; prose or a closing fence after it is ignored.
        let mut stream = serde_json::Deserializer::from_str(body).into_iter::<Value>();
        if let Some(Ok(value)) = stream.next()
            && is_reply_shape(&value)
        {
            return Ok((value, false));
        }
        // The reply's JSON starts here but does not parse: repair it, and never read a value
        // nested inside it as the reply.
        if looks_like_reply(body) {
            let (repaired, cut) = repair(body);
            return match serde_json::from_str::<Value>(&repaired) {
                Ok(value) if is_reply_shape(&value) => Ok((value, cut)),
                Ok(_) => Err("the reply's JSON has neither `ops` nor operations".into()),
                Err(err) => Err(format!(
                    "the reply is not valid JSON even after repair: {err}"
                )),
            };
        }
    }
    Err("no JSON array of operations or object with `ops` could be read, even after repair".into())
}

/// Drops trailing commas and closes strings, arrays and objects left open by a cut-off reply;
/// stops at the end of the first complete value. The flag says whether the text was cut off.
fn repair(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len() + 8);
    let mut stack = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '[' | '{' => {
                stack.push(if c == '[' { ']' } else { '}' });
                out.push(c);
            }
            ']' | '}' => {
                trim_trailing_comma(&mut out);
                stack.pop();
                out.push(c);
                if stack.is_empty() {
                    return (out, false);
                }
            }
            _ => out.push(c),
        }
    }
    if in_string {
        out.push('"');
    }
    trim_trailing_comma(&mut out);
    // A cut inside `"key": ` or after `"key"` cannot be completed; drop the dangling member.
    let trimmed = out.trim_end();
    if trimmed.ends_with(':')
        && let Some(cut) = trimmed.rfind([',', '{'])
    {
        let keep = if trimmed.as_bytes().get(cut) == Some(&b'{') {
            cut + 1
        } else {
            cut
        };
        out.truncate(keep);
    }
    while let Some(close) = stack.pop() {
        trim_trailing_comma(&mut out);
        out.push(close);
    }
    (out, true)
}

fn trim_trailing_comma(out: &mut String) {
    let trimmed_len = out.trim_end().len();
    if out[..trimmed_len].ends_with(',') {
        out.truncate(trimmed_len - 1);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn fenced_json_after_prose_is_read() {
        let reply = "Here you go:\n```json\n[{\"op\":\"create\",\"category\":\"preference\",\"title\":\"Test runner\",\"content\":\"Use pytest\",\"confidence\":0.9}]\n```\nDone.";
        let parsed = parse_reply(reply).unwrap();
        assert_eq!(
            parsed.ops,
            vec![Op::Create {
                category: Category::Preference,
                title: "Test runner".into(),
                content: "Use pytest".into(),
                cross_project: false,
                confidence: 0.9,
            }]
        );
    }

    #[test]
    fn trailing_commas_and_a_cut_off_reply_are_repaired() {
        let trailing =
            r#"{"ops": [{"op": "delete", "id": "k1", "reason": "stale"},], "entities": [],}"#;
        let parsed = parse_reply(trailing).unwrap();
        assert_eq!(parsed.ops, vec![Op::Delete { id: "k1".into() }]);
        assert!(parsed.skipped.is_empty());
        // Cut inside an entity: the complete operation stays, the cut entity is dropped.
        let cut = r#"{"ops": [{"op": "delete", "id": "k1", "reason": "stale"}], "entities": [{"type": "service", "canonical_name": "billing-api"}, {"type": "service", "canonical_name": "ledger", "aliases": [{"type": "name", "value": "led"#;
        let parsed = parse_reply(cut).unwrap();
        assert_eq!(parsed.ops, vec![Op::Delete { id: "k1".into() }]);
        assert_eq!(parsed.entities.len(), 1);
        assert_eq!(parsed.entities[0].canonical_name, "billing-api");
        // Cut inside an update: its truncated text is never applied.
        let cut_in_key = r#"[{"op":"delete","id":"k9"},{"op":"update","id":"k2","content":"new te"#;
        let parsed = parse_reply(cut_in_key).unwrap();
        assert_eq!(parsed.ops, vec![Op::Delete { id: "k9".into() }]);
        assert_eq!(parsed.skipped.len(), 1);
    }

    #[test]
    fn prose_brackets_before_the_json_are_not_taken_for_it() {
        let reply = "As noted in [1], here is the result:\n{\"ops\": [{\"op\": \"delete\", \"id\": \"k3\"}]}";
        assert_eq!(
            parse_reply(reply).unwrap().ops,
            vec![Op::Delete { id: "k3".into() }]
        );
        assert!(parse_reply("See [1] and [2].").is_err());
    }

    #[test]
    fn unreadable_replies_are_rejected_and_bad_ops_skipped() {
        assert!(parse_reply("").unwrap_err().contains("empty"));
        assert!(
            parse_reply("I could not find anything.")
                .unwrap_err()
                .contains("no JSON")
        );
        assert!(parse_reply("\"just a string\"").is_err());
        let parsed = parse_reply(r#"[{"op":"create","category":"rumour","title":"x","content":"y"},{"op":"explode"},{"op":"delete","id":"k9"}]"#).unwrap();
        assert_eq!(parsed.ops, vec![Op::Delete { id: "k9".into() }]);
        assert_eq!(parsed.skipped.len(), 2, "{:?}", parsed.skipped);
        assert!(parsed.skipped[0].contains("rumour"));
    }

    #[test]
    fn scope_global_means_cross_project() {
        let parsed = parse_reply(r#"[{"op":"create","category":"preferences","title":"Tabs","content":"Indent with tabs","scope":"global"}]"#).unwrap();
        assert!(
            matches!(parsed.ops[0], Op::Create { cross_project: true, confidence, .. } if (confidence - 0.8).abs() < 1e-6)
        );
    }
}
