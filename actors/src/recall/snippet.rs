//! Text helpers of the recall answer: whitespace folding, cutting at a sentence boundary
//! within a character count (safe for any UTF-8), ages like `3d ago`, and UTC dates.

/// Runs of whitespace (newlines included) folded into single spaces, ends trimmed.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Characters that end a sentence.
fn ends_sentence(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | ';' | '。' | '！' | '？' | '；')
}

/// Whether a sentence end needs no following space (CJK punctuation).
fn ends_sentence_alone(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '；')
}

/// `text` within `max_chars` characters: whole when it fits, else cut after the last sentence
/// end (or else the last space) in the second half of the room, ending with `…`. The flag says
/// whether anything was cut. Counts characters, never splits one.
pub fn cut(text: &str, max_chars: usize) -> (String, bool) {
    if text.chars().count() <= max_chars {
        return (text.to_string(), false);
    }
    if max_chars == 0 {
        return (String::new(), true);
    }
    let room = max_chars - 1;
    let mut sentence_end = None;
    let mut space = None;
    let mut window_end = 0;
    let mut chars = text.char_indices().peekable();
    let mut count = 0;
    while let Some((at, c)) = chars.next() {
        if count == room {
            break;
        }
        count += 1;
        let after = at + c.len_utf8();
        window_end = after;
        if count * 2 < room {
            continue;
        }
        let next_is_space = chars.peek().is_none_or(|(_, next)| next.is_whitespace());
        if ends_sentence(c) && (next_is_space || ends_sentence_alone(c)) {
            sentence_end = Some(after);
        } else if c.is_whitespace() {
            space = Some(at);
        }
    }
    let end = sentence_end.or(space).unwrap_or(window_end);
    let mut out = text.get(..end).unwrap_or_default().trim_end().to_string();
    out.push('…');
    (out, true)
}

/// How long ago `created_ms` was at `now_ms`: `just now`, `5m ago`, `5h ago`, `3d ago`;
/// `undated` for 0.
pub fn age(now_ms: u64, created_ms: u64) -> String {
    if created_ms == 0 {
        return "undated".into();
    }
    let seconds = now_ms.saturating_sub(created_ms) / 1000;
    match seconds {
        0..60 => "just now".into(),
        60..3_600 => format!("{}m ago", seconds / 60),
        3_600..86_400 => format!("{}h ago", seconds / 3_600),
        _ => format!("{}d ago", seconds / 86_400),
    }
}

/// The UTC date and time of `ms` since the epoch, `YYYY-MM-DD HH:MM UTC`.
pub fn utc_date(ms: u64) -> String {
    let seconds = ms / 1000;
    let days = (seconds / 86_400) as i64;
    let minute_of_day = (seconds % 86_400) / 60;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        minute_of_day / 60,
        minute_of_day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(cut("Hello there.", 80), ("Hello there.".to_string(), false));
    }

    #[test]
    fn cuts_land_after_a_sentence_end() {
        let text = "The ledger failed. Refunds were retried twice. Then the job stopped for good.";
        let (out, was_cut) = cut(text, 60);
        assert!(was_cut);
        assert_eq!(out, "The ledger failed. Refunds were retried twice.…");
    }

    #[test]
    fn without_a_sentence_end_cuts_land_on_a_space_or_a_character() {
        let (out, _) = cut("alpha beta gamma delta epsilon zeta", 20);
        assert_eq!(out, "alpha beta gamma…");
        let (out, _) = cut("日本語のテキストはスペースがない文章です", 10);
        assert_eq!(out.chars().count(), 10);
        assert!(out.ends_with('…'));
        let (out, _) = cut("数据库迁移失败了。退款被重试了两次。然后任务停止了", 16);
        assert_eq!(out, "数据库迁移失败了。…");
    }

    #[test]
    fn ages_and_dates_read_naturally() {
        let now = 10 * 86_400_000;
        assert_eq!(age(now, now - 5_000), "just now");
        assert_eq!(age(now, now - 5 * 60_000), "5m ago");
        assert_eq!(age(now, now - 5 * 3_600_000), "5h ago");
        assert_eq!(age(now, now - 3 * 86_400_000), "3d ago");
        assert_eq!(age(now, now + 1_000), "just now");
        assert_eq!(age(now, 0), "undated");
        assert_eq!(utc_date(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_date(1_709_210_096_000), "2024-02-29 12:34 UTC");
    }
}
