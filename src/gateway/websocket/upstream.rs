//! Relaying a client's WebSocket turns to an upstream that offers the Responses API over
//! WebSocket itself: one upstream connection per client connection, opened on the first
//! message. Each turn is handed to its session like an HTTP turn ([`open_turn`]: the same
//! classification, capture, cards and context plan); the planned body goes up as a
//! `response.create`, every event comes back to the client as it arrives, and the stream
//! accumulator rebuilds the reply for the session. The upstream keeps the connection's previous
//! response itself, so a `previous_response_id` goes up as it is.

use std::pin::Pin;
use std::time::Duration;

use actix_web::http::header::HeaderMap;
use actix_ws::Session;
use awc::error::WsProtocolError;
use awc::ws::{Frame, Message};
use bytes::Bytes;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use lore_actors::TurnCompleted;
use lore_actors::registry::ResponseIdIssued;
use lore_proto::{Protocol, SseEvent, new_accumulator, peek_head};
use serde_json::{Map, Value};
use tracing::{info, warn};

use crate::gateway::classify::{Class, classify};
use crate::gateway::forward::UpstreamClient;
use crate::gateway::handlers::open_turn;
use crate::gateway::headers::forward_request_header;
use crate::gateway::intercept::Target;
use crate::gateway::turn;
use crate::server::AppState;

/// How long the upstream has to accept the WebSocket.
const CONNECT_DEADLINE: Duration = Duration::from_secs(10);
/// Largest upstream message accepted.
const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;

type UpSink = Pin<Box<dyn Sink<Message, Error = WsProtocolError>>>;
type UpStream = Pin<Box<dyn Stream<Item = Result<Frame, WsProtocolError>>>>;

/// An open WebSocket to the upstream.
pub(super) struct UpstreamSocket {
    sink: UpSink,
    stream: UpStream,
}

/// What became of one message.
pub(super) enum Relayed {
    /// Relayed to the end (or the client went away: `Err` from the client side is returned
    /// instead).
    Done,
    /// Not a turn (a command, a compaction, a side-channel call): the caller takes the HTTP
    /// path for it.
    NotTurn,
    /// The upstream connection is gone; the caller bridges from now on.
    UpstreamGone,
}

/// Opens the upstream WebSocket for `url` (the HTTP URL a `POST` would go to), with the
/// client's headers as a `POST` would carry them; `Err` when the upstream offers none.
pub(super) async fn connect(
    client: &UpstreamClient,
    url: &str,
    headers: &HeaderMap,
    extra: &[(String, String)],
) -> Result<UpstreamSocket, String> {
    let ws_url = if let Some(rest) = url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        return Err(format!("{url} is no HTTP URL"));
    };
    let mut request = client.ws(&ws_url).max_frame_size(MAX_FRAME_BYTES);
    for (name, value) in headers {
        let overridden = extra.iter().any(|(extra, _)| name.as_str() == extra);
        if forward_request_header(name.as_str()) && name.as_str() != "content-type" && !overridden {
            request = request.header(name.clone(), value.clone());
        }
    }
    for (name, value) in extra {
        request = request.header(name.as_str(), value.as_str());
    }
    let connected = actix_rt::time::timeout(CONNECT_DEADLINE, request.connect())
        .await
        .map_err(|_| "the upstream did not accept the WebSocket in time".to_string())?
        .map_err(|err| err.to_string())?;
    let (sink, stream) = connected.1.split();
    Ok(UpstreamSocket {
        sink: Box::pin(sink),
        stream: Box::pin(stream),
    })
}

/// The context of one relayed message.
pub(super) struct Relay<'a> {
    pub state: &'a AppState,
    pub headers: &'a HeaderMap,
    pub url: &'a str,
    pub codex: bool,
}

impl Relay<'_> {
    /// Relays one `response.create` (`request`, as the client sent it) to the upstream.
    pub(super) async fn turn(
        &self,
        socket: &mut UpstreamSocket,
        client: &mut Session,
        request: Map<String, Value>,
    ) -> Result<Relayed, actix_ws::Closed> {
        let generate = request
            .get("generate")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        if !generate {
            // A prewarm: nothing to capture.
            return self
                .exchange(socket, client, Value::Object(request), None)
                .await;
        }
        let mut body = request.clone();
        body.remove("type");
        body.insert("stream".into(), Value::Bool(true));
        let body = Bytes::from(Value::Object(body).to_string());
        let Ok(head) = peek_head(&body) else {
            return Ok(Relayed::NotTurn);
        };
        let Some(parsed) = turn::parse(Protocol::OpenAiResponses, &body).await else {
            // An unfamiliar shape goes up as it came.
            return self
                .exchange(socket, client, Value::Object(request), None)
                .await;
        };
        if classify(self.headers, head.max_tokens, parsed.request()) != Class::Turn {
            return Ok(Relayed::NotTurn);
        }
        let target = Target {
            protocol: Protocol::OpenAiResponses,
            codex: self.codex,
            url: self.url,
            headers: self.headers,
            head: &head,
        };
        let turn = open_turn(self.state, &target, parsed, body.clone()).await;
        let planned = turn
            .as_ref()
            .filter(|turn| !turn.plan.amnesia)
            .and_then(|turn| turn.plan.body.clone());
        let message = match planned.and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok()) {
            Some(Value::Object(mut planned)) => {
                planned.insert("type".into(), Value::String("response.create".into()));
                Value::Object(planned)
            }
            _ => Value::Object(request),
        };
        let turn = turn.filter(|turn| !turn.plan.amnesia);
        self.exchange(socket, client, message, turn).await
    }

    /// Hands the reply to the turn's session and its id to the registry (the session's own
    /// notice of it comes later, from its mailbox); the turn then ends.
    fn complete(&self, turn: Option<turn::Turn>, reply: lore_proto::Reply) {
        let Some(turn) = turn else {
            return;
        };
        if let Some(id) = &reply.id {
            self.state.registry.do_send(ResponseIdIssued {
                session_id: turn.session_id.clone(),
                response_id: id.clone(),
            });
        }
        turn.completion.session.do_send(TurnCompleted {
            turn: turn.completion.turn,
            reply,
            plan_used: true,
        });
    }

    /// Sends one message up and relays the events back until the response ends; the reply goes
    /// to the turn's session.
    async fn exchange(
        &self,
        socket: &mut UpstreamSocket,
        client: &mut Session,
        message: Value,
        mut turn: Option<turn::Turn>,
    ) -> Result<Relayed, actix_ws::Closed> {
        if let Err(err) = socket
            .sink
            .send(Message::Text(message.to_string().into()))
            .await
        {
            warn!(error = %err, "the upstream WebSocket refused a message; bridging instead");
            return Ok(Relayed::UpstreamGone);
        }
        let mut accumulator = new_accumulator(Protocol::OpenAiResponses);
        let mut relayed_any = false;
        let outcome = loop {
            let Some(frame) = socket.stream.next().await else {
                break Relayed::UpstreamGone;
            };
            match frame {
                Ok(Frame::Text(bytes)) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    let kind = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|event| event["type"].as_str().map(str::to_string))
                        .unwrap_or_default();
                    accumulator.push(&SseEvent::new(kind.clone(), text.clone()));
                    let terminal = matches!(
                        kind.as_str(),
                        "response.completed" | "response.failed" | "response.incomplete" | "error"
                    );
                    if terminal {
                        // The session has the reply, and the registry its id, before the client
                        // can send the turn that continues it.
                        self.complete(turn.take(), accumulator.reply());
                    }
                    client.text(text).await?;
                    relayed_any = true;
                    if terminal {
                        break Relayed::Done;
                    }
                }
                Ok(Frame::Ping(bytes)) => {
                    if socket.sink.send(Message::Pong(bytes)).await.is_err() {
                        break Relayed::UpstreamGone;
                    }
                }
                Ok(Frame::Close(_)) => break Relayed::UpstreamGone,
                Ok(_) => {}
                Err(err) => {
                    warn!(error = %err, "the upstream WebSocket broke");
                    break Relayed::UpstreamGone;
                }
            }
        };
        // Cut short: what arrived is stored as a partial reply.
        self.complete(turn.take(), accumulator.reply());
        if !matches!(outcome, Relayed::UpstreamGone) {
            return Ok(outcome);
        }
        info!("the upstream WebSocket closed");
        if relayed_any {
            // Part of this response reached the client: it is not sent again another way.
            let error = serde_json::json!({"type": "error", "status": 502, "error": {"type": "api_error", "message": "the upstream WebSocket closed before the response ended"}});
            client.text(error.to_string()).await?;
            return Ok(Relayed::Done);
        }
        Ok(outcome)
    }
}
