//! The LLM routes: parse, identify the session, capture, forward, relay, capture the reply.
//!
//! Each handler is a thin entry that names its protocol; `handle_llm` does the work. Routing
//! reads only `model`; the request is then forwarded while the capture (full parse, identity,
//! session resolution, storage through the session actor) runs beside it, so capture adds
//! nothing to the time the client waits unless it takes longer than the upstream. When the card
//! book has cards, the session actor must decide the injection first, so capture runs before
//! forwarding. Anything that
//! fails on the gateway's side (an unfamiliar shape, storage, a busy actor) is logged and the
//! original request is forwarded unchanged: the user's call never fails because of Lore. A body
//! that is not a JSON object gets a 400 that says so, as the provider would.

use std::time::Duration;

use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use awc::ClientResponse;
use bytes::Bytes;
use futures_util::future::Either;
use lore_actors::TurnCompleted;
use lore_proto::{Protocol, parse_response, peek_head};
use tracing::{debug, warn};

use crate::gateway::capture::{RequestFacts, Turn, begin_turn, capture_failed};
use crate::gateway::costs_hook;
use crate::gateway::forward::{self, Outbound, UpstreamClient};
use crate::gateway::headers::forward_response_header;
use crate::gateway::recall::{self, RecallRun};
use crate::gateway::relay::{HeldWhileStreaming, Relay};
use crate::gateway::upstream::{Ingress, resolve};
use crate::gateway::worker_route::worker_route;
use crate::gateway::{access, header_str};
use crate::http::errors;
use crate::server::AppState;

/// How long a reply may wait for the capture of its request once the upstream has answered.
const CAPTURE_GRACE: Duration = Duration::from_millis(250);

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
    // Recall markers in the history become the calls and results the model saw.
    let body = recall::expand(&state, protocol, &body).unwrap_or(body);
    // Only a request that has tools gets the recall tool; the others are not parsed again.
    let with_tool = if no_store || !head.has_tools {
        None
    } else {
        recall::inject(&state, protocol, &body)
    };
    let outbound = Outbound {
        method: Method::POST,
        url: &resolved.url,
        client_headers: headers,
        extra_headers: &state.config.extra_headers,
        body: with_tool.clone().unwrap_or_else(|| body.clone()),
    };
    let book = state
        .cards
        .as_ref()
        .map(|library| (library.current(), library.settings.clone()));
    let cards_on = book.as_ref().is_some_and(|(book, _)| !book.is_idle());
    let mut forwarded = outbound.body.clone();
    // The request is on the activity board before it is forwarded, so no worker call of its
    // session starts while it is in flight.
    let facts = || {
        let route = worker_route(
            &state.config.memory,
            protocol,
            codex,
            &resolved.url,
            headers,
            &state.config.extra_headers,
            head.model.as_deref(),
        );
        RequestFacts::read(headers).with_worker(route, Some(state.board.begin_unresolved()))
    };
    // The cost tracker's throttle (a no-op without a budget or an OAuth bearer).
    costs_hook::throttle(&state, headers, head.model.as_deref(), &outbound.body).await;
    let (upstream, turn) = if no_store {
        (
            forward::send(&client, &outbound, &state.config.retry).await,
            None,
        )
    } else if cards_on {
        // Cards may rewrite the request: the session decides first, then it is forwarded.
        let turn = begin_turn(&state, facts(), body, protocol, book).await;
        let mut outbound = outbound;
        if let Some(rewritten) = turn.as_ref().and_then(|turn| turn.body.clone()) {
            outbound.body = match with_tool {
                Some(_) => recall::inject(&state, protocol, &rewritten).unwrap_or(rewritten),
                None => rewritten,
            };
        }
        forwarded = outbound.body.clone();
        (
            forward::send(&client, &outbound, &state.config.retry).await,
            turn,
        )
    } else {
        let send = forward::send(&client, &outbound, &state.config.retry);
        let capture = begin_turn(&state, facts(), body, protocol, None);
        forward_while_capturing(send, capture).await
    };
    let upstream = match upstream {
        Ok(response) => response,
        Err(err) => return errors::upstream_unreachable(protocol, &err.to_string()),
    };
    let session_id = turn.as_ref().map(|turn| turn.session_id.as_str());
    let upstream = costs_hook::on_reply(
        &state,
        upstream,
        protocol,
        session_id,
        head.model.as_deref(),
        &forwarded,
    );
    let recall = with_tool.map(|_| RecallRun {
        state: state.clone(),
        client: client.clone(),
        url: resolved.url.clone(),
        headers: headers.clone(),
        protocol,
        body: forwarded,
        session_id: turn.as_ref().map(|turn| turn.session_id.clone()),
    });
    respond(upstream, protocol, turn, &state, recall).await
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

/// Relays the upstream response: streamed when it is a stream, buffered otherwise.
async fn respond(
    mut upstream: ClientResponse,
    protocol: Protocol,
    mut turn: Option<Turn>,
    state: &AppState,
    recall: Option<RecallRun>,
) -> HttpResponse {
    // Held until the client has the whole response (streams) or until it is built (JSON).
    let in_flight = turn.as_mut().and_then(|turn| turn.in_flight.take());
    let status = upstream.status();
    let mut response = HttpResponse::build(status);
    for (name, value) in upstream.headers() {
        if forward_response_header(name.as_str()) {
            response.append_header((name.clone(), value.clone()));
        }
    }
    if let Some(turn) = &turn {
        response.insert_header(("x-lore-session-id", turn.session_id.as_str()));
        // Only a reply the model produced saw the cards.
        if !turn.injected.is_empty() && status.is_success() {
            response.insert_header(("x-lore-cards-injected", turn.injected.join(",")));
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
            let stream = recall::stream::relay(run, upstream, turn, state.config.keepalive_after);
            return response.streaming(HeldWhileStreaming::new(Box::pin(stream), in_flight));
        }
        return recall::json::respond(run, upstream, turn, response).await;
    }
    if is_stream && status.is_success() {
        let completion = turn.map(|turn| turn.completion);
        let relay = Relay::new(upstream, protocol, completion, state.config.keepalive_after);
        return response.streaming(HeldWhileStreaming::new(relay, in_flight));
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
