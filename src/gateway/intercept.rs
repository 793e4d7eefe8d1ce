//! The requests that do not become a conversation turn, once classified
//! ([`crate::gateway::classify`]): side-channel and meta requests proxied untouched, `/lore:`
//! commands answered by the gateway, and compaction requests answered from the session's
//! observation logs. Codex's `POST /v1/responses/compact` comes here too.

use std::sync::Arc;

use actix_web::http::header::HeaderMap;
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse, web};
use bytes::Bytes;
use futures_util::stream::{self, StreamExt};
use lore_actors::SetAmnesia;
use lore_actors::distiller::CurateNow;
use lore_proto::{Message, Part, Protocol, RequestHead, Role};
use tracing::info;

use crate::gateway::classify::{COMMANDS, LoreCommand};
use crate::gateway::compaction::{self, PING_EVERY, Summarise};
use crate::gateway::forward::{self, Outbound, UpstreamClient};
use crate::gateway::headers::forward_response_header;
use crate::gateway::turn::{self, Parsed};
use crate::gateway::upstream::{Ingress, resolve};
use crate::gateway::worker_route::worker_route;
use crate::gateway::{access, header_str, synthetic};
use crate::http::errors;
use crate::server::AppState;

/// Largest upstream reply of an untouched request read into memory when it is not a stream.
const MAX_REPLY_BYTES: usize = 256 * 1024 * 1024;

/// Where the request was going.
pub(crate) struct Target<'a> {
    pub protocol: Protocol,
    pub codex: bool,
    pub url: &'a str,
    pub headers: &'a HeaderMap,
    pub head: &'a RequestHead,
}

/// Forwards the client's bytes as they are and relays the answer: no session, no capture.
pub(crate) async fn untouched(
    state: &AppState,
    client: &UpstreamClient,
    target: &Target<'_>,
    body: Bytes,
) -> HttpResponse {
    let outbound = Outbound {
        method: Method::POST,
        url: target.url,
        client_headers: target.headers,
        extra_headers: &state.config.extra_headers,
        body,
    };
    let mut upstream = match forward::send(client, &outbound, &state.config.retry).await {
        Ok(response) => response,
        Err(err) => return errors::upstream_unreachable(target.protocol, &err.to_string()),
    };
    let mut response = HttpResponse::build(upstream.status());
    for (name, value) in upstream.headers() {
        if forward_response_header(name.as_str()) {
            response.append_header((name.clone(), value.clone()));
        }
    }
    let is_stream = upstream
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"));
    if is_stream {
        return response.streaming(upstream);
    }
    match upstream.body().limit(MAX_REPLY_BYTES).await {
        Ok(body) if upstream.status() == StatusCode::NO_CONTENT && body.is_empty() => {
            response.finish()
        }
        Ok(body) => response.body(body),
        Err(err) => errors::upstream_unreachable(
            target.protocol,
            &format!("the upstream reply could not be read: {err}"),
        ),
    }
}

/// Answers a `/lore:` command in the client's protocol; it never reaches the upstream.
pub(crate) async fn command(
    state: &AppState,
    target: &Target<'_>,
    parsed: &Parsed,
    command: LoreCommand,
) -> HttpResponse {
    let request = parsed.request();
    let identities: Vec<[u8; 16]> = request.messages.iter().map(Message::identity).collect();
    let before = identities[..identities.len().saturating_sub(1)].to_vec();
    let text = match command {
        LoreCommand::Unknown(line) => {
            format!("Lore does not know `{line}`. The commands are: {COMMANDS}.")
        }
        LoreCommand::Curate => {
            match turn::find_session(state, target.headers, request, before).await {
                None => "Lore could not find this session; nothing was curated.".to_string(),
                Some(handle) => curate_now(state, target, &handle.session_id).await,
            }
        }
        LoreCommand::Amnesia(on) => {
            match turn::find_session(state, target.headers, request, before).await {
                None => "Lore could not find this session; amnesia is unchanged.".to_string(),
                Some(handle) => {
                    let answer = amnesia_text(on);
                    // The command and this answer join the session's history unstored, so the
                    // next request of the conversation finds the session again.
                    let mut path = identities.clone();
                    path.push(
                        Message::new(
                            Role::Assistant,
                            vec![Part::Text {
                                text: answer.to_string(),
                            }],
                        )
                        .identity(),
                    );
                    match handle.addr.send(SetAmnesia { on, path }).await {
                        Ok(Ok(_)) => answer.to_string(),
                        Ok(Err(err)) => format!("Lore could not change amnesia: {err}"),
                        Err(err) => format!("Lore could not change amnesia: {err}"),
                    }
                }
            }
        }
    };
    info!(answer = %text, "lore command answered");
    reply(target, &text)
}

fn amnesia_text(on: bool) -> &'static str {
    if on {
        "Lore amnesia is on: nothing of this session is stored and no background work runs for it until /lore:amnesia off."
    } else {
        "Lore amnesia is off: this session is stored and curated again from now on."
    }
}

async fn curate_now(state: &AppState, target: &Target<'_>, session_id: &str) -> String {
    let Some(memory) = &state.memory else {
        return "Lore's memory workers are off (LORE_MEMORY=off); nothing was curated.".to_string();
    };
    let route = worker_route(
        &state.config.memory,
        target.protocol,
        target.codex,
        target.url,
        target.headers,
        &state.config.extra_headers,
        target.head.model.as_deref(),
    );
    let Some(route) = route else {
        return "Lore has no worker route for this request (no model or credential to call); nothing was curated.".to_string();
    };
    let asked = memory
        .distiller
        .send(CurateNow {
            session_id: session_id.to_string(),
            route: Arc::new(route),
        })
        .await;
    match asked {
        Ok(true) => "Lore is distilling and curating this session now.".to_string(),
        Ok(false) => "Lore already has a memory job waiting for this session.".to_string(),
        Err(err) => format!("Lore could not reach its memory workers: {err}"),
    }
}

/// A gateway-written reply carrying `text`, as JSON or as a stream like the request asked.
fn reply(target: &Target<'_>, text: &str) -> HttpResponse {
    let model = target.head.model.as_deref().unwrap_or("lore");
    if target.head.stream {
        let events = synthetic::stream_events(target.protocol, model, text);
        let body = stream::iter(events.into_iter().map(Ok::<_, actix_web::Error>));
        return HttpResponse::Ok()
            .content_type("text/event-stream")
            .insert_header(("cache-control", "no-cache"))
            .streaming(body);
    }
    HttpResponse::Ok().json(synthetic::json_body(target.protocol, model, text))
}

/// Answers a compaction request from the session's observation logs, or `None` when there is
/// nothing distilled (the caller forwards it).
pub(crate) async fn compaction(
    state: &AppState,
    target: &Target<'_>,
    parsed: &Parsed,
    ask: &Summarise,
) -> Option<HttpResponse> {
    let request = parsed.request();
    let identities: Vec<[u8; 16]> = request.messages.iter().map(Message::identity).collect();
    let before = identities[..identities.len().saturating_sub(1)].to_vec();
    let handle = turn::find_session(state, target.headers, request, before).await?;
    let session_id = handle.session_id.clone();
    let store = state.store.clone();
    let id = session_id.clone();
    let distilled = web::block(move || {
        store
            .session_distillations(&id)
            .map(|logs| logs.iter().any(|log| !log.archived))
    })
    .await;
    if !matches!(distilled, Ok(Ok(true))) {
        info!(session = %session_id, reason = ask.reason, "compaction request with nothing distilled yet; forwarded");
        return None;
    }
    info!(session = %session_id, reason = ask.reason, "compaction answered from the observation logs");
    let store = state.store.clone();
    let ask = ask.clone();
    let id = session_id.clone();
    let build = async move {
        match web::block(move || compaction::summary(&store, &id, &ask)).await {
            Ok(Ok(Some(summary))) => summary,
            Ok(Ok(None)) => "Lore has nothing distilled for this session.".to_string(),
            Ok(Err(err)) => format!("Lore could not read this session's observation logs: {err}"),
            Err(err) => format!("Lore could not build the summary: {err}"),
        }
    };
    let model = target
        .head
        .model
        .clone()
        .unwrap_or_else(|| "lore".to_string());
    let protocol = target.protocol;
    if target.head.stream {
        // The stream opens now; pings keep the client waiting until the summary is ready.
        let events = async move { synthetic::stream_events(protocol, &model, &build.await) };
        return Some(
            HttpResponse::Ok()
                .content_type("text/event-stream")
                .insert_header(("cache-control", "no-cache"))
                .insert_header(("x-lore-session-id", session_id.as_str()))
                .streaming(pinged(protocol, events)),
        );
    }
    let summary = build.await;
    Some(
        HttpResponse::Ok()
            .insert_header(("x-lore-session-id", session_id.as_str()))
            .json(synthetic::json_body(protocol, &model, &summary)),
    )
}

/// A stream that sends `ping` every [`PING_EVERY`] until `ready` resolves, then its events.
pub(crate) fn pinged<F>(
    protocol: Protocol,
    ready: F,
) -> impl futures_util::Stream<Item = Result<Bytes, actix_web::Error>>
where
    F: std::future::Future<Output = Vec<Bytes>> + 'static,
{
    let ready = Box::pin(ready);
    stream::unfold(Some(ready), move |state| async move {
        let mut ready = state?;
        tokio::select! {
            events = &mut ready => Some((stream::iter(events.into_iter().map(Ok)).left_stream(), None)),
            () = actix_rt::time::sleep(PING_EVERY) => {
                let ping = stream::iter(vec![Ok(synthetic::ping(protocol))]).right_stream();
                Some((ping, Some(ready)))
            }
        }
    })
    .flatten()
}

/// `POST /v1/responses/compact` and `POST /v1/codex/responses/compact` (Codex): the summary as one assistant message in `output`, from
/// the observation logs; forwarded to the upstream's own endpoint when nothing is distilled.
pub async fn responses_compact(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
) -> HttpResponse {
    if let Some(refusal) = access::refuse_data_plane(&req, &state) {
        return refusal;
    }
    let protocol = Protocol::OpenAiResponses;
    let headers = req.headers();
    let head = match lore_proto::peek_head(&body) {
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
    let path = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.path().to_string(), |pq| pq.as_str().to_string());
    // Codex on a ChatGPT login compacts at `/v1/codex/responses/compact` (the backend's route).
    let codex = path.starts_with("/v1/codex/");
    let resolved = match resolve(
        &state.config.upstream,
        Ingress::Llm { protocol, codex },
        &path,
        header_str(headers, "x-lore-upstream-url"),
        header_str(headers, "x-lore-provider"),
        head.model.as_deref(),
    ) {
        Ok(resolved) => resolved,
        Err(err) => return errors::bad_request(protocol, &err.to_string()),
    };
    let target = Target {
        protocol,
        codex,
        url: &resolved.url,
        headers,
        head: &head,
    };
    if let Some(parsed) = turn::parse(protocol, &body).await {
        let request = parsed.request();
        let identities: Vec<[u8; 16]> = request.messages.iter().map(Message::identity).collect();
        if let Some(handle) = turn::find_session(&state, headers, request, identities).await {
            let store = state.store.clone();
            let session_id = handle.session_id.clone();
            let ask = Summarise {
                claude_code: false,
                previous: None,
                reason: "Codex's /v1/responses/compact",
            };
            let built = web::block(move || compaction::summary(&store, &session_id, &ask)).await;
            if let Ok(Ok(Some(summary))) = built {
                info!(session = %handle.session_id, chars = summary.len(), "Codex compaction answered from the observation logs");
                let model = head.model.as_deref().unwrap_or("lore");
                let object =
                    synthetic::responses_object(&handle.session_id, model, &summary, "completed");
                return HttpResponse::Ok()
                    .insert_header(("x-lore-session-id", handle.session_id.as_str()))
                    .json(serde_json::json!({"output": object["output"]}));
            }
        }
    }
    info!("Codex compaction with nothing distilled; forwarded to the upstream");
    untouched(&state, &client, &target, body).await
}
