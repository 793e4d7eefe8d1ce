//! A project's `.lore.md` applied to the store, all or nothing, and the export that writes it.
//!
//! Import: when the file has problems (format, or an entry over the length limits), nothing is
//! written and every problem comes back with its line. Otherwise each entry whose marker names
//! a live entry of this project updates it (by `import`) when its title, text, confidence or
//! section changed; every other entry (no marker, or a marker from another project or a
//! forgotten entry) is created, or merges into a live entry of this project that no marker in
//! the file claims and whose title it repeats ([`find_duplicate`]); the live entries of this
//! project the file no longer holds are forgotten.

use std::collections::HashSet;

use lore_storage::Store;
use lore_storage::memory::KnowledgeEntry;

use super::dedup::find_duplicate;
use super::limits::{MAX_CONTENT_CHARS, MAX_TITLE_CHARS, clean_content, clean_title, one_line};
use super::lore_md::{LoreMdProblem, ParsedEntry, parse, render};
use super::write::{Fields, rewrite, write_draft};
use super::{Change, Draft, live_entries};
use crate::error::ActorError;

/// Who an import writes as.
pub const IMPORT_BY: &str = "import";
/// Confidence of an entry the user added without a marker confidence.
pub const IMPORTED_CONFIDENCE: f32 = 0.9;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportSummary {
    /// Entries created.
    pub created: usize,
    /// Entries rewritten.
    pub updated: usize,
    /// Entries forgotten.
    pub deleted: usize,
    /// Entries in the file that were already stored as they are.
    pub unchanged: usize,
    /// Every change, in the order it was written (for re-indexing).
    pub changes: Vec<Change>,
}

impl ImportSummary {
    fn record(&mut self, change: Change) {
        match change {
            Change::Created(_) => self.created += 1,
            Change::Updated { .. } => self.updated += 1,
            Change::Deleted(_) => self.deleted += 1,
            Change::Unchanged(_) => self.unchanged += 1,
        }
        self.changes.push(change);
    }
}

/// Why an import wrote nothing (problems in the file) or stopped (storage).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ImportError {
    /// The file has problems; nothing was written.
    #[error("the file has {} problem(s); nothing was imported", .0.len())]
    Problems(Vec<LoreMdProblem>),
    /// Storage failed.
    #[error(transparent)]
    Failed(#[from] ActorError),
}

/// The `.lore.md` text of a project's live entries (exactly that project, no global ones).
pub fn export(store: &Store, project: &str) -> Result<String, ActorError> {
    Ok(render(&live_entries(store, Some(project), false)?))
}

/// Applies a `.lore.md` text to a project (see the module documentation).
pub fn import(store: &Store, project: &str, text: &str) -> Result<ImportSummary, ImportError> {
    let parsed = parse(text).map_err(ImportError::Problems)?;
    check_limits(&parsed).map_err(ImportError::Problems)?;
    let live = live_entries(store, Some(project), false)?;
    let known: HashSet<&str> = live.iter().map(|entry| entry.id.as_str()).collect();
    let (marked, added): (Vec<ParsedEntry>, Vec<ParsedEntry>) = parsed
        .into_iter()
        .partition(|entry| entry.id.as_deref().is_some_and(|id| known.contains(id)));
    let claimed: HashSet<String> = marked.iter().filter_map(|entry| entry.id.clone()).collect();
    let mut unclaimed: Vec<KnowledgeEntry> = live
        .iter()
        .filter(|entry| !claimed.contains(&entry.id))
        .cloned()
        .collect();

    let mut summary = ImportSummary::default();
    for parsed in marked {
        let Some(before) = live
            .iter()
            .find(|entry| Some(&entry.id) == parsed.id.as_ref())
        else {
            continue;
        };
        // The file shows two decimals: a confidence that reads the same is unchanged.
        let confidence = parsed
            .confidence
            .filter(|c| format!("{c:.2}") != format!("{:.2}", before.confidence));
        let fields = Fields {
            title: Some(clean_title(&parsed.title)?),
            content: Some(clean_content(&parsed.content)?),
            confidence,
            category: Some(parsed.category),
        };
        summary.record(rewrite(store, before.clone(), fields, None, IMPORT_BY)?);
    }
    for parsed in added {
        let draft = Draft {
            category: parsed.category,
            title: clean_title(&parsed.title)?,
            content: clean_content(&parsed.content)?,
            project: Some(project.to_string()),
            confidence: parsed.confidence.unwrap_or(IMPORTED_CONFIDENCE),
            source_session: None,
        };
        let target = find_duplicate(&unclaimed, &draft).cloned();
        if let Some(target) = &target {
            unclaimed.retain(|entry| entry.id != target.id);
        }
        summary.record(write_draft(store, draft, IMPORT_BY, target)?);
    }
    for gone in unclaimed {
        summary.record(super::forget(store, &gone.id, IMPORT_BY)?);
    }
    Ok(summary)
}

/// Entries longer than a stored entry may be: refused rather than cut, so an import never loses
/// what the user wrote.
fn check_limits(entries: &[ParsedEntry]) -> Result<(), Vec<LoreMdProblem>> {
    let mut problems = Vec::new();
    for entry in entries {
        let title = one_line(&entry.title).chars().count();
        if title > MAX_TITLE_CHARS {
            problems.push(LoreMdProblem {
                line: entry.line,
                message: format!(
                    "the title is {title} characters long; a title holds at most {MAX_TITLE_CHARS}: shorten it"
                ),
            });
        }
        let content = entry.content.trim().chars().count();
        if content > MAX_CONTENT_CHARS {
            problems.push(LoreMdProblem {
                line: entry.line,
                message: format!(
                    "the text of `{}` is {content} characters long; an entry holds at most {MAX_CONTENT_CHARS}: shorten it or split it into two entries",
                    entry.title
                ),
            });
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}
