//! Character Card V2/V3 `character_book` entries, rewritten into SillyTavern's native entry shape
//! (the same translation SillyTavern applies when it imports an embedded book).

use serde_json::{Map, Value};

/// `extensions.*` keys SillyTavern writes into V2 entries, and their native names.
const EXTENSION_NAMES: [(&str, &str); 33] = [
    ("position", "position"),
    ("exclude_recursion", "excludeRecursion"),
    ("display_index", "displayIndex"),
    ("probability", "probability"),
    ("useProbability", "useProbability"),
    ("use_probability", "useProbability"),
    ("depth", "depth"),
    ("selectiveLogic", "selectiveLogic"),
    ("selective_logic", "selectiveLogic"),
    ("group", "group"),
    ("group_override", "groupOverride"),
    ("group_weight", "groupWeight"),
    ("prevent_recursion", "preventRecursion"),
    ("delay_until_recursion", "delayUntilRecursion"),
    ("scan_depth", "scanDepth"),
    ("match_whole_words", "matchWholeWords"),
    ("use_group_scoring", "useGroupScoring"),
    ("case_sensitive", "caseSensitive"),
    ("automation_id", "automationId"),
    ("role", "role"),
    ("vectorized", "vectorized"),
    ("sticky", "sticky"),
    ("cooldown", "cooldown"),
    ("delay", "delay"),
    ("match_persona_description", "matchPersonaDescription"),
    ("match_character_description", "matchCharacterDescription"),
    ("match_character_personality", "matchCharacterPersonality"),
    ("match_character_depth_prompt", "matchCharacterDepthPrompt"),
    ("match_scenario", "matchScenario"),
    ("match_creator_notes", "matchCreatorNotes"),
    ("triggers", "triggers"),
    ("ignore_budget", "ignoreBudget"),
    ("outlet_name", "outletName"),
];

/// Whether an entry is in the V2/V3 shape (`keys`, `insertion_order`, … rather than `key`).
pub(crate) fn is_v2_entry(entry: &Map<String, Value>) -> bool {
    !entry.contains_key("key")
        && ["keys", "secondary_keys", "insertion_order", "enabled"]
            .iter()
            .any(|k| entry.contains_key(*k))
}

/// Rewrites a V2/V3 entry into the native shape. Extension keys SillyTavern does not define stay
/// under `extensions`; V2-only fields (`name`, `priority`, `use_regex`, …) are kept as they are.
pub(crate) fn to_native(mut entry: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut rename = |from: &str, to: &str, entry: &mut Map<String, Value>| {
        if let Some(v) = entry.remove(from) {
            out.insert(to.to_owned(), v);
        }
    };
    rename("id", "uid", &mut entry);
    rename("keys", "key", &mut entry);
    rename("secondary_keys", "keysecondary", &mut entry);
    rename("insertion_order", "order", &mut entry);
    rename("case_sensitive", "caseSensitive", &mut entry);
    if let Some(enabled) = entry.remove("enabled") {
        let disable = match enabled {
            Value::Bool(b) => Value::Bool(!b),
            other => other,
        };
        out.insert("disable".into(), disable);
    }
    let comment_blank = entry
        .get("comment")
        .and_then(Value::as_str)
        .is_none_or(|c| c.trim().is_empty());
    if comment_blank && let Some(name) = entry.get("name").and_then(Value::as_str) {
        out.insert("comment".into(), Value::String(name.to_owned()));
        entry.remove("comment");
    }
    let string_position = entry.remove("position");
    let mut rest_ext = Map::new();
    if let Some(Value::Object(ext)) = entry.remove("extensions") {
        for (k, v) in ext {
            match EXTENSION_NAMES.iter().find(|(from, _)| *from == k) {
                Some((_, to)) => {
                    out.insert((*to).to_owned(), v);
                }
                None => {
                    rest_ext.insert(k, v);
                }
            }
        }
    }
    if !out.contains_key("position")
        && let Some(Value::String(p)) = &string_position
    {
        let code = if p == "after_char" { 1 } else { 0 };
        out.insert("position".into(), Value::from(code));
    }
    for (k, v) in entry {
        out.entry(k).or_insert(v);
    }
    if !rest_ext.is_empty() {
        out.insert("extensions".into(), Value::Object(rest_ext));
    }
    out
}
