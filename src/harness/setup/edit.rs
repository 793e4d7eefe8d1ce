//! Pure edits of the harnesses' config files: a JSON object merged in, TOML keys set with
//! `toml_edit` (comments and layout kept), and YAML keys set line by line inside one top-level
//! block (comments and everything else kept byte for byte).

use serde_json::Value;

use super::super::launch::merge_json;

/// Why a file cannot be edited safely; the text says what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct EditError(pub String);

/// `text` (a JSON object, or empty for a new file) with `patch` merged in, pretty-printed.
pub fn json_merge(text: &str, patch: &Value, what: &str) -> Result<String, EditError> {
    let mut value = if text.trim().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_str::<Value>(text).map_err(|err| {
            EditError(format!(
                "{what} is not plain JSON ({err}); Lore does not rewrite files with comments. Add this by hand: {patch}"
            ))
        })?
    };
    if !value.is_object() {
        return Err(EditError(format!(
            "{what} does not hold a JSON object; add this by hand: {patch}"
        )));
    }
    merge_json(&mut value, patch);
    let mut out = serde_json::to_string_pretty(&value)
        .map_err(|err| EditError(format!("cannot write {what}: {err}")))?;
    out.push('\n');
    Ok(out)
}

/// A TOML value for [`toml_set`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TomlValue {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
}

/// `text` with top-level `keys` set (added before the first table when new).
pub fn toml_set(text: &str, keys: &[(&str, TomlValue)], what: &str) -> Result<String, EditError> {
    let mut doc = text.parse::<toml_edit::DocumentMut>().map_err(|err| {
        EditError(format!(
            "{what} is not valid TOML ({err}); fix it or add the keys by hand"
        ))
    })?;
    for (key, value) in keys {
        doc[*key] = match value {
            TomlValue::Str(text) => toml_edit::value(text.as_str()),
            TomlValue::Int(number) => toml_edit::value(*number),
        };
    }
    Ok(doc.to_string())
}

/// True for a line that holds nothing (blank or a comment).
fn is_blank(line: &str) -> bool {
    let trimmed = line.trim_start();
    trimmed.is_empty() || trimmed.starts_with('#')
}

/// `text` with `section.key: value` set, where `value` is already YAML (`"…"`, `false`).
/// Only the lines of that key change; a missing block or key is added.
pub fn yaml_set(
    text: &str,
    section: &str,
    key: &str,
    value: &str,
    what: &str,
) -> Result<String, EditError> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header = format!("{section}:");
    let start = lines.iter().position(|line| {
        line == &header
            || line.starts_with(&format!("{header} "))
            || line.starts_with(&format!("{header}\t"))
    });
    let Some(start) = start else {
        if lines.last().is_some_and(|line| !line.trim().is_empty()) {
            lines.push(String::new());
        }
        lines.push(header);
        lines.push(format!("  {key}: {value}"));
        return Ok(lines.join("\n") + "\n");
    };
    let inline = lines[start][header.len()..].trim_start();
    if !inline.is_empty() && !inline.starts_with('#') {
        return Err(EditError(format!(
            "`{section}` in {what} is a single value (`{}`), not a block; set `{section}.{key}: {value}` by hand",
            lines[start]
        )));
    }
    let end = lines[start + 1..]
        .iter()
        .position(|line| !is_blank(line) && !line.starts_with([' ', '\t']))
        .map_or(lines.len(), |offset| start + 1 + offset);
    let indent = lines[start + 1..end]
        .iter()
        .find(|line| !is_blank(line))
        .map(|line| line[..line.len() - line.trim_start().len()].to_string())
        .unwrap_or_else(|| "  ".to_string());
    let entry = format!("{indent}{key}:");
    let new_line = format!("{indent}{key}: {value}");
    match (start + 1..end).find(|&i| {
        lines[i].starts_with(&entry) && !lines[i][indent.len()..].starts_with([' ', '\t'])
    }) {
        Some(i) => {
            let rest = lines[i][entry.len()..].trim();
            if rest.is_empty() || rest == "|" || rest == ">" {
                // A nested block or multi-line value: too much to rewrite safely.
                let nested = lines[i + 1..end]
                    .iter()
                    .find(|line| !is_blank(line))
                    .is_some_and(|line| line.len() - line.trim_start().len() > indent.len());
                if nested {
                    return Err(EditError(format!(
                        "`{section}.{key}` in {what} spans several lines; set it to {value} by hand"
                    )));
                }
            }
            lines[i] = new_line;
        }
        None => lines.insert(start + 1, new_line),
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// A YAML double-quoted string (JSON's escaping is valid YAML).
pub fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| format!("\"{text}\""))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn json_merge_keeps_other_keys_and_refuses_comments() {
        let out = json_merge(
            r#"{"model": "opus", "env": {"FOO": "1"}}"#,
            &json!({"env": {"ANTHROPIC_BASE_URL": "http://x"}}),
            "settings.json",
        )
        .unwrap();
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["model"], "opus");
        assert_eq!(value["env"]["FOO"], "1");
        assert_eq!(value["env"]["ANTHROPIC_BASE_URL"], "http://x");
        assert!(
            json_merge("", &json!({"a": 1}), "f")
                .unwrap()
                .contains("\"a\": 1")
        );
        let err = json_merge("// c\n{}", &json!({"a": 1}), "opencode.jsonc").unwrap_err();
        assert!(err.0.contains("by hand"), "{err}");
    }

    #[test]
    fn toml_set_keeps_comments_and_puts_keys_before_tables() {
        let text = "# mine\nmodel = \"gpt-5\"\n\n[profiles.fast]\nmodel = \"gpt-5-mini\"\n";
        let out = toml_set(
            text,
            &[
                (
                    "openai_base_url",
                    TomlValue::Str("http://127.0.0.1:3207/v1".into()),
                ),
                ("model_auto_compact_token_limit", TomlValue::Int(999)),
            ],
            "config.toml",
        )
        .unwrap();
        assert!(out.starts_with("# mine\nmodel = \"gpt-5\"\n"), "{out}");
        let table_at = out.find("[profiles.fast]").unwrap();
        assert!(
            out.find("openai_base_url = \"http://127.0.0.1:3207/v1\"")
                .unwrap()
                < table_at
        );
        assert!(out.contains("model_auto_compact_token_limit = 999"));
        let again = toml_set(
            &out,
            &[("openai_base_url", TomlValue::Str("http://other/v1".into()))],
            "c",
        )
        .unwrap();
        assert_eq!(again.matches("openai_base_url").count(), 1);
        assert!(toml_set("a = ", &[], "c").is_err());
    }

    #[test]
    fn yaml_set_changes_only_its_line() {
        let text = "# Hermes\nmodel:\n  default: claude-opus-4\n  provider: anthropic  # mine\n  base_url: https://api.anthropic.com\nterminal:\n  backend: local\n";
        let out = yaml_set(text, "model", "base_url", "\"http://127.0.0.1:3207\"", "c").unwrap();
        assert_eq!(
            out,
            text.replace("https://api.anthropic.com", "\"http://127.0.0.1:3207\"")
        );
        let out = yaml_set(&out, "compression", "enabled", "false", "c").unwrap();
        assert!(
            out.ends_with("  backend: local\n\ncompression:\n  enabled: false\n"),
            "{out}"
        );
        let out = yaml_set(
            "model:\n    default: x\n",
            "model",
            "base_url",
            "\"u\"",
            "c",
        )
        .unwrap();
        assert_eq!(out, "model:\n    base_url: \"u\"\n    default: x\n");
        assert!(
            yaml_set(
                "model: anthropic/claude\n",
                "model",
                "base_url",
                "\"u\"",
                "c"
            )
            .is_err()
        );
        assert!(
            yaml_set(
                "model:\n  base_url:\n    - a\n",
                "model",
                "base_url",
                "\"u\"",
                "c"
            )
            .is_err()
        );
        assert_eq!(
            yaml_set(
                "model:\n  base_url:\n  extra:\n    - a\n",
                "model",
                "base_url",
                "\"u\"",
                "c"
            )
            .unwrap(),
            "model:\n  base_url: \"u\"\n  extra:\n    - a\n",
            "only the key's own lines count"
        );
    }
}
