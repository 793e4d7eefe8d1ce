//! Rendering fired cards and the marked block, and stripping our own blocks from scanned text.
//!
//! A card renders as `### <title> [<kind>]`, a newline, the trimmed body, and, after a blank
//! line, one `(see also: <key> — <who line>)` line per linked card that is not in the context.
//! The block is `<!-- lore:cards:<nonce> -->`, a newline, the framing, the cards joined by a blank
//! line, a newline and `<!-- /lore:cards:<nonce> -->`.

use super::FiredCard;

/// Marker prefix of the injected block: `<!-- lore:cards:<nonce> -->`.
pub const MARKER_PREFIX: &str = "lore:cards";

/// Separator between two rendered cards inside the block.
pub const CARD_SEPARATOR: &str = "\n\n";

/// Longest who line in a "see also" line, in characters.
const WHO_LINE_MAX_CHARS: usize = 120;

/// Renders one card with its "see also" lines.
pub fn render_card(title: &str, kind: &str, body: &str, see_also: &[String]) -> String {
    let mut out = format!("### {} [{}]\n{}", title.trim(), kind.trim(), body.trim());
    if !see_also.is_empty() {
        out.push_str("\n\n");
        out.push_str(&see_also.join("\n"));
    }
    out
}

/// `(see also: <key> — <who line>)`, the who line cut to its first non-blank line and 120
/// characters; `(see also: <key>)` when there is none.
pub fn see_also_line(key: &str, who_line: Option<&str>) -> String {
    let who = who_line
        .and_then(|w| w.lines().map(str::trim).find(|l| !l.is_empty()))
        .map(|w| {
            if w.chars().count() > WHO_LINE_MAX_CHARS {
                let cut: String = w.chars().take(WHO_LINE_MAX_CHARS - 1).collect();
                format!("{}…", cut.trim_end())
            } else {
                w.to_owned()
            }
        });
    match who {
        Some(who) => format!("(see also: {key} — {who})"),
        None => format!("(see also: {key})"),
    }
}

/// The marked block around the fired cards, in order.
pub fn render_block(fired: &[FiredCard], nonce: &str, framing: &str) -> String {
    let cards: Vec<&str> = fired.iter().map(|c| c.rendered.as_str()).collect();
    format!(
        "<!-- {MARKER_PREFIX}:{nonce} -->\n{framing}{}\n<!-- /{MARKER_PREFIX}:{nonce} -->",
        cards.join(CARD_SEPARATOR)
    )
}

/// Removes every `<!-- {prefix}:<nonce> -->` … `<!-- /{prefix}:<nonce> -->` block (any nonce of
/// ASCII letters, digits, `-` and `_`; the closing marker must carry the same nonce; the nearest
/// one closes the block) together with the whitespace that follows it. An opening marker without
/// its closing one is left alone.
pub fn strip_markers(text: &str, marker_prefix: &str) -> String {
    let open_head = format!("<!-- {marker_prefix}:");
    if !text.contains(&open_head) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find(&open_head) {
        let after = &rest[pos + open_head.len()..];
        let nonce_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(after.len());
        let (nonce, tail) = after.split_at(nonce_len);
        let close = format!("<!-- /{marker_prefix}:{nonce} -->");
        let found = tail
            .strip_prefix(" -->")
            .filter(|_| !nonce.is_empty())
            .and_then(|inner| inner.find(&close).map(|c| &inner[c + close.len()..]));
        match found {
            Some(remainder) => {
                out.push_str(&rest[..pos]);
                rest = remainder.trim_start();
            }
            None => {
                out.push_str(&rest[..pos + open_head.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_any_nonce_lazily() {
        let text = "before <!-- lore:cards:ab12 -->\nA memory\n<!-- /lore:cards:ab12 -->\n\n middle \
                    <!-- lore:cards:ff -->x<!-- /lore:cards:ff --> after";
        assert_eq!(strip_markers(text, MARKER_PREFIX), "before middle after");
        let unclosed = "a <!-- lore:cards:ab -->b";
        assert_eq!(strip_markers(unclosed, MARKER_PREFIX), unclosed);
        let mismatched = "a <!-- lore:cards:ab -->b<!-- /lore:cards:cd -->";
        assert_eq!(strip_markers(mismatched, MARKER_PREFIX), mismatched);
        assert_eq!(strip_markers("plain", MARKER_PREFIX), "plain");
    }

    #[test]
    fn see_also_lines() {
        assert_eq!(
            see_also_line("people/bob", Some("\n  Bob runs infra\nmore")),
            "(see also: people/bob — Bob runs infra)"
        );
        assert_eq!(
            see_also_line("people/bob", Some("  ")),
            "(see also: people/bob)"
        );
        let long = "x".repeat(300);
        assert_eq!(
            see_also_line("k", Some(&long)).chars().count(),
            "(see also: k — )".chars().count() + 120
        );
    }
}
