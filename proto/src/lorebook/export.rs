//! Export: cards to SillyTavern's native World Info JSON (`{"entries": {"<uid>": entry}}`).
//!
//! * `content` is the private-stripped body ([`Card::effective_body`]): private sections never
//!   leave the vault.
//! * SillyTavern holds one secondary list per entry. The exported one is the first non-empty of
//!   `not` (NOT_ANY 2), `all` (AND_ALL 3), `any` (AND_ANY 0), `not_all` (NOT_ALL 1): vetoes first,
//!   because losing a veto makes an entry fire where it must not. The other lists go to the
//!   entry's `lore` object, so a re-import restores them; SillyTavern itself ignores them.
//! * `key` is keywords plus aliases (the title is not added; a card with neither and not constant
//!   exports its title as the only key). `lore.aliases` tells a re-import which were aliases.
//! * `disable` is set for disabled cards and for `inject: false` cards (SillyTavern has no
//!   "visible but never injected"); `lore.enabled` / `lore.inject` keep the exact flags.
//! * Fields carried under frontmatter `st:` are restored, but never over a field the card
//!   represents (`key`, `content`, `order`, …): the card wins over a stale copy.
//! * Other extra frontmatter (`emails`, `ais`, …) is not exported: it is vault-private.
//! * uids: a carried `st.uid` is reused when free; other cards get the smallest free integers.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::import::messages_to_turns;
use super::{LORE_FIELD, ST_FIELD, SelectiveLogic};
use crate::cards::{Card, KindsConfig, MatchMode};

/// Entry fields computed from the card; an `st:` copy never overrides them.
const MAPPED: [&str; 12] = [
    "uid",
    "key",
    "keysecondary",
    "selectiveLogic",
    "comment",
    "content",
    "constant",
    "disable",
    "order",
    "scanDepth",
    "caseSensitive",
    "matchWholeWords",
];

const DEFAULTS: &str = r#"{
    "uid": 0, "key": [], "keysecondary": [], "comment": "", "content": "",
    "constant": false, "vectorized": false, "selective": true, "selectiveLogic": 0,
    "addMemo": true, "order": 100, "position": 0, "disable": false, "ignoreBudget": false,
    "excludeRecursion": false, "preventRecursion": false,
    "matchPersonaDescription": false, "matchCharacterDescription": false,
    "matchCharacterPersonality": false, "matchCharacterDepthPrompt": false,
    "matchScenario": false, "matchCreatorNotes": false, "delayUntilRecursion": false,
    "probability": 100, "useProbability": true, "depth": 4, "outletName": "", "group": "",
    "groupOverride": false, "groupWeight": 100, "scanDepth": null, "caseSensitive": null,
    "matchWholeWords": null, "useGroupScoring": null, "automationId": "", "role": null,
    "sticky": 0, "cooldown": 0, "delay": 0, "triggers": [], "displayIndex": 0,
    "characterFilter": {"isExclude": false, "names": [], "tags": []}
}"#;

/// SillyTavern's defaults for a new entry (`newWorldInfoEntryDefinition`), in its field order.
pub(crate) fn defaults() -> Map<String, Value> {
    let v: Value = serde_json::from_str(DEFAULTS).unwrap_or_default();
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The card's carried SillyTavern fields as JSON.
fn carried(card: &Card) -> Map<String, Value> {
    card.extra
        .get(ST_FIELD)
        .and_then(|y| serde_json::to_value(y).ok())
        .and_then(|v| match v {
            Value::Object(m) => Some(m),
            _ => None,
        })
        .unwrap_or_default()
}

fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        // Integral and well inside i64's exact range.
        Value::from(x as i64)
    } else {
        serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().cloned().map(Value::String).collect())
}

/// Exports cards as a SillyTavern World Info book.
pub fn export_world_info(cards: &[Card], config: &KindsConfig) -> Value {
    let st: Vec<Map<String, Value>> = cards.iter().map(carried).collect();
    let mut used = BTreeSet::new();
    let mut uids: Vec<Option<u64>> = st
        .iter()
        .map(|m| {
            let uid = m.get("uid").and_then(|u| {
                u.as_u64()
                    .or_else(|| u.as_str().and_then(|s| s.parse().ok()))
            })?;
            used.insert(uid).then_some(uid)
        })
        .collect();
    let mut next = 0u64;
    for uid in &mut uids {
        if uid.is_none() {
            while used.contains(&next) {
                next += 1;
            }
            used.insert(next);
            *uid = Some(next);
        }
    }
    let mut entries = Map::new();
    for ((card, st), uid) in cards.iter().zip(st).zip(uids) {
        let uid = uid.unwrap_or_default();
        entries.insert(uid.to_string(), Value::Object(entry(card, st, uid, config)));
    }
    json!({ "entries": entries })
}

fn entry(
    card: &Card,
    st: Map<String, Value>,
    uid: u64,
    config: &KindsConfig,
) -> Map<String, Value> {
    let mut e = defaults();
    e.insert("displayIndex".into(), Value::from(uid));
    let tri_null = |name: &str| st.get(name).is_some_and(Value::is_null);
    let st_scan = st.get("scanDepth").cloned();
    let null_match = tri_null("matchWholeWords");
    let null_case = tri_null("caseSensitive");
    for (k, v) in st {
        if !MAPPED.contains(&k.as_str()) && k != LORE_FIELD {
            e.insert(k, v);
        }
    }
    let mut keys = card.keywords.clone();
    for a in &card.aliases {
        if !keys.contains(a) {
            keys.push(a.clone());
        }
    }
    if keys.is_empty() && !card.constant {
        keys.push(card.title.clone());
    }
    let s = &card.secondary;
    let lists = [
        (SelectiveLogic::NotAny, "not", &s.not),
        (SelectiveLogic::AndAll, "all", &s.all),
        (SelectiveLogic::AndAny, "any", &s.any),
        (SelectiveLogic::NotAll, "not_all", &s.not_all),
    ];
    let chosen = lists.iter().find(|(_, _, l)| !l.is_empty());
    let (logic, secondary) = chosen.map_or((SelectiveLogic::AndAny, &[][..]), |(l, _, v)| {
        (*l, v.as_slice())
    });
    let scan = match (card.scan_depth, st_scan) {
        (None, Some(Value::Null)) | (None, None) => Value::Null,
        (Some(d), Some(orig)) if orig.as_f64().is_some_and(|n| messages_to_turns(n) == d) => orig,
        (Some(d), _) => Value::from(u64::from(d) * 2),
        (None, Some(_)) => Value::Null,
    };
    let whole = card.match_mode == MatchMode::WholeWord;
    e.insert("uid".into(), Value::from(uid));
    e.insert("key".into(), strings(&keys));
    e.insert("keysecondary".into(), strings(secondary));
    e.insert("selectiveLogic".into(), Value::from(logic.code()));
    e.insert("comment".into(), Value::String(card.title.clone()));
    e.insert("content".into(), Value::String(card.effective_body(config)));
    e.insert("constant".into(), Value::Bool(card.constant));
    e.insert("disable".into(), Value::Bool(!card.enabled || !card.inject));
    e.insert("order".into(), number(card.priority));
    e.insert("scanDepth".into(), scan);
    e.insert(
        "matchWholeWords".into(),
        if whole && null_match {
            Value::Null
        } else {
            Value::Bool(whole)
        },
    );
    e.insert(
        "caseSensitive".into(),
        if !card.case_sensitive && null_case {
            Value::Null
        } else {
            Value::Bool(card.case_sensitive)
        },
    );
    let mut lore = Map::new();
    lore.insert("key".into(), Value::String(card.key.clone()));
    lore.insert("kind".into(), Value::String(card.kind.as_str().into()));
    if !card.aliases.is_empty() {
        lore.insert("aliases".into(), strings(&card.aliases));
    }
    if !card.refs.is_empty() {
        lore.insert("refs".into(), strings(&card.refs));
    }
    let rest: Map<String, Value> = lists
        .iter()
        .filter(|(l, _, v)| !v.is_empty() && Some(*l) != chosen.map(|c| c.0))
        .map(|(_, name, v)| ((*name).to_owned(), strings(v)))
        .collect();
    if !rest.is_empty() {
        lore.insert("secondary".into(), Value::Object(rest));
    }
    if !card.enabled {
        lore.insert("enabled".into(), Value::Bool(false));
    }
    if !card.inject {
        lore.insert("inject".into(), Value::Bool(false));
    }
    e.insert(LORE_FIELD.into(), Value::Object(lore));
    e
}
