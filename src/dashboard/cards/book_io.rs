//! SillyTavern lorebooks through the API: import a World Info or Character Card V2/V3 book
//! (mapped whole before anything is written, so a malformed book changes nothing; existing
//! cards are kept unless `force`) and export every loadable card as World Info, private
//! sections left out.

use actix_web::http::StatusCode;
use lore_proto::cards::Card;
use lore_proto::lorebook::{export_world_info, import_world_info_as};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{CardDesk, parse_kind};
use crate::dashboard::error::ApiError;

/// The body of `POST /api/v1/cards/import`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportBody {
    /// The lorebook JSON.
    pub book: Value,
    /// Put every card in this kind (default: the kind a previous export recorded, else entry).
    #[serde(default)]
    pub kind: Option<String>,
    /// Overwrite existing cards of the same name.
    #[serde(default)]
    pub force: bool,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// Vault-relative paths written.
    pub written: Vec<String>,
    /// Existing cards kept (send `force` to overwrite them).
    pub kept: Vec<String>,
    /// Entries left out: `uid: reason`.
    pub skipped: Vec<String>,
}

/// Imports a book.
pub fn import(desk: &CardDesk, body: ImportBody) -> Result<ImportReport, ApiError> {
    let config = desk.config();
    let kind = body
        .kind
        .as_deref()
        .filter(|k| !k.trim().is_empty())
        .map(parse_kind)
        .transpose()?;
    let book = import_world_info_as(&body.book, kind, &config).map_err(|err| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "no_book",
            format!("this is not a SillyTavern lorebook: {err}"),
        )
    })?;
    let mut report = ImportReport {
        written: Vec::new(),
        kept: Vec::new(),
        skipped: book
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.uid, s.reason))
            .collect(),
    };
    for entry in &book.cards {
        let card = &entry.card;
        let path = match desk.vault.path_for(&card.key, card.kind, &config) {
            Ok(path) => path,
            Err(err) => {
                report.skipped.push(format!("{}: {err}", entry.uid));
                continue;
            }
        };
        if path.exists() && !body.force {
            report.kept.push(desk.relative(&path));
            continue;
        }
        match desk.vault.write_card(card, &config, None) {
            Ok(path) => report.written.push(desk.relative(&path)),
            Err(err) => report.skipped.push(format!("{}: {err}", entry.uid)),
        }
    }
    desk.library.reload();
    Ok(report)
}

/// Exports every loadable card as World Info JSON.
pub fn export(desk: &CardDesk) -> Value {
    let snapshot = desk.vault.load(None);
    let cards: Vec<Card> = snapshot.cards.iter().map(|c| c.card.clone()).collect();
    export_world_info(&cards, &snapshot.config)
}
