//! The LLM routes: parse, identify the session, capture, forward, relay, capture the reply.
//!
//! Each handler is a thin entry that names its protocol; [`handle_llm`] does the work. Anything
//! that fails on the gateway's side (parsing an unfamiliar shape, storage, a busy actor) is
//! logged and the original request is forwarded unchanged: the user's call never fails because
//! of Lore. A body that is not JSON at all gets a 400 that says so, as the provider would.

use std::sync::Arc;
use std::time::Duration;

use actix_web::http::header::HeaderMap;
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use awc::ClientResponse;
use bytes::Bytes;
use lore_actors::{PrepareTurn, ResolveSession, SessionIdentity, TurnCompleted};
use lore_proto::{CanonicalRequest, Message, Protocol, Role, parse_request, parse_response};
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

/// How long the gateway waits for its own actors before forwarding without capture.
const ACTOR_DEADLINE: Duration = Duration::from_secs(5);
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
    let parsed = match parse_request(protocol, &body) {
        Ok(parsed) => Some(parsed),
        Err(err) => {
            if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err() {
                return errors::bad_request(
                    protocol,
                    &format!(
                        "the request body is not valid JSON ({err}); send a JSON object as the API expects"
                    ),
                );
            }
            warn!(error = %err, "request has an unfamiliar shape; forwarding it unchanged without capture");
            None
        }
    };
    let model = parsed.as_ref().and_then(|p| p.model.clone());
    let resolved = match resolve(
        &state.config.upstream,
        Ingress::Llm { protocol, codex },
        path_and_query(&req).as_str(),
        header_str(headers, "x-lore-upstream-url"),
        header_str(headers, "x-lore-provider"),
        model.as_deref(),
    ) {
        Ok(resolved) => resolved,
        Err(err) => return errors::bad_request(protocol, &err.to_string()),
    };
    debug!(rule = resolved.rule, upstream = %forward::origin(&resolved.url), "routing");
    let no_store = header_str(headers, "x-lore-no-store")
        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
    let turn = match parsed {
        Some(parsed) if !no_store => begin_turn(&state, headers, parsed, protocol).await,
        _ => None,
    };
    let outbound = Outbound {
        method: Method::POST,
        url: &resolved.url,
        client_headers: headers,
        extra_headers: &state.config.extra_headers,
        body,
    };
    let upstream = match forward::send(&client, &outbound, &state.config.retry).await {
        Ok(response) => response,
        Err(err) => return errors::upstream_unreachable(protocol, &err.to_string()),
    };
    respond(upstream, protocol, turn, &state).await
}

/// The session and turn a request was captured into.
struct Turn {
    session_id: String,
    completion: Completion,
}

/// Identifies the session and captures the request's new messages. `None` when capture failed
/// (logged); the request is then forwarded without capture.
async fn begin_turn(
    state: &AppState,
    headers: &HeaderMap,
    parsed: CanonicalRequest,
    protocol: Protocol,
) -> Option<Turn> {
    let mut parsed = parsed;
    if protocol == Protocol::OpenAiResponses {
        parsed.messages = merge_adjacent_assistant(std::mem::take(&mut parsed.messages));
    }
    let identities: Arc<Vec<[u8; 16]>> =
        Arc::new(parsed.messages.iter().map(Message::identity).collect());
    let get = |name: &str| header_str(headers, name);
    let credential = credential_fingerprint(get);
    let fingerprint = parsed
        .messages
        .iter()
        .find(|message| message.role == Role::User)
        .map(|first| conversation_fingerprint(&first.text(), &credential));
    let identity = SessionIdentity {
        header_key: session_header_key(get),
        fingerprint,
        previous_response_id: parsed.previous_response_id.clone(),
    };
    let first_user = parsed
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .map(Message::text)
        .unwrap_or_default();
    let texts = [parsed.system.as_deref().unwrap_or(""), first_user.as_str()];
    let project = project_hint(
        &texts,
        header_str(headers, "x-lore-project"),
        &state.config.gateway_cwd,
    );
    let resolve = ResolveSession {
        identity,
        incoming: identities.clone(),
    };
    let handle = match state.registry.send(resolve).timeout(ACTOR_DEADLINE).await {
        Ok(Ok(handle)) => handle,
        Ok(Err(err)) => return capture_failed(&err.to_string()),
        Err(err) => return capture_failed(&err.to_string()),
    };
    let prepare = PrepareTurn {
        request: Arc::new(parsed),
        identities,
        protocol,
        project: Some(project),
    };
    match handle.addr.send(prepare).timeout(ACTOR_DEADLINE).await {
        Ok(Ok(plan)) => Some(Turn {
            session_id: plan.session_id,
            completion: Completion {
                session: handle.addr,
                turn: plan.turn,
            },
        }),
        Ok(Err(err)) => capture_failed(&err.to_string()),
        Err(err) => capture_failed(&err.to_string()),
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
