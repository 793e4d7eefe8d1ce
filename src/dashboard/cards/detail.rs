//! One card as the editor shows it: every managed field, each section's text (private ones
//! included and named), the head and unknown sections, the extra frontmatter, the raw file and
//! its mtime string. Read from disk, never from the cached book, so the mtime is the one a write
//! will be checked against.

use std::path::PathBuf;
use std::time::SystemTime;

use actix_web::http::StatusCode;
use lore_proto::cards::{Card, Kind, KindsConfig, parse_card, safe_key};
use serde::Serialize;

use super::{ARCHIVE_DIR, CardDesk, mtime_string};
use crate::dashboard::error::ApiError;

/// A card file read from disk.
#[derive(Debug, Clone)]
pub struct CardFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
    /// Its modification time.
    pub modified: Option<SystemTime>,
    /// The parsed card, or why it cannot be parsed.
    pub card: Result<Card, String>,
    /// In the archive.
    pub archived: bool,
}

/// Checks a card key (the file stem).
pub fn check_key(key: &str) -> Result<String, ApiError> {
    safe_key(key).map_err(|err| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_key",
            format!("card name `{key}` is not allowed: {err}"),
        )
    })
}

/// Where a live or archived card of `kind` named `key` lives.
pub fn card_path(
    desk: &CardDesk,
    kind: Kind,
    key: &str,
    config: &KindsConfig,
    archived: bool,
) -> Result<PathBuf, ApiError> {
    let key = check_key(key)?;
    if archived {
        return Ok(desk.archive_dir(kind, config).join(format!("{key}.md")));
    }
    Ok(desk.vault.path_for(&key, kind, config)?)
}

/// Reads a card file; `None` when there is none.
pub fn read_card(
    desk: &CardDesk,
    kind: Kind,
    key: &str,
    config: &KindsConfig,
    archived: bool,
) -> Result<Option<CardFile>, ApiError> {
    let path = card_path(desk, kind, key, config, archived)?;
    let metadata = match std::fs::metadata(&path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => {
            return Err(ApiError::internal(format!(
                "cannot read {}: {err}",
                path.display()
            )));
        }
    };
    if metadata.len() > lore_storage::vault::MAX_CARD_BYTES {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "bad_card",
            format!(
                "{} is over the 4 MB card limit; split it in an editor",
                desk.relative(&path)
            ),
        ));
    }
    let bytes = std::fs::read(&path)
        .map_err(|err| ApiError::internal(format!("cannot read {}: {err}", path.display())))?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let card = parse_card(&stem, kind, &text, config).map_err(|problem| problem.to_string());
    Ok(Some(CardFile {
        path,
        text,
        modified: metadata.modified().ok(),
        card,
        archived,
    }))
}

/// The card detail (`GET /api/v1/cards/{kind}/{key}`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardDetail {
    /// File stem.
    pub key: String,
    /// Kind.
    pub kind: &'static str,
    /// Title.
    pub title: String,
    /// Vault-relative path.
    pub path: String,
    /// Keywords.
    pub keywords: Vec<String>,
    /// Aliases.
    pub aliases: Vec<String>,
    /// Secondary conditions.
    pub secondary: Secondary,
    /// Window in turns; `None` uses the default.
    pub scan_depth: Option<u8>,
    /// Related card keys.
    pub refs: Vec<String>,
    /// Tie-breaker.
    pub priority: f64,
    /// Enabled.
    pub enabled: bool,
    /// Injected automatically.
    pub inject: bool,
    /// Always fires.
    pub constant: bool,
    /// `whole_word` or `substring`.
    pub r#match: &'static str,
    /// Case-sensitive matching.
    pub case_sensitive: bool,
    /// Section name → text, every section of the kind plus the private ones, in table order
    /// (entry cards: `_head` only).
    pub fields: Vec<(String, String)>,
    /// The names among `fields` that are private: never injected, never matched.
    pub private_fields: Vec<String>,
    /// Text before the first heading (sectioned kinds).
    pub head: String,
    /// Unknown `##` sections, verbatim.
    pub extra: String,
    /// Frontmatter keys the card model does not own.
    pub extra_fm: serde_json::Value,
    /// Why the file does not parse, if it does not.
    pub problem: Option<String>,
    /// Values that were malformed and replaced by defaults.
    pub warnings: Vec<String>,
    /// The file's mtime string, for the write's lock.
    pub mtime: Option<String>,
    /// The raw file.
    pub text: String,
    /// In the archive.
    pub archived: bool,
}

/// The four secondary lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Secondary {
    /// Every word must appear.
    #[serde(default)]
    pub all: Vec<String>,
    /// One word must appear.
    #[serde(default)]
    pub any: Vec<String>,
    /// Veto when one appears.
    #[serde(default)]
    pub not: Vec<String>,
    /// Veto when all appear.
    #[serde(default)]
    pub not_all: Vec<String>,
}

/// The section names the editor shows for `kind`, in order, and which are private.
pub fn field_names(kind: Kind, config: &KindsConfig) -> (Vec<String>, Vec<String>) {
    let all = config.all_sections_for(kind);
    if all.is_empty() {
        return (vec!["_head".to_string()], Vec::new());
    }
    let private = all
        .iter()
        .filter(|n| config.is_private(n))
        .cloned()
        .collect();
    (all, private)
}

/// The detail of a card file.
pub fn card_detail(
    desk: &CardDesk,
    file: &CardFile,
    kind: Kind,
    config: &KindsConfig,
) -> CardDetail {
    let key = file
        .path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (card, problem) = match &file.card {
        Ok(card) => (card.clone(), None),
        Err(problem) => {
            let mut card = Card::new(&key, kind);
            card.head = file.text.clone();
            (card, Some(problem.clone()))
        }
    };
    let (names, private_fields) = field_names(kind, config);
    let fields = names
        .iter()
        .map(|name| {
            let text = if name == "_head" {
                card.head.clone()
            } else {
                card.section(name).unwrap_or("").to_string()
            };
            (name.clone(), text)
        })
        .collect();
    let s = &card.secondary;
    CardDetail {
        key: card.key.clone(),
        kind: kind.as_str(),
        title: card.title.clone(),
        path: desk.relative(&file.path),
        keywords: card.keywords.clone(),
        aliases: card.aliases.clone(),
        secondary: Secondary {
            all: s.all.clone(),
            any: s.any.clone(),
            not: s.not.clone(),
            not_all: s.not_all.clone(),
        },
        scan_depth: card.scan_depth,
        refs: card.refs.clone(),
        priority: card.priority,
        enabled: card.enabled,
        inject: card.inject,
        constant: card.constant,
        r#match: card.match_mode.as_str(),
        case_sensitive: card.case_sensitive,
        fields,
        private_fields,
        head: if names_are_free(kind, config) {
            String::new()
        } else {
            card.head.clone()
        },
        extra: card.extra_sections.clone(),
        extra_fm: serde_json::to_value(&card.extra).unwrap_or(serde_json::Value::Null),
        problem,
        warnings: card.warnings.clone(),
        mtime: mtime_string(file.modified),
        text: file.text.clone(),
        archived: file.archived,
    }
}

fn names_are_free(kind: Kind, config: &KindsConfig) -> bool {
    config.all_sections_for(kind).is_empty()
}

/// Reads one card and answers its detail, or 404.
pub fn show(
    desk: &CardDesk,
    kind: Kind,
    key: &str,
    archived: bool,
) -> Result<CardDetail, ApiError> {
    let config = desk.config();
    let file = read_card(desk, kind, key, &config, archived)?.ok_or_else(|| {
        ApiError::not_found(format!(
            "no {}card `{key}` of kind {kind}; list them with GET /api/v1/cards",
            if archived { "archived " } else { "" }
        ))
    })?;
    Ok(card_detail(desk, &file, kind, &config))
}

/// Every archived card, with its path and mtime.
pub fn archived_cards(
    desk: &CardDesk,
    config: &KindsConfig,
) -> Vec<(Card, PathBuf, Option<SystemTime>)> {
    let root = desk.vault.root().join(ARCHIVE_DIR);
    let mut out = Vec::new();
    let Ok(folders) = std::fs::read_dir(&root) else {
        return out;
    };
    for folder in folders.flatten() {
        let name = folder.file_name().to_string_lossy().into_owned();
        let kind = if name == "entry" {
            Kind::Entry
        } else {
            config.kind_for_dir(&name)
        };
        let Ok(files) = std::fs::read_dir(folder.path()) else {
            continue;
        };
        for file in files.flatten() {
            let path = file.path();
            if path.extension().is_none_or(|e| e != "md") {
                continue;
            }
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let modified = file.metadata().ok().and_then(|m| m.modified().ok());
            if let Ok(card) = parse_card(&stem, kind, &text, config) {
                out.push((card, path, modified));
            }
        }
    }
    out
}
