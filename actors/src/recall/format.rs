//! The recall answer the model reads (reference §18.2): results in tiers by score relative to
//! the top, grouped by source, each cut to its share of a character budget; and the full
//! `## Recall Detail` of one id.

use std::fmt::Write;

use lore_storage::SearchHit;

use super::snippet::{age, cut, one_line, utc_date};
use super::{FusedHit, RecallOutcome, RecallSource};

/// Characters of a recall answer (`search.recallCharBudget`).
pub const DEFAULT_CHAR_BUDGET: usize = 12_000;
/// Most results shown.
pub const MAX_SHOWN: usize = 15;
/// Results scoring below this share of the top score are dropped…
pub const RELATIVE_FLOOR: f32 = 0.15;
/// …unless fewer than this many would be left.
pub const BACKFILL: usize = 3;
/// Fewest characters of content a shown result gets.
pub const MIN_RESULT_CHARS: usize = 80;
/// Most characters of content a shown result gets.
pub const MAX_RESULT_CHARS: usize = 1_200;
/// Most characters of a title or name.
const MAX_TITLE_CHARS: usize = 120;

/// A score band relative to the top score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    Strong,
    Supporting,
    Peripheral,
}

impl Tier {
    fn of(score: f32, top: f32) -> Self {
        let relative = if top > 0.0 { score / top } else { 1.0 };
        if relative >= 0.6 {
            Tier::Strong
        } else if relative >= 0.3 {
            Tier::Supporting
        } else {
            Tier::Peripheral
        }
    }

    fn header(self) -> &'static str {
        match self {
            Tier::Strong => "### Strong Matches",
            Tier::Supporting => "### Supporting",
            Tier::Peripheral => "### Peripheral",
        }
    }

    fn weight(self) -> f32 {
        match self {
            Tier::Strong => 3.0,
            Tier::Supporting => 1.5,
            Tier::Peripheral => 0.7,
        }
    }
}

fn source_header(source: RecallSource) -> &'static str {
    match source {
        RecallSource::Entity => "#### People & Entities",
        RecallSource::Knowledge => "#### Knowledge",
        RecallSource::Distillation => "#### Distilled",
        RecallSource::Message => "#### Conversation",
    }
}

fn source_weight(source: RecallSource) -> f32 {
    match source {
        RecallSource::Knowledge => 1.0,
        RecallSource::Entity => 0.9,
        RecallSource::Distillation | RecallSource::Message => 0.8,
    }
}

/// One result line: `prefix` + content + `suffix`.
struct Line<'a> {
    tier: Tier,
    source: RecallSource,
    prefix: String,
    /// The result, whose excerpt around its focus is the content.
    fused: &'a FusedHit,
    suffix: String,
}

impl<'a> Line<'a> {
    fn new(fused: &'a FusedHit, tier: Tier, now_ms: u64) -> Self {
        let hit = &fused.hit;
        let (title, _) = cut(&one_line(&hit.title), MAX_TITLE_CHARS);
        let when = age(now_ms, hit.created_at_ms);
        let name = if title.is_empty() { &hit.id } else { &title };
        let prefix = match fused.source {
            RecallSource::Knowledge => format!("- **{name}** ({when}): "),
            RecallSource::Entity => format!("- **{name}**: "),
            RecallSource::Distillation => "- [lossy] ".to_string(),
            RecallSource::Message => {
                let role = if title.is_empty() { "message" } else { &title };
                format!("- ({role}, {when}) ")
            }
        };
        Self {
            tier,
            source: fused.source,
            prefix,
            fused,
            suffix: format!(" ({})", hit.id),
        }
    }
}

/// The results kept: scores at least [`RELATIVE_FLOOR`] × top, at least [`BACKFILL`] when
/// there are that many, at most [`MAX_SHOWN`]. Hits are best first.
fn kept(hits: &[FusedHit]) -> &[FusedHit] {
    let top = hits.first().map_or(0.0, |hit| hit.score);
    let above = hits
        .iter()
        .take_while(|hit| hit.score >= RELATIVE_FLOOR * top)
        .count();
    let count = above.max(BACKFILL.min(hits.len())).min(MAX_SHOWN);
    hits.get(..count).unwrap_or(hits)
}

/// Renders the answer with `contents[i]` as the content of `lines[i]`.
fn render(head: &str, lines: &[Line], contents: &[String], footer: &str) -> String {
    let mut out = String::from(head);
    let mut current: Option<(Tier, RecallSource)> = None;
    for (line, content) in lines.iter().zip(contents) {
        if current.map(|(tier, _)| tier) != Some(line.tier) {
            let _ = write!(out, "\n{}\n", line.tier.header());
            current = None;
        }
        if current != Some((line.tier, line.source)) {
            let _ = write!(out, "\n{}\n", source_header(line.source));
            current = Some((line.tier, line.source));
        }
        let _ = writeln!(out, "{}{}{}", line.prefix, content, line.suffix);
    }
    out.push_str(footer);
    out
}

/// The tiered Markdown answer of a recall for `query`, within about `char_budget` characters:
/// the budget left after headers and line frames is shared by source weight × tier weight, each
/// result getting [`MIN_RESULT_CHARS`]–[`MAX_RESULT_CHARS`] characters of content, cut at a
/// sentence boundary. A cut adds a hint to fetch the full text by id.
pub fn format_results(
    query: &str,
    outcome: &RecallOutcome,
    now_ms: u64,
    char_budget: usize,
) -> String {
    let kept = kept(&outcome.hits);
    if kept.is_empty() {
        let (query, _) = cut(&one_line(query), 200);
        return format!("## Recall Results\n\nNo results for \"{query}\".\n");
    }
    let top = kept.first().map_or(0.0, |hit| hit.score);
    let low = kept.last().map_or(0.0, |hit| hit.score);
    let total = outcome.candidates.max(outcome.hits.len());
    let head = format!(
        "## Recall Results\n\nFound {total} results, showing top {} (score range: {low:.3}–{top:.3}).\n",
        kept.len()
    );
    let mut lines: Vec<Line> = kept
        .iter()
        .map(|fused| Line::new(fused, Tier::of(fused.score, top), now_ms))
        .collect();
    // Stable: tiers in order, sources in order inside a tier, scores in order inside a source.
    lines.sort_by_key(|line| (line.tier, line.source));
    let shown_footer = format!("\n*{} of {total} results shown.*\n", kept.len());
    let example = kept.first().map_or("", |hit| hit.hit.id.as_str());
    let hint = format!(
        "*Some results were cut; call recall with `id` (e.g. `{example}`) for the full text.*\n"
    );
    let empty: Vec<String> = vec![String::new(); lines.len()];
    let frame = render(&head, &lines, &empty, &shown_footer).chars().count() + hint.chars().count();
    let content_budget = char_budget.saturating_sub(frame) as f32;
    let weights: Vec<f32> = lines
        .iter()
        .map(|line| source_weight(line.source) * line.tier.weight())
        .collect();
    let weight_sum: f32 = weights.iter().sum();
    let mut any_cut = false;
    let contents: Vec<String> = lines
        .iter()
        .zip(&weights)
        .map(|(line, weight)| {
            let share = (content_budget * weight / weight_sum).floor() as usize;
            let (content, was_cut) = line
                .fused
                .excerpt(share.clamp(MIN_RESULT_CHARS, MAX_RESULT_CHARS));
            any_cut |= was_cut;
            one_line(&content)
        })
        .collect();
    let footer = if any_cut {
        format!("{shown_footer}{hint}")
    } else {
        shown_footer
    };
    render(&head, &lines, &contents, &footer)
}

/// The full text of one document: `## Recall Detail: <id>`, a line of facts, the title of a
/// knowledge entry or entity, then the whole body.
pub fn format_detail(hit: &SearchHit) -> String {
    let source = RecallSource::of(hit);
    let mut facts = vec![if hit.kind.is_empty() {
        format!("{source:?}").to_lowercase()
    } else {
        hit.kind.clone()
    }];
    if source == RecallSource::Message && !hit.title.is_empty() {
        facts.push(format!("role {}", hit.title));
    }
    if !hit.session.is_empty() {
        facts.push(format!("session {}", hit.session));
    }
    if !hit.project.is_empty() {
        facts.push(format!("project {}", hit.project));
    }
    if hit.created_at_ms > 0 {
        facts.push(utc_date(hit.created_at_ms));
    }
    let mut out = format!(
        "## Recall Detail: {}\n\n*{}*\n\n",
        hit.id,
        facts.join(" · ")
    );
    if source != RecallSource::Message && !hit.title.is_empty() {
        let _ = write!(out, "**{}**\n\n", one_line(&hit.title));
    }
    out.push_str(hit.body.trim_end());
    out.push('\n');
    out
}

/// The answer when an `id` names no document.
pub fn format_missing(id: &str) -> String {
    let (id, _) = cut(&one_line(id), 200);
    format!("## Recall Detail: {id}\n\nNo document has this id; search with a query instead.\n")
}
