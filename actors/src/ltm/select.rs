//! Which entries go where: system[1]'s preferences, entities and catalogue; the entries
//! system[2] pins within its budget; and the changes that become a knowledge delta.

use lore_storage::memory::{Category, Entity, KnowledgeEntry};

use super::{in_scope, is_preference, key, key_id};
use crate::tokens::count;

/// Score boost of an entry that is already in the session's prompt (reference ×1.25).
const STICKY: f32 = 1.25;
/// Share of the budget architecture entries may take first.
const ARCHITECTURE_SHARE: f64 = 0.20;
/// Entries shown when nothing in the context matches any entry.
const SAFETY_NET: usize = 5;

/// What system[1] shows.
#[derive(Debug, Default)]
pub struct Baseline<'a> {
    /// Preferences, most confident first.
    pub preferences: Vec<&'a KnowledgeEntry>,
    /// Entities of the project and the global ones, most recently changed first.
    pub entities: Vec<&'a Entity>,
    /// The project's other entries, most confident first.
    pub catalogue: Vec<&'a KnowledgeEntry>,
}

fn by_confidence(a: &&KnowledgeEntry, b: &&KnowledgeEntry) -> std::cmp::Ordering {
    b.confidence
        .total_cmp(&a.confidence)
        .then_with(|| b.updated_at_ms.cmp(&a.updated_at_ms))
        .then_with(|| a.id.cmp(&b.id))
}

/// system[1]'s entries for a session of `project`.
pub fn baseline<'a>(
    entries: &'a [KnowledgeEntry],
    entities: &'a [Entity],
    project: Option<&str>,
) -> Baseline<'a> {
    let mut preferences: Vec<&KnowledgeEntry> = entries
        .iter()
        .filter(|e| in_scope(e, project) && is_preference(e))
        .collect();
    preferences.sort_by(by_confidence);
    let mut catalogue: Vec<&KnowledgeEntry> = entries
        .iter()
        .filter(|e| in_scope(e, project) && !is_preference(e) && e.project.is_some())
        .collect();
    catalogue.sort_by(by_confidence);
    catalogue.truncate(super::render::MAX_CATALOGUE);
    let mut known: Vec<&Entity> = entities
        .iter()
        .filter(|e| e.project.is_none() || e.project.as_deref() == project)
        .collect();
    known.sort_by(|a, b| {
        b.updated_at_ms
            .cmp(&a.updated_at_ms)
            .then_with(|| a.id.cmp(&b.id))
    });
    known.truncate(super::render::MAX_ENTITIES);
    Baseline {
        preferences,
        entities: known,
        catalogue,
    }
}

fn cost(entry: &KnowledgeEntry) -> u64 {
    count(&entry.title) + count(&entry.content) + 12
}

/// The entries system[2] pins: the relevant non-preference entries of the session's scope by
/// `score × confidence` (×1.25 for `sticky` ids), architecture first up to a fifth of the
/// budget, then packed greedily (an entry that does not fit is skipped, not the end); the five
/// most confident project entries when nothing is relevant.
pub fn pin<'a>(
    entries: &'a [KnowledgeEntry],
    candidates: &[(String, f32)],
    project: Option<&str>,
    budget: u64,
    sticky: &[String],
) -> Vec<&'a KnowledgeEntry> {
    let eligible = |e: &&KnowledgeEntry| in_scope(e, project) && !is_preference(e);
    let mut scored: Vec<(f32, &KnowledgeEntry)> = candidates
        .iter()
        .filter_map(|(id, score)| {
            let entry = entries.iter().find(|e| &e.id == id).filter(eligible)?;
            let boost = if sticky.iter().any(|s| s == id) {
                STICKY
            } else {
                1.0
            };
            Some((score * entry.confidence * boost, entry))
        })
        .collect();
    if scored.is_empty() {
        let mut fallback: Vec<&KnowledgeEntry> = entries
            .iter()
            .filter(eligible)
            .filter(|e| e.project.is_some())
            .collect();
        fallback.sort_by(by_confidence);
        scored = fallback
            .into_iter()
            .take(SAFETY_NET)
            .map(|e| (e.confidence, e))
            .collect();
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.id.cmp(&b.1.id)));
    let mut chosen: Vec<&KnowledgeEntry> = Vec::new();
    let mut used = 0;
    let architecture_cap = (budget as f64 * ARCHITECTURE_SHARE) as u64;
    for (_, entry) in scored
        .iter()
        .filter(|(_, e)| e.category == Category::Architecture)
    {
        let c = cost(entry);
        if used + c <= architecture_cap {
            used += c;
            chosen.push(entry);
        }
    }
    for (_, entry) in &scored {
        if chosen.iter().any(|c| c.id == entry.id) {
            continue;
        }
        let c = cost(entry);
        if used + c <= budget {
            used += c;
            chosen.push(entry);
        }
    }
    chosen
}

/// What became worth a delta: pinned entries whose content changed materially, and relevant
/// entries of the session's scope not shown yet. Answers their keys, pinned ones first.
pub fn changes(
    entries: &[KnowledgeEntry],
    candidates: &[(String, f32)],
    shown: &[String],
    project: Option<&str>,
) -> Vec<String> {
    let mut out = Vec::new();
    for old in shown {
        if let Some(entry) = entries.iter().find(|e| e.id == key_id(old))
            && in_scope(entry, project)
        {
            let now = key(entry);
            if &now != old && !out.contains(&now) {
                out.push(now);
            }
        }
    }
    for (id, _) in candidates {
        if shown.iter().any(|k| key_id(k) == id) || out.iter().any(|k| key_id(k) == id) {
            continue;
        }
        if let Some(entry) = entries
            .iter()
            .find(|e| &e.id == id)
            .filter(|e| in_scope(e, project))
        {
            out.push(key(entry));
        }
    }
    out
}

/// Lowercased words of four letters or more, the common ones left out.
fn words(text: &str) -> std::collections::HashSet<String> {
    const COMMON: [&str; 16] = [
        "that", "this", "with", "from", "have", "will", "what", "when", "then", "them", "they",
        "your", "into", "also", "should", "would",
    ];
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| w.chars().count() >= 4)
        .map(str::to_lowercase)
        .filter(|w| !COMMON.contains(&w.as_str()))
        .collect()
}

/// Entries written since `since_ms` that share at least two words with `context`, scored by
/// the share of their words it holds: what a search may miss while the index has not yet
/// committed a new entry.
pub fn recent_matches(
    entries: &[KnowledgeEntry],
    context: &str,
    since_ms: u64,
    project: Option<&str>,
) -> Vec<(String, f32)> {
    let seen = words(context);
    entries
        .iter()
        .filter(|e| e.updated_at_ms >= since_ms && in_scope(e, project))
        .filter_map(|e| {
            let own = words(&format!("{} {}", e.title, e.content));
            let shared = own.iter().filter(|w| seen.contains(*w)).count();
            (shared >= 2).then(|| (e.id.clone(), shared as f32 / own.len().max(1) as f32))
        })
        .collect()
}
