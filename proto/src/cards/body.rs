//! Card bodies: `## ` sections, private-section stripping, the who line and section rendering.

use super::config::KindsConfig;
use super::{Kind, WHO_LINE_MAX_CHARS};

/// A body split into its parts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Split {
    /// Text before the first heading (the whole body for free-form kinds), trimmed.
    pub head: String,
    /// Recognised sections in order of appearance, texts trimmed.
    pub sections: Vec<(String, String)>,
    /// Unknown and repeated headings with their text, verbatim, joined by a blank line.
    pub extra: String,
}

/// The heading name of a line, if it is a level-2 heading (`## name`).
pub(crate) fn heading(line: &str) -> Option<&str> {
    let line = line.trim_end_matches(['\n', '\r']);
    line.strip_prefix("## ").map(str::trim)
}

enum Block {
    Head,
    Section(usize),
    Extra,
}

/// Splits a body on `## ` headings. Names in `known` (case-sensitive) fill their section the
/// first time they appear; other headings and repeats go to `extra` verbatim. With no `known`
/// names the whole body is the head.
pub(crate) fn split(body: &str, known: &[String]) -> Split {
    let mut out = Split::default();
    if known.is_empty() {
        out.head = body.trim().to_owned();
        return out;
    }
    let mut head = String::new();
    let mut extras: Vec<String> = Vec::new();
    let mut block = Block::Head;
    for line in body.split_inclusive('\n') {
        if let Some(name) = heading(line) {
            let seen = out.sections.iter().any(|(n, _)| n == name);
            if known.iter().any(|k| k == name) && !seen {
                out.sections.push((name.to_owned(), String::new()));
                block = Block::Section(out.sections.len() - 1);
            } else {
                extras.push(line.to_owned());
                block = Block::Extra;
            }
            continue;
        }
        match block {
            Block::Head => head.push_str(line),
            Block::Section(i) => out.sections[i].1.push_str(line),
            Block::Extra => {
                if let Some(last) = extras.last_mut() {
                    last.push_str(line);
                }
            }
        }
    }
    out.head = head.trim().to_owned();
    for (_, text) in &mut out.sections {
        *text = text.trim().to_owned();
    }
    out.extra = extras
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    out
}

/// Removes every private section (heading matched case-insensitively) from the heading to the
/// next `## ` heading or the end. Other lines are kept verbatim.
pub(crate) fn strip_private(body: &str, config: &KindsConfig) -> String {
    let mut out = String::with_capacity(body.len());
    let mut skipping = false;
    for line in body.split_inclusive('\n') {
        if let Some(name) = heading(line) {
            skipping = config.is_private(name);
        }
        if !skipping {
            out.push_str(line);
        }
    }
    out
}

/// Renders head, sections and extra text: the head, then every section of the kind in table
/// order (empty ones keep their heading), then non-empty private or leftover sections, then the
/// extra text. Parts are joined by a blank line and the result ends with one newline (or is
/// empty when there is nothing to write).
pub(crate) fn render(
    head: &str,
    sections: &[(String, String)],
    extra: &str,
    kind: Kind,
    config: &KindsConfig,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    if !head.trim().is_empty() {
        parts.push(head.trim().to_owned());
    }
    let text_of = |name: &str| {
        sections
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, t)| t.trim())
    };
    let own = config.sections(kind);
    for name in own {
        let text = text_of(name);
        parts.push(if text.is_empty() {
            format!("## {name}")
        } else {
            format!("## {name}\n{text}")
        });
    }
    for (name, text) in sections {
        if !own.contains(name) && !text.trim().is_empty() {
            parts.push(format!("## {name}\n{}", text.trim()));
        }
    }
    if !extra.trim().is_empty() {
        parts.push(extra.trim().to_owned());
    }
    if parts.is_empty() {
        return String::new();
    }
    let mut out = parts.join("\n\n");
    out.push('\n');
    out
}

/// First non-blank line of `text`, trimmed.
fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

/// The one-line summary of a card, taken from an already private-stripped body: the first
/// non-blank line of the kind's who section, else of the head, else of the first non-empty
/// section in table order; capped at [`WHO_LINE_MAX_CHARS`] characters.
pub(crate) fn who_line(effective: &str, kind: Kind, config: &KindsConfig) -> Option<String> {
    let parts = split(effective, config.sections(kind));
    let section = |name: &str| {
        parts
            .sections
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, t)| first_line(t))
    };
    let line = config
        .who_section(kind)
        .and_then(section)
        .or_else(|| first_line(&parts.head))
        .or_else(|| config.sections(kind).iter().find_map(|n| section(n)))?;
    Some(line.chars().take(WHO_LINE_MAX_CHARS).collect())
}
