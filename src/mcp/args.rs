//! Tool arguments: the JSON shapes the model sends, their input schemas, and the strict parsing
//! that names every unknown field instead of dropping it.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// What `write_card` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Create a new card; refuses a key that already exists.
    Create,
    /// Append one dated line to the recent section of an existing card.
    UpdateRecent,
}

/// Extra conditions checked after a keyword hit.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecondaryArgs {
    /// Every one of these words must also appear in the recent conversation.
    #[serde(default)]
    pub all: Vec<String>,
    /// At least one of these words must also appear.
    #[serde(default)]
    pub any: Vec<String>,
    /// The card does not fire when one of these words appears in the message that hit.
    #[serde(default)]
    pub not: Vec<String>,
}

/// Arguments of `write_card`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteCardArgs {
    /// "create" for a new card, "update_recent" to append a dated line to an existing card's
    /// recent section.
    pub mode: Mode,
    /// Card kind: people, event, place, thing, slang or entry. Required for create.
    #[serde(default)]
    pub kind: Option<String>,
    /// Card key = file name without .md, e.g. "Alice" or "the Friday deploy". No / \ or "..".
    pub key: String,
    /// Display title (create only; defaults to the key). The title also triggers the card.
    #[serde(default)]
    pub title: Option<String>,
    /// Create only, required: the specific names that make the card fire when they appear in
    /// the conversation (people's names, project names, nicknames). Avoid generic words.
    #[serde(default)]
    pub keywords: Option<Vec<String>>,
    /// Create only: other names for the same thing; they fire like keywords.
    #[serde(default)]
    pub aliases: Option<Vec<String>>,
    /// Create only: keys of related cards (one "see also" line each).
    #[serde(default)]
    pub refs: Option<Vec<String>>,
    /// Create only: extra conditions after a keyword hit.
    #[serde(default)]
    pub secondary: Option<SecondaryArgs>,
    /// Create only: tie-breaker when many cards fire; higher first (default 0).
    #[serde(default)]
    pub priority: Option<f64>,
    /// Create only: how many recent turns are scanned for the keywords (0-10, default 3).
    #[serde(default)]
    #[schemars(range(max = 10))]
    pub scan_depth: Option<u8>,
    /// Create only: section name -> text, for kinds with sections (people: who, stance,
    /// recent, impression; event: when, who, what, stance, followup; place: where, relation,
    /// recent; thing: what, usage, recent; slang: meaning, origin, usage). Use either
    /// sections or body.
    #[serde(default)]
    pub sections: Option<BTreeMap<String, String>>,
    /// Create only: the card text as Markdown (the only way to write an entry card).
    #[serde(default)]
    pub body: Option<String>,
    /// update_recent only, required: one short line about what just happened; it is dated and
    /// appended, the oldest lines are dropped to keep the section under 600 characters.
    #[serde(default)]
    pub recent: Option<String>,
    /// update_recent only: the mtime read_card returned. If the card changed since, nothing is
    /// written and you must read it again.
    #[serde(default)]
    pub expected_mtime: Option<String>,
}

/// Arguments of `read_card`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadCardArgs {
    /// The card key (file name without .md), as list_cards shows it.
    pub key: String,
}

/// Arguments of `list_cards`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListCardsArgs {
    /// Only cards of this kind (people, event, place, thing, slang, entry); all when absent.
    #[serde(default)]
    pub kind: Option<String>,
}

/// The input schema of a tool, from its argument type.
pub fn input_schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::common::schema_for_input::<T>()
        .unwrap_or_else(|_| rmcp::handler::server::common::schema_for_type::<T>())
}

/// The top-level property names of an argument type's schema.
fn allowed_fields<T: JsonSchema + 'static>() -> Vec<String> {
    input_schema::<T>()
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Parses tool arguments strictly: every unknown field is named in the error together with the
/// accepted ones, and type errors say which field to fix.
pub fn parse<T: DeserializeOwned + JsonSchema + 'static>(
    tool: &str,
    arguments: JsonObject,
) -> Result<T, String> {
    let allowed = allowed_fields::<T>();
    let unknown: Vec<String> = arguments
        .keys()
        .filter(|k| !allowed.contains(k))
        .map(|k| format!("`{k}`"))
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "unknown field{} {} for {tool}; remove {} (accepted fields: {})",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join(", "),
            if unknown.len() == 1 { "it" } else { "them" },
            allowed.join(", ")
        ));
    }
    serde_json::from_value(serde_json::Value::Object(arguments))
        .map_err(|err| format!("invalid arguments for {tool}: {err}; fix them and call again"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: serde_json::Value) -> JsonObject {
        match value {
            serde_json::Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn unknown_fields_are_all_named() {
        let err = parse::<ReadCardArgs>(
            "read_card",
            object(serde_json::json!({"key": "a", "colour": 1, "size": 2})),
        )
        .err()
        .unwrap_or_default();
        assert!(err.contains("`colour`") && err.contains("`size`"), "{err}");
        assert!(err.contains("accepted fields: key"), "{err}");
    }

    #[test]
    fn nested_unknown_fields_are_refused() {
        let err = parse::<WriteCardArgs>(
            "write_card",
            object(serde_json::json!({
                "mode": "create", "key": "a", "secondary": {"none": ["x"]}
            })),
        )
        .err()
        .unwrap_or_default();
        assert!(err.contains("none"), "{err}");
    }

    #[test]
    fn schema_lists_modes_and_fields() {
        let schema = serde_json::Value::Object(input_schema::<WriteCardArgs>().as_ref().clone());
        let text = schema.to_string();
        assert!(text.contains("update_recent") && text.contains("expected_mtime"));
        assert_eq!(schema["type"], "object");
    }
}
