//! The Responses API over WebSocket on `/v1/responses` (and `/v1/codex/responses`), Codex's
//! first choice (`OpenAI-Beta: responses_websockets=…`).
//!
//! The client sends one `response.create` message per turn (the body of a Responses request
//! with `"type": "response.create"`); the server answers with the stream's events, one JSON
//! message each. When the upstream offers the same WebSocket, the connection is relayed to it
//! ([`upstream`]: each turn handed to its session like an HTTP turn, the reply rebuilt from the
//! events). Otherwise each message is bridged to the upstream's HTTP stream through the same
//! pipeline as a `POST /v1/responses` ([`crate::gateway::handlers::serve_llm`]):
//! classification, the session's turn, capture, cards, context plan, recall, and the reply
//! stored when the stream ends. What the WebSocket protocol adds is handled here for the
//! bridge:
//! - `"generate": false` (Codex's prewarm) asks for nothing to be generated: answered with an
//!   empty `response.created` / `response.completed`, no upstream call;
//! - `previous_response_id` naming the connection's previous response (Codex sends only the new
//!   items then, even with `store: false`) is expanded into that response's full input and
//!   output, as the server of a connection keeps them, so the HTTP upstream gets a whole
//!   request;
//! - an error answer becomes an `error` message with its status.

use std::future::poll_fn;
use std::pin::Pin;

use actix_web::body::MessageBody;
use actix_web::http::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, Session};
use bytes::Bytes;
use lore_proto::{Protocol, SseDecoder};
use serde_json::{Map, Value, json};
use tracing::{debug, info, warn};

mod upstream;

use crate::gateway::forward::UpstreamClient;
use crate::gateway::handlers::serve_llm;
use crate::gateway::synthetic::responses_object;
use crate::gateway::upstream::{Ingress, resolve};
use crate::gateway::{access, header_str};
use crate::server::AppState;
use upstream::{Relay, Relayed, UpstreamSocket};

/// Largest message a client may send (a long Codex history is sent whole).
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// `GET /v1/responses` with `Upgrade: websocket`.
pub async fn responses(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
) -> Result<HttpResponse, actix_web::Error> {
    accept(req, payload, state, client, false)
}

/// `GET /v1/codex/responses` with `Upgrade: websocket` (the ChatGPT backend's route).
pub async fn codex_responses(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
) -> Result<HttpResponse, actix_web::Error> {
    accept(req, payload, state, client, true)
}

fn accept(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
    codex: bool,
) -> Result<HttpResponse, actix_web::Error> {
    if let Some(refusal) = access::refuse_data_plane(&req, &state) {
        return Ok(refusal);
    }
    let (response, session, stream) = actix_ws::handle(&req, payload)?;
    let stream = stream
        .max_frame_size(MAX_MESSAGE_BYTES)
        .aggregate_continuations()
        .max_continuation_size(MAX_MESSAGE_BYTES);
    let bridge = Bridge {
        headers: post_headers(req.headers()),
        path: req.path().to_string(),
        state,
        client,
        codex,
        previous: None,
        upstream: Upstream::Unknown,
    };
    info!(path = %bridge.path, "Responses WebSocket opened");
    actix_web::rt::spawn(bridge.run(session, stream));
    Ok(response)
}

/// The upgrade request's headers as those of the HTTP requests the bridge sends: the
/// WebSocket handshake headers left out, a JSON body declared.
fn post_headers(upgrade: &HeaderMap) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in upgrade {
        if !name.as_str().starts_with("sec-websocket-") {
            headers.append(name.clone(), value.clone());
        }
    }
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers
}

/// The connection's previous response, as a server of the connection keeps it.
struct Previous {
    id: String,
    /// Its whole input followed by its output items.
    items: Vec<Value>,
}

/// Where a connection's turns go.
enum Upstream {
    /// Not tried yet (on the first message).
    Unknown,
    /// The upstream's own WebSocket, with the URL a `POST` would go to.
    Relayed(UpstreamSocket, String),
    /// The upstream's HTTP stream.
    Bridged,
}

/// One client connection.
struct Bridge {
    headers: HeaderMap,
    path: String,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
    codex: bool,
    previous: Option<Previous>,
    upstream: Upstream,
}

impl Bridge {
    async fn run(mut self, mut session: Session, mut stream: actix_ws::AggregatedMessageStream) {
        while let Some(message) = stream.recv().await {
            let outcome = match message {
                Ok(AggregatedMessage::Text(text)) => {
                    self.create(&mut session, text.as_bytes()).await
                }
                Ok(AggregatedMessage::Binary(bytes)) => self.create(&mut session, &bytes).await,
                Ok(AggregatedMessage::Ping(bytes)) => session.pong(&bytes).await,
                Ok(AggregatedMessage::Pong(_)) => Ok(()),
                Ok(AggregatedMessage::Close(reason)) => {
                    debug!("Responses WebSocket closed by the client");
                    let _ = session.close(reason).await;
                    return;
                }
                Err(err) => {
                    warn!(error = %err, "Responses WebSocket: unreadable message; closing");
                    break;
                }
            };
            if outcome.is_err() {
                // The client is gone.
                return;
            }
        }
        let _ = session.close(None).await;
    }

    /// Answers one `response.create` message.
    async fn create(
        &mut self,
        session: &mut Session,
        message: &[u8],
    ) -> Result<(), actix_ws::Closed> {
        let mut request = match serde_json::from_slice::<Value>(message) {
            Ok(Value::Object(request))
                if request.get("type").and_then(Value::as_str) == Some("response.create") =>
            {
                request
            }
            _ => {
                return send(
                    session,
                    &error_event(400, "invalid_request_error", "each WebSocket message must be a JSON object with \"type\": \"response.create\" and the fields of a Responses request"),
                )
                .await;
            }
        };
        if matches!(self.upstream, Upstream::Unknown) {
            self.upstream = self.open_upstream(&request).await;
        }
        if let Upstream::Relayed(socket, url) = &mut self.upstream {
            let relay = Relay {
                state: &self.state,
                headers: &self.headers,
                url,
                codex: self.codex,
            };
            match relay.turn(socket, session, request.clone()).await? {
                Relayed::Done => return Ok(()),
                Relayed::NotTurn => {}
                Relayed::UpstreamGone => self.upstream = Upstream::Bridged,
            }
        }
        request.remove("type");
        let generate = request
            .remove("generate")
            .and_then(|g| g.as_bool())
            .unwrap_or(true);
        let items = self.full_input(&mut request);
        request.insert("input".into(), Value::Array(items.clone()));
        if !generate {
            return self.prewarm(session, &request, items).await;
        }
        request.insert("stream".into(), Value::Bool(true));
        let body = match serde_json::to_vec(&request) {
            Ok(body) => Bytes::from(body),
            Err(err) => {
                return send(
                    session,
                    &error_event(400, "invalid_request_error", &err.to_string()),
                )
                .await;
            }
        };
        let response = serve_llm(
            &self.headers,
            &self.path,
            body,
            self.state.clone(),
            self.client.clone(),
            Protocol::OpenAiResponses,
            self.codex,
        )
        .await;
        self.relay(session, response, items).await
    }

    /// The upstream's own WebSocket when it offers one, else the bridge to its HTTP stream.
    async fn open_upstream(&self, request: &Map<String, Value>) -> Upstream {
        let model = request.get("model").and_then(Value::as_str);
        let resolved = resolve(
            &self.state.config.upstream,
            Ingress::Llm {
                protocol: Protocol::OpenAiResponses,
                codex: self.codex,
            },
            &self.path,
            header_str(&self.headers, "x-lore-upstream-url"),
            header_str(&self.headers, "x-lore-provider"),
            model,
        );
        let Ok(resolved) = resolved else {
            // The HTTP path says what is wrong with the routing.
            return Upstream::Bridged;
        };
        match upstream::connect(
            &self.client,
            &resolved.url,
            &self.headers,
            &self.state.config.extra_headers,
        )
        .await
        {
            Ok(socket) => {
                info!(upstream = %crate::gateway::forward::origin(&resolved.url), "Responses WebSocket relayed to the upstream's WebSocket");
                Upstream::Relayed(socket, resolved.url)
            }
            Err(reason) => {
                info!(reason = %reason, "the upstream offers no Responses WebSocket; bridged to its HTTP stream");
                Upstream::Bridged
            }
        }
    }

    /// The request's input, with the connection's previous response in front of it when the
    /// request continues that one (its `previous_response_id` is then removed).
    fn full_input(&mut self, request: &mut Map<String, Value>) -> Vec<Value> {
        let input = match request.remove("input") {
            Some(Value::Array(items)) => items,
            Some(Value::String(text)) => vec![
                json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}),
            ],
            _ => Vec::new(),
        };
        let continues = request
            .get("previous_response_id")
            .and_then(Value::as_str)
            .zip(self.previous.as_ref())
            .is_some_and(|(id, previous)| previous.id == id);
        match (&self.previous, continues) {
            (Some(previous), true) => {
                request.remove("previous_response_id");
                let mut items = previous.items.clone();
                items.extend(input);
                items
            }
            _ => input,
        }
    }

    /// `"generate": false`: nothing to generate; the connection remembers the input.
    async fn prewarm(
        &mut self,
        session: &mut Session,
        request: &Map<String, Value>,
        items: Vec<Value>,
    ) -> Result<(), actix_ws::Closed> {
        let model = request.get("model").and_then(Value::as_str).unwrap_or("");
        let id = lore_storage::store::new_session_id();
        let mut created = responses_object(&id, model, "", "in_progress");
        let mut completed = responses_object(&id, model, "", "completed");
        completed["output"] = json!([]);
        created["output"] = json!([]);
        self.previous = completed["id"].as_str().map(|id| Previous {
            id: id.to_string(),
            items,
        });
        send(
            session,
            &json!({"type": "response.created", "sequence_number": 0, "response": created}),
        )
        .await?;
        send(
            session,
            &json!({"type": "response.completed", "sequence_number": 1, "response": completed}),
        )
        .await
    }

    /// Relays a pipeline answer: each stream event as one message; an error as an `error`.
    async fn relay(
        &mut self,
        session: &mut Session,
        response: HttpResponse,
        items: Vec<Value>,
    ) -> Result<(), actix_ws::Closed> {
        let status = response.status();
        let is_stream = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        let mut body = response.into_body();
        if !status.is_success() || !is_stream {
            let bytes = actix_web::body::to_bytes(body).await.unwrap_or_default();
            let parsed: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            if status.is_success()
                && parsed.get("object").and_then(Value::as_str) == Some("response")
            {
                // A whole response (the gateway answered itself, without a stream).
                return send(
                    session,
                    &json!({"type": "response.completed", "response": parsed}),
                )
                .await;
            }
            let error = parsed.get("error").cloned().unwrap_or_else(
                || json!({"type": "api_error", "message": String::from_utf8_lossy(&bytes)}),
            );
            return send(
                session,
                &json!({"type": "error", "status": status.as_u16(), "error": error}),
            )
            .await;
        }
        let mut decoder = SseDecoder::new();
        self.previous = None;
        while let Some(chunk) = poll_fn(|cx| Pin::new(&mut body).poll_next(cx)).await {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(err) => {
                    let error = error_event(
                        502,
                        "api_error",
                        &format!("the upstream stream broke: {err}"),
                    );
                    return send(session, &error).await;
                }
            };
            for event in decoder.push(&chunk) {
                if event.data.trim().is_empty() || event.data == "[DONE]" {
                    continue;
                }
                if let Ok(parsed) = serde_json::from_str::<Value>(&event.data)
                    && parsed["type"] == "response.completed"
                    && let Some(id) = parsed["response"]["id"].as_str()
                {
                    let mut kept = items.clone();
                    if let Some(output) = parsed["response"]["output"].as_array() {
                        kept.extend(output.iter().cloned());
                    }
                    self.previous = Some(Previous {
                        id: id.to_string(),
                        items: kept,
                    });
                }
                session.text(event.data).await?;
            }
        }
        Ok(())
    }
}

fn error_event(status: u16, kind: &str, message: &str) -> Value {
    json!({"type": "error", "status": status, "error": {"type": kind, "message": message}})
}

async fn send(session: &mut Session, event: &Value) -> Result<(), actix_ws::Closed> {
    session.text(event.to_string()).await
}
