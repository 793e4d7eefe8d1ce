//! The distilled prefix: which observation logs it holds at each layer, and its text.
//!
//! Layers 1–2 hold every live log (consolidations first, then generation 0 in order), trimmed to
//! the distilled budget by dropping the oldest generation-0 logs; layer 3 the 5 newest
//! generation-0 logs and the consolidations; layer 4 the 2 most important logs. The text is a
//! fixed notice (the user half) and one section per log (the assistant half), so a prefix that
//! gains logs only appends sections: what was cached before stays a prefix of what is sent.

/// One observation log as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogView {
    /// Position among the session's distillations.
    pub n: u64,
    /// 0 for an observation log, more for a consolidation.
    pub generation: u32,
    /// Estimated tokens of its rendered section.
    pub tokens: u64,
    /// The observations.
    pub text: String,
    /// Its search id (`d:<session>:<n>`).
    pub id: String,
}

/// Generation-0 logs kept at layer 3.
const LAYER3_RECENT: usize = 5;
/// Logs kept at layer 4.
const LAYER4_LOGS: usize = 2;

/// Which logs a layer's prefix holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixKind {
    /// Every live log, within the budget (layers 1 and 2).
    All,
    /// The newest generation-0 logs and the consolidations (layer 3).
    Recent,
    /// The most important logs (layer 4).
    Top,
}

impl PrefixKind {
    /// The selection of a layer.
    pub fn for_layer(layer: u8) -> Self {
        match layer {
            0..=2 => PrefixKind::All,
            3 => PrefixKind::Recent,
            _ => PrefixKind::Top,
        }
    }

    /// Its stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            PrefixKind::All => "all",
            PrefixKind::Recent => "recent",
            PrefixKind::Top => "top",
        }
    }
}

/// Consolidations first (oldest first), then generation-0 logs in order.
fn ordered(logs: &[LogView]) -> Vec<&LogView> {
    let mut out: Vec<&LogView> = logs.iter().filter(|l| l.generation > 0).collect();
    out.extend(logs.iter().filter(|l| l.generation == 0));
    out
}

/// How much a log matters when only a few are kept: recency first, then what it is about.
fn importance(log: &LogView, rank: usize, count: usize) -> f64 {
    let recency = if count <= 1 {
        1.0
    } else {
        rank as f64 / (count - 1) as f64
    };
    let text = log.text.to_lowercase();
    let mut bonus: f64 = 0.0;
    if ["decided", "decision", "chose", "instead of", "rejected"]
        .iter()
        .any(|w| text.contains(w))
    {
        bonus += 0.3;
    }
    if ["gotcha", "bug", "root cause", "broke", "regression"]
        .iter()
        .any(|w| text.contains(w))
    {
        bonus += 0.2;
    }
    if ["architecture", "design", "module", "schema"]
        .iter()
        .any(|w| text.contains(w))
    {
        bonus += 0.1;
    }
    if log.generation > 0 {
        bonus += 0.2;
    }
    0.7 * recency + 0.3 * bonus.min(1.0)
}

/// The `n` of each log a prefix of `kind` holds within `budget` tokens, in prefix order.
pub fn select(logs: &[LogView], kind: PrefixKind, budget: u64) -> Vec<u64> {
    let chosen: Vec<&LogView> = match kind {
        PrefixKind::All => ordered(logs),
        PrefixKind::Recent => {
            let gen0: Vec<&LogView> = logs.iter().filter(|l| l.generation == 0).collect();
            let skip = gen0.len().saturating_sub(LAYER3_RECENT);
            let mut out: Vec<&LogView> = logs.iter().filter(|l| l.generation > 0).collect();
            out.extend(gen0.into_iter().skip(skip));
            out
        }
        PrefixKind::Top => {
            let count = logs.len();
            let mut scored: Vec<(f64, &LogView)> = logs
                .iter()
                .enumerate()
                .map(|(rank, log)| (importance(log, rank, count), log))
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.n.cmp(&a.1.n)));
            let mut top: Vec<&LogView> = scored
                .into_iter()
                .take(LAYER4_LOGS)
                .map(|(_, l)| l)
                .collect();
            top.sort_by_key(|log| (log.generation == 0, log.n));
            top
        }
    };
    // Drop the oldest generation-0 logs until the rest fits (consolidations stay).
    let total = |list: &[&LogView]| list.iter().map(|l| l.tokens).sum::<u64>();
    let mut kept = chosen;
    while total(&kept) > budget {
        match kept.iter().position(|l| l.generation == 0) {
            Some(oldest) => {
                kept.remove(oldest);
            }
            None => {
                kept.pop();
            }
        }
        if kept.is_empty() {
            break;
        }
    }
    kept.iter().map(|log| log.n).collect()
}

/// The user half of the prefix.
pub const PREFIX_NOTICE: &str = "[Lore: the earlier part of this conversation was condensed into the observation logs that follow, written while the work went on. Treat them as your own memory of that work and do not comment on their format. Details they leave out can be looked up with the recall tool when it is offered.]";

/// The sections of the assistant half: a heading, then one section per log in order.
pub fn render_prefix(logs: &[LogView], chosen: &[u64]) -> Vec<String> {
    let mut sections = Vec::with_capacity(chosen.len() + 1);
    sections.push("## Session History".to_string());
    let mut earlier_heading = false;
    let mut recent_heading = false;
    for n in chosen {
        let Some(log) = logs.iter().find(|log| log.n == *n) else {
            continue;
        };
        let mut section = String::new();
        if log.generation > 0 && !earlier_heading {
            section.push_str("### Earlier Work (summarized)\n\n");
            earlier_heading = true;
        }
        if log.generation == 0 && !recent_heading {
            section.push_str("### Recent Work (distilled)\n\n");
            recent_heading = true;
        }
        section.push_str(&format!("({})\n{}", log.id, log.text.trim()));
        sections.push(section);
    }
    sections
}
