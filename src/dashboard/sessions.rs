//! One session for the dashboard: its conversation in order (a window of it), each message's
//! parts with tool calls and results told apart, its forks with the replaced messages readable,
//! its observation logs, per turn the prompt tokens, cache reads and writes, context layer and
//! cost ([`super::turns`]), what the cost tracker recorded for it, its context manager's state
//! and the long-term knowledge its prompt carries (the JSON of `GET /api/v1/sessions/{id}`).
//! Also the two writes on a session: delete and move.
//!
//! A live session actor holds its record in memory and writes it back on its next turn, so a
//! session with a request in flight, or active within the actor eviction time, is refused
//! (409 `session_live`) instead of being changed under its actor.

use std::sync::Arc;
use std::time::Duration;

use lore_actors::catalogue::Catalogue;
use lore_actors::costs::SessionCosts;
use lore_actors::worker::ActivityBoard;
use lore_proto::{Part, Usage};
use lore_storage::{DeletedSession, MessageSource, SessionRecord, Store, StoredMessage};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::ApiError;
use super::paging::{Page, PageQuery};
use super::projects::{DistillationRow, SessionRow};
use super::turns::{TurnUsage, turn_usage};
use crate::session_api::{context_json, knowledge_json};

/// How often the registry looks for idle actors (`lore_actors::registry`): an actor may live this
/// long past the eviction timeout.
const EVICTION_SWEEP: Duration = Duration::from_secs(30);
/// Most replaced messages shown per fork.
const FORK_MESSAGES_SHOWN: usize = 20;
/// Longest tool output or argument text shown before it is cut (the page folds it anyway).
const PART_CHARS: usize = 20_000;

/// One part of a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PartView {
    /// `text`, `thinking`, `tool_call`, `tool_result` or `other`.
    pub kind: &'static str,
    /// The text, the tool arguments, the tool output, or the raw block of `other`.
    pub text: String,
    /// The tool name (`tool_call`) or the block type (`other`).
    pub name: String,
    /// The call id (`tool_call`, `tool_result`).
    pub call_id: String,
    /// The tool reported an error (`tool_result`).
    pub is_error: bool,
    /// Characters cut from `text`.
    pub cut_chars: usize,
}

fn cut(text: &str) -> (String, usize) {
    let total = text.chars().count();
    if total <= PART_CHARS {
        return (text.to_string(), 0);
    }
    (text.chars().take(PART_CHARS).collect(), total - PART_CHARS)
}

fn part_view(part: &Part) -> PartView {
    let view = |kind, text: &str, name: &str, call_id: &str, is_error| {
        let (text, cut_chars) = cut(text);
        PartView {
            kind,
            text,
            name: name.to_string(),
            call_id: call_id.to_string(),
            is_error,
            cut_chars,
        }
    };
    match part {
        Part::Text { text } => view("text", text, "", "", false),
        Part::Thinking { text, .. } => view("thinking", text, "", "", false),
        Part::ToolCall {
            id,
            name,
            arguments,
        } => view("tool_call", arguments, name, id, false),
        Part::ToolResult {
            call_id,
            content,
            is_error,
        } => view("tool_result", content, "", call_id, *is_error),
        Part::Other { kind, raw } => view("other", &raw.to_string(), kind, "", false),
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageView {
    /// Position in the conversation.
    pub position: u32,
    /// Sequence number in the session's log (anchor `#m<seq>` on the page).
    pub seq: u64,
    /// `system`, `user`, `assistant` or `tool`.
    pub role: &'static str,
    /// `request` (the client sent it) or `response` (rebuilt from a reply).
    pub source: &'static str,
    /// Captured, ms since the epoch.
    pub created_at_ms: u64,
    /// Model of a reply.
    pub model: Option<String>,
    /// Usage of a reply.
    pub usage: Option<Usage>,
    /// The reply was cut short.
    pub partial: bool,
    /// The context layer a reply's turn was sent at (`None`: a request, or not recorded).
    pub context_layer: Option<u8>,
    /// Its parts, in order.
    pub parts: Vec<PartView>,
}

impl From<&StoredMessage> for MessageView {
    fn from(m: &StoredMessage) -> Self {
        Self {
            position: m.position,
            seq: m.seq,
            role: m.message.role.as_str(),
            source: match m.source {
                MessageSource::Request => "request",
                MessageSource::Response => "response",
            },
            created_at_ms: m.created_at_ms,
            model: m.model.clone(),
            usage: m.usage,
            partial: m.partial,
            context_layer: m.context_layer,
            parts: m.message.parts.iter().map(part_view).collect(),
        }
    }
}

/// A rewrite of history with what it replaced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForkView {
    /// First position that differed.
    pub at_position: u32,
    /// When the rewrite was seen.
    pub created_at_ms: u64,
    /// How many messages were cut from the path.
    pub replaced_count: usize,
    /// The first of them, readable.
    pub replaced: Vec<MessageView>,
}

/// The page of one session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionView {
    /// The session's row.
    pub session: SessionRow,
    /// Wire protocol of its requests.
    pub protocol: Option<String>,
    /// Usage summed over every reply.
    pub usage: Usage,
    /// A window of the conversation.
    pub messages: Vec<MessageView>,
    /// Where that window sits.
    pub page: Page,
    /// The history rewrites, oldest first.
    pub forks: Vec<ForkView>,
    /// Observation logs and consolidations, in the order written.
    pub distillations: Vec<DistillationRow>,
    /// Per-turn usage, layer and cost of the whole path (the charts).
    pub turns: Vec<TurnUsage>,
    /// The turns' costs summed (priced from their usage).
    pub turns_cost_usd: f64,
    /// What the cost tracker recorded for the session (`found` false when nothing).
    pub costs: SessionCosts,
    /// The context manager's state (`context_json`: layer, floor, pin, calibration, …).
    pub context: Value,
    /// The long-term knowledge in its prompt (`knowledge_json`: system[1], system[2], deltas).
    pub knowledge: Value,
    /// Card keys injected into the conversation, with the message position they went into.
    pub cards: Vec<(u32, Vec<String>)>,
    /// What is not stored yet and so cannot be shown.
    pub not_recorded: Vec<&'static str>,
}

/// The row of a full record.
pub fn session_row(record: &SessionRecord) -> SessionRow {
    SessionRow {
        id: record.id.clone(),
        model: record.model.clone(),
        project: record.project.clone(),
        provisional: record.project_provisional,
        messages: record.path.len(),
        turns: record.turns,
        forks: record.forks_seen(),
        created_at_ms: record.created_at_ms,
        updated_at_ms: record.updated_at_ms,
    }
}

fn missing(id: &str) -> ApiError {
    ApiError::not_found(format!(
        "no session has the id `{id}`; list them with GET /api/v1/sessions"
    ))
}

/// Messages per window of the conversation.
pub const MESSAGES_PER_PAGE: usize = 100;

/// Loads one session's page. With `focus_seq` and no offset, the window is the one holding
/// that message (a search hit opens there).
pub fn view(
    store: &Store,
    catalogue: &Catalogue,
    id: &str,
    mut page: PageQuery,
    focus_seq: Option<u64>,
) -> Result<SessionView, ApiError> {
    let record = store.load_session(id)?.ok_or_else(|| missing(id))?;
    let messages = store.session_messages(&record)?;
    if page.offset.is_none()
        && let Some(seq) = focus_seq
        && let Some(index) = messages.iter().position(|m| m.seq == seq)
    {
        let limit = page.limit.unwrap_or(MESSAGES_PER_PAGE).clamp(1, 1000);
        page.offset = Some(index / limit * limit);
    }
    let page = Page::new(page, messages.len(), MESSAGES_PER_PAGE, 1000);
    let turns = turn_usage(&messages, catalogue, record.model.as_deref());
    let costs = SessionCosts::from_record(&record.id, store.session_costs(&record.id)?);
    let mut forks = Vec::new();
    for fork in &store.session_forks(&record)? {
        let mut replaced = Vec::new();
        for seq in fork.replaced_seqs.iter().take(FORK_MESSAGES_SHOWN) {
            if let Some(message) = store.load_message(&record.id, *seq)? {
                replaced.push(MessageView::from(&message));
            }
        }
        forks.push(ForkView {
            at_position: fork.at_position,
            created_at_ms: fork.created_at_ms,
            replaced_count: fork.replaced_seqs.len(),
            replaced,
        });
    }
    let distillations = store
        .session_distillations(&record.id)?
        .iter()
        .map(DistillationRow::from)
        .collect();
    Ok(SessionView {
        session: session_row(&record),
        protocol: record.protocol.map(|p| format!("{p:?}")),
        usage: record.usage,
        messages: page.slice(messages).iter().map(MessageView::from).collect(),
        page,
        forks,
        distillations,
        turns_cost_usd: turns.iter().map(|t| t.cost_usd).sum(),
        turns,
        costs,
        context: context_json(&record.context),
        knowledge: knowledge_json(&record),
        cards: record
            .card_ledger
            .iter()
            .map(|entry| (entry.position, entry.keys.clone()))
            .chain(
                record
                    .ledger
                    .iter()
                    .filter(|entry| entry.kind == lore_storage::InsertionKind::Card)
                    .map(|entry| (entry.position, entry.keys.clone())),
            )
            .collect(),
        not_recorded: vec!["the system prompt and tool definitions of the requests"],
    })
}

/// The per-turn usage, layer and cost of one session.
pub fn turns(store: &Store, catalogue: &Catalogue, id: &str) -> Result<Vec<TurnUsage>, ApiError> {
    let record = store.load_session(id)?.ok_or_else(|| missing(id))?;
    Ok(turn_usage(
        &store.session_messages(&record)?,
        catalogue,
        record.model.as_deref(),
    ))
}

/// Refuses to change a session whose actor may hold it in memory.
pub fn refuse_live(
    board: &Arc<ActivityBoard>,
    id: &str,
    eviction_after: Duration,
) -> Result<(), ApiError> {
    let Some((in_flight, last_active)) = board.activity_of(id) else {
        return Ok(());
    };
    let window = eviction_after + EVICTION_SWEEP;
    if in_flight > 0 || last_active.elapsed() < window {
        return Err(ApiError::conflict(
            "session_live",
            format!(
                "the session had a request {} s ago and its actor may still hold it in memory; change it after it has been quiet for {} s (LORE_SESSION_EVICTION_TIMEOUT plus the 30 s sweep), or stop the gateway and use the data directory",
                last_active.elapsed().as_secs(),
                window.as_secs()
            ),
        ));
    }
    Ok(())
}

/// Deletes a session (after [`refuse_live`]).
pub fn delete(store: &Store, id: &str) -> Result<DeletedSession, ApiError> {
    store.delete_session(id)?.ok_or_else(|| missing(id))
}

/// The body of `POST /api/v1/sessions/{id}/move`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    /// The project directory (absolute path).
    pub project: String,
}

/// Moves a session to another project (after [`refuse_live`]); answers the record and its
/// distillations as now stored.
pub fn move_to(
    store: &Store,
    id: &str,
    body: &MoveBody,
) -> Result<(SessionRecord, Vec<lore_storage::memory::Distillation>), ApiError> {
    let project = body.project.trim();
    if !project.starts_with('/') {
        return Err(ApiError::bad_request(format!(
            "the project `{project}` is not an absolute path; give the project directory (e.g. /home/me/repo)"
        )));
    }
    store.move_session(id, project)?.ok_or_else(|| missing(id))
}
