//! The JSON shapes of knowledge, shared by the API and the CLI's offline path, so both print
//! the same thing.

use lore_actors::knowledge::ImportSummary;
use lore_actors::knowledge::lore_md::LoreMdProblem;
use lore_storage::memory::KnowledgeEntry;
use serde_json::{Value, json};

/// One entry.
pub fn entry_json(entry: &KnowledgeEntry) -> Value {
    json!({
        "id": entry.id,
        "version": entry.version,
        "project": entry.project,
        "category": entry.category.as_str(),
        "title": entry.title,
        "content": entry.content,
        "confidence": confidence(entry.confidence),
        "source_session": entry.source_session,
        "updated_by": entry.updated_by,
        "created_at_ms": entry.created_at_ms,
        "updated_at_ms": entry.updated_at_ms,
        "deleted": entry.deleted,
    })
}

/// An f32 confidence as the decimal it reads as (0.9, not 0.8999999761581421).
fn confidence(value: f32) -> Value {
    value
        .to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// One entry with the versions it replaced (oldest first) under `history`.
pub fn detail_json(entry: &KnowledgeEntry, history: &[KnowledgeEntry]) -> Value {
    let mut value = entry_json(entry);
    value["history"] = Value::Array(history.iter().map(entry_json).collect());
    value
}

/// What an import did.
pub fn summary_json(summary: &ImportSummary) -> Value {
    json!({
        "created": summary.created,
        "updated": summary.updated,
        "deleted": summary.deleted,
        "unchanged": summary.unchanged,
        "changes": summary.changes.iter().map(|change| json!({
            "change": change.kind(),
            "id": change.entry().id,
            "title": change.entry().title,
        })).collect::<Vec<_>>(),
    })
}

/// The problems of a `.lore.md` file.
pub fn problems_json(problems: &[LoreMdProblem]) -> Value {
    Value::Array(
        problems
            .iter()
            .map(|problem| json!({"line": problem.line, "message": problem.message}))
            .collect(),
    )
}

/// The error body of a file with problems (400 of `POST /api/v1/knowledge/import`).
pub fn problems_error(problems: &[LoreMdProblem]) -> Value {
    json!({"error": {
        "type": "invalid_lore_md",
        "message": format!(
            "the file has {} problem(s) and nothing was imported; fix them and import again",
            problems.len()
        ),
        "problems": problems_json(problems),
    }})
}
