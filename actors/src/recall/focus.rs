//! Where a result answers the query, and the excerpt shown for it: a long message (a tool
//! output of thousands of lines) is cut around its best-matching window instead of its start.
//!
//! The body is split into windows (lines, long lines at sentence ends); each window scores the
//! query terms it holds as whole words (a shared stem of at least five letters counts half),
//! each term weighted by how rare it is among the body's windows, so a word on every line of a
//! log counts for little and the one line holding the rare terms wins. With no term in any
//! window the caller's hint (the window a vector passage or the reranker chose) is used, else
//! the start. [`excerpt`] then cuts the text around that window at line, sentence or word
//! boundaries, with `…` where it was cut.

use std::collections::HashSet;
use std::ops::Range;

use super::terms::words;

/// Longest window: longer lines are split at sentence ends (or spaces) within this many bytes.
const WINDOW_BYTES: usize = 320;
/// Shortest stem two different words must share to count as a partial match.
const MIN_STEM: usize = 5;

/// The windows of `body`: byte ranges of its non-blank lines, long ones split further.
pub fn windows(body: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in body.split_inclusive('\n') {
        let end = start + line.len();
        let trimmed = line.trim_end();
        if !trimmed.trim().is_empty() {
            split_long(body, start..start + trimmed.len(), &mut out);
        }
        start = end;
    }
    out
}

/// Pushes `range` of `body`, cut into pieces of at most [`WINDOW_BYTES`] at sentence ends
/// (else spaces, else character boundaries).
fn split_long(body: &str, range: Range<usize>, out: &mut Vec<Range<usize>>) {
    let mut start = range.start;
    while range.end - start > WINDOW_BYTES {
        let limit = floor_boundary(body, start + WINDOW_BYTES);
        let piece = body.get(start..limit).unwrap_or_default();
        let cut = piece
            .rfind(['.', '!', '?', ';'])
            .filter(|&at| at > WINDOW_BYTES / 3)
            .map(|at| at + 1)
            .or_else(|| piece.rfind(' ').filter(|&at| at > WINDOW_BYTES / 3))
            .unwrap_or(piece.len())
            .max(1);
        let cut = floor_boundary(body, start + cut).max(start + 1);
        let cut = ceil_boundary(body, cut);
        out.push(start..cut);
        start = cut;
        while body[start..range.end].starts_with(' ') {
            start += 1;
        }
    }
    if start < range.end {
        out.push(start..range.end);
    }
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// How strongly `word` matches `term`: 1 for the same word, 0.5 for a shared stem.
fn match_strength(term: &str, word: &str) -> f32 {
    if term == word {
        return 1.0;
    }
    let shared = term
        .chars()
        .zip(word.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let shorter = term.chars().count().min(word.chars().count());
    if shared >= MIN_STEM && shared * 4 >= shorter * 3 {
        0.5
    } else {
        0.0
    }
}

/// The window of `body` that best matches `terms`, or `hint` when no window holds any term
/// (`None` when neither: the start is as good as anything).
pub fn best_window(
    body: &str,
    terms: &[String],
    hint: Option<Range<usize>>,
) -> Option<Range<usize>> {
    let windows = windows(body);
    if windows.len() <= 1 || terms.is_empty() {
        return hint.or_else(|| windows.into_iter().next());
    }
    // Per window, the strength of each term.
    let strengths: Vec<Vec<f32>> = windows
        .iter()
        .map(|range| {
            let present: HashSet<String> = words(&body[range.clone()]).collect();
            terms
                .iter()
                .map(|term| {
                    present
                        .iter()
                        .map(|word| match_strength(term, word))
                        .fold(0.0, f32::max)
                })
                .collect()
        })
        .collect();
    let count = windows.len() as f32;
    let weights: Vec<f32> = (0..terms.len())
        .map(|t| {
            let holders = strengths.iter().filter(|s| s[t] > 0.0).count() as f32;
            (1.0 + count / (1.0 + holders)).ln()
        })
        .collect();
    let mut best: Option<(usize, f32)> = None;
    for (index, strength) in strengths.iter().enumerate() {
        let score: f32 = strength.iter().zip(&weights).map(|(s, w)| s * w).sum();
        if score > best.map_or(0.0, |(_, top)| top) {
            best = Some((index, score));
        }
    }
    match best {
        Some((index, _)) => windows.into_iter().nth(index),
        None => hint.or_else(|| windows.into_iter().next()),
    }
}

/// About `max_chars` characters of `body` around `focus`: from the start of the window's line
/// (or a little before it, when room is left), whole when it fits; `…` marks each cut end. The
/// flag says whether anything was left out. Without a focus, the start of the body.
pub fn excerpt(body: &str, focus: Option<Range<usize>>, max_chars: usize) -> (String, bool) {
    let total = body.chars().count();
    if total <= max_chars {
        return (body.to_string(), false);
    }
    let Some(focus) = focus.filter(|range| range.start > 0 && range.end <= body.len()) else {
        return super::snippet::cut(body, max_chars);
    };
    let focus_start = floor_boundary(body, focus.start);
    // Up to a fifth of the room goes to what comes before the window, from a line start.
    let lead_room = max_chars / 5;
    let before = &body[..focus_start];
    let lead_from = before
        .char_indices()
        .rev()
        .nth(lead_room.saturating_sub(1))
        .map_or(0, |(at, _)| at);
    let start = before[lead_from..]
        .find('\n')
        .map(|at| lead_from + at + 1)
        .filter(|&at| at <= focus_start)
        .unwrap_or(focus_start);
    let lead = start > 0;
    let room = max_chars.saturating_sub(usize::from(lead));
    let (mut text, cut_end) = super::snippet::cut(&body[start..], room);
    if lead {
        text.insert(0, '…');
    }
    (text, lead || cut_end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::terms::query_terms;

    fn log(fact: &str) -> String {
        let mut lines: Vec<String> = (0..200)
            .map(|n| format!("INFO pool ok: worker {n} finished batch {} in 12 ms", n * 7))
            .collect();
        lines.insert(120, fact.to_string());
        lines.join("\n")
    }

    #[test]
    fn the_rare_terms_pick_their_line_out_of_a_long_log() {
        let body = log("WARN HikariPool exhausted: total=37 active=37 waiting=112");
        let terms =
            query_terms("how many connections did the HikariPool have when it was exhausted?");
        let focus = best_window(&body, &terms, None).unwrap_or_default();
        assert!(
            body[focus.clone()].contains("HikariPool"),
            "{:?}",
            &body[focus]
        );
        let (text, cut) = excerpt(&body, Some(focus), 300);
        assert!(cut);
        assert!(text.starts_with('…') && text.ends_with('…'), "{text}");
        assert!(text.contains("total=37 active=37"), "{text}");
        assert!(text.chars().count() <= 300, "{}", text.chars().count());
    }

    #[test]
    fn words_on_every_line_count_for_little_and_stems_count_half() {
        let body = log("ERROR the connection to the ledger was refused");
        // "pool" and "finished" are on every line; "connections" shares a stem with the fact.
        let terms = query_terms("pool finished connections");
        let focus = best_window(&body, &terms, None).unwrap_or_default();
        assert!(body[focus].contains("connection to the ledger"));
    }

    #[test]
    fn without_any_term_the_hint_or_the_start_is_used() {
        let body = log("the answer");
        let terms = query_terms("zebra");
        assert_eq!(best_window(&body, &terms, Some(40..50)), Some(40..50));
        let first = best_window(&body, &terms, None).unwrap_or_default();
        assert_eq!(first.start, 0);
        let (text, _) = excerpt(&body, Some(first), 100);
        assert!(text.starts_with("INFO pool ok: worker 0 "), "{text}");
    }

    #[test]
    fn long_lines_are_split_and_short_bodies_stay_whole() {
        let sentence = "Word soup without the answer. ";
        let body = format!(
            "{}The port is 9464 now. {}",
            sentence.repeat(20),
            sentence.repeat(20)
        );
        let all = windows(&body);
        assert!(all.len() > 3, "{all:?}");
        assert!(all.iter().all(|range| range.len() <= WINDOW_BYTES));
        let focus = best_window(&body, &query_terms("9464"), None).unwrap_or_default();
        assert!(body[focus].contains("9464"));
        assert_eq!(
            excerpt("short", Some(0..5), 100),
            ("short".to_string(), false)
        );
        let cjk = "数据库".repeat(300);
        let (text, _) = excerpt(&cjk, Some(301..310), 50);
        assert!(text.chars().count() <= 50);
    }
}
