//! The card matching engine: which cards of the card book fire on a conversation, in which order,
//! and what fits in the token budget. Pure code: no actors, no IO.
//!
//! Table of contents:
//! - this file: the input and output types ([`MatchCard`], [`Turn`], [`MatchOptions`],
//!   [`Consultation`], [`FiredCard`], [`DroppedCard`]).
//! - [`engine`]: [`consult`], the whole pipeline (window, term hits, secondary rules, score, order).
//! - `pack`: skip-and-continue token packing and the "see also" ref lines, computed after the final
//!   selection.
//! - `normalize`: NFKC + case folding and the script classes that decide how a term matches.
//! - `segment`: word boundaries of a message (UAX #29 for spaced scripts, jieba-rs for Han and kana).
//! - `term`: one compiled term (literal or `/regex/flags`) and where it hits.
//! - [`render`]: the card and block renderers, and [`strip_markers`] for our own injected blocks.
//! - token counting is [`crate::tokens`], the one estimator of the crate (re-exported here).
//! - [`candidates`](mod@candidates): proper nouns in the conversation that deserve a card.

pub mod book;
pub mod candidates;
pub mod engine;
pub mod library;
mod normalize;
mod pack;
pub mod render;
mod segment;
mod term;

#[cfg(test)]
mod tests;

use serde::Serialize;

pub use crate::tokens::{BpeTokenCounter, TokenCounter};
pub use candidates::candidates;
pub use engine::consult;
pub use render::{MARKER_PREFIX, render_block, strip_markers};

/// Largest scan depth in turns (a turn = a user and an assistant message).
pub const MAX_SCAN_DEPTH: u8 = 10;

/// Secondary words of a card (the card format's own type); every list uses the card's matching
/// mode.
pub use lore_proto::cards::Secondary;

/// What the engine needs to know about one card.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchCard {
    /// Unique key (the vault path without extension, e.g. `people/alice`).
    pub key: String,
    /// Kind (`people`, `events`, …, `entry`).
    pub kind: String,
    /// Title; always a match term.
    pub title: String,
    /// Primary keywords; `/pattern/flags` is a regex.
    pub keywords: Vec<String>,
    /// Aliases; match exactly like keywords.
    pub aliases: Vec<String>,
    /// Secondary conditions.
    pub secondary: Secondary,
    /// Window in turns; `None` takes the call's default; clamped to [`MAX_SCAN_DEPTH`].
    pub scan_depth: Option<u8>,
    /// Tie-break after the score; higher first.
    pub priority: f64,
    /// Keys of cards that get one "see also" line when they do not fire themselves.
    pub refs: Vec<String>,
    /// `false`: the card never fires and is never a "see also" target.
    pub inject: bool,
    /// `false`: the card never fires.
    pub enabled: bool,
    /// Always fires (score 0), without term or secondary checks.
    pub constant: bool,
    /// `true` (default): terms match on word boundaries; `false`: substring matching.
    pub whole_word: bool,
    /// `true`: no case folding for this card (NFKC still applies).
    pub case_sensitive: bool,
    /// The body, already stripped of private sections.
    pub body: String,
    /// One line describing the card, used in other cards' "see also" lines.
    pub who_line: Option<String>,
}

impl Default for MatchCard {
    fn default() -> Self {
        MatchCard {
            key: String::new(),
            kind: "entry".to_owned(),
            title: String::new(),
            keywords: Vec::new(),
            aliases: Vec::new(),
            secondary: Secondary::default(),
            scan_depth: None,
            priority: 0.0,
            refs: Vec::new(),
            inject: true,
            enabled: true,
            constant: false,
            whole_word: true,
            case_sensitive: false,
            body: String::new(),
            who_line: None,
        }
    }
}

impl MatchCard {
    /// A card with the given identity and body and every other field at its default.
    pub fn new(key: &str, kind: &str, title: &str, body: &str) -> Self {
        MatchCard {
            key: key.to_owned(),
            kind: kind.to_owned(),
            title: title.to_owned(),
            body: body.to_owned(),
            ..MatchCard::default()
        }
    }
}

/// Who wrote a history message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnRole {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One history message, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// Author.
    pub role: TurnRole,
    /// Plain text (our own marker blocks are stripped by [`consult`]).
    pub text: String,
}

impl Turn {
    /// A user message.
    pub fn user(text: &str) -> Self {
        Turn {
            role: TurnRole::User,
            text: text.to_owned(),
        }
    }

    /// An assistant message.
    pub fn assistant(text: &str) -> Self {
        Turn {
            role: TurnRole::Assistant,
            text: text.to_owned(),
        }
    }
}

/// Knobs of one consultation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchOptions {
    /// Default window in turns for cards without their own; clamped to [`MAX_SCAN_DEPTH`].
    pub scan_depth: u8,
    /// Token budget of the whole block: framing plus every rendered card plus separators.
    pub budget_tokens: usize,
    /// Hard cap: a single card over this many tokens is never injected (`TooLarge`).
    pub max_first_card_tokens: usize,
    /// Text between the opening marker and the first card; counted in the budget.
    pub framing: String,
    /// Keys already present in the model's context (dedupe done by the caller): they are not
    /// packed again (`AlreadyPresent`) and get no "see also" line.
    pub already_present: Vec<String>,
}

/// Default framing text of the injected block.
pub const DEFAULT_FRAMING: &str = "A memory surfaces:\n\n";

impl MatchOptions {
    /// Default options with a budget of `tokens`, which is also the single-card cap.
    pub fn with_budget(tokens: usize) -> Self {
        MatchOptions {
            budget_tokens: tokens,
            max_first_card_tokens: tokens,
            ..MatchOptions::default()
        }
    }
}

/// Builds the slow singletons (the jieba dictionary, the o200k_base encoder) now, so that the
/// first consultation of a process does not pay for them. Call it off the request path.
pub fn warm_up() {
    let _ = segment::jieba();
    BpeTokenCounter::warm_up();
}

impl Default for MatchOptions {
    fn default() -> Self {
        MatchOptions {
            scan_depth: 3,
            budget_tokens: 600,
            max_first_card_tokens: 600,
            framing: DEFAULT_FRAMING.to_owned(),
            already_present: Vec::new(),
        }
    }
}

/// The outcome of [`consult`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Consultation {
    /// Cards to inject, in injection order.
    pub fired: Vec<FiredCard>,
    /// Cards that matched (or were constant, or are broken) but are not injected, with the reason.
    pub dropped: Vec<DroppedCard>,
    /// Tokens of framing + fired cards + separators; 0 when nothing fired.
    pub tokens_used: usize,
}

impl Consultation {
    /// Keys of the fired cards, in injection order.
    pub fn fired_keys(&self) -> Vec<&str> {
        self.fired.iter().map(|c| c.key.as_str()).collect()
    }

    /// The drop reason of `key`, when it was dropped.
    pub fn drop_reason(&self, key: &str) -> Option<DropReason> {
        self.dropped.iter().find(|d| d.key == key).map(|d| d.reason)
    }
}

/// A card selected for injection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FiredCard {
    /// Card key.
    pub key: String,
    /// Card title.
    pub title: String,
    /// Card kind.
    pub kind: String,
    /// Distinct hit terms plus those that hit the current message; 0 for constant cards.
    pub score: u32,
    /// The terms that hit, as written on the card.
    pub hit_terms: Vec<String>,
    /// `### <title> [<kind>]\n<body>` plus any `(see also: …)` lines.
    pub rendered: String,
    /// Tokens of `rendered`.
    pub tokens: usize,
}

/// Why a card did not fire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// It matched but did not fit in the remaining budget.
    Budget,
    /// The rendered card alone is over `max_first_card_tokens`.
    TooLarge,
    /// A `secondary.all` word is missing from the window.
    SecondaryAll,
    /// No `secondary.any` word is in the window.
    SecondaryAny,
    /// A `secondary.not` word is in a message that produced a primary hit.
    VetoedByNot,
    /// Every `secondary.not_all` word is in the window.
    VetoedByNotAll,
    /// `enabled: false` (reported only when it would have matched).
    Disabled,
    /// `inject: false` (reported only when it would have matched).
    NotInjectable,
    /// A `/regex/` term or secondary word does not compile; the card is skipped.
    BadRegex,
    /// No usable term: every keyword, alias and the title are blank.
    NoTerms,
    /// The key is in `MatchOptions::already_present`.
    AlreadyPresent,
}

/// A card that was considered and not injected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DroppedCard {
    /// Card key.
    pub key: String,
    /// Card title.
    pub title: String,
    /// Why.
    pub reason: DropReason,
    /// Score it had (0 when it never got one).
    pub score: u32,
    /// Terms that hit, as written on the card.
    pub hit_terms: Vec<String>,
    /// A human-readable explanation (the vetoing word, the token figures, the regex error).
    pub detail: String,
}
