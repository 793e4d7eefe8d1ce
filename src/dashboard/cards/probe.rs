//! Looking at the card book without changing it: "try a sentence" (what would fire and why,
//! what was dropped and why, the block the gateway would inject, and proper nouns without a
//! card to offer as one-click keywords), the health check of every card file, and the cards
//! recently surfaced in conversations (from the sessions' injection ledgers: keys and times,
//! never the conversation's text).

use lore_actors::cards::{
    BpeTokenCounter, DroppedCard, FiredCard, MatchOptions, candidates, consult, render_block,
};
use lore_storage::Store;
use serde::{Deserialize, Serialize};

use super::CardDesk;
use crate::dashboard::error::ApiError;

/// Most name candidates offered.
const MAX_CANDIDATES: usize = 10;
/// Most surfaced injections listed.
pub const RECENT_LIMIT: usize = 30;

/// The body of `POST /api/v1/cards/try`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TryBody {
    /// The sentence.
    pub text: String,
}

/// What a sentence would do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TryOutcome {
    /// Cards that would be injected, in order, with score, tokens and the terms that hit.
    pub fired: Vec<FiredCard>,
    /// Cards that matched but would not be injected, with the reason.
    pub dropped: Vec<DroppedCard>,
    /// Tokens the block would take.
    pub tokens_used: usize,
    /// The budget of a block.
    pub budget_tokens: usize,
    /// The block the gateway would inject, if any.
    pub block: Option<String>,
    /// Proper nouns in the sentence that no card knows: one-click keywords.
    pub candidates: Vec<String>,
}

/// Runs the dry run against the gateway's current book.
pub fn try_sentence(desk: &CardDesk, body: &TryBody) -> Result<TryOutcome, ApiError> {
    if body.text.trim().is_empty() {
        return Err(ApiError::bad_request("type a sentence to try"));
    }
    let book = desk.library.current();
    let settings = &desk.library.settings;
    let mut options = MatchOptions::with_budget(settings.budget_tokens);
    options.scan_depth = settings.scan_depth;
    options.framing = settings.framing.clone();
    let result = consult(&book.cards, &[], &body.text, &options, &BpeTokenCounter);
    let block =
        (!result.fired.is_empty()).then(|| render_block(&result.fired, "try", &options.framing));
    let mut proposals = candidates(&[], &body.text, &book.cards);
    proposals.truncate(MAX_CANDIDATES);
    Ok(TryOutcome {
        fired: result.fired,
        dropped: result.dropped,
        tokens_used: result.tokens_used,
        budget_tokens: settings.budget_tokens,
        block,
        candidates: proposals,
    })
}

/// One finding of the health check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Vault-relative file (or `kinds.yaml`).
    pub path: String,
    /// Short code.
    pub code: &'static str,
    /// What is wrong and what to do.
    pub message: String,
}

/// The health check (`GET /api/v1/cards/check`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// Card files looked at.
    pub cards: usize,
    /// What is wrong.
    pub problems: Vec<Finding>,
}

/// Lints every card file, as `lore cards check` does.
pub fn check(desk: &CardDesk) -> CheckReport {
    let (cards, findings) = crate::commands::cards::check::findings(desk.vault.root());
    CheckReport {
        cards,
        problems: findings
            .into_iter()
            .map(|f| Finding {
                path: f.path,
                code: f.code,
                message: f.message,
            })
            .collect(),
    }
}

/// One injection of cards into a conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Surfaced {
    /// When the cards were first injected.
    pub at_ms: u64,
    /// The card keys.
    pub keys: Vec<String>,
    /// Session.
    pub session: String,
    /// Its project.
    pub project: Option<String>,
}

/// The latest injections, newest first.
pub fn recent(store: &Store, limit: usize) -> Result<Vec<Surfaced>, ApiError> {
    let mut out: Vec<Surfaced> = store
        .session_summaries()?
        .into_iter()
        .flat_map(|session| {
            let project = session.project.clone();
            let id = session.id.clone();
            session.cards.into_iter().map(move |entry| Surfaced {
                at_ms: entry.created_at_ms,
                keys: entry.keys,
                session: id.clone(),
                project: project.clone(),
            })
        })
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.at_ms));
    out.truncate(limit);
    Ok(out)
}
