//! `SessionActor`: the single owner of one conversation's state.
//!
//! Every turn of a session passes through this actor's mailbox, so turns of one session are
//! serialized while different sessions run in parallel on different arbiters. For each request
//! it numbers the turn, marks it in flight on the activity board, captures the messages it has
//! not stored yet (the harness resends the whole history every turn), records a fork when the
//! client rewrote its history, decides the card injection and the context plan, and answers
//! the body to send — before the turn's writes reach storage, which follow at once on the
//! actor's own thread. When the reply has streamed to the end (or the client went away) it
//! stores the reply and calibrates the context manager; a "prompt is too long" answer raises
//! the session's floor and plans the same request again.
//!
//! - [`capture`]: storing messages, forks and replies.
//! - [`shaping`]: the turn's card injection and context plan.
//! - [`ltm`]: long-term knowledge in the prompt (system[1], system[2], deltas).

mod capture;
mod ltm;
mod shaping;

pub use ltm::Candidates;

use std::collections::HashMap;
use std::sync::Arc;

use actix::prelude::*;
use bytes::Bytes;
use lore_proto::{CanonicalRequest, Message, Protocol, Reply};
use lore_storage::{SessionRecord, Store};
use tokio::sync::oneshot;
use tracing::warn;

use crate::cards::book::CardBook;
use crate::catalogue::ModelInfo;
use crate::error::ActorError;
use crate::gradient::Plan;
use crate::indexer::{IndexDocs, message_doc};
use crate::injection::CardSettings;
use crate::model::{ProjectHint, SessionCounters};
use crate::registry::SessionRegistry;
use crate::turn::{ContextInput, ContextServices};
use crate::worker::ActivityBoard;
use crate::worker::WorkerRoute;
use crate::worker::activity::{InFlightGuard, UnresolvedGuard};

/// Captures a request's new messages and plans what to send. The answer goes back on `answer`
/// as soon as the plan is made; the turn's writes follow on the actor's thread. Failures are
/// logged and counted; the plan then leaves the request untouched.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PrepareTurn {
    /// The parsed request (adjacent assistant items of the Responses API merged).
    pub request: Arc<CanonicalRequest>,
    /// Identities of `request.messages`, in order.
    pub identities: Arc<Vec<[u8; 16]>>,
    /// The wire elements of each message.
    pub spans: Arc<Vec<Vec<u32>>>,
    /// Wire protocol of the request.
    pub protocol: Protocol,
    /// Where the request says its project is.
    pub project: Option<ProjectHint>,
    /// The body as it would be forwarded (recall markers expanded, the recall tool added).
    pub body: Bytes,
    /// The card book, when cards may be injected.
    pub cards: Option<CardInput>,
    /// What the context manager needs from the request; `None` leaves the context alone.
    pub context: Option<ContextInput>,
    /// Where the session's worker calls go (in memory only).
    pub route: Option<WorkerRoute>,
    /// The request's mark on the board until the session knows it.
    pub unresolved: Option<UnresolvedGuard>,
    /// Where the plan goes.
    pub answer: oneshot::Sender<TurnPlan>,
}

/// What card injection needs.
pub struct CardInput {
    /// The book to match against.
    pub book: Arc<CardBook>,
    /// How blocks are built.
    pub settings: CardSettings,
}

/// What the session decided for a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnPlan {
    /// The turn's number in this session (its reply and its end repeat it).
    pub turn: u64,
    /// The body to forward instead of the original.
    pub body: Option<Bytes>,
    /// Keys of the cards injected for the first time by this request.
    pub injected: Vec<String>,
    /// The context layer the turn goes at.
    pub layer: u8,
    /// The most input tokens the client may be shown in the reply's usage.
    pub report_cap: Option<u64>,
    /// Estimated prompt tokens of the client's request and of what is sent (0 when the
    /// context manager did not plan), for the cost tracker's savings.
    pub client_tokens: u64,
    /// Estimated prompt tokens of what is sent.
    pub sent_tokens: u64,
    /// The turn goes at another layer than the session's previous one (a cache write of Lore's).
    pub layer_changed: bool,
    /// The session's project, when known.
    pub project: Option<String>,
    /// The session is under `/lore:amnesia`: nothing was captured, and the request goes as the
    /// client sent it.
    pub amnesia: bool,
}

/// The upstream answered "prompt is too long" (`ratio` = its count / its limit): raise the
/// floor and plan again. Answers the new body, or `None` when nothing more can be tried, with
/// what was tried.
#[derive(Message)]
#[rtype(result = "Overflow")]
pub struct ContextOverflow {
    /// The turn that overflowed.
    pub turn: u64,
    /// How far over the limit the prompt was (1.3 when the error did not say).
    pub ratio: f64,
    /// The window the provider stated, when it did.
    pub limit: Option<u64>,
}

/// The answer to [`ContextOverflow`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overflow {
    /// The body to retry with.
    pub body: Option<Bytes>,
    /// The layer of that body.
    pub layer: u8,
    /// What the session tried, for the client when even this fails.
    pub tried: String,
}

/// The gateway continues a reply with a follow-up of its own (the recall tool): `appended` are
/// the messages it added after the client's (the recall call and its result). Answers the new
/// turn's number.
#[derive(Message)]
#[rtype(result = "Option<u64>")]
pub struct FollowUp {
    /// The turn being continued.
    pub after: u64,
    /// What the follow-up adds to the conversation.
    pub appended: Vec<Message>,
}

/// The reply of a turn, complete or cut short.
#[derive(Message)]
#[rtype(result = "()")]
pub struct TurnCompleted {
    /// The turn this reply answers, as given in [`TurnPlan::turn`].
    pub turn: u64,
    /// What the upstream sent back, rebuilt.
    pub reply: Reply,
    /// False when the request sent was not the planned body (the plan came too late).
    pub plan_used: bool,
}

/// The turn's response has been relayed to the end (or dropped): the request is no longer in
/// flight.
#[derive(Message)]
#[rtype(result = "()")]
pub struct TurnEnded {
    /// The turn.
    pub turn: u64,
}

/// `/lore:amnesia on|off`. Answers whether the setting changed.
#[derive(Message)]
#[rtype(result = "Result<bool, ActorError>")]
pub struct SetAmnesia {
    /// On: store nothing and run no background work for the session.
    pub on: bool,
    /// Identities of the conversation with the command and the gateway's answer.
    pub path: Vec<[u8; 16]>,
}

/// Asks for the session's counters.
#[derive(Message)]
#[rtype(result = "SessionCounters")]
pub struct Observe;

/// Stops the actor after the messages already queued (idle eviction).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown;

/// The turn waiting for its reply, kept to plan it again or to learn from its reply.
struct OpenTurn {
    turn: u64,
    request: Arc<CanonicalRequest>,
    identities: Arc<Vec<[u8; 16]>>,
    spans: Arc<Vec<Vec<u32>>>,
    protocol: Protocol,
    /// The body before the context plan (cards in the system prompt when they go there).
    body: Bytes,
    /// What goes when no plan applies: `body` with the card blocks in their messages.
    fallback: Bytes,
    /// Card blocks go into their messages (the ledger places them with the plan).
    cards_in_messages: bool,
    context: Option<ContextInput>,
    plan: Option<Plan>,
    model: Option<ModelInfo>,
    /// Layers tried for this request (the first plan and every retry).
    tried: Vec<u8>,
    /// The plan meant a cache write (layer change, prefix re-rendered, cold resume).
    expected_bust: bool,
    /// Its reply may calibrate the estimator (not a follow-up of the gateway's own).
    calibrate: bool,
    /// The long-term knowledge of the turn (the same on a retry).
    knowledge: crate::turn::Knowledge,
}

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
    /// What the open turn was planned from.
    open: Option<OpenTurn>,
    /// The parse of the last large turn, kept for a while after it ended so the next request
    /// of the conversation reuses it (the gateway's parse memo holds only a weak reference).
    kept_parse: Option<KeptParse>,
    /// Number of the next turn.
    next_turn: u64,
    /// The session's requests in flight, by turn.
    in_flight: HashMap<u64, InFlightGuard>,
    /// Counters for observation.
    counters: SessionCounters,
    /// Where the session reports its requests and how its replies stop (the memory workers
    /// read it).
    board: Option<Arc<ActivityBoard>>,
    /// The context manager's settings and the model catalogue.
    services: Arc<ContextServices>,
    /// Token estimates of observation logs, by `n`.
    log_tokens: HashMap<u64, u64>,
    /// The knowledge search's latest answer, waiting for system[2] to be pinned.
    candidates: Option<Vec<(String, f32)>>,
    /// A knowledge search is running.
    asking: bool,
    /// The database's generation the record was last read at (see `Store::generation`).
    generation: u64,
}

impl SessionActor {
    /// An actor resuming `record`.
    pub fn new(mut record: SessionRecord, store: Store, registry: Addr<SessionRegistry>) -> Self {
        // Cards and deltas of a record written before the one ledger join it.
        record.adopt_legacy_insertions();
        Self {
            generation: store.generation(),
            record,
            store,
            registry,
            indexer: None,
            open_turn: None,
            open: None,
            kept_parse: None,
            next_turn: 1,
            in_flight: HashMap::new(),
            counters: SessionCounters::default(),
            board: None,
            services: Arc::new(ContextServices::default()),
            log_tokens: HashMap::new(),
            candidates: None,
            asking: false,
        }
    }

    /// Sends stored messages to the search index.
    pub fn with_indexer(mut self, indexer: Option<Recipient<IndexDocs>>) -> Self {
        self.indexer = indexer;
        self
    }

    /// Reports requests and how replies stop to the activity board.
    pub fn with_board(mut self, board: Option<Arc<ActivityBoard>>) -> Self {
        self.board = board;
        self
    }

    /// Uses these context settings and this model catalogue.
    pub fn with_context(mut self, services: Arc<ContextServices>) -> Self {
        self.services = services;
        self
    }

    fn index(&self, messages: &[lore_storage::StoredMessage]) {
        if let (Some(indexer), false) = (&self.indexer, messages.is_empty()) {
            let project = self.record.project.clone().unwrap_or_default();
            let docs = messages
                .iter()
                .map(|stored| message_doc(stored, &project))
                .collect();
            indexer.do_send(IndexDocs { docs });
        }
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
    type Result = ();

    fn handle(&mut self, msg: PrepareTurn, _: &mut Self::Context) {
        self.resync_after_reopen();
        if self.record.amnesia {
            self.forget_turn(msg);
        } else {
            self.capture_prompt(&msg);
            self.prepare(msg);
        }
    }
}

impl Handler<ContextOverflow> for SessionActor {
    type Result = MessageResult<ContextOverflow>;

    fn handle(&mut self, msg: ContextOverflow, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.overflowed(msg.turn, msg.ratio, msg.limit))
    }
}

impl Handler<FollowUp> for SessionActor {
    type Result = Option<u64>;

    fn handle(&mut self, msg: FollowUp, _: &mut Self::Context) -> Self::Result {
        if self.record.amnesia {
            return None;
        }
        self.follow_up(msg.after, msg.appended)
    }
}

impl Handler<TurnCompleted> for SessionActor {
    type Result = ();

    fn handle(&mut self, msg: TurnCompleted, ctx: &mut Self::Context) {
        if self.record.amnesia {
            return;
        }
        let snapshot = self.record.clone();
        self.learn(msg.turn, &msg.reply, msg.plan_used);
        let context = self.recent_context(&msg.reply);
        if let Err(err) = self.complete(msg.turn, msg.reply) {
            self.record = snapshot;
            self.note_failure(&err);
        }
        self.refresh_candidates(context, ctx);
    }
}

impl Handler<SetAmnesia> for SessionActor {
    type Result = Result<bool, ActorError>;

    fn handle(&mut self, msg: SetAmnesia, _: &mut Self::Context) -> Self::Result {
        self.set_amnesia(msg.on, &msg.path)
    }
}

/// Requests at least this large keep their parse after their turn ends.
const KEEP_PARSE_MIN_BYTES: usize = 64 * 1024;
/// How long a kept parse stays: the provider's shortest cache lifetime. A request later than
/// that writes its prompt to the cache again anyway, and a full parse is small beside that.
const KEEP_PARSE_FOR: std::time::Duration = std::time::Duration::from_secs(300);

/// A large turn's parse, held so the gateway's parse memo can reuse it.
struct KeptParse {
    turn: u64,
    _request: Arc<CanonicalRequest>,
    _identities: Arc<Vec<[u8; 16]>>,
}

impl Handler<TurnEnded> for SessionActor {
    type Result = ();

    fn handle(&mut self, msg: TurnEnded, ctx: &mut Self::Context) {
        self.in_flight.remove(&msg.turn);
        if self.in_flight.is_empty() {
            // Nothing can retry or follow up any more: the request and its bytes go, so an idle
            // session holds only its record — but a large history's parse stays for a while,
            // for the next turn to reuse.
            if let Some(open) = self.open.take()
                && open.body.len() >= KEEP_PARSE_MIN_BYTES
            {
                self.kept_parse = Some(KeptParse {
                    turn: open.turn,
                    _request: open.request,
                    _identities: open.identities,
                });
                let turn = open.turn;
                ctx.run_later(KEEP_PARSE_FOR, move |actor, _| {
                    if actor
                        .kept_parse
                        .as_ref()
                        .is_some_and(|kept| kept.turn == turn)
                    {
                        actor.kept_parse = None;
                    }
                });
            }
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
mod tests;
