//! `SessionActor`: the single owner of one conversation's state.
//!
//! Every turn of a session passes through this actor's mailbox, so turns of one session are
//! serialized while different sessions run in parallel on different arbiters. For each request
//! it captures the messages it has not stored yet (the harness resends the whole history every
//! turn), records a fork when the client rewrote its history, and, when the reply has streamed
//! to the end (or the client went away), stores the reply. All writes of a turn are in storage
//! before the handler returns.

use std::sync::Arc;

use actix::prelude::*;
use lore_proto::{CanonicalRequest, Message, Protocol, Reply, Role};
use lore_storage::records::RECORD_VERSION;
use lore_storage::{
    ForkRecord, MessageSource, PathEntry, SessionRecord, Store, StoredMessage, now_ms,
};
use tracing::{info, warn};

use bytes::Bytes;

use crate::cards::book::CardBook;
use crate::error::ActorError;
use crate::history::common_prefix;
use crate::indexer::{IndexDocs, message_doc};
use crate::injection::{self, CardSettings};
use crate::model::{ProjectHint, SessionCounters};
use crate::registry::{PathChanged, ResponseIdIssued, SessionRegistry};
use crate::worker::ActivityBoard;

/// Captures a request's new messages and, when cards are on, plans their injection. Without
/// cards it is sent without waiting for the answer: the request is forwarded meanwhile. Failures
/// are logged and counted by the actor; the plan then leaves the request untouched.
#[derive(Message)]
#[rtype(result = "TurnPlan")]
pub struct PrepareTurn {
    /// A number unique in this process that the turn's `TurnCompleted` repeats.
    pub turn: u64,
    /// The parsed request.
    pub request: Arc<CanonicalRequest>,
    /// Identities of `request.messages`, in order.
    pub identities: Arc<Vec<[u8; 16]>>,
    /// Wire protocol of the request.
    pub protocol: Protocol,
    /// Where the request says its project is.
    pub project: Option<ProjectHint>,
    /// The card book and the raw body, when cards may be injected.
    pub cards: Option<CardInput>,
}

/// What card injection needs from the request.
pub struct CardInput {
    /// The book to match against.
    pub book: Arc<CardBook>,
    /// How blocks are built.
    pub settings: CardSettings,
    /// The request body as the client sent it (decoded).
    pub body: Bytes,
}

/// What the session decided for a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnPlan {
    /// The body to forward instead of the original, when cards are injected.
    pub body: Option<Bytes>,
    /// Keys of the cards injected for the first time by this request.
    pub injected: Vec<String>,
}

/// The reply of a turn, complete or cut short.
#[derive(Message)]
#[rtype(result = "()")]
pub struct TurnCompleted {
    /// The turn this reply answers, as given in [`PrepareTurn::turn`].
    pub turn: u64,
    /// What the upstream sent back, rebuilt.
    pub reply: Reply,
}

/// Asks for the session's counters.
#[derive(Message)]
#[rtype(result = "SessionCounters")]
pub struct Observe;

/// Stops the actor after the messages already queued (idle eviction).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown;

/// One live conversation.
pub struct SessionActor {
    /// The persisted state; written back after every change.
    record: SessionRecord,
    /// Durable storage shared with the rest of the process.
    store: Store,
    /// The registry, told about every change of the history so it can match later requests.
    registry: Addr<SessionRegistry>,
    /// The search index writer, told about every stored message (none in some tests).
    indexer: Option<Recipient<IndexDocs>>,
    /// The latest prepared turn still waiting for its reply; a reply for an older turn is stale
    /// (the client already moved on) and must not be appended after newer messages.
    open_turn: Option<u64>,
    /// Counters for observation.
    counters: SessionCounters,
    /// Where the session reports how its replies stop (idle detection of the memory workers).
    board: Option<Arc<ActivityBoard>>,
}

impl SessionActor {
    /// An actor resuming `record`.
    pub fn new(record: SessionRecord, store: Store, registry: Addr<SessionRegistry>) -> Self {
        Self {
            record,
            store,
            registry,
            indexer: None,
            open_turn: None,
            counters: SessionCounters::default(),
            board: None,
        }
    }

    /// Sends stored messages to the search index.
    pub fn with_indexer(mut self, indexer: Option<Recipient<IndexDocs>>) -> Self {
        self.indexer = indexer;
        self
    }

    /// Reports how replies stop to the activity board.
    pub fn with_board(mut self, board: Option<Arc<ActivityBoard>>) -> Self {
        self.board = board;
        self
    }

    fn index(&self, messages: &[StoredMessage]) {
        if let (Some(indexer), false) = (&self.indexer, messages.is_empty()) {
            let project = self.record.project.clone().unwrap_or_default();
            let docs = messages
                .iter()
                .map(|stored| message_doc(stored, &project))
                .collect();
            indexer.do_send(IndexDocs { docs });
        }
    }

    fn prepare(&mut self, msg: &PrepareTurn) -> Result<TurnPlan, ActorError> {
        let request = &msg.request;
        let stored = self.record.path_identities();
        let continuation = request.previous_response_id.is_some();
        // A Responses continuation carries only the new input; everything in it is new.
        let shared = if continuation {
            self.record.path.len()
        } else {
            common_prefix(&stored, &msg.identities)
        };
        let mut forked = false;
        if !continuation && shared < self.record.path.len() {
            let replaced_seqs = self.record.path[shared..]
                .iter()
                .map(|entry| entry.seq)
                .collect();
            self.record.forks.push(ForkRecord {
                at_position: shared as u32,
                replaced_seqs,
                created_at_ms: now_ms(),
            });
            self.record.path.truncate(shared);
            forked = true;
            self.counters.forks += 1;
            info!(session = %self.record.id, at = shared, "client rewrote history; fork recorded");
        }
        let skip = if continuation { 0 } else { shared };
        let new_messages: Vec<StoredMessage> = request
            .messages
            .iter()
            .zip(msg.identities.iter())
            .skip(skip)
            .map(|(message, identity)| {
                self.stored(message.clone(), *identity, MessageSource::Request, None)
            })
            .collect();
        self.record.protocol = Some(msg.protocol);
        if request.model.is_some() {
            self.record.model = request.model.clone();
        }
        if let Some(hint) = &msg.project {
            self.bind_project(hint);
        }
        self.record.updated_at_ms = now_ms();
        let appended = new_messages.len();
        let mut turn_plan = TurnPlan::default();
        if let Some(cards) = &msg.cards {
            let plan = injection::plan(
                &self.record.id,
                msg.protocol,
                &cards.body,
                &request.messages,
                &self.record.card_ledger,
                &cards.book,
                &cards.settings,
            );
            self.record.card_ledger = plan.ledger;
            turn_plan = TurnPlan {
                body: plan.body.map(Bytes::from),
                injected: plan.injected,
            };
            self.counters.cards_injected += turn_plan.injected.len() as u64;
        }
        self.store.commit_turn(&self.record, &new_messages)?;
        self.index(&new_messages);
        self.counters.messages_stored += appended as u64;
        if appended > 0 || forked {
            self.report_path();
        }
        self.open_turn = Some(msg.turn);
        Ok(turn_plan)
    }

    /// Builds the stored form of a message and appends it to the path.
    fn stored(
        &mut self,
        message: Message,
        identity: [u8; 16],
        source: MessageSource,
        reply: Option<&Reply>,
    ) -> StoredMessage {
        let seq = self.record.next_seq;
        self.record.next_seq += 1;
        let position = self.record.path.len() as u32;
        self.record.path.push(PathEntry {
            seq,
            identity,
            tokens: 0,
        });
        StoredMessage {
            version: RECORD_VERSION,
            session_id: self.record.id.clone(),
            seq,
            position,
            message,
            identity,
            source,
            created_at_ms: now_ms(),
            model: reply.and_then(|reply| reply.model.clone()),
            usage: reply.map(|reply| reply.usage),
            partial: reply.is_some_and(|reply| !reply.complete),
        }
    }

    /// Builds the stored form of a reply that does not belong on the current history.
    fn stored_off_path(
        &mut self,
        message: Message,
        identity: [u8; 16],
        reply: &Reply,
    ) -> StoredMessage {
        let seq = self.record.next_seq;
        self.record.next_seq += 1;
        StoredMessage {
            version: RECORD_VERSION,
            session_id: self.record.id.clone(),
            seq,
            position: self.record.path.len() as u32,
            message,
            identity,
            source: MessageSource::Response,
            created_at_ms: now_ms(),
            model: reply.model.clone(),
            usage: Some(reply.usage),
            partial: !reply.complete,
        }
    }

    fn bind_project(&mut self, hint: &ProjectHint) {
        let current_is_guess = self.record.project.is_none() || self.record.project_provisional;
        if current_is_guess && (hint.confident || self.record.project.is_none()) {
            self.record.project = Some(hint.path.clone());
            self.record.project_provisional = !hint.confident;
        } else if hint.confident && self.record.project.as_deref() != Some(hint.path.as_str()) {
            info!(session = %self.record.id, project = %hint.path, "session moved to another project");
            self.record.project = Some(hint.path.clone());
            self.record.project_provisional = false;
        }
    }

    fn complete(&mut self, turn: u64, reply: Reply) -> Result<(), ActorError> {
        self.counters.replies += 1;
        let mut new_messages = Vec::new();
        let current = self.open_turn == Some(turn);
        if let Some(message) = reply.message.clone()
            && message.role == Role::Assistant
            && !message.parts.is_empty()
        {
            let identity = message.identity();
            if current {
                new_messages.push(self.stored(
                    message,
                    identity,
                    MessageSource::Response,
                    Some(&reply),
                ));
                self.open_turn = None;
            } else if !self
                .record
                .path
                .iter()
                .any(|entry| entry.identity == identity)
            {
                // A reply to an older turn that the client did not resend: keep it in the
                // log, off the current history.
                new_messages.push(self.stored_off_path(message, identity, &reply));
            }
        }
        let usage = &mut self.record.usage;
        usage.input_tokens += reply.usage.input_tokens;
        usage.output_tokens += reply.usage.output_tokens;
        usage.cache_read_input_tokens += reply.usage.cache_read_input_tokens;
        usage.cache_creation_input_tokens += reply.usage.cache_creation_input_tokens;
        self.record.last_stop_reason = reply.stop_reason.clone();
        if let Some(board) = &self.board {
            let tool_call = reply.message.as_ref().is_some_and(|message| {
                message
                    .parts
                    .iter()
                    .any(|part| matches!(part, lore_proto::Part::ToolCall { .. }))
            });
            board.reply_stopped(&self.record.id, tool_call);
        }
        self.record.turns += 1;
        self.record.updated_at_ms = now_ms();
        self.store.commit_turn(&self.record, &new_messages)?;
        self.index(&new_messages);
        self.counters.messages_stored += new_messages.len() as u64;
        if !new_messages.is_empty() {
            self.report_path();
        }
        if let (Some(id), Some(Protocol::OpenAiResponses)) = (&reply.id, self.record.protocol) {
            self.registry.do_send(ResponseIdIssued {
                session_id: self.record.id.clone(),
                response_id: id.clone(),
            });
        }
        Ok(())
    }

    fn report_path(&self) {
        self.registry.do_send(PathChanged {
            session_id: self.record.id.clone(),
            path: self.record.path_identities(),
        });
    }

    fn note_failure(&mut self, err: &ActorError) {
        self.counters.failed += 1;
        self.counters.last_error = Some(err.to_string());
        warn!(session = %self.record.id, error = %err, "capture failed; the request is forwarded anyway");
    }
}

impl Actor for SessionActor {
    type Context = Context<Self>;
}

impl Handler<PrepareTurn> for SessionActor {
    type Result = MessageResult<PrepareTurn>;

    fn handle(&mut self, msg: PrepareTurn, _: &mut Self::Context) -> Self::Result {
        self.counters.turns += 1;
        let snapshot = self.record.clone();
        match self.prepare(&msg) {
            Ok(plan) => MessageResult(plan),
            Err(err) => {
                // Nothing of this turn reached storage: forget it, the next request recaptures
                // it, and this request goes upstream untouched.
                self.record = snapshot;
                self.note_failure(&err);
                MessageResult(TurnPlan::default())
            }
        }
    }
}

impl Handler<TurnCompleted> for SessionActor {
    type Result = ();

    fn handle(&mut self, msg: TurnCompleted, _: &mut Self::Context) {
        let snapshot = self.record.clone();
        if let Err(err) = self.complete(msg.turn, msg.reply) {
            self.record = snapshot;
            self.note_failure(&err);
        }
    }
}

impl Handler<Observe> for SessionActor {
    type Result = MessageResult<Observe>;

    fn handle(&mut self, _: Observe, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.counters.clone())
    }
}

impl Handler<Shutdown> for SessionActor {
    type Result = ();

    fn handle(&mut self, _: Shutdown, ctx: &mut Self::Context) {
        ctx.stop();
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
