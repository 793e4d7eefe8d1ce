//! Small formatting helpers the templates call: times, money, ids, clipped text, JSON.

use std::borrow::Borrow;

use serde_json::Value;

/// A time in ms since the epoch as `YYYY-MM-DD HH:MM UTC` (`—` for 0).
pub fn when(ms: impl Borrow<u64>) -> String {
    let ms = *ms.borrow();
    if ms == 0 {
        return "—".into();
    }
    let day = lore_storage::memory::day_of(ms);
    let minutes = (ms / 60_000) % (24 * 60);
    format!("{day} {:02}:{:02} UTC", minutes / 60, minutes % 60)
}

/// A number a template hands over by value or through any depth of references (an
/// `if let Some(x)` binding in a template is a `&&f64`).
pub trait Number<T: Copy> {
    /// The number itself.
    fn number(&self) -> T;
}

impl Number<f64> for f64 {
    fn number(&self) -> f64 {
        *self
    }
}

impl Number<u64> for u64 {
    fn number(&self) -> u64 {
        *self
    }
}

impl<T: Copy, N: Number<T> + ?Sized> Number<T> for &N {
    fn number(&self) -> T {
        (**self).number()
    }
}

/// Dollars with cents, or four decimals below a cent.
pub fn dollars(value: impl Number<f64>) -> String {
    crate::ui::svg::format_value(value.number(), crate::ui::svg::Unit::Dollars)
}

/// A token count as `200K`, `1M`, `1.05M` or `8192`.
pub fn tokens(value: impl Number<u64>) -> String {
    let n = value.number();
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000_000 {
        format!("{:.2}M", n as f64 / 1e6)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}K", n / 1_000)
    } else {
        n.to_string()
    }
}

/// A price per million tokens with at most three decimals, trailing zeros dropped (`3`, `0.3`,
/// `3.75`).
pub fn price(value: impl Number<f64>) -> String {
    let text = format!("{:.3}", value.number());
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The first 12 characters of an id.
pub fn short(id: impl AsRef<str>) -> String {
    id.as_ref().chars().take(12).collect()
}

/// At most `max` characters, with `…` when cut.
pub fn clip(text: impl AsRef<str>, max: impl Borrow<usize>) -> String {
    let (text, max) = (text.as_ref(), *max.borrow());
    let mut out: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// JSON, indented.
pub fn pretty(value: impl Borrow<Value>) -> String {
    serde_json::to_string_pretty(value.borrow()).unwrap_or_default()
}

/// The fields of a JSON object as `(label, value)` rows: `snake_case` names read as words,
/// strings without quotes, `null` as `—`.
pub fn fields(value: &Value) -> Vec<(String, String)> {
    let Some(object) = value.as_object() else {
        return Vec::new();
    };
    object
        .iter()
        .map(|(name, value)| {
            let text = match value {
                Value::Null => "—".to_string(),
                Value::String(text) if text.is_empty() => "—".to_string(),
                Value::String(text) => text.clone(),
                Value::Bool(true) => "yes".to_string(),
                Value::Bool(false) => "no".to_string(),
                other => other.to_string(),
            };
            (name.replace('_', " "), text)
        })
        .collect()
}

/// Whether two strings are equal, whatever reference each template expression gives.
pub fn same(a: impl AsRef<str>, b: impl AsRef<str>) -> bool {
    a.as_ref() == b.as_ref()
}

/// `path?name=value&…&` for a pager to append `offset=N` to (empty values left out).
pub fn pager_base(path: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = format!("{path}?");
    for (name, value) in pairs {
        if value.is_empty() {
            continue;
        }
        out.push_str(name);
        out.push('=');
        for byte in value.bytes() {
            if byte.is_ascii_alphanumeric() || b"-_.~/".contains(&byte) {
                out.push(byte as char);
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
        out.push('&');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_text_read_well() {
        assert_eq!(when(0), "—");
        assert_eq!(when(1_790_000_000_000), "2026-09-21 14:13 UTC");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(short("0123456789abcdef"), "0123456789ab");
        assert_eq!(
            [
                tokens(200_000),
                tokens(1_000_000),
                tokens(1_047_576),
                tokens(8_192)
            ],
            ["200K", "1M", "1.05M", "8192"].map(String::from)
        );
        assert_eq!(
            [price(3.0), price(0.3), price(3.75), price(0.0)],
            ["3", "0.3", "3.75", "0"].map(String::from)
        );
        assert_eq!(
            pager_base("/ui/knowledge", &[("project", "/a b"), ("q", "")]),
            "/ui/knowledge?project=/a%20b&"
        );
    }
}
