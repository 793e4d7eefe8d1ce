//! The texts of long-term knowledge in the prompt: system[1] (the stable baseline), system[2]
//! and a knowledge delta (the reference's `formatKnowledge`: categories in alphabetical order,
//! entries in alphabetical order of title, so ranking never changes the bytes).

use lore_storage::memory::{Entity, KnowledgeEntry};

use crate::tokens::count;

/// Most entities named in system[1].
pub const MAX_ENTITIES: usize = 30;
/// Most catalogue lines in system[1].
pub const MAX_CATALOGUE: usize = 15;
/// Token budget of the entries shown in one delta.
pub const DELTA_BUDGET: u64 = 400;
/// Most `[k:id]` lines under "Other relevant knowledge" in a delta.
pub const DELTA_OTHERS: usize = 12;

/// The fixed note at the top of system[1].
pub const CAPABILITY_NOTE: &str = "[Lore manages this conversation's context: earlier turns may reach you as dated observation logs, and what earlier sessions taught about this project follows. Do not worry about running out of context; use the recall tool, when it is offered, for details that are not shown.]";

/// The user half of every knowledge delta, replayed byte for byte.
pub const DELTA_NOTICE: &str = "[Lore: an update of the long-term knowledge about this project follows (learned or changed since this conversation began). No reply is needed; carry on with the conversation.]";

/// system[1]: the note, the preferences (by confidence, within `preference_budget` tokens), the
/// known entities and the catalogue. `None` when there is nothing but the note to say.
pub fn stable(
    preferences: &[&KnowledgeEntry],
    entities: &[&Entity],
    catalogue: &[&KnowledgeEntry],
    preference_budget: u64,
) -> Option<String> {
    if preferences.is_empty() && entities.is_empty() && catalogue.is_empty() {
        return None;
    }
    let mut out = String::from(CAPABILITY_NOTE);
    if !preferences.is_empty() {
        out.push_str("\n\n## Preferences\n");
        let mut used = 0;
        for (n, entry) in preferences.iter().enumerate() {
            let line = format!("- **{}**: {}\n", entry.title.trim(), entry.content.trim());
            let cost = count(&line);
            // The most confident preference is always shown.
            if n > 0 && used + cost > preference_budget {
                break;
            }
            used += cost;
            out.push_str(&line);
        }
    }
    if !entities.is_empty() {
        out.push_str("\n## Known people, services and tools (a partial list; recall has more)\n");
        for entity in entities.iter().take(MAX_ENTITIES) {
            out.push_str(&format!(
                "- {} ({})",
                entity.canonical_name, entity.entity_type
            ));
            if !entity.aliases.is_empty() {
                let names: Vec<&str> = entity.aliases.iter().map(|a| a.value.as_str()).collect();
                out.push_str(&format!(", also {}", names.join(", ")));
            }
            if !entity.description.is_empty() {
                out.push_str(&format!(": {}", entity.description));
            }
            out.push('\n');
        }
    }
    if !catalogue.is_empty() {
        out.push_str("\n## Project knowledge (recall an id for its detail)\n");
        for entry in catalogue.iter().take(MAX_CATALOGUE) {
            out.push_str(&format!(
                "- [k:{}] {} ({})\n",
                entry.id,
                entry.title.trim(),
                entry.category.as_str()
            ));
        }
    }
    Some(out.trim_end().to_string())
}

/// The entries as a knowledge block: `## Long-term Knowledge`, a heading per category in
/// alphabetical order, entries by title.
pub fn knowledge_block(entries: &[&KnowledgeEntry]) -> String {
    let mut sorted: Vec<&KnowledgeEntry> = entries.to_vec();
    sorted.sort_by(|a, b| {
        a.category
            .as_str()
            .cmp(b.category.as_str())
            .then_with(|| a.title.cmp(&b.title))
            .then_with(|| a.content.cmp(&b.content))
    });
    let mut out = String::from("## Long-term Knowledge\n");
    let mut category = "";
    for entry in sorted {
        if entry.category.as_str() != category {
            category = entry.category.as_str();
            out.push_str(&format!("\n### {category}\n"));
        }
        let short: String = entry.id.chars().take(8).collect();
        out.push_str(&format!(
            "- **[{short}] {}**: {}\n",
            entry.title.trim(),
            entry.content.trim()
        ));
    }
    out.trim_end().to_string()
}

/// The assistant half of a delta: the changed or new entries (within [`DELTA_BUDGET`]), then
/// the ids of the others that did not fit.
pub fn delta(entries: &[&KnowledgeEntry]) -> String {
    let mut shown: Vec<&KnowledgeEntry> = Vec::new();
    let mut others: Vec<&KnowledgeEntry> = Vec::new();
    let mut used = 0;
    for entry in entries {
        let cost = count(&entry.content) + count(&entry.title) + 12;
        if shown.is_empty() || used + cost <= DELTA_BUDGET {
            used += cost;
            shown.push(entry);
        } else {
            others.push(entry);
        }
    }
    let mut out = knowledge_block(&shown);
    if !others.is_empty() {
        out.push_str("\n\n## Other relevant knowledge (recall by id for detail)\n");
        for entry in others.iter().take(DELTA_OTHERS) {
            out.push_str(&format!("- [k:{}] {}\n", entry.id, entry.title.trim()));
        }
    }
    out.trim_end().to_string()
}
