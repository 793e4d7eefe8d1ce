//! One card: its fields, the forgiving frontmatter parser and the body accessors.

use yaml_serde::{Mapping, Value};

use super::body::{self, Split};
use super::config::KindsConfig;
use super::fields::{describe, number, parse_bool, parse_list, scalar_text};
use super::{Kind, MAX_SCAN_DEPTH};

/// Frontmatter keys the card model owns; every other key is kept in [`Card::extra`].
pub const MANAGED_FIELDS: [&str; 13] = [
    "kind",
    "title",
    "keywords",
    "aliases",
    "secondary",
    "scan_depth",
    "refs",
    "priority",
    "enabled",
    "inject",
    "constant",
    "match",
    "case_sensitive",
];

/// Secondary conditions checked after a primary term hits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Secondary {
    /// Every word must appear somewhere in the window (SillyTavern AND_ALL, 3).
    pub all: Vec<String>,
    /// At least one word must appear somewhere in the window (SillyTavern AND_ANY, 0).
    pub any: Vec<String>,
    /// Veto when any word appears in a message that produced a primary hit (NOT_ANY, 2).
    pub not: Vec<String>,
    /// Veto only when every word appears in the window (SillyTavern NOT_ALL, 1).
    pub not_all: Vec<String>,
}

impl Secondary {
    /// Whether all four lists are empty.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty() && self.any.is_empty() && self.not.is_empty() && self.not_all.is_empty()
    }
}

/// How a card's terms are found in text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MatchMode {
    /// Letters and digits must sit on word boundaries (`Al` does not fire on "wallaby").
    #[default]
    WholeWord,
    /// Plain substring matching (frontmatter `match: substring`).
    Substring,
}

impl MatchMode {
    /// The frontmatter spelling: `whole_word` or `substring`.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::WholeWord => "whole_word",
            MatchMode::Substring => "substring",
        }
    }
}

/// Why a card file could not be parsed at all. Such a card never fires; `check` reports it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardProblem {
    /// The text does not start with a `---` line.
    #[error("no frontmatter: start the file with a line containing only ---")]
    NoFrontmatter,
    /// The frontmatter is unclosed, not YAML, or not a mapping.
    #[error("bad frontmatter: {0}")]
    BadFrontmatter(String),
}

/// A parsed card.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    /// The file stem.
    pub key: String,
    /// Decided by the directory, never by the frontmatter.
    pub kind: Kind,
    /// Display title; defaults to the key. Always a match term.
    pub title: String,
    /// Primary match terms.
    pub keywords: Vec<String>,
    /// Further match terms, same weight as keywords.
    pub aliases: Vec<String>,
    /// Secondary conditions.
    pub secondary: Secondary,
    /// Window in turns (0..=10); `None` uses the caller's default.
    pub scan_depth: Option<u8>,
    /// Keys of related cards (one `see also` line each).
    pub refs: Vec<String>,
    /// Tie-breaker after score; higher first.
    pub priority: f64,
    /// `false` disables the card everywhere.
    pub enabled: bool,
    /// `false` keeps the card visible to tools but never auto-injected.
    pub inject: bool,
    /// A constant card always fires, keywords or not (SillyTavern `constant`).
    pub constant: bool,
    /// Whole-word (default) or substring matching.
    pub match_mode: MatchMode,
    /// Case-sensitive matching (default off).
    pub case_sensitive: bool,
    /// Frontmatter keys the model does not own (`st`, `emails`, …), in file order.
    pub extra: Mapping,
    /// Body text before the first section heading (the whole body for free-form kinds).
    pub head: String,
    /// Recognised sections in order of appearance (name → trimmed text).
    pub sections: Vec<(String, String)>,
    /// Unknown or repeated headings with their text, verbatim.
    pub extra_sections: String,
    /// The raw body after the closing fence; [`Card::render`] writes it back as is.
    pub body: String,
    /// Values that were malformed and replaced by defaults while parsing.
    pub warnings: Vec<String>,
}

impl Card {
    /// An empty card with every field at its default (title = key).
    pub fn new(key: &str, kind: Kind) -> Card {
        Card {
            key: key.to_owned(),
            kind,
            title: key.to_owned(),
            keywords: Vec::new(),
            aliases: Vec::new(),
            secondary: Secondary::default(),
            scan_depth: None,
            refs: Vec::new(),
            priority: 0.0,
            enabled: true,
            inject: true,
            constant: false,
            match_mode: MatchMode::WholeWord,
            case_sensitive: false,
            extra: Mapping::new(),
            head: String::new(),
            sections: Vec::new(),
            extra_sections: String::new(),
            body: String::new(),
            warnings: Vec::new(),
        }
    }

    /// Replaces the body and re-derives head, sections and extra sections from it.
    pub fn set_body(&mut self, body: &str, config: &KindsConfig) {
        let Split {
            head,
            sections,
            extra,
        } = body::split(body, &config.all_sections_for(self.kind));
        self.body = body.to_owned();
        self.head = head;
        self.sections = sections;
        self.extra_sections = extra;
    }

    /// Rebuilds the body from head, sections and extra sections (see [`Card::render_sections`]).
    pub fn sync_body(&mut self, config: &KindsConfig) {
        let body = self.render_sections(config);
        self.set_body(&body, config);
    }

    /// The text of a section, if the body has it.
    pub fn section(&self, name: &str) -> Option<&str> {
        self.sections
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_str())
    }

    /// The body with private sections removed, trimmed: the only text that may be matched,
    /// injected or exported.
    pub fn effective_body(&self, config: &KindsConfig) -> String {
        body::strip_private(&self.body, config).trim().to_owned()
    }

    /// The one-line summary used by `see also` lines, from the private-stripped body.
    pub fn who_line(&self, config: &KindsConfig) -> Option<String> {
        body::who_line(&self.effective_body(config), self.kind, config)
    }

    /// The normalised body: head, every section of the kind in table order (empty ones keep
    /// their heading), non-empty private sections, then the extra sections.
    pub fn render_sections(&self, config: &KindsConfig) -> String {
        body::render(
            &self.head,
            &self.sections,
            &self.extra_sections,
            self.kind,
            config,
        )
    }
}

/// Splits `text` into frontmatter and body on line-anchored `---` fences (a leading BOM is
/// ignored).
fn split_frontmatter(text: &str) -> Result<(&str, &str), CardProblem> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    if first.trim_end() != "---" {
        return Err(CardProblem::NoFrontmatter);
    }
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Ok((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    Err(CardProblem::BadFrontmatter(
        "no closing --- line after the frontmatter".into(),
    ))
}

/// Parses a card file. `key` is the file stem and `kind` comes from its directory.
///
/// Malformed values fall back to their defaults with a note in [`Card::warnings`]; only a
/// missing, unclosed or non-mapping frontmatter is an error.
pub fn parse_card(
    key: &str,
    kind: Kind,
    text: &str,
    config: &KindsConfig,
) -> Result<Card, CardProblem> {
    let (fm_text, body_text) = split_frontmatter(text)?;
    let fm: Mapping = match yaml_serde::from_str::<Value>(fm_text) {
        Ok(Value::Null) => Mapping::new(),
        Ok(Value::Mapping(m)) => m,
        Ok(other) => {
            return Err(CardProblem::BadFrontmatter(format!(
                "expected a mapping of fields, got {}",
                describe(&other)
            )));
        }
        Err(e) => return Err(CardProblem::BadFrontmatter(format!("invalid yaml: {e}"))),
    };
    let mut card = Card::new(key, kind);
    let w = &mut card.warnings;
    let get = |name: &str| fm.get(name).filter(|v| !v.is_null());
    if let Some(v) = get("title") {
        match scalar_text(v) {
            Some(t) if !t.trim().is_empty() => card.title = t.trim().to_owned(),
            Some(_) => {}
            None => w.push(format!("title: {} is not text; using the key", describe(v))),
        }
    }
    let list = |name: &str, w: &mut Vec<String>| {
        get(name).map_or_else(Vec::new, |v| parse_list(name, v, w))
    };
    card.keywords = list("keywords", w);
    card.aliases = list("aliases", w);
    card.refs = list("refs", w);
    if let Some(v) = get("secondary") {
        card.secondary = parse_secondary(v, w);
    }
    if let Some(v) = get("scan_depth") {
        card.scan_depth = parse_scan_depth(v, w);
    }
    if let Some(v) = get("priority") {
        match number(v).filter(|p| p.is_finite()) {
            Some(p) => card.priority = p,
            None => w.push(format!(
                "priority: {} is not a number; using 0",
                describe(v)
            )),
        }
    }
    card.enabled = parse_bool("enabled", get("enabled"), true, w);
    card.inject = parse_bool("inject", get("inject"), true, w);
    card.constant = parse_bool("constant", get("constant"), false, w);
    card.case_sensitive = parse_bool("case_sensitive", get("case_sensitive"), false, w);
    if let Some(v) = get("match") {
        let word = scalar_text(v)
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        card.match_mode = match word.replace('-', "_").as_str() {
            "substring" => MatchMode::Substring,
            "whole_word" | "word" | "wholeword" => MatchMode::WholeWord,
            _ => {
                w.push(format!(
                    "match: {} is not whole_word or substring; using whole_word",
                    describe(v)
                ));
                MatchMode::WholeWord
            }
        };
    }
    for (k, v) in &fm {
        if !k.as_str().is_some_and(|k| MANAGED_FIELDS.contains(&k)) {
            card.extra.insert(k.clone(), v.clone());
        }
    }
    card.set_body(body_text, config);
    Ok(card)
}

fn parse_secondary(value: &Value, w: &mut Vec<String>) -> Secondary {
    let mut sec = Secondary::default();
    let Some(map) = value.as_mapping() else {
        w.push(format!(
            "secondary: {} is not a mapping of all/any/not/not_all lists; ignored",
            describe(value)
        ));
        return sec;
    };
    for (k, v) in map {
        let name = k.as_str().unwrap_or("");
        let field = format!("secondary.{name}");
        match name {
            "all" => sec.all = parse_list(&field, v, w),
            "any" => sec.any = parse_list(&field, v, w),
            "not" => sec.not = parse_list(&field, v, w),
            "not_all" => sec.not_all = parse_list(&field, v, w),
            _ => w.push(format!(
                "secondary: unknown list {}; use all, any, not or not_all",
                describe(k)
            )),
        }
    }
    sec
}

fn parse_scan_depth(value: &Value, w: &mut Vec<String>) -> Option<u8> {
    let n = match value {
        Value::Bool(_) => None,
        v => number(v).filter(|n| n.is_finite()),
    };
    let Some(n) = n else {
        w.push(format!(
            "scan_depth: {} is not a number of turns; using the default",
            describe(value)
        ));
        return None;
    };
    let clamped = n.trunc().clamp(0.0, f64::from(MAX_SCAN_DEPTH));
    if clamped != n.trunc() {
        w.push(format!("scan_depth: {n} clamped to {clamped}"));
    }
    // In range 0..=MAX_SCAN_DEPTH after the clamp, so the conversion is exact.
    Some(clamped as u8)
}
