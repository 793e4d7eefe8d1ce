//! The lore-card file format: Markdown cards with YAML frontmatter, kept in a vault folder.
//!
//! This module is pure: it parses and renders card text and `kinds.yaml`, and never touches the
//! file system. The storage crate owns the vault on disk.
//!
//! * [`Kind`]: the six card kinds; the kind comes from the card's top-level directory.
//! * [`KindsConfig`]: the parsed `kinds.yaml` (directory names, per-kind sections, private sections).
//! * [`Card`], [`parse_card`]: one card, parsed forgivingly (malformed values fall back to defaults
//!   and leave a note in [`Card::warnings`]); [`Card::render`] writes it back.
//! * [`safe_key`]: the rules a card key (file stem) must follow.
//! * [`check_card`]: the lint behind `lore cards check`.

mod body;
mod card;
mod check;
mod config;
mod fields;
mod key;
mod render;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_check;

pub use card::{Card, CardProblem, MANAGED_FIELDS, MatchMode, Secondary, parse_card};
pub use check::{CheckCode, CheckProblem, check_card, check_parsed};
pub use config::KindsConfig;
pub(crate) use fields::parse_list;
pub use key::{KeyError, MAX_KEY_BYTES, safe_key};

/// Longest who line (the one-line summary used by `see also` ref lines), in characters.
pub const WHO_LINE_MAX_CHARS: usize = 120;
/// Scan depth (in turns) used when a card does not set its own.
pub const DEFAULT_SCAN_DEPTH: u8 = 3;
/// Largest accepted `scan_depth`; larger values are clamped.
pub const MAX_SCAN_DEPTH: u8 = 10;
/// Longest `recent` section the writers accept, in characters.
pub const RECENT_MAX_CHARS: usize = 600;
/// File name of the vault configuration.
pub const CONFIG_FILENAME: &str = "kinds.yaml";

/// The kind of a card, decided by the top-level directory it sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A person (`people/`).
    People,
    /// An event (`events/`).
    Event,
    /// A place (`places/`).
    Place,
    /// A thing (`things/`).
    Thing,
    /// Slang or an in-joke (`slang/`).
    Slang,
    /// A free-form entry at the vault root (or under an unknown folder).
    Entry,
}

impl Kind {
    /// Every kind, in table order.
    pub const ALL: [Kind; 6] = [
        Kind::People,
        Kind::Event,
        Kind::Place,
        Kind::Thing,
        Kind::Slang,
        Kind::Entry,
    ];

    /// The kind's name as written in frontmatter and `kinds.yaml` (`"people"`, `"event"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::People => "people",
            Kind::Event => "event",
            Kind::Place => "place",
            Kind::Thing => "thing",
            Kind::Slang => "slang",
            Kind::Entry => "entry",
        }
    }

    /// The default directory of the kind; `None` for [`Kind::Entry`], which lives at the vault root.
    pub fn dir(self) -> Option<&'static str> {
        match self {
            Kind::People => Some("people"),
            Kind::Event => Some("events"),
            Kind::Place => Some("places"),
            Kind::Thing => Some("things"),
            Kind::Slang => Some("slang"),
            Kind::Entry => None,
        }
    }

    /// Parses a kind name (case-insensitive); `None` when it is not one of the six.
    pub fn parse(name: &str) -> Option<Kind> {
        let name = name.trim();
        Kind::ALL
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(name))
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
