//! A request's handover to its session: the request is parsed once (on the blocking pool when
//! large), the registry finds its session, and the session actor answers the body to send (cards
//! injected, the context plan applied) with the turn's number. The handler only reads headers
//! and holds the turn's end: numbering, identity, the activity record and every decision belong
//! to the actors. If anything on this side fails or is late, the request goes out unchanged.

use std::sync::Arc;
use std::time::Duration;

use actix::Addr;
use actix_web::http::header::HeaderMap;
use actix_web::web;
use bytes::Bytes;
use lore_actors::cards::book::CardBook;
use lore_actors::injection::CardSettings;
use lore_actors::turn::ContextInput;
use lore_actors::worker::WorkerRoute;
use lore_actors::worker::activity::UnresolvedGuard;
use lore_actors::{
    CardInput, PrepareTurn, ResolveSession, SessionActor, SessionIdentity, TurnEnded, TurnPlan,
};
use lore_proto::reuse::{ItemPrint, parse_reusing};
use lore_proto::{CanonicalRequest, Message, Protocol, Role};
use tokio::sync::oneshot;
use tracing::warn;

use crate::gateway::header_str;
use crate::gateway::identity::{
    attribution_texts, credential_fingerprint, project_hint, session_header_key,
};
use crate::gateway::parse_memo::PARSE_MEMO;
use crate::gateway::relay::Completion;
use crate::server::AppState;

/// How long the gateway waits for its own actors before forwarding the request unchanged.
const ACTOR_DEADLINE: Duration = Duration::from_secs(5);
/// Bodies at least this large are parsed on the blocking pool.
const LARGE_BODY_BYTES: usize = 64 * 1024;

/// What the session needs from the request headers, read before the body is handed on.
pub(crate) struct RequestFacts {
    header_key: Option<String>,
    credential: String,
    project_header: Option<String>,
    /// Where the session's worker calls go (in memory only).
    worker: Option<WorkerRoute>,
}

impl RequestFacts {
    pub(crate) fn read(headers: &HeaderMap) -> Self {
        let get = |name: &str| header_str(headers, name);
        Self {
            header_key: session_header_key(get),
            credential: credential_fingerprint(get),
            project_header: header_str(headers, "x-lore-project").map(str::to_string),
            worker: None,
        }
    }

    /// Adds the request's worker route.
    pub(crate) fn with_worker(mut self, worker: Option<WorkerRoute>) -> Self {
        self.worker = worker;
        self
    }
}

/// Ends the turn when dropped (the response was relayed to the end or dropped): the request is
/// then no longer in flight for its session.
pub(crate) struct TurnEnd {
    session: Addr<SessionActor>,
    turn: u64,
}

impl Drop for TurnEnd {
    fn drop(&mut self) {
        self.session.do_send(TurnEnded { turn: self.turn });
    }
}

/// The session and turn a request was captured into.
pub(crate) struct Turn {
    /// Session id, for the `x-lore-session-id` response header.
    pub session_id: String,
    /// Where the reply goes.
    pub completion: Completion,
    /// What the session decided.
    pub plan: TurnPlan,
    /// Held until the response has been relayed.
    pub end: Option<TurnEnd>,
}

impl Turn {
    /// The session's actor.
    pub fn session(&self) -> &Addr<SessionActor> {
        &self.completion.session
    }
}

/// A request parsed once, with what the session needs from it.
pub(crate) struct Parsed {
    request: CanonicalRequest,
    spans: Vec<Vec<u32>>,
    /// The identity of each message.
    identities: Vec<[u8; 16]>,
    /// The fingerprint of each wire item, for the next turn's reuse (empty when the protocol
    /// does not reuse).
    prints: Vec<ItemPrint>,
}

impl Parsed {
    /// The parsed request.
    pub(crate) fn request(&self) -> &CanonicalRequest {
        &self.request
    }

    /// True for a Responses request that continues a reply the provider stored.
    pub(crate) fn continues_response(&self) -> bool {
        self.request.previous_response_id.is_some()
    }
}

/// Parses a request body for its session (on the blocking pool when it is large). `None` when
/// it has an unfamiliar shape (logged); the request is then forwarded unchanged.
pub(crate) async fn parse(protocol: Protocol, body: &Bytes) -> Option<Parsed> {
    let large = body.len() >= LARGE_BODY_BYTES;
    let body = body.clone();
    let work = move || -> Result<Parsed, String> {
        let parsed = parse_reusing(protocol, &body, |first| PARSE_MEMO.find(first))
            .map_err(|err| err.to_string())?;
        let mut request = parsed.request;
        let spans = if protocol == Protocol::OpenAiResponses {
            request.merge_adjacent_assistant()
        } else {
            request.spans()
        };
        // Identities come with the reusing parse; the others are hashed after their merge.
        let identities = if parsed.prints.is_empty() {
            request.messages.iter().map(Message::identity).collect()
        } else {
            parsed.identities
        };
        let prints = parsed.prints;
        Ok(Parsed {
            request,
            spans,
            identities,
            prints,
        })
    };
    // Large bodies are parsed on the blocking pool so the worker keeps relaying.
    let parsed = if large {
        web::block(work)
            .await
            .map_err(|err| err.to_string())
            .and_then(|r| r)
    } else {
        work()
    };
    match parsed {
        Ok(parsed) => Some(parsed),
        Err(err) => {
            warn!(error = %err, "request has an unfamiliar shape; forwarded unchanged without capture");
            None
        }
    }
}

/// What a session turn needs besides the parsed request.
pub(crate) struct TurnRequest {
    pub facts: RequestFacts,
    pub protocol: Protocol,
    pub body: Bytes,
    pub cards: Option<(Arc<CardBook>, CardSettings)>,
    pub context: Option<ContextInput>,
    pub unresolved: Option<UnresolvedGuard>,
}

/// Hands the request to its session and waits for the plan. `None` when the session could not
/// be reached in time (logged); the request is forwarded unchanged.
pub(crate) async fn begin_turn(
    state: &AppState,
    parsed: Parsed,
    turn: TurnRequest,
) -> Option<Turn> {
    let Parsed {
        request,
        spans,
        identities,
        prints,
    } = parsed;
    let identities = Arc::new(identities);
    let first_user = request
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .map(Message::text);
    let identity = SessionIdentity::of(
        turn.facts.header_key.clone(),
        &turn.facts.credential,
        first_user.as_deref(),
        request.previous_response_id.clone(),
    );
    let texts = attribution_texts(&request);
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let project = project_hint(&texts, turn.facts.project_header.as_deref());
    let resolve = ResolveSession {
        identity,
        incoming: Arc::clone(&identities),
    };
    let handle = match state.registry.send(resolve).timeout(ACTOR_DEADLINE).await {
        Ok(Ok(handle)) => handle,
        Ok(Err(err)) => return capture_failed(&err.to_string()),
        Err(err) => return capture_failed(&err.to_string()),
    };
    let request = Arc::new(request);
    // The next turn of this conversation reuses this parse while the session holds it.
    PARSE_MEMO.remember(prints, &request, &identities);
    let (answer, planned) = oneshot::channel();
    handle.addr.do_send(PrepareTurn {
        request,
        identities,
        spans: Arc::new(spans),
        protocol: turn.protocol,
        project,
        body: turn.body,
        cards: turn
            .cards
            .map(|(book, settings)| CardInput { book, settings }),
        context: turn.context,
        route: turn.facts.worker,
        unresolved: turn.unresolved,
        answer,
    });
    let plan = match actix_rt::time::timeout(ACTOR_DEADLINE, planned).await {
        Ok(Ok(plan)) => plan,
        Ok(Err(_)) => return capture_failed("the session actor dropped the turn"),
        Err(_) => return capture_failed("the session actor did not answer in time"),
    };
    Some(Turn {
        session_id: handle.session_id,
        completion: Completion {
            session: handle.addr.clone(),
            turn: plan.turn,
        },
        end: Some(TurnEnd {
            session: handle.addr,
            turn: plan.turn,
        }),
        plan,
    })
}

/// The session of a request the gateway answers itself (a `/lore:` command, a compaction),
/// found by the same identity tiers as a turn. `incoming` is the history it matches on (without
/// the request's own last message); `None` when the registry could not answer in time.
pub(crate) async fn find_session(
    state: &AppState,
    headers: &HeaderMap,
    request: &CanonicalRequest,
    incoming: Vec<[u8; 16]>,
) -> Option<lore_actors::SessionHandle> {
    let facts = RequestFacts::read(headers);
    let first_user = request
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .map(Message::text);
    let identity = SessionIdentity::of(
        facts.header_key,
        &facts.credential,
        first_user.as_deref(),
        request.previous_response_id.clone(),
    );
    let resolve = ResolveSession {
        identity,
        incoming: Arc::new(incoming),
    };
    match state.registry.send(resolve).timeout(ACTOR_DEADLINE).await {
        Ok(Ok(handle)) => Some(handle),
        Ok(Err(err)) => {
            warn!(error = %err, "no session for a request the gateway answers itself");
            None
        }
        Err(err) => {
            warn!(error = %err, "the registry did not answer in time");
            None
        }
    }
}

pub(crate) fn capture_failed(reason: &str) -> Option<Turn> {
    warn!(reason, "capture failed; forwarding the request unchanged");
    None
}
