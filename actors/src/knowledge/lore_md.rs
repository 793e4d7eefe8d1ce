//! The `.lore.md` file: a project's knowledge as Markdown the user can read and edit, rendered
//! and parsed here without any IO.
//!
//! ```markdown
//! # Project knowledge
//!
//! <!-- Written by lore. … -->
//!
//! ## Decisions
//!
//! ### Use sled for the message log
//! <!-- lore:0190f1c2-… confidence:0.90 -->
//! We chose sled over SQLite because …
//! ```
//!
//! One `##` section per category (in [`Category::ALL`] order), one `###` entry per knowledge
//! entry, sorted by title, and right under each title a marker with the entry's id and
//! confidence. Rendering is byte-stable: the same entries give the same bytes, and a changed
//! entry changes only its own lines. A content line that would read as structure (a `##` or
//! `###` heading, a `lore:` marker) is written with one more leading backslash, which parsing
//! takes off again, so every export parses back to the entries it was made from.

use std::collections::HashMap;

use lore_storage::memory::{Category, KnowledgeEntry};

/// The first line of the file.
pub const FILE_TITLE: &str = "# Project knowledge";

/// The comment under the title that says how the file works.
pub const INTRO: &str = "<!-- Written by lore. `lore knowledge export` writes this file and `lore knowledge import` reads your edits back: edit titles and text freely, keep the `lore:` markers, delete an entry to forget it, add one (without a marker) to create it. -->";

/// What a marker reads like, for messages.
const MARKER_EXAMPLE: &str = "<!-- lore:ID confidence:0.90 -->";

/// One entry read from the file.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedEntry {
    /// The id in its marker; `None` for an entry the user added.
    pub id: Option<String>,
    /// The category of its section.
    pub category: Category,
    /// Its `###` title, trimmed.
    pub title: String,
    /// Its text, trimmed.
    pub content: String,
    /// The confidence in its marker.
    pub confidence: Option<f32>,
    /// 1-based line of its title.
    pub line: usize,
}

/// Something in the file that stops it from being imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoreMdProblem {
    /// 1-based line.
    pub line: usize,
    /// What is wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for LoreMdProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The plural heading of a category's section.
pub fn section_heading(category: Category) -> &'static str {
    match category {
        Category::Decision => "Decisions",
        Category::Pattern => "Patterns",
        Category::Preference => "Preferences",
        Category::Architecture => "Architecture",
        Category::Gotcha => "Gotchas",
    }
}

/// The file for these entries (forgotten ones are left out).
pub fn render(entries: &[KnowledgeEntry]) -> String {
    let mut blocks = vec![FILE_TITLE.to_string(), INTRO.to_string()];
    for category in Category::ALL {
        let mut section: Vec<&KnowledgeEntry> = entries
            .iter()
            .filter(|entry| entry.category == category && !entry.deleted)
            .collect();
        if section.is_empty() {
            continue;
        }
        section.sort_by(|a, b| {
            a.title
                .to_lowercase()
                .cmp(&b.title.to_lowercase())
                .then_with(|| a.id.cmp(&b.id))
        });
        blocks.push(format!("## {}", section_heading(category)));
        for entry in section {
            let content: Vec<String> = entry.content.trim().lines().map(escape).collect();
            blocks.push(format!(
                "### {}\n<!-- lore:{} confidence:{:.2} -->\n{}",
                super::limits::one_line(&entry.title),
                entry.id,
                entry.confidence,
                content.join("\n")
            ));
        }
    }
    let mut out = blocks.join("\n\n");
    out.push('\n');
    out
}

/// Reads a file; every problem is reported, with its line, instead of the entries.
pub fn parse(text: &str) -> Result<Vec<ParsedEntry>, Vec<LoreMdProblem>> {
    let mut parser = Parser::default();
    for (index, raw) in text.split('\n').enumerate() {
        parser.line(index + 1, raw.strip_suffix('\r').unwrap_or(raw));
    }
    parser.finish_entry();
    if parser.problems.is_empty() {
        Ok(parser.entries)
    } else {
        parser.problems.sort_by_key(|problem| problem.line);
        Err(parser.problems)
    }
}

/// Where the parser is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// Before the first `##`: the file title and intro, ignored.
    Preamble,
    /// Under a known category.
    Known(Category),
    /// Under a heading that names no category (already reported).
    Unknown,
}

/// An entry being read.
struct Building {
    line: usize,
    category: Option<Category>,
    title: String,
    id: Option<(String, usize)>,
    confidence: Option<f32>,
    marker_seen: bool,
    body: Vec<String>,
}

struct Parser {
    section: Section,
    entry: Option<Building>,
    in_comment: bool,
    entries: Vec<ParsedEntry>,
    ids: HashMap<String, usize>,
    problems: Vec<LoreMdProblem>,
}

impl Default for Parser {
    fn default() -> Self {
        Self {
            section: Section::Preamble,
            entry: None,
            in_comment: false,
            entries: Vec::new(),
            ids: HashMap::new(),
            problems: Vec::new(),
        }
    }
}

impl Parser {
    fn problem(&mut self, line: usize, message: String) {
        self.problems.push(LoreMdProblem { line, message });
    }

    fn line(&mut self, n: usize, line: &str) {
        if let Some(title) = heading(line, "###") {
            self.finish_entry();
            let category = match self.section {
                Section::Known(category) => Some(category),
                Section::Unknown => None,
                Section::Preamble => {
                    self.problem(n, format!(
                        "the entry `{}` comes before any section; put it under one of ## Decisions, ## Patterns, ## Preferences, ## Architecture or ## Gotchas",
                        title.trim()
                    ));
                    None
                }
            };
            self.entry = Some(Building {
                line: n,
                category,
                title: super::limits::one_line(title),
                id: None,
                confidence: None,
                marker_seen: false,
                body: Vec::new(),
            });
        } else if let Some(name) = heading(line, "##") {
            self.finish_entry();
            self.in_comment = false;
            self.section = match Category::parse(name) {
                Some(category) => Section::Known(category),
                None => {
                    self.problem(n, format!(
                        "`## {}` is not a section lore knows; use ## Decisions, ## Patterns, ## Preferences, ## Architecture or ## Gotchas",
                        name.trim()
                    ));
                    Section::Unknown
                }
            };
        } else if self.entry.is_some() {
            self.entry_line(n, line);
        } else {
            self.outside_line(n, line);
        }
    }

    fn entry_line(&mut self, n: usize, line: &str) {
        let Some(entry) = self.entry.as_mut() else {
            return;
        };
        if !is_marker(line) {
            entry.body.push(unescape(line).to_string());
            return;
        }
        if entry.marker_seen || entry.body.iter().any(|l| !l.trim().is_empty()) {
            self.problem(n, format!(
                "a `lore:` marker belongs on the line right under its entry's title, once; move it there or delete it (a marker reads {MARKER_EXAMPLE})"
            ));
            return;
        }
        entry.marker_seen = true;
        match parse_marker(line) {
            Ok((id, confidence)) => {
                entry.id = id.map(|id| (id, n));
                entry.confidence = confidence;
            }
            Err(message) => self.problem(n, message),
        }
    }

    fn outside_line(&mut self, n: usize, line: &str) {
        let trimmed = line.trim();
        if self.in_comment {
            self.in_comment = !trimmed.contains("-->");
            return;
        }
        if trimmed.starts_with("<!--") {
            self.in_comment = !trimmed.contains("-->");
            return;
        }
        if self.section != Section::Preamble && !trimmed.is_empty() {
            self.problem(n, "this text belongs to no entry and would be lost; put it under a `### Title` heading, or delete it".into());
        }
    }

    fn finish_entry(&mut self) {
        let Some(entry) = self.entry.take() else {
            return;
        };
        let content = entry.body.join("\n").trim().to_string();
        if entry.title.is_empty() {
            self.problem(
                entry.line,
                "this entry has no title; write one after `### `".into(),
            );
        }
        if content.is_empty() {
            self.problem(entry.line, format!(
                "the entry `{}` has no text; write what it says under its title, or delete the entry to forget it",
                entry.title
            ));
        }
        if let Some((id, line)) = &entry.id
            && let Some(first) = self.ids.insert(id.clone(), *line)
        {
            self.problem(*line, format!(
                "the id {id} is also used on line {first}; each marker belongs to one entry: remove this marker to make this entry a new one"
            ));
        }
        if let Some(category) = entry.category
            && !entry.title.is_empty()
            && !content.is_empty()
        {
            self.entries.push(ParsedEntry {
                id: entry.id.map(|(id, _)| id),
                category,
                title: entry.title,
                content,
                confidence: entry.confidence,
                line: entry.line,
            });
        }
    }
}

/// The text after a heading of exactly this level (`##` or `###`), if the line is one.
fn heading<'a>(line: &'a str, level: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(level)?;
    if rest.is_empty() {
        return Some(rest);
    }
    let text = rest.strip_prefix([' ', '\t'])?;
    // An ATX heading may close with hashes.
    Some(text.trim().trim_end_matches('#').trim_end())
}

/// Whether a line is a `lore:` marker (well formed or not).
fn is_marker(line: &str) -> bool {
    line.trim_start()
        .strip_prefix("<!--")
        .is_some_and(|rest| rest.trim_start().starts_with("lore:"))
}

/// Whether a content line would read as structure and so needs escaping.
fn is_structural(line: &str) -> bool {
    heading(line, "##").is_some() || heading(line, "###").is_some() || is_marker(line)
}

/// A content line as written to the file.
fn escape(line: &str) -> String {
    if is_structural(line.trim_start_matches('\\')) {
        format!("\\{line}")
    } else {
        line.to_string()
    }
}

/// A content line as read from the file.
fn unescape(line: &str) -> &str {
    match line.strip_prefix('\\') {
        Some(rest) if is_structural(rest.trim_start_matches('\\')) => rest,
        _ => line,
    }
}

/// The id and confidence of a marker line.
fn parse_marker(line: &str) -> Result<(Option<String>, Option<f32>), String> {
    let malformed = |why: &str| format!("malformed marker: {why}; a marker reads {MARKER_EXAMPLE}");
    let inner = line
        .trim()
        .strip_prefix("<!--")
        .and_then(|rest| rest.strip_suffix("-->"))
        .ok_or_else(|| malformed("it must end with `-->` on the same line"))?;
    let mut tokens = inner.split_whitespace();
    let id = tokens
        .next()
        .and_then(|token| token.strip_prefix("lore:"))
        .ok_or_else(|| malformed("it must start with `lore:`"))?;
    let id = (!id.is_empty()).then(|| id.to_string());
    let mut confidence = None;
    for token in tokens {
        let Some(value) = token.strip_prefix("confidence:") else {
            return Err(malformed(&format!("`{token}` is not part of a marker")));
        };
        match value.parse::<f32>() {
            Ok(value) if (0.0..=1.0).contains(&value) && confidence.is_none() => {
                confidence = Some(value);
            }
            _ if confidence.is_some() => return Err(malformed("confidence is given twice")),
            _ => {
                return Err(malformed(&format!(
                    "confidence `{value}` is not a number from 0.00 to 1.00"
                )));
            }
        }
    }
    Ok((id, confidence))
}
