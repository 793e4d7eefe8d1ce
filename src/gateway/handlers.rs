//! The LLM routes: route, parse once, hand the turn to its session, forward what the session
//! answered, relay, capture the reply.
//!
//! Each handler is a thin entry that names its protocol; `handle_llm` does the work. Routing
//! reads only `model`; the body is then parsed once and handed to the session's actor, which
//! answers the body to send (cards injected, the context plan applied) — the original bytes when
//! nothing changes. A "prompt is too long" answer is retried inside the same request at a higher
//! context layer (at most twice) before any byte reaches the client. Anything that fails on the
//! gateway's side (an unfamiliar shape, storage, a busy actor) is logged and the original
//! request is forwarded unchanged: the user's call never fails because of Lore. A body that is
//! not a JSON object gets a 400 that says so, as the provider would.

use actix_web::http::header::HeaderMap;
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use awc::ClientResponse;
use bytes::Bytes;
use lore_actors::turn::ContextInput;
use lore_actors::{ContextOverflow, TurnCompleted};
use lore_proto::rebuild::usage::scaled_reply;
use lore_proto::{Protocol, RequestHead, parse_response, peek_head};
use tracing::{debug, info, warn};

use crate::gateway::classify::{Class, classify};
use crate::gateway::costs_hook;
use crate::gateway::forward::{self, Outbound, UpstreamClient};
use crate::gateway::headers::forward_response_header;
use crate::gateway::intercept::{self, Target};
use crate::gateway::overflow::{MAX_ERROR_BYTES, too_long, with_note};
use crate::gateway::recall::{self, RecallRun};
use crate::gateway::relay::{HeldWhileStreaming, Relay};
use crate::gateway::turn::{self, RequestFacts, Turn, TurnRequest};
use crate::gateway::upstream::{Ingress, resolve};
use crate::gateway::worker_route::worker_route;
use crate::gateway::{access, header_str};
use crate::http::errors;
use crate::server::AppState;

/// Largest non-streaming upstream reply read into memory.
const MAX_REPLY_BYTES: usize = 256 * 1024 * 1024;
/// Retries of a "prompt is too long" answer at a higher layer, per request.
const MAX_OVERFLOW_RETRIES: usize = 2;

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

/// What the context manager needs from the request's headers and head.
fn context_input(
    state: &AppState,
    headers: &HeaderMap,
    head: &RequestHead,
    url: &str,
    previous_response: bool,
) -> Option<ContextInput> {
    if !state.config.context.settings.enabled {
        return None;
    }
    let long_context = header_str(headers, "anthropic-beta")
        .is_some_and(|beta| beta.to_ascii_lowercase().contains("context-1m"));
    let provider_managed = if previous_response {
        // The provider holds the earlier turns; Lore cannot see or change them.
        Some("previous_response_id".to_string())
    } else if head.context_management {
        Some("context_management".to_string())
    } else {
        None
    };
    Some(ContextInput {
        long_context,
        native_anthropic: forward::origin(url) == "https://api.anthropic.com",
        fixed_tokens: ((head.system_bytes + head.tools_bytes) / 4) as u64,
        provider_managed,
        budget_pressure: 0.0,
    })
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
    let path = path_and_query(&req);
    serve_llm(req.headers(), &path, body, state, client, protocol, codex).await
}

/// One LLM request with these headers to this path: the whole pipeline, from routing to the
/// relayed reply. The HTTP routes and the WebSocket bridge (`websocket.rs`) both come here.
pub(crate) async fn serve_llm(
    headers: &HeaderMap,
    path: &str,
    body: Bytes,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
    protocol: Protocol,
    codex: bool,
) -> HttpResponse {
    // Routing needs only `model`.
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
        path,
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
    // The client's own bytes, for the requests that go untouched.
    let original = body.clone();
    // Recall markers in the history become the calls and results the model saw.
    let body = recall::expand(&state, protocol, &body).unwrap_or(body);
    let parsed = if no_store {
        None
    } else {
        turn::parse(protocol, &body).await
    };
    let target = Target {
        protocol,
        codex,
        url: &resolved.url,
        headers,
        head: &head,
    };
    if let Some(parsed) = &parsed {
        match classify(headers, head.max_tokens, parsed.request()) {
            Class::Turn => {}
            Class::SideChannel(reason) => {
                info!(reason, "side-channel call: proxied untouched, not stored");
                return intercept::untouched(&state, &client, &target, original).await;
            }
            Class::Meta(reason) => {
                info!(reason = %reason, "meta request: proxied untouched, not stored");
                return intercept::untouched(&state, &client, &target, original).await;
            }
            Class::Command(command) => {
                info!(command = ?command, "lore command: answered by the gateway");
                return intercept::command(&state, &target, parsed, command).await;
            }
            Class::Compaction(ask) => {
                if let Some(answer) = intercept::compaction(&state, &target, parsed, &ask).await {
                    return answer;
                }
                return intercept::untouched(&state, &client, &target, original).await;
            }
        }
    }
    // Only a request that has tools gets the recall tool; the others are not parsed again.
    let with_tool = if no_store || !head.has_tools {
        None
    } else {
        recall::inject(&state, protocol, &body)
    };
    let outgoing = with_tool.clone().unwrap_or_else(|| body.clone());
    let turn = match parsed {
        None => None,
        Some(parsed) => open_turn(&state, &target, parsed, outgoing.clone()).await,
    };
    // Under `/lore:amnesia` the session stored nothing: the request goes as the client sent it.
    if turn.as_ref().is_some_and(|turn| turn.plan.amnesia) {
        drop(turn);
        return intercept::untouched(&state, &client, &target, original).await;
    }
    let mut sent = turn
        .as_ref()
        .and_then(|turn| turn.plan.body.clone())
        .unwrap_or(outgoing);
    // The cost tracker's throttle (a no-op without a budget or an OAuth bearer).
    costs_hook::throttle(&state, headers, head.model.as_deref(), &sent).await;
    let mut retries = 0;
    let mut retried_layer = None;
    let upstream = loop {
        let outbound = Outbound {
            method: Method::POST,
            url: &resolved.url,
            client_headers: headers,
            extra_headers: &state.config.extra_headers,
            body: sent.clone(),
        };
        let mut response = match forward::send(&client, &outbound, &state.config.retry).await {
            Ok(response) => response,
            Err(err) => return errors::upstream_unreachable(protocol, &err.to_string()),
        };
        let Some(turn) = turn
            .as_ref()
            .filter(|_| response.status() == StatusCode::BAD_REQUEST)
        else {
            break response;
        };
        // An error body is small: read it to see whether the prompt was too long.
        let status = response.status();
        let error = match response.body().limit(MAX_ERROR_BYTES).await {
            Ok(error) => error,
            Err(err) => {
                return errors::upstream_unreachable(
                    protocol,
                    &format!("the upstream error could not be read: {err}"),
                );
            }
        };
        let Some(overflowed) = too_long(&error) else {
            return buffered(&response, status, error);
        };
        let ratio = overflowed.ratio;
        let overflow = turn
            .session()
            .send(ContextOverflow {
                turn: turn.completion.turn,
                ratio,
                limit: overflowed.limit,
            })
            .await
            .unwrap_or_default();
        match overflow.body {
            Some(retry) if retries < MAX_OVERFLOW_RETRIES => {
                retries += 1;
                info!(session = %turn.session_id, layer = overflow.layer, ratio, "prompt too long; retrying at a higher context layer");
                retried_layer = Some(overflow.layer);
                sent = retry;
            }
            _ => {
                warn!(session = %turn.session_id, ratio, "prompt too long even after Lore's retries");
                let note = if overflow.tried.is_empty() {
                    "Lore could not make the prompt fit".to_string()
                } else {
                    overflow.tried
                };
                return buffered(&response, status, with_note(&error, &note));
            }
        }
    };
    let mut turn = turn;
    if let (Some(turn), Some(layer)) = (turn.as_mut(), retried_layer) {
        turn.plan.layer = layer;
    }
    let upstream = costs_hook::on_reply(
        &state,
        upstream,
        protocol,
        turn.as_ref(),
        head.model.as_deref(),
        &sent,
    );
    let recall = with_tool.map(|_| RecallRun {
        state: state.clone(),
        client: client.clone(),
        url: resolved.url.clone(),
        headers: headers.clone(),
        protocol,
        body: sent,
        session_id: turn.as_ref().map(|turn| turn.session_id.clone()),
        project: turn.as_ref().and_then(|turn| turn.plan.project.clone()),
        model: head.model.clone(),
    });
    respond(upstream, protocol, turn, &state, recall).await
}

/// Hands a parsed request to its session as a turn (`body` is what would be forwarded): the
/// worker route, the card book, the context manager's input. The HTTP path and the WebSocket
/// relay both open their turns here.
pub(crate) async fn open_turn(
    state: &AppState,
    target: &Target<'_>,
    parsed: turn::Parsed,
    body: Bytes,
) -> Option<Turn> {
    // On the board before anything else, so no worker call of its session starts now.
    let unresolved = state.board.begin_unresolved();
    let facts = RequestFacts::read(target.headers).with_worker(worker_route(
        &state.config.memory,
        target.protocol,
        target.codex,
        target.url,
        target.headers,
        &state.config.extra_headers,
        target.head.model.as_deref(),
    ));
    let cards = state
        .cards
        .as_ref()
        .map(|library| (library.current(), library.settings.clone()))
        .filter(|(book, _)| !book.is_idle());
    let previous_response = parsed.continues_response();
    let request = TurnRequest {
        facts,
        protocol: target.protocol,
        body,
        cards,
        context: context_input(
            state,
            target.headers,
            target.head,
            target.url,
            previous_response,
        ),
        unresolved: Some(unresolved),
    };
    turn::begin_turn(state, parsed, request).await
}

/// An upstream answer already read whole, relayed with its status and headers.
fn buffered(upstream: &ClientResponse, status: StatusCode, body: Bytes) -> HttpResponse {
    let mut response = HttpResponse::build(status);
    for (name, value) in upstream.headers() {
        if forward_response_header(name.as_str()) && name.as_str() != "content-length" {
            response.append_header((name.clone(), value.clone()));
        }
    }
    response.body(body)
}

/// Relays the upstream response: streamed when it is a stream, buffered otherwise.
async fn respond(
    mut upstream: ClientResponse,
    protocol: Protocol,
    mut turn: Option<Turn>,
    state: &AppState,
    recall: Option<RecallRun>,
) -> HttpResponse {
    // Held until the client has the whole response (streams) or until it is built (JSON).
    let end = turn.as_mut().and_then(|turn| turn.end.take());
    let status = upstream.status();
    let mut response = HttpResponse::build(status);
    for (name, value) in upstream.headers() {
        if forward_response_header(name.as_str()) {
            response.append_header((name.clone(), value.clone()));
        }
    }
    let report_cap = turn.as_ref().and_then(|turn| turn.plan.report_cap);
    if let Some(turn) = &turn {
        response.insert_header(("x-lore-session-id", turn.session_id.as_str()));
        response.insert_header(("x-lore-context-layer", turn.plan.layer.to_string()));
        // Only a reply the model produced saw the cards.
        if !turn.plan.injected.is_empty() && status.is_success() {
            response.insert_header(("x-lore-cards-injected", turn.plan.injected.join(",")));
        }
    }
    let is_stream = upstream
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if let Some(run) = recall
        && status.is_success()
    {
        if is_stream {
            let stream = recall::stream::relay(
                run,
                upstream,
                turn,
                state.config.keepalive_after,
                report_cap,
            );
            return response.streaming(HeldWhileStreaming::new(Box::pin(stream), end));
        }
        return recall::json::respond(run, upstream, turn, response, report_cap).await;
    }
    if is_stream && status.is_success() {
        let completion = turn.map(|turn| turn.completion);
        let relay = Relay::new(upstream, protocol, completion, state.config.keepalive_after)
            .with_usage_cap(report_cap);
        return response.streaming(HeldWhileStreaming::new(relay, end));
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
                plan_used: true,
            }),
            Err(err) => {
                warn!(error = %err, "reply has an unfamiliar shape; relayed without capture")
            }
        }
    }
    drop(end);
    if status == StatusCode::NO_CONTENT {
        return response.finish();
    }
    let body = match report_cap.filter(|_| status.is_success()) {
        Some(cap) => scaled_reply(protocol, &body, cap).map_or(body, Bytes::from),
        None => body,
    };
    response.body(body)
}

fn path_and_query(req: &HttpRequest) -> String {
    req.uri()
        .path_and_query()
        .map(|pq| pq.as_str().to_string())
        .unwrap_or_else(|| req.path().to_string())
}
