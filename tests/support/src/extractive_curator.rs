//! A deterministic extractive curator for tests of long-term knowledge (`FakeConfig::
//! extractive_curator`): every observation of what the user said (a 🔴 line) that states a
//! standing rule (always, never, prefer, convention, we use) becomes a project preference whose title is the rule's first
//! words, unless an existing entry already has that title. No model, no judgement: what goes in
//! comes out, so a test can follow knowledge from a session to another session's prompt.

use serde_json::{Value, json};

/// Words that mark a standing rule.
const MARKERS: [&str; 6] = ["always", "never", "prefer", "convention", "we use", "must"];
/// Words of the rule kept in the title.
const TITLE_WORDS: usize = 7;

fn clean(line: &str) -> String {
    // Observation bullets look like `* 🔴 (12:04) text [keeps: …]`.
    let text = line.trim().trim_start_matches(['*', '-', ' ']);
    let text = text
        .split_once(") ")
        .filter(|(head, _)| head.contains('('))
        .map_or(text, |(_, rest)| rest);
    let text = text.split(" [keeps:").next().unwrap_or(text);
    text.trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim()
        .to_string()
}

/// The curation answer for the curator's user message.
pub(crate) fn answer(user: &str) -> String {
    let existing = between(user, "<existing-entries>", "</existing-entries>").unwrap_or("");
    let observations = between(user, "<observations>", "</observations>").unwrap_or("");
    let mut ops: Vec<Value> = Vec::new();
    let mut titles: Vec<String> = Vec::new();
    for line in observations.lines().filter(|line| line.contains('🔴')) {
        let rule = clean(line);
        let lower = rule.to_lowercase();
        if rule.is_empty() || !MARKERS.iter().any(|marker| lower.contains(marker)) {
            continue;
        }
        let title: String = rule
            .split_whitespace()
            .take(TITLE_WORDS)
            .collect::<Vec<_>>()
            .join(" ")
            .trim_end_matches(['.', ',', ';', ':'])
            .to_string();
        if titles.contains(&title) || existing.contains(&format!(") {title}:")) {
            continue;
        }
        titles.push(title.clone());
        let category = if lower.starts_with("convention") {
            "pattern"
        } else {
            "preference"
        };
        ops.push(json!({
            "op": "create",
            "category": category,
            "title": title,
            "content": rule,
            "scope": "project",
            "crossProject": false,
            "confidence": 0.9,
        }));
    }
    json!({"ops": ops, "entities": [], "relations": []}).to_string()
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close)? + start;
    Some(&text[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standing_rules_become_preferences_once() {
        let user = "<existing-entries>\n- [k1] (preference) We always run clippy before pushing a: x\n</existing-entries>\n\n<observations>\nDate: 2026-12-01\n* 🔴 (10:00) We always run clippy before pushing a branch. [keeps: clippy]\n* 🔴 (10:01) Convention: module files use snake_case names.\n* 🟢 (10:02) [tool call bash] ls\n</observations>\n";
        let answer: Value = serde_json::from_str(&answer(user)).unwrap_or(Value::Null);
        let ops = answer["ops"].as_array().cloned().unwrap_or_default();
        assert_eq!(ops.len(), 1, "{answer}");
        assert_eq!(
            ops[0]["content"],
            "Convention: module files use snake_case names."
        );
        assert_eq!(
            ops[0]["title"],
            "Convention: module files use snake_case names"
        );
        assert_eq!(ops[0]["category"], "pattern");
    }
}
