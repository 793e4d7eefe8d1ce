//! The recent section: dated lines, newest kept, within the section's character budget.

use std::time::{SystemTime, UNIX_EPOCH};

/// A UTC date `YYYY-MM-DD`.
pub fn utc_date(now: SystemTime) -> String {
    let ms = now
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64;
    lore_storage::memory::day_of(ms)
}

/// Keeps the newest lines of `lines` whose joined length stays within `max` characters.
pub fn keep_newest(lines: &[String], max: usize) -> Vec<String> {
    let mut kept: Vec<String> = Vec::new();
    let mut total = 0;
    for line in lines.iter().rev() {
        let len = line.chars().count() + usize::from(!kept.is_empty());
        if total + len > max {
            break;
        }
        total += len;
        kept.push(line.clone());
    }
    kept.reverse();
    kept
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use lore_proto::cards::RECENT_MAX_CHARS;

    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(utc_date(UNIX_EPOCH), "1970-01-01");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(utc_date(leap), "2000-02-29");
    }

    #[test]
    fn oldest_lines_go_first() {
        let lines: Vec<String> = (0..10).map(|i| format!("{i}{}", "x".repeat(99))).collect();
        let kept = keep_newest(&lines, RECENT_MAX_CHARS);
        assert_eq!(kept.len(), 5);
        assert!(kept[0].starts_with('5') && kept[4].starts_with('9'));
        assert!(kept.join("\n").chars().count() <= RECENT_MAX_CHARS);
    }
}
