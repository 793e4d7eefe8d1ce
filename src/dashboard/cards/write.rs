//! Card writes from the editor and the API. A write names the fields it changes and keeps
//! every other one as stored (unknown frontmatter, unknown sections, the head), so a client
//! that does not know a field cannot wipe it. An update carries the mtime string its editor
//! read; a file changed since is refused with 409 `conflict` and the card as it is now. Archive
//! moves the file under `_archive/` (an older archived copy is kept under a dated name) and
//! restore moves it back. After each write the gateway's book is reloaded, so the next request
//! matches the new text.

use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use lore_proto::cards::{
    Card, Kind, KindsConfig, MAX_SCAN_DEPTH, MatchMode, Secondary as CardSecondary,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::detail::{CardDetail, Secondary, card_detail, card_path, check_key, read_card};
use super::{CardDesk, parse_kind, parse_mtime};
use crate::dashboard::error::ApiError;

/// The body of `POST /api/v1/cards` and `PUT /api/v1/cards/{kind}/{key}`; every field optional
/// (a missing one keeps the stored value).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardBody {
    /// Kind of a new card (`POST` only; an update takes it from the URL).
    #[serde(default)]
    pub kind: Option<String>,
    /// Name (file stem) of a new card (`POST` only).
    #[serde(default)]
    pub key: Option<String>,
    /// Title.
    #[serde(default)]
    pub title: Option<String>,
    /// Keywords.
    #[serde(default)]
    pub keywords: Option<Vec<String>>,
    /// Aliases.
    #[serde(default)]
    pub aliases: Option<Vec<String>>,
    /// Secondary conditions (all four lists replaced).
    #[serde(default)]
    pub secondary: Option<Secondary>,
    /// Window in turns, 0–10; `null` for the default.
    #[serde(default)]
    pub scan_depth: Option<Value>,
    /// Related card keys.
    #[serde(default)]
    pub refs: Option<Vec<String>>,
    /// Tie-breaker.
    #[serde(default)]
    pub priority: Option<f64>,
    /// Enabled.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Injected automatically.
    #[serde(default)]
    pub inject: Option<bool>,
    /// Always fires.
    #[serde(default)]
    pub constant: Option<bool>,
    /// `whole_word` or `substring`.
    #[serde(default, rename = "match")]
    pub match_mode: Option<String>,
    /// Case-sensitive matching.
    #[serde(default)]
    pub case_sensitive: Option<bool>,
    /// Section name → text (`_head` for the free text of entry cards); sections not named keep
    /// their text.
    #[serde(default)]
    pub fields: Option<BTreeMap<String, String>>,
    /// Text before the first heading.
    #[serde(default)]
    pub head: Option<String>,
    /// Unknown sections, verbatim.
    #[serde(default)]
    pub extra: Option<String>,
    /// Frontmatter keys the card model does not own (replaces them all).
    #[serde(default)]
    pub extra_fm: Option<Value>,
    /// The mtime string the editor read (updates); empty or absent skips the check.
    #[serde(default)]
    pub mtime: Option<Value>,
}

fn bad_card(detail: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "bad_card", detail)
}

fn clean(list: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in list {
        let item = item.trim().to_string();
        if !item.is_empty() && !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Applies the body's fields to `card`.
fn apply(card: &mut Card, body: CardBody, config: &KindsConfig) -> Result<(), ApiError> {
    if let Some(title) = body.title {
        let title = title.trim();
        card.title = if title.is_empty() {
            card.key.clone()
        } else {
            title.to_string()
        };
    }
    if let Some(keywords) = body.keywords {
        card.keywords = clean(keywords);
    }
    if let Some(aliases) = body.aliases {
        card.aliases = clean(aliases);
    }
    if let Some(s) = body.secondary {
        card.secondary = CardSecondary {
            all: clean(s.all),
            any: clean(s.any),
            not: clean(s.not),
            not_all: clean(s.not_all),
        };
    }
    match body.scan_depth {
        None => {}
        Some(Value::Null) => card.scan_depth = None,
        Some(Value::String(s)) if s.trim().is_empty() => card.scan_depth = None,
        Some(value) => {
            let depth = value
                .as_u64()
                .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
                .filter(|d| *d <= u64::from(MAX_SCAN_DEPTH))
                .ok_or_else(|| {
                    bad_card(format!(
                        "scan_depth must be 0 to {MAX_SCAN_DEPTH}, or empty for the default"
                    ))
                })?;
            card.scan_depth = u8::try_from(depth).ok();
        }
    }
    if let Some(refs) = body.refs {
        card.refs = clean(refs);
    }
    if let Some(priority) = body.priority {
        if !priority.is_finite() {
            return Err(bad_card("priority must be a finite number"));
        }
        card.priority = priority;
    }
    if let Some(enabled) = body.enabled {
        card.enabled = enabled;
    }
    if let Some(inject) = body.inject {
        card.inject = inject;
    }
    if let Some(constant) = body.constant {
        card.constant = constant;
    }
    if let Some(mode) = body.match_mode {
        card.match_mode = match mode.trim() {
            "" | "whole_word" => MatchMode::WholeWord,
            "substring" => MatchMode::Substring,
            other => {
                return Err(bad_card(format!(
                    "match `{other}` is not known; use whole_word or substring"
                )));
            }
        };
    }
    if let Some(case_sensitive) = body.case_sensitive {
        card.case_sensitive = case_sensitive;
    }
    if let Some(extra) = body.extra_fm {
        match yaml_serde::to_value(&extra) {
            Ok(yaml_serde::Value::Mapping(mapping)) => {
                if let Some(key) = mapping
                    .keys()
                    .filter_map(|k| k.as_str())
                    .find(|k| lore_proto::cards::MANAGED_FIELDS.contains(k))
                {
                    return Err(bad_card(format!(
                        "extra_fm must not hold `{key}`, a field of its own"
                    )));
                }
                card.extra = mapping;
            }
            Ok(yaml_serde::Value::Null) => card.extra = yaml_serde::Mapping::new(),
            _ => return Err(bad_card("extra_fm must be an object of frontmatter keys")),
        }
    }
    if let Some(head) = body.head {
        card.head = head;
    }
    if let Some(extra) = body.extra {
        card.extra_sections = extra;
    }
    let known = config.all_sections_for(card.kind);
    for (name, text) in body.fields.unwrap_or_default() {
        if name == "_head" {
            card.head = text;
        } else if known.contains(&name) {
            match card.sections.iter_mut().find(|(n, _)| *n == name) {
                Some(section) => section.1 = text.trim().to_string(),
                None => card.sections.push((name, text.trim().to_string())),
            }
        } else {
            return Err(bad_card(format!(
                "a {} card has no section `{name}`; its sections are {} (kinds.yaml)",
                card.kind,
                if known.is_empty() {
                    "none: use _head".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
    }
    if card.keywords.is_empty() && !card.constant {
        return Err(bad_card(
            "a card needs at least one keyword, or it can never fire: add the names that should bring it up",
        ));
    }
    card.sync_body(config);
    Ok(())
}

fn current(desk: &CardDesk, kind: Kind, key: &str, config: &KindsConfig) -> Option<CardDetail> {
    read_card(desk, kind, key, config, false)
        .ok()
        .flatten()
        .map(|file| card_detail(desk, &file, kind, config))
}

fn reload(desk: &CardDesk) {
    desk.library.reload();
}

/// Creates a card.
pub fn create(desk: &CardDesk, mut body: CardBody) -> Result<CardDetail, ApiError> {
    let config = desk.config();
    let kind = parse_kind(body.kind.take().as_deref().unwrap_or(""))?;
    let key = check_key(body.key.take().as_deref().unwrap_or(""))?;
    let path = card_path(desk, kind, &key, &config, false)?;
    if path.exists() {
        let mut conflict = ApiError::conflict(
            "exists",
            format!("a {kind} card named `{key}` exists; edit it, or pick another name"),
        );
        if let Some(detail) = current(desk, kind, &key, &config) {
            conflict = conflict.with(
                "current",
                serde_json::to_value(detail).unwrap_or(Value::Null),
            );
        }
        return Err(conflict);
    }
    let mut card = Card::new(&key, kind);
    apply(&mut card, body, &config)?;
    desk.vault.write_card(&card, &config, None)?;
    reload(desk);
    super::detail::show(desk, kind, &key, false)
}

fn conflict(desk: &CardDesk, kind: Kind, key: &str, config: &KindsConfig) -> ApiError {
    let mut error = ApiError::conflict(
        "conflict",
        format!(
            "card `{key}` changed on disk while you were editing it; compare, then overwrite or load the new version"
        ),
    );
    if let Some(detail) = current(desk, kind, key, config) {
        error = error.with(
            "current",
            serde_json::to_value(detail).unwrap_or(Value::Null),
        );
    }
    error
}

/// Updates a card, checking the mtime the editor read.
pub fn update(
    desk: &CardDesk,
    kind: Kind,
    key: &str,
    mut body: CardBody,
) -> Result<CardDetail, ApiError> {
    let config = desk.config();
    if body
        .kind
        .take()
        .is_some_and(|k| Kind::parse(&k) != Some(kind))
        || body.key.take().is_some_and(|k| k.trim() != key)
    {
        return Err(bad_card(
            "an update cannot rename a card or change its kind; create a new card and archive this one",
        ));
    }
    let file = read_card(desk, kind, key, &config, false)?.ok_or_else(|| {
        ApiError::not_found(format!(
            "no {kind} card `{key}`; create it with POST /api/v1/cards"
        ))
    })?;
    let mtime = match body.mtime.take() {
        Some(Value::String(s)) => Some(s),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let expected = parse_mtime(mtime.as_deref())?;
    if expected.is_some() && file.modified != expected {
        return Err(conflict(desk, kind, key, &config));
    }
    let mut card = file.card.unwrap_or_else(|_| Card::new(key, kind));
    apply(&mut card, body, &config)?;
    if let Err(err) = desk.vault.write_card(&card, &config, expected) {
        let now = std::fs::metadata(&file.path)
            .and_then(|m| m.modified())
            .ok();
        if expected.is_some() && now != expected {
            return Err(conflict(desk, kind, key, &config));
        }
        return Err(err.into());
    }
    reload(desk);
    super::detail::show(desk, kind, key, false)
}

/// What an archive or a restore did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Moved {
    /// Always true.
    pub ok: bool,
    /// Kind.
    pub kind: &'static str,
    /// Name.
    pub key: String,
    /// The file's new vault-relative path.
    pub path: String,
}

fn rename(from: &std::path::Path, to: &std::path::Path) -> Result<(), ApiError> {
    if let Some(folder) = to.parent() {
        std::fs::create_dir_all(folder).map_err(|err| {
            ApiError::internal(format!("cannot create {}: {err}", folder.display()))
        })?;
    }
    std::fs::rename(from, to).map_err(|err| {
        ApiError::internal(format!(
            "cannot move {} to {}: {err}",
            from.display(),
            to.display()
        ))
    })
}

/// Moves a card to the archive (the card's `DELETE`).
pub fn archive(desk: &CardDesk, kind: Kind, key: &str) -> Result<Moved, ApiError> {
    let config = desk.config();
    let live = card_path(desk, kind, key, &config, false)?;
    if !live.exists() {
        return Err(ApiError::not_found(format!("no {kind} card `{key}`")));
    }
    let archived = card_path(desk, kind, key, &config, true)?;
    if archived.exists() {
        let dated = archived.with_file_name(format!("{key}~{}.md", lore_storage::now_ms()));
        rename(&archived, &dated)?;
    }
    rename(&live, &archived)?;
    reload(desk);
    Ok(Moved {
        ok: true,
        kind: kind.as_str(),
        key: key.to_string(),
        path: desk.relative(&archived),
    })
}

/// Moves an archived card back.
pub fn restore(desk: &CardDesk, kind: Kind, key: &str) -> Result<Moved, ApiError> {
    let config = desk.config();
    let archived = card_path(desk, kind, key, &config, true)?;
    if !archived.exists() {
        return Err(ApiError::not_found(format!(
            "no archived {kind} card `{key}`"
        )));
    }
    let live = card_path(desk, kind, key, &config, false)?;
    if live.exists() {
        let mut error = ApiError::conflict(
            "exists",
            format!("a live {kind} card `{key}` exists; archive or rename it first"),
        );
        if let Some(detail) = current(desk, kind, key, &config) {
            error = error.with(
                "current",
                serde_json::to_value(detail).unwrap_or(Value::Null),
            );
        }
        return Err(error);
    }
    rename(&archived, &live)?;
    reload(desk);
    Ok(Moved {
        ok: true,
        kind: kind.as_str(),
        key: key.to_string(),
        path: desk.relative(&live),
    })
}
