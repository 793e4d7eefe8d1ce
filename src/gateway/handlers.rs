//! The LLM routes: parse, identify the session, capture, forward, relay, capture the reply.
//!
//! Each handler is a thin entry that names its protocol; `handle_llm` does the work. Routing
//! reads only `model`; the request is then forwarded while the capture (full parse, identity,
//! session resolution, storage through the session actor) runs beside it, so capture adds
//! nothing to the time the client waits unless it takes longer than the upstream. Anything that
//! fails on the gateway's side (an unfamiliar shape, storage, a busy actor) is logged and the
//! original request is forwarded unchanged: the user's call never fails because of Lore. A body
//! that is not a JSON object gets a 400 that says so, as the provider would.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix_web::http::header::HeaderMap;
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use awc::ClientResponse;
use bytes::Bytes;
use futures_util::future::Either;
use lore_actors::{PrepareTurn, ProjectHint, ResolveSession, SessionIdentity, TurnCompleted};
use lore_proto::{
    CanonicalRequest, Message, Protocol, Role, parse_request, parse_response, peek_head,
};
use tracing::{debug, warn};

use crate::gateway::forward::{self, Outbound, UpstreamClient};
use crate::gateway::headers::forward_response_header;
use crate::gateway::identity::{
    conversation_fingerprint, credential_fingerprint, project_hint, session_header_key,
};
use crate::gateway::relay::{Completion, Relay};
use crate::gateway::upstream::{Ingress, resolve};
use crate::gateway::{access, header_str};
use crate::http::errors;
use crate::server::AppState;

/// How long the gateway waits for its own actors before giving up on capturing a turn.
const ACTOR_DEADLINE: Duration = Duration::from_secs(5);
/// How long a reply may wait for the capture of its request once the upstream has answered.
const CAPTURE_GRACE: Duration = Duration::from_millis(250);
/// Bodies at least this large are parsed on the blocking pool.
const LARGE_BODY_BYTES: usize = 64 * 1024;
/// Source of turn numbers, unique in the process.
static NEXT_TURN: AtomicU64 = AtomicU64::new(1);
/// Largest non-streaming upstream reply read into memory.
const MAX_REPLY_BYTES: usize = 256 * 1024 * 1024;

/// `POST /v1/messages`.
pub async fn anthropic_messages(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
) -> HttpResponse {
    handle_llm(req, body, state, client, Protocol::Anthropic, false).await
}

/// `POST /v1/chat/completions` and `POST /chat/completions`.
pub async fn openai_chat(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
) -> HttpResponse {
    handle_llm(req, body, state, client, Protocol::OpenAiChat, false).await
}

/// `POST /v1/responses`.
pub async fn openai_responses(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
) -> HttpResponse {
    handle_llm(req, body, state, client, Protocol::OpenAiResponses, false).await
}

/// `POST /v1/codex/responses` (the ChatGPT backend that Codex and Pi use).
pub async fn codex_responses(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
) -> HttpResponse {
    handle_llm(req, body, state, client, Protocol::OpenAiResponses, true).await
}

async fn handle_llm(
    req: HttpRequest,
    body: Bytes,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
    protocol: Protocol,
    codex: bool,
) -> HttpResponse {
    if let Some(refusal) = access::refuse_data_plane(&req, &state) {
        return refusal;
    }
    let headers = req.headers();
    // Routing needs only `model`; the full parse for capture runs beside the upstream call.
    let head = match peek_head(&body) {
        Ok(head) => head,
        Err(err) => {
            return errors::bad_request(
                protocol,
                &format!(
                    "the request body is not a valid JSON object ({err}); send a JSON object as the API expects"
                ),
            );
        }
    };
    let resolved = match resolve(
        &state.config.upstream,
        Ingress::Llm { protocol, codex },
        path_and_query(&req).as_str(),
        header_str(headers, "x-lore-upstream-url"),
        header_str(headers, "x-lore-provider"),
        head.model.as_deref(),
    ) {
        Ok(resolved) => resolved,
        Err(err) => return errors::bad_request(protocol, &err.to_string()),
    };
    debug!(rule = resolved.rule, upstream = %forward::origin(&resolved.url), "routing");
    let no_store = header_str(headers, "x-lore-no-store")
        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
    let outbound = Outbound {
        method: Method::POST,
        url: &resolved.url,
        client_headers: headers,
        extra_headers: &state.config.extra_headers,
        body: body.clone(),
    };
    let send = forward::send(&client, &outbound, &state.config.retry);
    let (upstream, turn) = if no_store {
        (send.await, None)
    } else {
        let facts = RequestFacts::read(headers);
        let capture = begin_turn(&state, facts, body, protocol);
        forward_while_capturing(send, capture).await
    };
    let upstream = match upstream {
        Ok(response) => response,
        Err(err) => return errors::upstream_unreachable(protocol, &err.to_string()),
    };
    respond(upstream, protocol, turn, &state).await
}

/// Runs the upstream call and the capture side by side. The capture may finish after the
/// upstream answered, but only within [`CAPTURE_GRACE`]; past that the turn goes uncaptured (the
/// next request recaptures its messages) rather than holding the reply back.
async fn forward_while_capturing<S, C>(send: S, capture: C) -> (S::Output, Option<Turn>)
where
    S: std::future::Future,
    C: std::future::Future<Output = Option<Turn>>,
{
    let send = std::pin::pin!(send);
    let capture = std::pin::pin!(capture);
    match futures_util::future::select(send, capture).await {
        Either::Left((upstream, capture)) => {
            let turn = match actix_rt::time::timeout(CAPTURE_GRACE, capture).await {
                Ok(turn) => turn,
                Err(_) => capture_failed("capture did not finish in time"),
            };
            (upstream, turn)
        }
        Either::Right((turn, send)) => (send.await, turn),
    }
}

/// What capture needs from the request headers, read before the body is handed on.
struct RequestFacts {
    header_key: Option<String>,
    credential: String,
    project_header: Option<String>,
}

impl RequestFacts {
    fn read(headers: &HeaderMap) -> Self {
        let get = |name: &str| header_str(headers, name);
        Self {
            header_key: session_header_key(get),
            credential: credential_fingerprint(get),
            project_header: header_str(headers, "x-lore-project").map(str::to_string),
        }
    }
}

/// The session and turn a request was captured into.
struct Turn {
    session_id: String,
    completion: Completion,
}

/// Parses the request, identifies its session and hands the new messages to the session actor.
/// `None` when capture failed (logged); the request is forwarded all the same.
async fn begin_turn(
    state: &AppState,
    facts: RequestFacts,
    body: Bytes,
    protocol: Protocol,
) -> Option<Turn> {
    let gateway_cwd = state.config.gateway_cwd.clone();
    let large = body.len() >= LARGE_BODY_BYTES;
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
    let turn = NEXT_TURN.fetch_add(1, Ordering::Relaxed);
    // Not awaited: the session actor stores the messages while the request is forwarded. Its
    // mailbox keeps this ahead of the turn's `TurnCompleted`.
    handle.addr.do_send(PrepareTurn {
        turn,
        request: Arc::new(prepared.request),
        identities: prepared.identities,
        protocol,
        project: Some(prepared.project),
    });
    Some(Turn {
        session_id: handle.session_id,
        completion: Completion {
            session: handle.addr,
            turn,
        },
    })
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

fn capture_failed(reason: &str) -> Option<Turn> {
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

/// Relays the upstream response: streamed when it is a stream, buffered otherwise.
async fn respond(
    mut upstream: ClientResponse,
    protocol: Protocol,
    turn: Option<Turn>,
    state: &AppState,
) -> HttpResponse {
    let status = upstream.status();
    let mut response = HttpResponse::build(status);
    for (name, value) in upstream.headers() {
        if forward_response_header(name.as_str()) {
            response.append_header((name.clone(), value.clone()));
        }
    }
    if let Some(turn) = &turn {
        response.insert_header(("x-lore-session-id", turn.session_id.as_str()));
    }
    let is_stream = upstream
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if is_stream && status.is_success() {
        let completion = turn.map(|turn| turn.completion);
        let relay = Relay::new(upstream, protocol, completion, state.config.keepalive_after);
        return response.streaming(relay);
    }
    let body = match upstream.body().limit(MAX_REPLY_BYTES).await {
        Ok(body) => body,
        Err(err) => {
            return errors::upstream_unreachable(
                protocol,
                &format!("the upstream reply could not be read: {err}"),
            );
        }
    };
    if let Some(turn) = turn
        && status.is_success()
    {
        match parse_response(protocol, &body) {
            Ok(reply) => turn.completion.session.do_send(TurnCompleted {
                turn: turn.completion.turn,
                reply,
            }),
            Err(err) => {
                warn!(error = %err, "reply has an unfamiliar shape; relayed without capture")
            }
        }
    }
    if status == StatusCode::NO_CONTENT {
        return response.finish();
    }
    response.body(body)
}

fn path_and_query(req: &HttpRequest) -> String {
    req.uri()
        .path_and_query()
        .map(|pq| pq.as_str().to_string())
        .unwrap_or_else(|| req.path().to_string())
}
