//! The card editor's data (lorecards' web API, done our way): the vault's kinds and section
//! table from `kinds.yaml`, the card list by kind (live or archived), one card as the editor
//! shows it, writes with optimistic locking on the file's mtime (a nanosecond string), archive
//! and restore, the "try a sentence" dry run, the health check, the cards recently surfaced in
//! conversations, and SillyTavern import and export.
//!
//! - [`detail`]: one card's detail JSON and how it is read from disk.
//! - [`write`]: create, update, archive, restore.
//! - [`probe`]: try, check, recently surfaced.
//! - [`book_io`]: SillyTavern import and export.

pub mod book_io;
pub mod detail;
pub mod probe;
pub mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use lore_actors::cards::library::CardLibrary;
use lore_proto::cards::{Kind, KindsConfig};
use lore_storage::Vault;
use serde::Serialize;

use super::error::ApiError;

/// Folder of archived cards under the vault.
pub const ARCHIVE_DIR: &str = "_archive";

/// The card book the dashboard works on: the vault folder and the gateway's live library.
#[derive(Clone)]
pub struct CardDesk {
    /// The vault.
    pub vault: Vault,
    /// The gateway's book, reloaded after each write so injection sees it at once.
    pub library: Arc<CardLibrary>,
}

impl CardDesk {
    /// The desk of a gateway, or 503 when cards are off.
    pub fn of(state: &crate::server::AppState) -> Result<Self, ApiError> {
        match (&state.config.cards_vault, &state.cards) {
            (Some(root), Some(library)) => Ok(Self {
                vault: Vault::new(root),
                library: Arc::clone(library),
            }),
            _ => Err(ApiError::unavailable(
                "cards_off",
                "the card book is off (LORE_CARDS=off); unset it and restart the gateway",
            )),
        }
    }

    /// The vault's `kinds.yaml`, read now.
    pub fn config(&self) -> KindsConfig {
        self.vault.config().0
    }

    /// A path relative to the vault, for display.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.vault.root())
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// The archive folder of `kind`.
    pub fn archive_dir(&self, kind: Kind, config: &KindsConfig) -> PathBuf {
        let name = config.dir_for(kind).unwrap_or("entry");
        self.vault.root().join(ARCHIVE_DIR).join(name)
    }
}

/// A file's mtime as nanoseconds since the epoch, in a string (exact in a browser, where a JSON
/// number would lose the last digits and break every lock check).
pub fn mtime_string(modified: Option<SystemTime>) -> Option<String> {
    modified
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos().to_string())
}

/// Reads an mtime string back; `None` for an empty one (no check), an error for garbage.
pub fn parse_mtime(raw: Option<&str>) -> Result<Option<SystemTime>, ApiError> {
    let Some(raw) = raw.map(str::trim).filter(|r| !r.is_empty() && *r != "0") else {
        return Ok(None);
    };
    let nanos: u128 = raw.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "mtime `{raw}` is not the nanosecond string the card detail gave; read the card again"
        ))
    })?;
    let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
    let sub = u32::try_from(nanos % 1_000_000_000).unwrap_or(0);
    Ok(UNIX_EPOCH.checked_add(Duration::new(secs, sub)))
}

/// Reads a kind name, or says which exist.
pub fn parse_kind(name: &str) -> Result<Kind, ApiError> {
    Kind::parse(name).ok_or_else(|| {
        ApiError::new(
            actix_web::http::StatusCode::BAD_REQUEST,
            "bad_kind",
            format!(
                "unknown kind `{name}`; use one of {}",
                Kind::ALL.map(Kind::as_str).join(", ")
            ),
        )
    })
}

/// One kind of the section table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KindView {
    /// `people`, `event`, …
    pub kind: &'static str,
    /// Its folder (`""` for entry, at the vault root).
    pub dir: String,
    /// Its sections in order (empty for entry: one free text).
    pub sections: Vec<String>,
    /// Private sections: kept on the card, never injected, never matched.
    pub private_sections: Vec<String>,
    /// Target of "recent" updates.
    pub recent_section: Option<String>,
}

/// The vault's section table (`GET /api/v1/cards/kinds`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KindsView {
    /// Every kind.
    pub kinds: Vec<KindView>,
    /// The private section names.
    pub private_sections: Vec<String>,
    /// The vault folder.
    pub vault: String,
    /// The token budget of an injected block.
    pub budget_tokens: usize,
    /// Default scan depth in turns.
    pub scan_depth: u8,
    /// Warnings from `kinds.yaml`.
    pub warnings: Vec<String>,
}

/// The section table.
pub fn kinds(desk: &CardDesk) -> KindsView {
    let (config, warnings, _) = desk.vault.config();
    KindsView {
        kinds: Kind::ALL
            .iter()
            .map(|kind| {
                let sections = config.sections(*kind).to_vec();
                KindView {
                    kind: kind.as_str(),
                    dir: config.dir_for(*kind).unwrap_or("").to_string(),
                    private_sections: if sections.is_empty() {
                        Vec::new()
                    } else {
                        config.private_sections.clone()
                    },
                    sections,
                    recent_section: config.recent_section(*kind).map(str::to_string),
                }
            })
            .collect(),
        private_sections: config.private_sections.clone(),
        vault: desk.vault.root().display().to_string(),
        budget_tokens: desk.library.settings.budget_tokens,
        scan_depth: desk.library.settings.scan_depth,
        warnings,
    }
}

/// One card in the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardRow {
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
    /// Enabled.
    pub enabled: bool,
    /// Injected automatically.
    pub inject: bool,
    /// First 120 characters of the private-stripped body, whitespace collapsed.
    pub preview: String,
    /// mtime string.
    pub mtime: Option<String>,
    /// In the archive.
    pub archived: bool,
}

/// The card list (`GET /api/v1/cards`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardList {
    /// Cards, by kind then title.
    pub cards: Vec<CardRow>,
    /// Files that cannot be loaded, with why.
    pub problems: Vec<(String, String)>,
    /// Count of live cards per kind, for the kind filter.
    pub counts: Vec<(&'static str, usize)>,
    /// The vault folder.
    pub vault: String,
}

fn preview(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.chars().take(120).collect()
}

/// Lists the live cards (from the gateway's book) or the archived ones (read now).
pub fn list(desk: &CardDesk, kind: Option<Kind>, archived: bool) -> CardList {
    let book = desk.library.current();
    let snapshot = &book.snapshot;
    let config = &snapshot.config;
    let mut counts: Vec<(&'static str, usize)> =
        Kind::ALL.iter().map(|k| (k.as_str(), 0)).collect();
    for entry in &snapshot.cards {
        if let Some(count) = counts
            .iter_mut()
            .find(|(k, _)| *k == entry.card.kind.as_str())
        {
            count.1 += 1;
        }
    }
    let mut cards: Vec<CardRow> = if archived {
        detail::archived_cards(desk, config)
            .into_iter()
            .map(|(card, path, modified)| CardRow {
                key: card.key.clone(),
                kind: card.kind.as_str(),
                title: card.title.clone(),
                path: desk.relative(&path),
                keywords: card.keywords.clone(),
                aliases: card.aliases.clone(),
                enabled: card.enabled,
                inject: card.inject,
                preview: preview(&card.effective_body(config)),
                mtime: mtime_string(modified),
                archived: true,
            })
            .collect()
    } else {
        snapshot
            .cards
            .iter()
            .map(|entry| CardRow {
                key: entry.card.key.clone(),
                kind: entry.card.kind.as_str(),
                title: entry.card.title.clone(),
                path: desk.relative(&entry.path),
                keywords: entry.card.keywords.clone(),
                aliases: entry.card.aliases.clone(),
                enabled: entry.card.enabled,
                inject: entry.card.inject,
                preview: preview(&entry.card.effective_body(config)),
                mtime: mtime_string(entry.modified),
                archived: false,
            })
            .collect()
    };
    cards.retain(|row| kind.is_none_or(|k| row.kind == k.as_str()));
    cards.sort_by(|a, b| {
        let rank = |k: &str| Kind::ALL.iter().position(|x| x.as_str() == k);
        rank(a.kind)
            .cmp(&rank(b.kind))
            .then_with(|| a.title.to_lowercase().cmp(&b.title.to_lowercase()))
    });
    CardList {
        cards,
        problems: snapshot
            .problems
            .iter()
            .map(|p| (desk.relative(&p.path), p.message.clone()))
            .collect(),
        counts,
        vault: desk.vault.root().display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn mtimes_survive_the_string_round_trip_exactly() {
        let at = UNIX_EPOCH + Duration::new(1_790_000_000, 123_456_789);
        let text = mtime_string(Some(at)).unwrap();
        assert_eq!(text, "1790000000123456789");
        assert_eq!(parse_mtime(Some(&text)).unwrap(), Some(at));
        assert_eq!(parse_mtime(Some("")).unwrap(), None);
        assert_eq!(parse_mtime(None).unwrap(), None);
        assert!(parse_mtime(Some("yesterday")).is_err());
    }
}
