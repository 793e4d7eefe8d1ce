//! Import: SillyTavern World Info JSON and Character Card V2/V3 books into cards.
//!
//! Every entry is mapped on its own: an entry that cannot become a card is reported in
//! [`ImportedBook::skipped`] with a reason and the rest of the book still imports.

use serde_json::{Map, Value};

use super::{
    ImportedBook, ImportedCard, LORE_FIELD, LorebookError, ST_FIELD, SelectiveLogic, SkippedEntry,
    v2,
};
use crate::cards::{Card, Kind, KindsConfig, MAX_SCAN_DEPTH, MatchMode, safe_key};

/// Imports a book into [`Kind::Entry`] cards (or the kind an exported `lore` object names).
pub fn import_world_info(json: &Value) -> Result<ImportedBook, LorebookError> {
    import_world_info_as(json, None, &KindsConfig::default())
}

/// Imports a book. `kind` forces every card into one kind; `None` uses the kind recorded by a
/// previous export, else [`Kind::Entry`]. `config` decides the section table of that kind.
pub fn import_world_info_as(
    json: &Value,
    kind: Option<Kind>,
    config: &KindsConfig,
) -> Result<ImportedBook, LorebookError> {
    let (name, entries) = locate(json)?;
    let mut book = ImportedBook {
        name,
        ..ImportedBook::default()
    };
    let mut taken: Vec<String> = Vec::new();
    for (uid, entry) in entries {
        let Value::Object(map) = entry else {
            book.skipped.push(SkippedEntry {
                uid,
                reason: "entry is not an object".into(),
            });
            continue;
        };
        let native = if v2::is_v2_entry(map) {
            v2::to_native(map.clone())
        } else {
            map.clone()
        };
        match entry_to_card(&uid, native, kind, config, &mut taken) {
            Ok(card) => book.cards.push(ImportedCard { card, uid }),
            Err(reason) => book.skipped.push(SkippedEntry { uid, reason }),
        }
    }
    Ok(book)
}

type Entries<'a> = Vec<(String, &'a Value)>;

/// Finds the entries of any accepted shape, with their uids.
fn locate(json: &Value) -> Result<(Option<String>, Entries<'_>), LorebookError> {
    let name_of = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_owned);
    match json {
        Value::Array(items) => Ok((None, list_entries(items))),
        Value::Object(obj) => {
            if let Some(data) = obj.get("data").filter(|d| d.is_object()) {
                if let Some(book) = data.get("character_book").filter(|b| b.is_object()) {
                    let (n, e) = book_entries(book)?;
                    return Ok((n.or_else(|| name_of(data)), e));
                }
                if obj.get("spec").and_then(Value::as_str) == Some("lorebook_v3") {
                    return book_entries(data);
                }
                if obj.contains_key("spec") {
                    return Err(LorebookError::NotABook(
                        "the character card has no character_book".into(),
                    ));
                }
            }
            if let Some(book) = obj.get("character_book").filter(|b| b.is_object()) {
                return book_entries(book);
            }
            book_entries(json)
        }
        _ => Err(LorebookError::NotABook(
            "expected a json object or a list of entries".into(),
        )),
    }
}

fn list_entries(items: &[Value]) -> Entries<'_> {
    items
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let uid = ["uid", "id"]
                .iter()
                .find_map(|k| e.get(*k).filter(|v| v.is_number() || v.is_string()))
                .map_or_else(|| i.to_string(), scalar_string);
            (uid, e)
        })
        .collect()
}

fn book_entries(book: &Value) -> Result<(Option<String>, Entries<'_>), LorebookError> {
    let name = book.get("name").and_then(Value::as_str).map(str::to_owned);
    match book.get("entries") {
        Some(Value::Object(map)) => Ok((name, map.iter().map(|(k, v)| (k.clone(), v)).collect())),
        Some(Value::Array(items)) => Ok((name, list_entries(items))),
        Some(_) => Err(LorebookError::NotABook(
            "entries must be an object keyed by uid or a list".into(),
        )),
        None => match book {
            Value::Object(map) if !map.is_empty() && map.values().all(Value::is_object) => {
                Ok((None, map.iter().map(|(k, v)| (k.clone(), v)).collect()))
            }
            _ => Err(LorebookError::NotABook("no entries found".into())),
        },
    }
}

fn scalar_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The forgiving list parser of the card format, applied to a JSON value.
fn list(field: &str, v: Option<&Value>, w: &mut Vec<String>) -> Vec<String> {
    let Some(v) = v else { return Vec::new() };
    match yaml_serde::to_value(v) {
        Ok(y) => crate::cards::parse_list(field, &y, w),
        Err(_) => Vec::new(),
    }
}

fn flag(field: &str, v: Option<&Value>, default: bool, w: &mut Vec<String>) -> bool {
    match v {
        None | Some(Value::Null) => default,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) || n.as_f64() == Some(1.0) => {
            n.as_f64() == Some(1.0)
        }
        Some(other) => {
            w.push(format!(
                "{field}: {other} is not a boolean; using {default}"
            ));
            default
        }
    }
}

/// SillyTavern scan depth (messages) to turns: ceil(n / 2), clamped to 0..=10.
pub(crate) fn messages_to_turns(n: f64) -> u8 {
    let turns = (n / 2.0).ceil().clamp(0.0, f64::from(MAX_SCAN_DEPTH));
    // Clamped to 0..=MAX_SCAN_DEPTH, so the conversion is exact.
    turns as u8
}

/// A file stem from free text: separators and control characters replaced, capped at 100 chars.
fn key_candidate(raw: &str) -> Option<String> {
    let cleaned: String = raw
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '-'
            } else {
                c
            }
        })
        .take(100)
        .collect();
    let mut cleaned = cleaned.trim().trim_start_matches('.').to_owned();
    while cleaned.contains("..") {
        cleaned = cleaned.replace("..", ".");
    }
    safe_key(&cleaned).ok()
}

/// A key not yet taken in this import (compared case-insensitively): `name`, `name (2)`, …
fn unique_key(base: String, taken: &mut Vec<String>) -> String {
    let free =
        |k: &str, taken: &[String]| !taken.iter().any(|t| t.to_lowercase() == k.to_lowercase());
    let mut key = base.clone();
    let mut n = 2;
    while !free(&key, taken) {
        key = format!("{base} ({n})");
        n += 1;
    }
    taken.push(key.clone());
    key
}

fn entry_to_card(
    uid: &str,
    mut e: Map<String, Value>,
    kind: Option<Kind>,
    config: &KindsConfig,
    taken: &mut Vec<String>,
) -> Result<Card, String> {
    let mut w = Vec::new();
    let lore = match e.remove(LORE_FIELD) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let content = match e.remove("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        Some(other) => return Err(format!("content is not text ({other})")),
    };
    let keys = list("key", e.remove("key").as_ref(), &mut w);
    let secondary_keys = list("keysecondary", e.remove("keysecondary").as_ref(), &mut w);
    let logic = match e.remove("selectiveLogic") {
        None | Some(Value::Null) => SelectiveLogic::AndAny,
        Some(v) => match v.as_u64().and_then(SelectiveLogic::from_code) {
            Some(l) => l,
            None => {
                w.push(format!(
                    "selectiveLogic: {v} is not 0..=3; treated as and_any (0)"
                ));
                SelectiveLogic::AndAny
            }
        },
    };
    let comment = match e.remove("comment") {
        Some(Value::String(s)) => s.trim().to_owned(),
        Some(Value::Null) | None => String::new(),
        Some(other) => scalar_string(&other).trim().to_owned(),
    };
    let constant = flag("constant", e.remove("constant").as_ref(), false, &mut w);
    if keys.is_empty() && comment.is_empty() && !constant {
        return Err("no keys and no comment".into());
    }
    let forced = kind.is_some();
    let kind = kind
        .or_else(|| {
            lore.get("kind")
                .and_then(Value::as_str)
                .and_then(Kind::parse)
        })
        .unwrap_or(Kind::Entry);
    let first_key = keys.iter().find(|k| !k.starts_with('/'));
    let base = lore
        .get("key")
        .and_then(Value::as_str)
        .and_then(|k| safe_key(k).ok())
        .or_else(|| key_candidate(&comment))
        .or_else(|| first_key.and_then(|k| key_candidate(k)))
        .or_else(|| key_candidate(&format!("entry-{uid}")))
        .unwrap_or_else(|| "entry".to_owned());
    let key = unique_key(base, taken);
    let mut card = Card::new(&key, kind);
    if !comment.is_empty() {
        card.title = comment;
    }
    let lore_list = |name: &str, w: &mut Vec<String>| list(name, lore.get(name), w);
    let lore_aliases = lore_list("aliases", &mut w);
    card.aliases = lore_aliases
        .into_iter()
        .filter(|a| keys.contains(a))
        .collect();
    card.keywords = keys
        .into_iter()
        .filter(|k| !card.aliases.contains(k))
        .collect();
    if card.keywords.is_empty() && card.aliases.is_empty() && !constant {
        card.keywords = vec![card.title.clone()];
    }
    card.refs = lore_list("refs", &mut w);
    card.constant = constant;
    let sec = &mut card.secondary;
    let bucket = match logic {
        SelectiveLogic::AndAny => &mut sec.any,
        SelectiveLogic::NotAll => &mut sec.not_all,
        SelectiveLogic::NotAny => &mut sec.not,
        SelectiveLogic::AndAll => &mut sec.all,
    };
    *bucket = secondary_keys;
    if let Some(Value::Object(rest)) = lore.get("secondary") {
        for (name, list_ref) in [
            ("all", &mut sec.all),
            ("any", &mut sec.any),
            ("not", &mut sec.not),
            ("not_all", &mut sec.not_all),
        ] {
            if list_ref.is_empty() {
                *list_ref = list(name, rest.get(name), &mut w);
            }
        }
    }
    let disable = flag("disable", e.remove("disable").as_ref(), false, &mut w);
    let lore_enabled = flag("lore.enabled", lore.get("enabled"), true, &mut w);
    let lore_inject = flag("lore.inject", lore.get("inject"), true, &mut w);
    if disable == (!lore_enabled || !lore_inject) {
        card.enabled = lore_enabled;
        card.inject = lore_inject;
    } else {
        card.enabled = !disable;
    }
    match e.remove("order") {
        None | Some(Value::Null) => {}
        Some(v) => match v.as_f64().filter(|p| p.is_finite()) {
            Some(p) => card.priority = p,
            None => w.push(format!("order: {v} is not a number; priority 0")),
        },
    }
    let mut st = Map::new();
    match e.remove("scanDepth") {
        None | Some(Value::Null) => {}
        Some(v) => match v.as_f64() {
            Some(n) => {
                let turns = messages_to_turns(n);
                card.scan_depth = Some(turns);
                if f64::from(turns) * 2.0 != n {
                    st.insert("scanDepth".into(), v);
                }
            }
            None => w.push(format!("scanDepth: {v} is not a number; using the default")),
        },
    }
    for (field, target) in [("matchWholeWords", 0), ("caseSensitive", 1)] {
        // Missing and null both mean "inherit the global setting": remembered as null.
        match e.remove(field) {
            None | Some(Value::Null) => {
                st.insert(field.into(), Value::Null);
            }
            Some(v) => {
                let on = flag(field, Some(&v), target == 0, &mut w);
                if target == 0 {
                    card.match_mode = if on {
                        MatchMode::WholeWord
                    } else {
                        MatchMode::Substring
                    };
                } else {
                    card.case_sensitive = on;
                }
            }
        }
    }
    let uid_value = e
        .remove("uid")
        .filter(Value::is_u64)
        .or_else(|| uid.parse::<u64>().ok().map(Value::from));
    if let Some(u) = &uid_value {
        st.insert("uid".into(), u.clone());
    }
    // Values equal to SillyTavern's defaults are not worth carrying: export writes them anyway.
    let defaults = super::export::defaults();
    for (k, v) in e {
        let is_default = defaults.get(&k) == Some(&v) && k != "displayIndex"
            || (k == "displayIndex" && Some(&v) == uid_value.as_ref());
        if !is_default {
            st.insert(k, v);
        }
    }
    if !st.is_empty() {
        match yaml_serde::to_value(Value::Object(st)) {
            Ok(y) => {
                card.extra.insert(ST_FIELD.into(), y);
            }
            Err(err) => w.push(format!("could not keep the sillytavern fields: {err}")),
        }
    }
    let content = content.trim();
    let body = if content.is_empty() {
        String::new()
    } else {
        format!("{content}\n")
    };
    card.set_body(&body, config);
    // Forced into a sectioned kind, plain content becomes the head followed by the kind's
    // (empty) section headings, ready to be filled in.
    let plain = !body.lines().any(|l| l.starts_with("## "));
    if forced && plain && !config.sections(kind).is_empty() {
        card.sync_body(config);
    }
    card.warnings = w;
    Ok(card)
}
