//! `SessionRegistry`: maps each request to its conversation and owns the live `SessionActor`s.
//!
//! Identity tiers, strongest first: a `previous_response_id` produced by a known session; a
//! session header (`x-lore-session-id`, `x-claude-code-session-id`, …); the fingerprint of the
//! first user message and the credential. Within a tier the candidates are told apart by their
//! stored history (see [`crate::history`]): a request belongs to the session whose history it
//! extends, or rewrites after enough shared messages; otherwise it starts a new session. Two
//! conversations are never merged on the first message alone.
//!
//! The registry keeps, for every session it has seen since start, the identities of its current
//! history; a session actor reports each change through [`PathChanged`]. After a restart the
//! indexes and histories are read back from storage on first use.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use lore_storage::{SessionRecord, Store};
use serde::Serialize;
use tracing::{debug, info};

use crate::error::ActorError;
use crate::history::best_candidate;
use crate::indexer::IndexDocs;
use crate::model::{SessionHandle, SessionIdentity};
use crate::session::{SessionActor, Shutdown};
use crate::turn::ContextServices;
use crate::worker::ActivityBoard;

/// How often idle sessions are looked for.
const EVICTION_SWEEP: Duration = Duration::from_secs(30);
/// How many of the most recent sessions under one identity key are compared with a request.
const MAX_CANDIDATES: usize = 64;
/// Size of the in-memory index cache past which it is dropped and refilled from storage.
const MAX_CACHED_INDEX_KEYS: usize = 50_000;

/// Finds or creates the session of a request.
#[derive(Message)]
#[rtype(result = "Result<SessionHandle, ActorError>")]
pub struct ResolveSession {
    /// What the request says about its conversation.
    pub identity: SessionIdentity,
    /// Identities of the request's messages, in order.
    pub incoming: Arc<Vec<[u8; 16]>>,
}

/// Sent by a session actor whenever its current history changes.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PathChanged {
    /// Session id.
    pub session_id: String,
    /// Identities of the current history.
    pub path: Vec<[u8; 16]>,
}

/// Sent by a session actor when an OpenAI Responses reply got an id, so a later
/// `previous_response_id` finds the session.
#[derive(Message)]
#[rtype(result = "()")]
pub struct ResponseIdIssued {
    /// Session id.
    pub session_id: String,
    /// The `id` of the response.
    pub response_id: String,
}

/// Asks for the registry's counters.
#[derive(Message)]
#[rtype(result = "RegistryCounters")]
pub struct Observe;

/// Counters of the registry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RegistryCounters {
    /// Sessions with a running actor.
    pub live_sessions: usize,
    /// Sessions created since start.
    pub created: u64,
    /// Requests mapped to a session.
    pub resolved: u64,
    /// Actors stopped for idleness.
    pub evicted: u64,
    /// Storage failures.
    pub failed: u64,
    /// The latest failure, if any.
    pub last_error: Option<String>,
}

/// What the registry knows about one session.
struct KnownSession {
    /// Identities of the session's current history, as last reported.
    path: Vec<[u8; 16]>,
    /// The running actor, if the session is live.
    addr: Option<Addr<SessionActor>>,
    /// When a request last resolved to it; drives eviction.
    last_used: Instant,
}

/// The registry actor. One per process, on its own arbiter.
pub struct SessionRegistry {
    /// Durable storage, for hydration and the identity indexes.
    store: Store,
    /// Arbiters the session actors are spread over (one per core).
    arbiters: Vec<ArbiterHandle>,
    /// Round-robin cursor over `arbiters`.
    next_arbiter: usize,
    /// Every session seen since start, by id.
    known: HashMap<String, KnownSession>,
    /// Index key (`h:`, `f:` or `r:` prefixed) → session ids, oldest first; filled from storage on a miss.
    index: HashMap<String, Vec<String>>,
    /// Idle time after which a session's actor is stopped (its state stays in storage).
    eviction_after: Duration,
    /// The search index writer handed to every session actor.
    indexer: Option<Recipient<IndexDocs>>,
    /// The activity board the session actors report to.
    board: Option<Arc<ActivityBoard>>,
    /// The context manager's settings and the model catalogue, shared by every session.
    context: Arc<ContextServices>,
    /// Counters for observation.
    counters: RegistryCounters,
}

impl SessionRegistry {
    /// A registry over `store`, spreading session actors over `arbiters`.
    pub fn new(store: Store, arbiters: Vec<ArbiterHandle>, eviction_after: Duration) -> Self {
        Self {
            store,
            arbiters,
            next_arbiter: 0,
            known: HashMap::new(),
            index: HashMap::new(),
            eviction_after,
            indexer: None,
            board: None,
            context: Arc::new(ContextServices::default()),
            counters: RegistryCounters::default(),
        }
    }

    /// Session actors started by this registry manage their context with these settings.
    pub fn with_context(mut self, context: Arc<ContextServices>) -> Self {
        self.context = context;
        self
    }

    /// Session actors started by this registry send their stored messages to `indexer`.
    pub fn with_indexer(mut self, indexer: Recipient<IndexDocs>) -> Self {
        self.indexer = Some(indexer);
        self
    }

    /// Session actors started by this registry report how their replies stop to `board`.
    pub fn with_board(mut self, board: Arc<ActivityBoard>) -> Self {
        self.board = Some(board);
        self
    }

    /// Session ids under an index key, loading them from storage the first time.
    /// The most recent session ids under an index key (at most [`MAX_CANDIDATES`]), oldest
    /// first, loading them from storage the first time.
    fn indexed(&mut self, key: &str) -> Result<Vec<String>, ActorError> {
        if let Some(ids) = self.index.get(key) {
            return Ok(recent(ids).to_vec());
        }
        let mut ids = match key.split_once(':') {
            Some(("f", fingerprint)) => self.store.sessions_for_fingerprint(fingerprint)?,
            Some(("h", header)) => self.store.sessions_for_header(header)?,
            Some(("r", response)) => self
                .store
                .sessions_for_header(&format!("response:{response}"))?,
            _ => Vec::new(),
        };
        let older = ids.len().saturating_sub(MAX_CANDIDATES);
        ids.drain(..older);
        self.index.insert(key.to_string(), ids.clone());
        Ok(ids)
    }

    fn add_to_index(&mut self, key: &str, session_id: &str) -> Result<(), ActorError> {
        match key.split_once(':') {
            Some(("f", fingerprint)) => self.store.index_fingerprint(fingerprint, session_id)?,
            Some(("h", header)) => self.store.index_header(header, session_id)?,
            Some(("r", response)) => self
                .store
                .index_header(&format!("response:{response}"), session_id)?,
            _ => {}
        }
        let ids = self.index.entry(key.to_string()).or_default();
        if !recent(ids).iter().any(|id| id == session_id) {
            ids.push(session_id.to_string());
        }
        // Only the most recent ids can be candidates; keep the cache bounded (amortised trim).
        if ids.len() > 2 * MAX_CANDIDATES {
            let older = ids.len() - MAX_CANDIDATES;
            ids.drain(..older);
        }
        Ok(())
    }

    /// Makes sure the registry knows the stored history of `session_id`.
    fn ensure_known(&mut self, session_id: &str) -> Result<bool, ActorError> {
        if self.known.contains_key(session_id) {
            return Ok(true);
        }
        let Some(record) = self.store.load_session(session_id)? else {
            return Ok(false);
        };
        self.known.insert(
            session_id.to_string(),
            KnownSession {
                path: record.path_identities(),
                addr: None,
                last_used: Instant::now(),
            },
        );
        Ok(true)
    }

    fn resolve(
        &mut self,
        msg: &ResolveSession,
        ctx: &mut Context<Self>,
    ) -> Result<SessionHandle, ActorError> {
        let identity = &msg.identity;
        // A Responses continuation names the reply it continues: an exact match.
        if let Some(previous) = &identity.previous_response_id {
            let key = format!("r:{previous}");
            if let Some(id) = self.indexed(&key)?.last().cloned()
                && self.ensure_known(&id)?
            {
                return self.activate(&id, None, ctx);
            }
        }
        let (key, min_shared) = match (&identity.header_key, &identity.fingerprint) {
            (Some(header), _) => (format!("h:{header}"), 1),
            (None, Some(fingerprint)) => (format!("f:{fingerprint}"), 2),
            (None, None) => return self.create(None, identity, &msg.incoming, ctx),
        };
        // Only the most recent sessions under a key are candidates: a first message like "hi"
        // can open thousands of one-shot sessions, and matching must not slow down with them.
        let recent = self.indexed(&key)?;
        let mut candidates: Vec<String> = Vec::with_capacity(recent.len());
        for id in &recent {
            if self.ensure_known(id)? {
                candidates.push(id.clone());
            }
        }
        let histories = candidates.iter().map(|id| {
            self.known
                .get(id)
                .map_or(&[][..], |known| known.path.as_slice())
        });
        match best_candidate(histories, &msg.incoming, min_shared) {
            Some(index) => {
                let id = candidates[index].clone();
                self.activate(&id, Some(msg.incoming.as_ref().clone()), ctx)
            }
            None => self.create(Some(key), identity, &msg.incoming, ctx),
        }
    }

    /// Returns the live actor of a known session, starting it from storage when needed.
    fn activate(
        &mut self,
        session_id: &str,
        claimed_path: Option<Vec<[u8; 16]>>,
        ctx: &mut Context<Self>,
    ) -> Result<SessionHandle, ActorError> {
        let needs_start = self
            .known
            .get(session_id)
            .is_none_or(|known| known.addr.as_ref().is_none_or(|addr| !addr.connected()));
        let started = if needs_start {
            let record = self
                .store
                .load_session(session_id)?
                .unwrap_or_else(|| SessionRecord::new(session_id.to_string()));
            Some(self.start_actor(record, ctx))
        } else {
            None
        };
        let known = self
            .known
            .entry(session_id.to_string())
            .or_insert_with(|| KnownSession {
                path: Vec::new(),
                addr: None,
                last_used: Instant::now(),
            });
        if let Some(addr) = started {
            known.addr = Some(addr);
        }
        if let Some(path) = claimed_path {
            // Claim the request's history now, so a concurrent request of the same
            // conversation resolves here too; the actor confirms it with `PathChanged`.
            known.path = path;
        }
        known.last_used = Instant::now();
        self.counters.resolved += 1;
        let addr = known
            .addr
            .clone()
            .ok_or_else(|| ActorError::Mailbox("session actor did not start".into()))?;
        Ok(SessionHandle {
            session_id: session_id.to_string(),
            addr,
        })
    }

    /// A new session for a request whose history is `incoming`, claimed at once: the actor
    /// answers the turn's plan before it writes and reports its path, so the client's next
    /// request can arrive first and must find this session.
    fn create(
        &mut self,
        key: Option<String>,
        identity: &SessionIdentity,
        incoming: &[[u8; 16]],
        ctx: &mut Context<Self>,
    ) -> Result<SessionHandle, ActorError> {
        let mut record = SessionRecord::new(lore_storage::store::new_session_id());
        record.header_key = identity.header_key.clone();
        record.fingerprint = identity.fingerprint.clone();
        self.store.save_session(&record)?;
        if let Some(key) = &key {
            self.add_to_index(key, &record.id)?;
        }
        if let (Some(fingerprint), false) = (
            &identity.fingerprint,
            key.as_deref().is_some_and(|k| k.starts_with("f:")),
        ) {
            // Header sessions are fingerprinted too, so a client that later drops the header
            // still finds its conversation.
            self.add_to_index(&format!("f:{fingerprint}"), &record.id)?;
        }
        self.counters.created += 1;
        info!(session = %record.id, "new session");
        let id = record.id.clone();
        let addr = self.start_actor(record, ctx);
        self.known.insert(
            id.clone(),
            KnownSession {
                path: incoming.to_vec(),
                addr: Some(addr),
                last_used: Instant::now(),
            },
        );
        self.activate(&id, None, ctx)
    }

    fn start_actor(
        &mut self,
        record: SessionRecord,
        ctx: &mut Context<Self>,
    ) -> Addr<SessionActor> {
        let store = self.store.clone();
        let registry = ctx.address();
        let actor = SessionActor::new(record, store, registry)
            .with_indexer(self.indexer.clone())
            .with_board(self.board.clone())
            .with_context(Arc::clone(&self.context));
        if self.arbiters.is_empty() {
            return actor.start();
        }
        let arbiter = &self.arbiters[self.next_arbiter % self.arbiters.len()];
        self.next_arbiter = self.next_arbiter.wrapping_add(1);
        SessionActor::start_in_arbiter(arbiter, move |_| actor)
    }

    fn evict_idle(&mut self) {
        let now = Instant::now();
        let mut evicted = 0;
        // Sessions idle for twice the eviction time are forgotten; storage has them.
        let forget_after = self.eviction_after.saturating_mul(2);
        self.known.retain(|_, known| {
            known.addr.is_some() || now.duration_since(known.last_used) < forget_after
        });
        if self.index.len() > MAX_CACHED_INDEX_KEYS {
            self.index.clear();
        }
        for known in self.known.values_mut() {
            if now.duration_since(known.last_used) < self.eviction_after {
                continue;
            }
            if let Some(addr) = known.addr.take() {
                // The actor stops once it has handled what is already in its mailbox; its
                // state is in storage and a later request starts a fresh one.
                addr.do_send(Shutdown);
                evicted += 1;
            }
        }
        if evicted > 0 {
            debug!(evicted, "stopped idle session actors");
            self.counters.evicted += evicted;
        }
    }
}

/// The last [`MAX_CANDIDATES`] entries of an id list.
fn recent(ids: &[String]) -> &[String] {
    &ids[ids.len().saturating_sub(MAX_CANDIDATES)..]
}

impl Actor for SessionRegistry {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(EVICTION_SWEEP.min(self.eviction_after), |registry, _| {
            registry.evict_idle()
        });
    }
}

impl Handler<ResolveSession> for SessionRegistry {
    type Result = Result<SessionHandle, ActorError>;

    fn handle(&mut self, msg: ResolveSession, ctx: &mut Self::Context) -> Self::Result {
        let result = self.resolve(&msg, ctx);
        if let Err(err) = &result {
            self.counters.failed += 1;
            self.counters.last_error = Some(err.to_string());
        }
        result
    }
}

impl Handler<PathChanged> for SessionRegistry {
    type Result = ();

    fn handle(&mut self, msg: PathChanged, _: &mut Self::Context) {
        if let Some(known) = self.known.get_mut(&msg.session_id) {
            known.path = msg.path;
        }
    }
}

impl Handler<ResponseIdIssued> for SessionRegistry {
    type Result = ();

    fn handle(&mut self, msg: ResponseIdIssued, _: &mut Self::Context) {
        let key = format!("r:{}", msg.response_id);
        if let Err(err) = self.add_to_index(&key, &msg.session_id) {
            self.counters.failed += 1;
            self.counters.last_error = Some(err.to_string());
        }
    }
}

impl Handler<Observe> for SessionRegistry {
    type Result = MessageResult<Observe>;

    fn handle(&mut self, _: Observe, _: &mut Self::Context) -> Self::Result {
        let mut counters = self.counters.clone();
        counters.live_sessions = self
            .known
            .values()
            .filter(|known| known.addr.as_ref().is_some_and(|addr| addr.connected()))
            .count();
        MessageResult(counters)
    }
}
