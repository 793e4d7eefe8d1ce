//! SillyTavern lorebooks: import and export of World Info JSON and of Character Card V2/V3
//! `character_book`s.
//!
//! The mapping (see the module docs of [`import`](self::import_world_info) and
//! [`export`](self::export_world_info) for details):
//!
//! | SillyTavern | card |
//! |---|---|
//! | `key` / V2 `keys` | `keywords` (`/regex/flags` keys kept verbatim) |
//! | `keysecondary` + `selectiveLogic` | AND_ANY 0 → `secondary.any`, NOT_ALL 1 → `secondary.not_all`, NOT_ANY 2 → `secondary.not`, AND_ALL 3 → `secondary.all` |
//! | `comment` (V2 `comment`, else `name`) | `title`, and the key (file stem) via [`safe_key`](crate::cards::safe_key) |
//! | `content` | body (export writes the private-stripped body only) |
//! | `constant` | `constant` |
//! | `disable` / V2 `enabled` | `enabled` |
//! | `order` / V2 `insertion_order` | `priority` |
//! | `scanDepth` (messages) | `scan_depth` (turns = ceil(messages / 2)) |
//! | `matchWholeWords` | `match` (`false` → substring) |
//! | `caseSensitive` | `case_sensitive` |
//! | everything else | frontmatter `st:`, restored untouched on export |
//!
//! What SillyTavern cannot hold (aliases, refs, kind, key, `inject`, extra secondary lists) is
//! written to a `lore` object on each exported entry, which SillyTavern ignores and an import
//! reads back, so import → export → import loses nothing a card represents.

mod export;
mod import;
mod v2;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_roundtrip;

pub use export::export_world_info;
pub use import::{import_world_info, import_world_info_as};

use crate::cards::Card;

/// Frontmatter key holding the SillyTavern fields a card carries but does not honour.
pub const ST_FIELD: &str = "st";
/// Entry field holding the card fields SillyTavern has no place for.
pub const LORE_FIELD: &str = "lore";

/// SillyTavern `selectiveLogic` codes (`world_info_logic`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectiveLogic {
    /// 0: at least one secondary key matches.
    AndAny,
    /// 1: blocks only when every secondary key matches.
    NotAll,
    /// 2: no secondary key matches.
    NotAny,
    /// 3: every secondary key matches.
    AndAll,
}

impl SelectiveLogic {
    /// The numeric code SillyTavern stores.
    pub fn code(self) -> u8 {
        match self {
            SelectiveLogic::AndAny => 0,
            SelectiveLogic::NotAll => 1,
            SelectiveLogic::NotAny => 2,
            SelectiveLogic::AndAll => 3,
        }
    }

    /// The logic for a code; `None` outside 0..=3.
    pub fn from_code(code: u64) -> Option<SelectiveLogic> {
        match code {
            0 => Some(SelectiveLogic::AndAny),
            1 => Some(SelectiveLogic::NotAll),
            2 => Some(SelectiveLogic::NotAny),
            3 => Some(SelectiveLogic::AndAll),
            _ => None,
        }
    }
}

/// One imported entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedCard {
    /// The card, ready to render into the vault.
    pub card: Card,
    /// The entry's uid in the source book (map key, `uid`, V2 `id`, or list index).
    pub uid: String,
}

/// An entry the import left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedEntry {
    /// The entry's uid in the source book.
    pub uid: String,
    /// Lowercase reason.
    pub reason: String,
}

/// The result of an import: cards plus the entries that were skipped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportedBook {
    /// Book name (`name` of a `character_book`, or of the character card), when present.
    pub name: Option<String>,
    /// Imported cards, in source order, with unique keys.
    pub cards: Vec<ImportedCard>,
    /// Entries that could not become cards.
    pub skipped: Vec<SkippedEntry>,
}

/// Why a whole book could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LorebookError {
    /// The JSON is not a lorebook, a character card with a book, or a list of entries.
    #[error("not a lorebook: {0}")]
    NotABook(String),
}
