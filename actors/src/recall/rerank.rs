//! Reranking the top recall candidates with a cross-encoder, pure: which passages of which
//! candidates are read with the query ([`pairs`]), and the new order from their scores
//! ([`apply`]). The model itself is `crate::reranker`.
//!
//! A short document is one passage. A long one (a tool output) is cut into chunks of about
//! [`CHUNK_CHARS`] characters on line boundaries, and at most [`CHUNKS_PER_DOCUMENT`] of them are
//! read: the one holding the document's focus (its best lexical window), the best other chunks
//! by the same lexical score, and the first. A document scores its best chunk, and that chunk
//! becomes its focus (unless it holds the lexical focus, which is narrower), so the snippet
//! shows what the reranker read.

use std::collections::HashSet;
use std::ops::Range;

use super::focus::windows;
use super::terms::words;
use super::{FusedHit, RecallOutcome, RecallSource};

/// Candidates reranked by default: the top of the fused order (10 keeps the held-out quality
/// of 20 at half the pairs; `docs/benchmarks.md`).
pub const DEPTH: usize = 10;
/// Characters of one chunk of a long document (about 150 tokens: the pair stays short).
pub const CHUNK_CHARS: usize = 600;
/// Most chunks of one document read by the reranker by default: the focus chunk only (three
/// tripled the pairs of long documents without a better held-out order).
pub const CHUNKS_PER_DOCUMENT: usize = 1;

/// How much the reranker reads: the top `depth` candidates, at most `chunks` chunks of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Candidates reranked.
    pub depth: usize,
    /// Most chunks of one long document.
    pub chunks: usize,
}

impl Default for Shape {
    fn default() -> Self {
        Self {
            depth: DEPTH,
            chunks: CHUNKS_PER_DOCUMENT,
        }
    }
}
/// The reranker's weight against the fused order when the request does not say (infinite: the
/// reranker's order alone).
pub const DEFAULT_WEIGHT: f32 = f32::INFINITY;
/// The `k` of the rank fusion of the fused order and the reranker's order.
pub const BLEND_K: f32 = 10.0;

/// One passage to score: a candidate (index into the outcome's hits) and the byte range of
/// its body read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// Index of the candidate in `RecallOutcome::hits`.
    pub hit: usize,
    /// Bytes of its body read.
    pub range: Range<usize>,
}

/// The text the reranker reads for `pair`: the title first for knowledge and entities.
pub fn passage_text(fused: &FusedHit, range: &Range<usize>) -> String {
    let body = fused.hit.body.get(range.clone()).unwrap_or_default();
    match fused.source {
        RecallSource::Knowledge | RecallSource::Entity if !fused.hit.title.is_empty() => {
            format!("{}\n{body}", fused.hit.title)
        }
        _ => body.to_string(),
    }
}

/// Chunks of `body`: consecutive windows joined up to about [`CHUNK_CHARS`] characters.
fn chunks(body: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for window in windows(body) {
        match out.last_mut() {
            Some(last) if body[last.start..window.end].chars().count() <= CHUNK_CHARS => {
                last.end = window.end;
            }
            _ => out.push(window),
        }
    }
    if out.is_empty() {
        out.push(0..body.len());
    }
    out
}

/// How many of `terms` a chunk holds as whole words.
fn lexical(body: &str, range: &Range<usize>, terms: &[String]) -> usize {
    let present: HashSet<String> = words(&body[range.clone()]).collect();
    terms.iter().filter(|term| present.contains(*term)).count()
}

/// The passages to score for the first `shape.depth` candidates of `outcome`, at most
/// `shape.chunks` (at least one) of each.
pub fn pairs(outcome: &RecallOutcome, terms: &[String], shape: Shape) -> Vec<Pair> {
    let most = shape.chunks.max(1);
    let mut out = Vec::new();
    for (index, fused) in outcome.hits.iter().enumerate().take(shape.depth) {
        let body = &fused.hit.body;
        if body.chars().count() <= CHUNK_CHARS {
            out.push(Pair {
                hit: index,
                range: 0..body.len(),
            });
            continue;
        }
        let all = chunks(body);
        let focus_chunk = fused.focus.as_ref().and_then(|focus| {
            all.iter()
                .position(|chunk| chunk.start <= focus.start && focus.start < chunk.end)
        });
        let mut ranked: Vec<(usize, usize)> = all
            .iter()
            .enumerate()
            .map(|(at, chunk)| (at, lexical(body, chunk, terms)))
            .filter(|&(_, count)| count > 0)
            .collect();
        ranked.sort_by_key(|&(at, count)| (std::cmp::Reverse(count), at));
        let mut chosen: Vec<usize> = Vec::with_capacity(most);
        for at in focus_chunk
            .into_iter()
            .chain(ranked.into_iter().map(|(at, _)| at))
            .chain([0])
        {
            if !chosen.contains(&at) && chosen.len() < most {
                chosen.push(at);
            }
        }
        for at in chosen {
            if let Some(range) = all.get(at) {
                out.push(Pair {
                    hit: index,
                    range: range.clone(),
                });
            }
        }
    }
    out
}

/// Reorders `outcome` by the reranker's `scores` (one per pair, same order): each candidate
/// scores its best passage, which becomes its focus; the reranked top `depth` is fused with
/// the original order by rank (`weight` for the reranker, 1 for the fused order, k =
/// [`BLEND_K`]; an infinite weight is the reranker's order alone), the rest keeps its place.
/// Scores are set so that they fall with the new order, for the tiers of the answer.
pub fn apply(
    outcome: &mut RecallOutcome,
    pairs: &[Pair],
    scores: &[f32],
    weight: f32,
    depth: usize,
) {
    let depth = outcome.hits.len().min(depth);
    let mut best: Vec<Option<(f32, Range<usize>)>> = vec![None; depth];
    for (pair, &score) in pairs.iter().zip(scores) {
        if pair.hit >= depth || !score.is_finite() {
            continue;
        }
        let slot = &mut best[pair.hit];
        if slot.as_ref().is_none_or(|(top, _)| score > *top) {
            *slot = Some((score, pair.range.clone()));
        }
    }
    // Candidates without a score keep the bottom of the reranked part, in their order.
    let mut by_reranker: Vec<usize> = (0..depth).collect();
    by_reranker.sort_by(|&a, &b| {
        let score = |i: usize| best[i].as_ref().map_or(f32::NEG_INFINITY, |(s, _)| *s);
        score(b).total_cmp(&score(a)).then(a.cmp(&b))
    });
    let mut blended: Vec<(usize, f32)> = (0..depth)
        .map(|index| {
            let reranked = by_reranker
                .iter()
                .position(|&i| i == index)
                .unwrap_or(depth);
            let value = if weight.is_infinite() {
                -(reranked as f32)
            } else {
                1.0 / (BLEND_K + index as f32) + weight / (BLEND_K + reranked as f32)
            };
            (index, value)
        })
        .collect();
    blended.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let top = outcome.hits.first().map_or(1.0, |hit| hit.score);
    let mut taken: Vec<Option<FusedHit>> = outcome.hits.drain(..depth).map(Some).collect();
    let mut reordered = Vec::with_capacity(depth);
    for (rank, (index, _)) in blended.into_iter().enumerate() {
        if let Some(mut fused) = taken.get_mut(index).and_then(Option::take) {
            // The chunk read becomes the focus unless it holds the (narrower) lexical focus.
            if let Some((_, range)) = best[index].take() {
                let holds = fused
                    .focus
                    .as_ref()
                    .is_some_and(|focus| range.start <= focus.start && focus.end <= range.end);
                if !holds {
                    fused.focus = Some(range);
                }
            }
            // Falling scores in the new order, on the scale of the fused ones.
            fused.score = top * (1.0 - rank as f32 / (2.0 * depth as f32));
            reordered.push(fused);
        }
    }
    let floor = reordered.last().map_or(top, |hit| hit.score);
    for rest in &mut outcome.hits {
        rest.score = rest.score.min(floor * 0.99);
    }
    reordered.append(&mut outcome.hits);
    outcome.hits = reordered;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recall::terms::query_terms;
    use lore_storage::SearchHit;

    fn hit(id: &str, body: &str, score: f32) -> FusedHit {
        FusedHit {
            hit: SearchHit {
                id: id.into(),
                kind: "message".into(),
                title: "user".into(),
                body: body.into(),
                score: 0.0,
                session: String::new(),
                project: String::new(),
                created_at_ms: 0,
            },
            source: RecallSource::Message,
            score,
            focus: None,
        }
    }

    fn long_log() -> String {
        let mut lines: Vec<String> = (0..120)
            .map(|n| format!("INFO worker {n} finished its batch in 12 ms"))
            .collect();
        lines.insert(70, "WARN pool exhausted at 37 connections".into());
        lines.join("\n")
    }

    #[test]
    fn short_documents_are_one_pair_and_long_ones_a_few_chunks() {
        let log = long_log();
        let mut outcome = RecallOutcome {
            hits: vec![hit("a", "short", 1.0), hit("b", &log, 0.5)],
            ..RecallOutcome::default()
        };
        let terms = query_terms("pool exhausted connections");
        outcome.hits[1].focus = super::super::focus::best_window(&log, &terms, None);
        let three = Shape {
            depth: 20,
            chunks: 3,
        };
        let pairs = pairs(&outcome, &terms, three);
        assert_eq!(
            pairs[0],
            Pair {
                hit: 0,
                range: 0..5
            }
        );
        let long: Vec<&Pair> = pairs.iter().filter(|pair| pair.hit == 1).collect();
        // Only the focus chunk holds a term: it and the first chunk are read.
        assert_eq!(long.len(), 2, "{long:?}");
        assert!(log[long[0].range.clone()].contains("pool exhausted"));
        assert!(
            long.iter().any(|pair| pair.range.start == 0),
            "the first chunk too"
        );
        assert!(
            long.iter()
                .all(|pair| log[pair.range.clone()].chars().count() <= CHUNK_CHARS)
        );
        // One chunk a candidate, depth 1: only the first candidate, and of a long one its focus.
        let shape = Shape {
            depth: 1,
            chunks: 1,
        };
        assert_eq!(super::pairs(&outcome, &terms, shape), [pairs[0].clone()]);
        outcome.hits.swap(0, 1);
        let focus_only = super::pairs(&outcome, &terms, shape);
        assert_eq!(focus_only.len(), 1);
        assert!(log[focus_only[0].range.clone()].contains("pool exhausted"));
    }

    #[test]
    fn the_reranker_order_wins_and_the_best_chunk_becomes_the_focus() {
        let mut outcome = RecallOutcome {
            hits: vec![
                hit("a", "alpha", 0.9),
                hit("b", "beta", 0.8),
                hit("c", "gamma", 0.7),
            ],
            ..RecallOutcome::default()
        };
        let pairs = vec![
            Pair {
                hit: 0,
                range: 0..5,
            },
            Pair {
                hit: 1,
                range: 0..2,
            },
            Pair {
                hit: 1,
                range: 2..4,
            },
            Pair {
                hit: 2,
                range: 0..5,
            },
        ];
        apply(
            &mut outcome,
            &pairs,
            &[-3.0, 1.0, 6.0, 2.0],
            f32::INFINITY,
            DEPTH,
        );
        let ids: Vec<&str> = outcome.hits.iter().map(|h| h.hit.id.as_str()).collect();
        assert_eq!(ids, ["b", "c", "a"]);
        assert_eq!(outcome.hits[0].focus, Some(2..4));
        assert!(outcome.hits.windows(2).all(|w| w[0].score > w[1].score));
        // A chunk holding the lexical focus keeps that narrower focus; one that does not
        // replaces it.
        let mut narrow = RecallOutcome {
            hits: vec![hit("a", "alpha beta", 0.9), hit("b", "gamma delta", 0.8)],
            ..RecallOutcome::default()
        };
        narrow.hits[0].focus = Some(6..10);
        narrow.hits[1].focus = Some(0..5);
        let pairs = [
            Pair {
                hit: 0,
                range: 0..10,
            },
            Pair {
                hit: 1,
                range: 6..11,
            },
        ];
        apply(&mut narrow, &pairs, &[1.0, 2.0], f32::INFINITY, DEPTH);
        assert_eq!(narrow.hits[0].hit.id, "b");
        assert_eq!(narrow.hits[0].focus, Some(6..11));
        assert_eq!(narrow.hits[1].focus, Some(6..10));
    }

    #[test]
    fn a_blend_keeps_a_strong_fused_first_against_a_small_reranker_preference() {
        let mut outcome = RecallOutcome {
            hits: (0..5)
                .map(|n| hit(&format!("h{n}"), "x", 1.0 - n as f32 / 10.0))
                .collect(),
            ..RecallOutcome::default()
        };
        let pairs: Vec<Pair> = (0..5)
            .map(|n| Pair {
                hit: n,
                range: 0..1,
            })
            .collect();
        // The reranker puts h1 first and h0 second.
        apply(&mut outcome, &pairs, &[4.0, 5.0, 3.0, 2.0, 1.0], 1.0, DEPTH);
        assert_eq!(
            outcome.hits[0].hit.id, "h0",
            "a tie goes to the fused order"
        );
        // With a heavier reranker the swap happens.
        let mut again = RecallOutcome {
            hits: (0..5)
                .map(|n| hit(&format!("h{n}"), "x", 1.0 - n as f32 / 10.0))
                .collect(),
            ..RecallOutcome::default()
        };
        apply(&mut again, &pairs, &[4.0, 5.0, 3.0, 2.0, 1.0], 2.0, DEPTH);
        assert_eq!(again.hits[0].hit.id, "h1");
    }
}
