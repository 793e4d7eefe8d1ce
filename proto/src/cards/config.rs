//! `kinds.yaml`: per-vault directory names, section tables and private sections.

use std::collections::BTreeMap;

use yaml_serde::Value;

use super::Kind;
use super::fields::{describe, parse_list, scalar_text};
use super::key::safe_key;

/// Words that `check` flags as too generic to be keywords.
const GENERIC_KEYWORDS: [&str; 22] = [
    "i", "you", "he", "she", "it", "we", "they", "the", "a", "an", "and", "or", "ok", "okay",
    "yes", "no", "hi", "hey", "thanks", "please", "this", "that",
];

/// The vault configuration read from `kinds.yaml` (every block optional).
#[derive(Debug, Clone, PartialEq)]
pub struct KindsConfig {
    /// Directory of each directory kind ([`Kind::Entry`] has none: it lives at the vault root).
    pub dirs: BTreeMap<Kind, String>,
    /// Section names of each kind, in injection order; a kind missing here is free-form.
    pub sections: BTreeMap<Kind, Vec<String>>,
    /// Section that `update_recent` writes, per kind.
    pub recent_section: BTreeMap<Kind, String>,
    /// Section the one-line `see also` summary is taken from, per kind.
    pub who_section: BTreeMap<Kind, String>,
    /// Sections kept on the card but never matched, injected or exported.
    pub private_sections: Vec<String>,
    /// Lowercased words that `check` reports as too generic (built-in list plus additions).
    pub generic_keywords: Vec<String>,
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

impl Default for KindsConfig {
    fn default() -> Self {
        let dirs = Kind::ALL
            .into_iter()
            .filter_map(|k| k.dir().map(|d| (k, d.to_owned())))
            .collect();
        let sections = BTreeMap::from([
            (
                Kind::People,
                strings(&["who", "stance", "recent", "impression"]),
            ),
            (
                Kind::Event,
                strings(&["when", "who", "what", "stance", "followup"]),
            ),
            (Kind::Place, strings(&["where", "relation", "recent"])),
            (Kind::Thing, strings(&["what", "usage", "recent"])),
            (Kind::Slang, strings(&["meaning", "origin", "usage"])),
        ]);
        let recent_section = BTreeMap::from([
            (Kind::People, "recent".to_owned()),
            (Kind::Event, "followup".to_owned()),
            (Kind::Place, "recent".to_owned()),
            (Kind::Thing, "recent".to_owned()),
        ]);
        let who_section = BTreeMap::from([
            (Kind::People, "who".to_owned()),
            (Kind::Event, "what".to_owned()),
            (Kind::Place, "where".to_owned()),
            (Kind::Thing, "what".to_owned()),
            (Kind::Slang, "meaning".to_owned()),
        ]);
        KindsConfig {
            dirs,
            sections,
            recent_section,
            who_section,
            private_sections: strings(&["correspondence"]),
            generic_keywords: strings(&GENERIC_KEYWORDS),
        }
    }
}

/// Iterates a `{kind: value}` block, warning about unknown kinds.
fn kind_entries<'a>(
    block: &'a str,
    value: &'a Value,
    warnings: &mut Vec<String>,
) -> Vec<(Kind, &'a Value)> {
    let Some(map) = value.as_mapping() else {
        warnings.push(format!(
            "kinds.yaml: {block} must be a mapping of kind to value, got {}; ignored",
            describe(value)
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in map {
        match k.as_str().and_then(Kind::parse) {
            Some(kind) => out.push((kind, v)),
            None => warnings.push(format!(
                "kinds.yaml: {block}: unknown kind {}; use people, event, place, thing, slang or entry",
                describe(k)
            )),
        }
    }
    out
}

impl KindsConfig {
    /// Parses `kinds.yaml`. Blocks that are missing or malformed keep their defaults; every
    /// problem is reported as a warning. Unreadable YAML or a non-mapping gives the full defaults.
    pub fn parse(yaml_text: &str) -> (KindsConfig, Vec<String>) {
        let mut cfg = KindsConfig::default();
        let mut warnings = Vec::new();
        let root: Value = match yaml_serde::from_str(yaml_text) {
            Ok(v) => v,
            Err(e) => {
                warnings.push(format!("kinds.yaml: not valid yaml ({e}); using defaults"));
                return (cfg, warnings);
            }
        };
        let root = match root {
            Value::Null => return (cfg, warnings),
            Value::Mapping(m) => m,
            other => {
                warnings.push(format!(
                    "kinds.yaml: expected a mapping, got {}; using defaults",
                    describe(&other)
                ));
                return (cfg, warnings);
            }
        };
        for (k, v) in &root {
            match k.as_str().unwrap_or("") {
                "dirs" => cfg.apply_dirs(v, &mut warnings),
                "sections" => cfg.apply_sections(v, &mut warnings),
                "recent_section" | "who_section" => {}
                "private_sections" => {
                    if v.is_sequence() || v.is_string() {
                        cfg.private_sections = parse_list("private_sections", v, &mut warnings);
                    } else if !v.is_null() {
                        warnings.push(
                            "kinds.yaml: private_sections must be a list of names; ignored".into(),
                        );
                    }
                }
                "generic_keywords" => {
                    for w in parse_list("generic_keywords", v, &mut warnings) {
                        let w = w.to_lowercase();
                        if !cfg.generic_keywords.contains(&w) {
                            cfg.generic_keywords.push(w);
                        }
                    }
                }
                other => warnings.push(format!("kinds.yaml: unknown block {other:?}; ignored")),
            }
        }
        // Section pointers are applied after the section lists they must belong to.
        if let Some(v) = root.get("recent_section") {
            cfg.apply_pointer("recent_section", v, true, &mut warnings);
        }
        if let Some(v) = root.get("who_section") {
            cfg.apply_pointer("who_section", v, false, &mut warnings);
        }
        (cfg, warnings)
    }

    fn apply_dirs(&mut self, value: &Value, warnings: &mut Vec<String>) {
        for (kind, v) in kind_entries("dirs", value, warnings) {
            if kind == Kind::Entry {
                warnings.push("kinds.yaml: dirs: entry has no directory; ignored".into());
                continue;
            }
            match scalar_text(v).map(|d| safe_key(&d)) {
                Some(Ok(dir)) => {
                    self.dirs.insert(kind, dir);
                }
                _ => warnings.push(format!(
                    "kinds.yaml: dirs: {} is not a safe directory name for {kind}; ignored",
                    describe(v)
                )),
            }
        }
    }

    fn apply_sections(&mut self, value: &Value, warnings: &mut Vec<String>) {
        for (kind, v) in kind_entries("sections", value, warnings) {
            let names = parse_list("sections", v, warnings);
            if names.is_empty() && kind != Kind::Entry {
                warnings.push(format!(
                    "kinds.yaml: sections: empty list for {kind}; keeping the defaults"
                ));
                continue;
            }
            self.sections.insert(kind, names);
        }
    }

    fn apply_pointer(&mut self, block: &str, value: &Value, must_exist: bool, w: &mut Vec<String>) {
        for (kind, v) in kind_entries(block, value, w) {
            let map = if must_exist {
                &mut self.recent_section
            } else {
                &mut self.who_section
            };
            match scalar_text(v).map(|s| s.trim().to_owned()) {
                _ if v.is_null() => {
                    map.remove(&kind);
                }
                Some(name)
                    if !must_exist
                        || self.sections.get(&kind).is_some_and(|s| s.contains(&name)) =>
                {
                    map.insert(kind, name);
                }
                _ => w.push(format!(
                    "kinds.yaml: {block}: {} is not a section of {kind}; ignored",
                    describe(v)
                )),
            }
        }
    }

    /// The section names of `kind`, in injection order (empty for free-form kinds).
    pub fn sections(&self, kind: Kind) -> &[String] {
        self.sections.get(&kind).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The section names recognised as headings for `kind`: its own sections, then the private
    /// sections not already among them. Empty for free-form kinds.
    pub fn all_sections_for(&self, kind: Kind) -> Vec<String> {
        let own = self.sections(kind);
        if own.is_empty() {
            return Vec::new();
        }
        let mut all = own.to_vec();
        for p in &self.private_sections {
            if !all.contains(p) {
                all.push(p.clone());
            }
        }
        all
    }

    /// The kind decided by the first path component of a card file (`people` → [`Kind::People`]).
    /// Anything unknown, and the vault root, is [`Kind::Entry`].
    pub fn kind_for_dir(&self, first_component: &str) -> Kind {
        self.dirs
            .iter()
            .find(|(_, d)| d.as_str() == first_component)
            .map_or(Kind::Entry, |(k, _)| *k)
    }

    /// The directory of `kind`; `None` for [`Kind::Entry`] (the vault root).
    pub fn dir_for(&self, kind: Kind) -> Option<&str> {
        self.dirs.get(&kind).map(String::as_str)
    }

    /// The `update_recent` target section of `kind`, if it has one.
    pub fn recent_section(&self, kind: Kind) -> Option<&str> {
        self.recent_section.get(&kind).map(String::as_str)
    }

    /// The section the who line of `kind` is taken from, if any.
    pub fn who_section(&self, kind: Kind) -> Option<&str> {
        self.who_section.get(&kind).map(String::as_str)
    }

    /// Whether a heading names a private section (case-insensitive).
    pub fn is_private(&self, heading: &str) -> bool {
        let h = heading.trim().to_lowercase();
        self.private_sections.iter().any(|p| p.to_lowercase() == h)
    }

    /// Whether `word` (any case) is in the generic keyword list.
    pub fn is_generic(&self, word: &str) -> bool {
        let w = word.trim().to_lowercase();
        self.generic_keywords.contains(&w)
    }
}
