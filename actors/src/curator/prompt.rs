//! The curator's instructions and the user message it gets: the entries it may update, the
//! entities it knows, and the new observations. Pure.

use lore_storage::memory::{Entity, KnowledgeEntry};

/// Most characters of existing entries shown (about 20,000 tokens).
const ENTRIES_BUDGET_CHARS: usize = 60_000;
/// Most characters of entities shown.
const ENTITIES_BUDGET_CHARS: usize = 8_000;

/// Instructions of the curator.
pub const CURATOR_SYSTEM: &str = "\
You maintain the long-term knowledge of a software project: what stays true beyond the current \
task and is specific to this codebase or this user. You get the existing entries, the known \
entities and new observations from a coding session, and answer with JSON only:
{\"ops\": [...], \"entities\": [...], \"relations\": [...]}

Operations:
{\"op\":\"create\",\"category\":\"decision|pattern|preference|architecture|gotcha\",\"title\":\"…\",\"content\":\"…\",\"scope\":\"project|global\",\"crossProject\":false,\"confidence\":0.9}
{\"op\":\"update\",\"id\":\"<existing id>\",\"title\":\"…\",\"content\":\"…\",\"confidence\":0.9}
{\"op\":\"delete\",\"id\":\"<existing id>\",\"reason\":\"…\"}
Entities: {\"type\":\"person|org|service|tool|repo|infra\",\"canonical_name\":\"…\",\"aliases\":[{\"type\":\"name|email|github|url|domain|nickname\",\"value\":\"…\"}],\"metadata\":{\"description\":\"…\"}}
Relations: {\"entity_a\":\"<canonical name>\",\"entity_b\":\"<canonical name>\",\"relation\":\"…\"}

What counts: decisions with the alternative that was rejected and why; gotchas, including why \
the trap looks right; recurring patterns; how the system is built; the user's preferences, \
written as directives. Task progress, one-off steps and anything already covered are not \
knowledge. Titles must be specific and searchable: they are how entries are found and \
matched. Keep content under about 150 words; a procedure becomes a short runbook (Steps, \
Gotchas, Verify). Prefer updating an existing entry to creating a new one; an update rewrites \
the whole entry; when a preference changed, update the old entry instead of adding a second \
one. Merge overlapping entries. Refer to other entries as [[id]]. crossProject is true only for \
preferences that hold for the user everywhere. Confidence: 1.0 an absolute directive, 0.9 an \
explicit statement, 0.8 inferred, 0.6 a weak signal. Leave out secrets. If nothing qualifies, \
answer {\"ops\": [], \"entities\": [], \"relations\": []}.";

/// The curator's user message.
pub fn curator_user(
    entries: &[KnowledgeEntry],
    entities: &[Entity],
    observations: &[&str],
) -> String {
    let mut out = String::from("<existing-entries>\n");
    let mut used = 0;
    for entry in entries {
        let line = format!(
            "- [{}] ({}) {}: {}\n",
            entry.id,
            entry.category.as_str(),
            entry.title,
            entry.content.replace('\n', " ")
        );
        used += line.len();
        if used > ENTRIES_BUDGET_CHARS {
            break;
        }
        out.push_str(&line);
    }
    out.push_str("</existing-entries>\n\n<known-entities>\n");
    used = 0;
    for entity in entities {
        let aliases: Vec<&str> = entity.aliases.iter().map(|a| a.value.as_str()).collect();
        let line = format!(
            "- {} ({}){}{}\n",
            entity.canonical_name,
            entity.entity_type,
            if aliases.is_empty() {
                String::new()
            } else {
                format!(", also {}", aliases.join(", "))
            },
            if entity.description.is_empty() {
                String::new()
            } else {
                format!(": {}", entity.description)
            }
        );
        used += line.len();
        if used > ENTITIES_BUDGET_CHARS {
            break;
        }
        out.push_str(&line);
    }
    out.push_str("</known-entities>\n\n<observations>\n");
    for observation in observations {
        out.push_str(observation.trim());
        out.push('\n');
    }
    out.push_str("</observations>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lore_storage::memory::Category;

    #[test]
    fn the_user_message_lists_entries_by_id() {
        let entry = KnowledgeEntry {
            id: "k1".into(),
            version: 1,
            project: Some("/p".into()),
            category: Category::Preference,
            title: "Test runner".into(),
            content: "Use pytest\nalways".into(),
            confidence: 0.9,
            source_session: None,
            updated_by: "curator".into(),
            created_at_ms: 0,
            updated_at_ms: 0,
            deleted: false,
        };
        let user = curator_user(&[entry], &[], &["* 🔴 (10:00) user switched to nextest"]);
        assert!(user.contains("- [k1] (preference) Test runner: Use pytest always\n"));
        assert!(
            user.contains("<observations>\n* 🔴 (10:00) user switched to nextest\n</observations>")
        );
    }
}
