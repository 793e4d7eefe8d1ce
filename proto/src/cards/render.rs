//! Writing a card back to file text: managed frontmatter in a fixed order, extra keys after it.

use yaml_serde::Value;

use super::card::{Card, MatchMode};

/// Characters that force quoting of a flow-list item or a title.
const SPECIAL: &[char] = &[
    ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ':', '?',
];

/// A string as a YAML scalar usable inside a flow list: plain when that reads back as the same
/// string, otherwise double-quoted (JSON string syntax is valid YAML).
pub(crate) fn scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.trim() == s
        && !s.starts_with(['-', '.'])
        && !s.contains(SPECIAL)
        && !s.chars().any(char::is_control)
        && matches!(yaml_serde::from_str::<Value>(s), Ok(Value::String(ref p)) if p == s);
    if plain {
        s.to_owned()
    } else {
        serde_json::Value::String(s.to_owned()).to_string()
    }
}

/// `[a, b, "c, d"]`.
fn flow_list(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| scalar(s)).collect();
    format!("[{}]", inner.join(", "))
}

impl Card {
    /// The card as file text: `---`, the frontmatter, `---`, then the raw body.
    ///
    /// Key order: `kind`, `title`, `keywords` (always), then `aliases`, `secondary` (non-empty
    /// lists only), `scan_depth`, `refs`, `priority`, `enabled`, `inject`, `constant`, `match`,
    /// `case_sensitive`, each only when not at its default; extra frontmatter last, in its
    /// original order. `parse_card(render(card))` gives the card back.
    pub fn render(&self) -> String {
        let mut fm = String::new();
        fm.push_str(&format!("kind: {}\n", self.kind.as_str()));
        let title = if self.title.trim().is_empty() {
            &self.key
        } else {
            &self.title
        };
        fm.push_str(&format!("title: {}\n", scalar(title)));
        fm.push_str(&format!("keywords: {}\n", flow_list(&self.keywords)));
        if !self.aliases.is_empty() {
            fm.push_str(&format!("aliases: {}\n", flow_list(&self.aliases)));
        }
        if !self.secondary.is_empty() {
            fm.push_str("secondary:\n");
            let s = &self.secondary;
            for (name, list) in [
                ("all", &s.all),
                ("any", &s.any),
                ("not", &s.not),
                ("not_all", &s.not_all),
            ] {
                if !list.is_empty() {
                    fm.push_str(&format!("  {name}: {}\n", flow_list(list)));
                }
            }
        }
        if let Some(d) = self.scan_depth {
            fm.push_str(&format!("scan_depth: {d}\n"));
        }
        if !self.refs.is_empty() {
            fm.push_str(&format!("refs: {}\n", flow_list(&self.refs)));
        }
        if self.priority != 0.0 {
            fm.push_str(&format!("priority: {}\n", self.priority));
        }
        for (name, value, default) in [
            ("enabled", self.enabled, true),
            ("inject", self.inject, true),
            ("constant", self.constant, false),
        ] {
            if value != default {
                fm.push_str(&format!("{name}: {value}\n"));
            }
        }
        if self.match_mode != MatchMode::WholeWord {
            fm.push_str(&format!("match: {}\n", self.match_mode.as_str()));
        }
        if self.case_sensitive {
            fm.push_str("case_sensitive: true\n");
        }
        if !self.extra.is_empty() {
            match yaml_serde::to_string(&self.extra) {
                Ok(y) => fm.push_str(&y),
                // A mapping of plain YAML values always serialises; keep the card writable anyway.
                Err(e) => fm.push_str(&format!("# extra frontmatter lost: {e}\n")),
            }
            if !fm.ends_with('\n') {
                fm.push('\n');
            }
        }
        format!("---\n{fm}---\n{}", self.body)
    }
}
