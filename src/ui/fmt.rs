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

/// Dollars with cents, or four decimals below a cent.
pub fn dollars(value: impl Borrow<f64>) -> String {
    crate::ui::svg::format_value(*value.borrow(), crate::ui::svg::Unit::Dollars)
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
            pager_base("/ui/knowledge", &[("project", "/a b"), ("q", "")]),
            "/ui/knowledge?project=/a%20b&"
        );
    }
}
