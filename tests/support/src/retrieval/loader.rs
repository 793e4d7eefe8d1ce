//! Writes generated sessions into a Lore data directory through the real storage API: one
//! `Store::commit_turn` batch per session, with a session record whose path, `next_seq`,
//! project, model, protocol and timestamps look like what the gateway itself writes.

use std::path::Path;

use anyhow::Context;
use lore_proto::{Message, Part, Protocol, Role};
use lore_storage::records::RECORD_VERSION;
use lore_storage::{MessageSource, PathEntry, SessionRecord, Store, StoredMessage};

use super::sessions::Session;

/// Opens the store of data directory `data_dir` (the gateway keeps it in `<data dir>/db`).
pub fn open(data_dir: &Path) -> anyhow::Result<Store> {
    Store::open(&data_dir.join("db")).with_context(|| format!("open {}", data_dir.display()))
}

/// The stored form of a generated message.
pub fn message_of(session: &Session, index: usize) -> Message {
    let turn = &session.turns[index];
    let mut parts = Vec::new();
    if let Some(output) = &turn.tool_output {
        parts.push(Part::ToolResult {
            call_id: call_id(session, index.saturating_sub(1)),
            content: output.clone(),
            is_error: false,
        });
    }
    if !turn.text.is_empty() || turn.tool_output.is_none() {
        parts.push(Part::Text {
            text: turn.text.clone(),
        });
    }
    if let Some(command) = &turn.command {
        parts.push(Part::ToolCall {
            id: call_id(session, index),
            name: "bash".into(),
            arguments: serde_json::json!({ "command": command }).to_string(),
        });
    }
    Message::new(turn.role, parts)
}

/// The id of the tool call made by message `index` of `session`.
fn call_id(session: &Session, index: usize) -> String {
    format!("toolu_{}_{index}", &session.id[..12])
}

/// Writes one session (its messages, then its record) in one batch.
pub fn write_session(store: &Store, session: &Session) -> anyhow::Result<()> {
    let mut record = SessionRecord::new(session.id.clone());
    let first = session.turns.first().map_or(0, |t| t.at_ms);
    let last = session.turns.last().map_or(first, |t| t.at_ms);
    record.created_at_ms = first;
    record.updated_at_ms = last;
    record.protocol = Some(Protocol::Anthropic);
    record.model = Some(session.model.clone());
    record.project = Some(session.project.clone());
    let mut messages = Vec::with_capacity(session.turns.len());
    for (index, turn) in session.turns.iter().enumerate() {
        let message = message_of(session, index);
        let identity = message.identity();
        let reply = turn.role == Role::Assistant;
        record.path.push(PathEntry {
            seq: index as u64,
            identity,
            tokens: 0,
        });
        messages.push(StoredMessage {
            version: RECORD_VERSION,
            session_id: session.id.clone(),
            seq: index as u64,
            position: index as u32,
            message,
            identity,
            source: if reply {
                MessageSource::Response
            } else {
                MessageSource::Request
            },
            created_at_ms: turn.at_ms,
            model: reply.then(|| session.model.clone()),
            usage: None,
            partial: false,
            context_layer: None,
        });
    }
    record.next_seq = session.turns.len() as u64;
    record.turns = session
        .turns
        .iter()
        .filter(|t| t.role == Role::Assistant)
        .count() as u64;
    record.last_stop_reason = Some("end_turn".into());
    store
        .commit_turn(&record, &messages)
        .with_context(|| format!("write session {}", session.id))
}

/// Writes every session into the data directory and flushes; returns the message count.
pub fn load<'a>(
    data_dir: &Path,
    sessions: impl IntoIterator<Item = &'a Session>,
) -> anyhow::Result<usize> {
    let store = open(data_dir)?;
    let mut count = 0;
    for session in sessions {
        write_session(&store, session)?;
        count += session.turns.len();
    }
    store.flush().context("flush the store")?;
    Ok(count)
}
