//! The hand-written topics of the labelled set: one project per session, parsed from the
//! embedded `topics_a.txt` and `topics_b.txt`.
//!
//! Format: blocks separated by blank lines, one `key: value` per line, `#` starts a comment.
//! Header keys: `topic`, `project`, `domain`, and the ` | `-separated vocabulary lists `files`,
//! `funcs`, `cmds`, `libs` (used by the chatter). Every other key names a fact kind of
//! [`super::questions::KINDS`] and holds that kind's fields, ` | `-separated, in the order the
//! kind declares them. A fact value never appears in the vocabulary lists, so the chatter can
//! reuse the vocabulary without repeating an answer.

use std::collections::BTreeMap;

use super::questions::{FactKind, KINDS};

const TOPICS: [&str; 2] = [include_str!("topics_a.txt"), include_str!("topics_b.txt")];

/// One fact of a topic: a kind and its named fields.
#[derive(Debug, Clone)]
pub struct Fact {
    /// The kind, which owns the message and question templates.
    pub kind: &'static FactKind,
    /// Field name → value.
    pub fields: BTreeMap<&'static str, String>,
}

/// One project a labelled session is about.
#[derive(Debug, Clone, Default)]
pub struct Topic {
    /// Short project name.
    pub name: String,
    /// Project directory (the session's `project`).
    pub project: String,
    /// One line saying what the project is.
    pub domain: String,
    /// File paths the chatter mentions.
    pub files: Vec<String>,
    /// Function names the chatter mentions.
    pub funcs: Vec<String>,
    /// Shell commands the chatter runs.
    pub cmds: Vec<String>,
    /// Libraries the chatter names.
    pub libs: Vec<String>,
    /// The facts questions are asked about, in file order.
    pub facts: Vec<Fact>,
}

/// Every topic, in a fixed order.
pub fn all() -> Vec<Topic> {
    TOPICS.iter().flat_map(|text| parse(text)).collect()
}

fn list(value: &str) -> Vec<String> {
    value.split(" | ").map(|s| s.trim().to_string()).collect()
}

/// Parses one topics file. Malformed data is a bug in this crate, so it panics with the line.
fn parse(text: &str) -> Vec<Topic> {
    let mut topics = Vec::new();
    let mut current: Option<Topic> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            topics.extend(current.take());
            continue;
        }
        let (key, value) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("topics: no `key: value` in {line:?}"));
        let topic = current.get_or_insert_with(Topic::default);
        match key {
            "topic" => topic.name = value.to_string(),
            "project" => topic.project = value.to_string(),
            "domain" => topic.domain = value.to_string(),
            "files" => topic.files = list(value),
            "funcs" => topic.funcs = list(value),
            "cmds" => topic.cmds = list(value),
            "libs" => topic.libs = list(value),
            kind => {
                let kind = KINDS
                    .iter()
                    .find(|k| k.name == kind)
                    .unwrap_or_else(|| panic!("topics: unknown key {kind:?}"));
                let values = list(value);
                assert_eq!(
                    values.len(),
                    kind.fields.len(),
                    "topics: {} of {} needs fields {:?}: {line}",
                    kind.name,
                    topic.name,
                    kind.fields
                );
                let fields = kind.fields.iter().copied().zip(values).collect();
                topic.facts.push(Fact { kind, fields });
            }
        }
    }
    topics.extend(current);
    topics
}
