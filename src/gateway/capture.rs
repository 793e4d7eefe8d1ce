//! Capture: parse the request, identify its session, hand the new messages to the session's
//! actor and, when the card book is on, get back the body with cards injected.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix_web::http::header::HeaderMap;
use actix_web::web;
use bytes::Bytes;
use lore_actors::cards::book::CardBook;
use lore_actors::injection::CardSettings;
use lore_actors::worker::WorkerRoute;
use lore_actors::worker::activity::{InFlightGuard, UnresolvedGuard};
use lore_actors::{CardInput, PrepareTurn, ProjectHint, ResolveSession, SessionIdentity};
use lore_proto::{CanonicalRequest, Message, Protocol, Role, parse_request};
use tracing::warn;

use crate::gateway::header_str;
use crate::gateway::identity::{
    conversation_fingerprint, credential_fingerprint, project_hint, session_header_key,
};
use crate::gateway::relay::Completion;
use crate::server::AppState;

/// How long the gateway waits for its own actors before giving up on capturing a turn.
const ACTOR_DEADLINE: Duration = Duration::from_secs(5);
/// Bodies at least this large are parsed on the blocking pool.
const LARGE_BODY_BYTES: usize = 64 * 1024;
/// Source of turn numbers, unique in the process.
static NEXT_TURN: AtomicU64 = AtomicU64::new(1);

/// What capture needs from the request headers, read before the body is handed on.
pub(crate) struct RequestFacts {
    header_key: Option<String>,
    credential: String,
    project_header: Option<String>,
    /// Where the session's worker calls go (in memory only).
    worker: Option<WorkerRoute>,
    /// Marks the request on the activity board until its session is known.
    unresolved: Option<UnresolvedGuard>,
}

impl RequestFacts {
    pub(crate) fn read(headers: &HeaderMap) -> Self {
        let get = |name: &str| header_str(headers, name);
        Self {
            header_key: session_header_key(get),
            credential: credential_fingerprint(get),
            project_header: header_str(headers, "x-lore-project").map(str::to_string),
            worker: None,
            unresolved: None,
        }
    }

    /// Adds the request's worker route and its mark on the activity board.
    pub(crate) fn with_worker(
        mut self,
        worker: Option<WorkerRoute>,
        unresolved: Option<UnresolvedGuard>,
    ) -> Self {
        self.worker = worker;
        self.unresolved = unresolved;
        self
    }
}

/// The session and turn a request was captured into.
pub(crate) struct Turn {
    /// Session id, for the `x-lore-session-id` response header.
    pub session_id: String,
    /// Where the reply goes.
    pub completion: Completion,
    /// Cards injected into this request for the first time.
    pub injected: Vec<String>,
    /// The body to forward instead of the client's, when cards were injected.
    pub body: Option<Bytes>,
    /// Marks the session's request in flight on the activity board until dropped (after the
    /// response was relayed), so no worker call of the session starts meanwhile.
    pub in_flight: Option<InFlightGuard>,
}

/// Parses the request, identifies its session and hands the new messages to the session actor.
/// `None` when capture failed (logged); the request is forwarded all the same.
pub(crate) async fn begin_turn(
    state: &AppState,
    mut facts: RequestFacts,
    body: Bytes,
    protocol: Protocol,
    cards: Option<(Arc<CardBook>, CardSettings)>,
) -> Option<Turn> {
    let worker = facts.worker.take();
    let unresolved = facts.unresolved.take();
    let gateway_cwd = state.config.gateway_cwd.clone();
    let large = body.len() >= LARGE_BODY_BYTES;
    let original = body.clone();
    let parse = move || -> Result<PreparedRequest, String> {
        let parsed = parse_request(protocol, &body).map_err(|err| err.to_string())?;
        Ok(PreparedRequest::new(parsed, protocol, &facts, &gateway_cwd))
    };
    // Large bodies are parsed on the blocking pool so the worker keeps relaying.
    let prepared = if large {
        web::block(parse)
            .await
            .map_err(|err| err.to_string())
            .and_then(|result| result)
    } else {
        parse()
    };
    let prepared = match prepared {
        Ok(prepared) => prepared,
        Err(err) => {
            warn!(error = %err, "request has an unfamiliar shape; forwarded unchanged without capture");
            return None;
        }
    };
    let resolve = ResolveSession {
        identity: prepared.identity,
        incoming: prepared.identities.clone(),
    };
    let handle = match state.registry.send(resolve).timeout(ACTOR_DEADLINE).await {
        Ok(Ok(handle)) => handle,
        Ok(Err(err)) => return capture_failed(&err.to_string()),
        Err(err) => return capture_failed(&err.to_string()),
    };
    let in_flight = state.board.started(&handle.session_id, worker);
    drop(unresolved);
    let turn = NEXT_TURN.fetch_add(1, Ordering::Relaxed);
    let with_cards = cards.is_some();
    let prepare = PrepareTurn {
        turn,
        request: Arc::new(prepared.request),
        identities: prepared.identities,
        protocol,
        project: Some(prepared.project),
        cards: cards.map(|(book, settings)| CardInput {
            book,
            settings,
            body: original,
        }),
    };
    let completion = Completion {
        session: handle.addr.clone(),
        turn,
    };
    let mut captured = Turn {
        session_id: handle.session_id,
        completion,
        injected: Vec::new(),
        body: None,
        in_flight: Some(in_flight),
    };
    if !with_cards {
        // Not awaited: the session actor stores the messages while the request is forwarded.
        // Its mailbox keeps this ahead of the turn's `TurnCompleted`.
        handle.addr.do_send(prepare);
        return Some(captured);
    }
    // Cards may change the request, so the session decides before anything is forwarded.
    match handle.addr.send(prepare).timeout(ACTOR_DEADLINE).await {
        Ok(plan) => {
            captured.injected = plan.injected;
            captured.body = plan.body;
        }
        Err(err) => {
            warn!(error = %err, "card injection did not answer in time; forwarding the request unchanged")
        }
    }
    Some(captured)
}

/// A parsed request with everything identity needs.
struct PreparedRequest {
    request: CanonicalRequest,
    identities: Arc<Vec<[u8; 16]>>,
    identity: SessionIdentity,
    project: ProjectHint,
}

impl PreparedRequest {
    fn new(
        mut request: CanonicalRequest,
        protocol: Protocol,
        facts: &RequestFacts,
        gateway_cwd: &std::path::Path,
    ) -> Self {
        if protocol == Protocol::OpenAiResponses {
            request.messages = merge_adjacent_assistant(std::mem::take(&mut request.messages));
        }
        let identities = Arc::new(request.messages.iter().map(Message::identity).collect());
        let first_user = request
            .messages
            .iter()
            .find(|m| m.role == Role::User)
            .map(Message::text);
        let identity = SessionIdentity {
            header_key: facts.header_key.clone(),
            fingerprint: first_user
                .as_deref()
                .map(|text| conversation_fingerprint(text, &facts.credential)),
            previous_response_id: request.previous_response_id.clone(),
        };
        let texts = [
            request.system.as_deref().unwrap_or(""),
            first_user.as_deref().unwrap_or(""),
        ];
        let project = project_hint(&texts, facts.project_header.as_deref(), gateway_cwd);
        Self {
            request,
            identities,
            identity,
            project,
        }
    }
}

pub(crate) fn capture_failed(reason: &str) -> Option<Turn> {
    warn!(reason, "capture failed; forwarding the request unchanged");
    None
}

/// Responses clients send each output item (reasoning, message, function call) as its own input
/// item; the reply was stored as one assistant message, so adjacent assistant items are merged
/// before comparing histories.
fn merge_adjacent_assistant(messages: Vec<Message>) -> Vec<Message> {
    let mut merged: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages {
        match merged.last_mut() {
            Some(previous)
                if previous.role == Role::Assistant && message.role == Role::Assistant =>
            {
                previous.parts.extend(message.parts);
            }
            _ => merged.push(message),
        }
    }
    merged
}
