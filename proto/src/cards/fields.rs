//! Forgiving parsers for frontmatter values: lists, booleans, numbers and scalars.
//!
//! Every parser returns a usable value; anything it had to drop or replace is described by a
//! warning pushed onto the caller's list.

use yaml_serde::Value;

/// Separators of a keyword list written as one string (`keywords: a, b`).
const LIST_SEPARATORS: [char; 3] = [',', '，', '、'];

/// Strips one pair of matching surrounding quotes (`"x"` or `'x'`).
pub(crate) fn strip_quotes(s: &str) -> &str {
    for q in ['"', '\''] {
        if s.len() >= 2
            && let Some(inner) = s.strip_prefix(q).and_then(|r| r.strip_suffix(q))
        {
            return inner.trim();
        }
    }
    s
}

/// Text of a number, as YAML wrote it (`3`, `2.5`).
fn number_text(n: &yaml_serde::Number) -> String {
    n.to_string()
}

/// Pushes `item` (trimmed, quotes stripped) unless it is blank or already present.
fn push_item(out: &mut Vec<String>, item: &str) {
    let item = strip_quotes(item.trim()).trim();
    if !item.is_empty() && !out.iter().any(|x| x == item) {
        out.push(item.to_owned());
    }
}

/// The forgiving list parser used for keywords, aliases, refs and secondary lists.
///
/// * string: trimmed, `[` / `]` stripped at the ends, split on `,`, `，` and `、`;
/// * number: a one-element list;
/// * sequence: strings and numbers kept; booleans, nulls, mappings and nested lists dropped;
/// * null: empty; booleans and mappings: empty with a warning.
///
/// Items are trimmed, one pair of surrounding quotes is removed, blanks are dropped and exact
/// duplicates are removed keeping the first.
pub(crate) fn parse_list(field: &str, value: &Value, warnings: &mut Vec<String>) -> Vec<String> {
    let mut out = Vec::new();
    match value {
        Value::Null => {}
        Value::String(s) => {
            let s = s.trim();
            let s = s.strip_prefix('[').unwrap_or(s);
            let s = s.strip_suffix(']').unwrap_or(s);
            for part in s.split(LIST_SEPARATORS) {
                push_item(&mut out, part);
            }
        }
        Value::Number(n) => push_item(&mut out, &number_text(n)),
        Value::Sequence(items) => {
            for item in items {
                match item {
                    Value::String(s) => push_item(&mut out, s),
                    Value::Number(n) => push_item(&mut out, &number_text(n)),
                    Value::Null => {}
                    Value::Bool(b) => warnings.push(format!(
                        "{field}: dropped the boolean {b}; quote it if you meant the word"
                    )),
                    Value::Tagged(t) => parse_list(field, &t.value, warnings)
                        .into_iter()
                        .for_each(|s| push_item(&mut out, &s)),
                    Value::Sequence(_) | Value::Mapping(_) => warnings.push(format!(
                        "{field}: dropped a nested list or mapping; write plain words"
                    )),
                }
            }
        }
        Value::Bool(b) => warnings.push(format!(
            "{field}: ignored the boolean {b}; write a list of words"
        )),
        Value::Mapping(_) => {
            warnings.push(format!("{field}: ignored a mapping; write a list of words"))
        }
        Value::Tagged(t) => return parse_list(field, &t.value, warnings),
    }
    out
}

/// Explicit boolean parsing: YAML booleans and the words true/false/yes/no/on/off
/// (case-insensitive). `None` means the value is absent or null.
///
/// Anything else yields `default` and a warning.
pub(crate) fn parse_bool(
    field: &str,
    value: Option<&Value>,
    default: bool,
    warnings: &mut Vec<String>,
) -> bool {
    let value = match value {
        None | Some(Value::Null) => return default,
        Some(Value::Tagged(t)) => &t.value,
        Some(v) => v,
    };
    if let Value::Bool(b) = value {
        return *b;
    }
    if let Value::String(s) = value {
        match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" => return true,
            "false" | "no" | "off" => return false,
            _ => {}
        }
    }
    warnings.push(format!(
        "{field}: {} is not true/false/yes/no/on/off; using {default}",
        describe(value)
    ));
    default
}

/// A scalar as text: strings as is, numbers as written; `None` for anything else.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(number_text(n)),
        Value::Tagged(t) => scalar_text(&t.value),
        _ => None,
    }
}

/// A number from a YAML number or a numeric string.
pub(crate) fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse::<f64>().ok(),
        Value::Tagged(t) => number(&t.value),
        _ => None,
    }
}

/// Short description of a value for warnings.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("{s:?}"),
        Value::Sequence(_) => "a list".to_owned(),
        Value::Mapping(_) => "a mapping".to_owned(),
        Value::Tagged(t) => describe(&t.value),
    }
}
