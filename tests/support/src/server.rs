//! The actix-web server: routing, request recording, script dispatch and response
//! building (JSON or paced SSE) for all protocols.

use crate::cache_oracle::{CacheKey, CacheObservation, CacheOracle, PromptUsage};
use crate::directives::{TOOL_ECHO_CHARS, last_tool_result, tool_call_directive};
use crate::inflight::{Guarded, InFlight};
use crate::recording::RecordedRequest;
use crate::script::{self, Action, Ctx, Delivery, Reply, Script, Settings};
use crate::worker::{self, WorkerCallRecord, WorkerScript};
use crate::{anthropic, openai, responses, sse};
use actix_web::body::BoxBody;
use actix_web::http::StatusCode;
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// State shared between the handle and the server workers.
#[derive(Debug)]
pub(crate) struct Shared {
    pub settings: Settings,
    pub scripts: Mutex<VecDeque<Script>>,
    pub requests: Mutex<Vec<RecordedRequest>>,
    pub observations: Mutex<Vec<CacheObservation>>,
    pub oracle: Mutex<CacheOracle>,
    /// Worker calls' own script queue.
    pub worker_scripts: Mutex<VecDeque<WorkerScript>>,
    pub worker_calls: Mutex<Vec<WorkerCallRecord>>,
    /// Conversation (non-worker) requests whose response is not completely sent.
    pub in_flight: InFlight,
    /// Prompts refused as too long: (model, tokens, limit).
    pub overflows: Mutex<Vec<(String, u64, u64)>>,
    /// The OAuth usage endpoint.
    pub quota: crate::quota::FakeQuota,
    counter: AtomicU64,
}

/// Locks, ignoring poisoning (a panicking test thread must not cascade).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    pub fn new(settings: Settings) -> Shared {
        Shared {
            settings,
            scripts: Mutex::new(VecDeque::new()),
            requests: Mutex::new(Vec::new()),
            observations: Mutex::new(Vec::new()),
            oracle: Mutex::new(CacheOracle::new()),
            worker_scripts: Mutex::new(VecDeque::new()),
            worker_calls: Mutex::new(Vec::new()),
            in_flight: InFlight::default(),
            overflows: Mutex::new(Vec::new()),
            quota: crate::quota::FakeQuota::default(),
            counter: AtomicU64::new(0),
        }
    }
}

/// Options for binding a server.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Interface to bind.
    pub host: String,
    /// Port (0 = ephemeral).
    pub port: u16,
    /// actix worker threads.
    pub workers: usize,
    /// Install SIGINT/SIGTERM handlers (binary only).
    pub signals: bool,
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            host: "127.0.0.1".into(),
            port: 0,
            workers: 1,
            signals: false,
        }
    }
}

/// Binds the server (must be called inside an actix System) and returns it with its address.
pub(crate) fn bind(
    shared: web::Data<Shared>,
    opts: &ServeOptions,
) -> std::io::Result<(actix_web::dev::Server, SocketAddr)> {
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(shared.clone())
            .default_service(web::to(handle))
    })
    .workers(opts.workers.max(1))
    .client_request_timeout(Duration::from_secs(60))
    .keep_alive(Duration::from_secs(75))
    .shutdown_timeout(1);
    if !opts.signals {
        server = server.disable_signals();
    }
    let server = server.bind((opts.host.as_str(), opts.port))?;
    let addr = server
        .addrs()
        .first()
        .copied()
        .ok_or_else(|| std::io::Error::other("no bound address"))?;
    Ok((server.run(), addr))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Anthropic,
    Chat,
    Responses,
}

fn llm_protocol(method: &str, path: &str) -> Option<Protocol> {
    if method != "POST" {
        return None;
    }
    match path {
        "/v1/messages" => Some(Protocol::Anthropic),
        "/v1/chat/completions" | "/chat/completions" => Some(Protocol::Chat),
        "/v1/responses" | "/backend-api/codex/responses" => Some(Protocol::Responses),
        _ => None,
    }
}

async fn read_body(mut payload: web::Payload) -> Result<Bytes, actix_web::Error> {
    let mut buf = BytesMut::new();
    while let Some(chunk) = payload.next().await {
        buf.extend_from_slice(&chunk?);
    }
    Ok(buf.freeze())
}

/// Decodes a `content-encoding`d body for parsing (the recording keeps the raw bytes).
async fn decoded(req: &HttpRequest, raw: &Bytes) -> Bytes {
    let Some(enc) = req.headers().get("content-encoding") else {
        return raw.clone();
    };
    if enc.as_bytes().eq_ignore_ascii_case(b"identity") {
        return raw.clone();
    }
    let input =
        futures_util::stream::iter(vec![Ok::<_, actix_web::error::PayloadError>(raw.clone())]);
    let mut dec = actix_web::dev::Decompress::from_headers(input, req.headers());
    let mut out = BytesMut::new();
    while let Some(chunk) = dec.next().await {
        match chunk {
            Ok(c) => out.extend_from_slice(&c),
            Err(_) => return raw.clone(),
        }
    }
    out.freeze()
}

/// Counts a conversation request in flight until its response body has been sent (or
/// dropped); worker calls are not counted.
async fn handle(
    req: HttpRequest,
    payload: web::Payload,
    shared: web::Data<Shared>,
) -> HttpResponse {
    let bucket = worker::bucket_of(&req);
    if bucket.is_some() {
        let in_flight = shared.in_flight.count();
        return dispatch(req, payload, shared, bucket, in_flight).await;
    }
    let guard = shared.in_flight.enter();
    dispatch(req, payload, shared, None, 0)
        .await
        .map_body(|_, body| BoxBody::new(Guarded::new(body, guard)))
}

async fn dispatch(
    req: HttpRequest,
    payload: web::Payload,
    shared: web::Data<Shared>,
    worker_bucket: Option<String>,
    conversation_in_flight: usize,
) -> HttpResponse {
    let raw = match read_body(payload).await {
        Ok(b) => b,
        Err(e) => return HttpResponse::BadRequest().body(format!("body read error: {e}")),
    };
    let n = shared.counter.fetch_add(1, Ordering::SeqCst) + 1;
    let method = req.method().as_str().to_string();
    let path_q = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| req.path().to_string());
    if shared.settings.record {
        let headers = req
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        lock(&shared.requests).push(RecordedRequest {
            method: method.clone(),
            path: path_q.clone(),
            headers,
            body: raw.clone(),
            received_at: SystemTime::now(),
        });
    }
    if let Some(response) = shared.quota.handle(&req) {
        return response;
    }
    if let Some(proto) = llm_protocol(&method, req.path()) {
        let body = decoded(&req, &raw).await;
        if let Some(bucket) = worker_bucket {
            let (bucket, in_flight) = (bucket.as_str(), conversation_in_flight);
            return worker::reply(proto, &req, bucket, &body, n, &shared, in_flight).await;
        }
        return llm(proto, &req, &body, n, &shared).await;
    }
    if method == "GET" && req.path() == "/v1/models" {
        let v = if req.headers().contains_key("anthropic-version") {
            anthropic::models()
        } else {
            openai::models()
        };
        return HttpResponse::Ok().json(v);
    }
    HttpResponse::Ok().json(json!({"echo": true, "method": method, "path": path_q}))
}

fn header(req: &HttpRequest, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

pub(crate) fn request_id_headers(proto: Protocol, n: u64) -> Vec<(&'static str, String)> {
    let id = format!("req_fake_{n}");
    match proto {
        Protocol::Anthropic => vec![
            ("request-id", id),
            ("anthropic-ratelimit-requests-remaining", "99".into()),
        ],
        Protocol::Chat | Protocol::Responses => vec![("x-request-id", id)],
    }
}

fn bad_request(proto: Protocol, n: u64, msg: String) -> HttpResponse {
    let body = match proto {
        Protocol::Anthropic => json!({
            "type": "error",
            "error": {"type": "invalid_request_error", "message": msg},
        }),
        _ => json!({
            "error": {"message": msg, "type": "invalid_request_error", "param": null, "code": null},
        }),
    };
    let mut b = HttpResponse::BadRequest();
    for (k, v) in request_id_headers(proto, n) {
        b.insert_header((k, v));
    }
    b.json(body)
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

async fn llm(
    proto: Protocol,
    req: &HttpRequest,
    body: &Bytes,
    n: u64,
    shared: &Shared,
) -> HttpResponse {
    let json_body: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return bad_request(proto, n, format!("fake upstream: body is not JSON: {e}")),
    };
    // Unpaired tool calls and results get the provider's own refusal.
    if let Err(complaint) = crate::pairing::check(proto, &json_body) {
        return bad_request(proto, n, complaint);
    }
    // Over the model's window: the provider's own refusal, nothing cached, no script used.
    if let Some(refusal) = refuse_over_window(proto, req, &json_body, n, shared) {
        return refusal;
    }
    let next = lock(&shared.scripts).pop_front();
    let last_user = match proto {
        Protocol::Anthropic => anthropic::last_user_text(&json_body),
        Protocol::Chat => openai::last_user_text(&json_body),
        Protocol::Responses => responses::last_user_text(&json_body),
    };
    // Unscripted clients (the Python SDK end-to-end test, the binary) ask for a tool call by
    // writing `[[call:NAME]]` in their message.
    let next = next.or_else(|| tool_call_directive(&json_body, n));
    // After a tool result the default reply echoes it, so tests can see what the model got.
    let text = match last_tool_result(&json_body) {
        Some(result) if shared.settings.default_text.is_none() => {
            let result: String = result.chars().take(TOOL_ECHO_CHARS).collect();
            format!("ok: tool said: {result}")
        }
        _ => script::default_text(&shared.settings, last_user),
    };
    let action = script::plan(next, &text, &shared.settings);
    let commit = matches!(action, Action::Reply(..));
    let model = json_body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake-model")
        .to_string();
    let credential = header(req, "x-api-key")
        .or_else(|| header(req, "authorization"))
        .unwrap_or_default();
    let key: CacheKey = (credential, model.clone());
    let usage: PromptUsage = {
        let mut oracle = lock(&shared.oracle);
        match proto {
            Protocol::Anthropic => oracle.anthropic(&key, &json_body, commit),
            Protocol::Chat => oracle.openai_chat(&key, &json_body, commit),
            Protocol::Responses => oracle.openai_responses(&key, &json_body, commit),
        }
    };
    if shared.settings.record {
        lock(&shared.observations).push(CacheObservation {
            path: req.path().to_string(),
            input_tokens: usage.input_tokens,
            cache_read: usage.cache_read,
            cache_creation: usage.cache_creation,
            cache_creation_1h: usage.cache_creation_1h,
        });
    }
    let stream = json_body.get("stream").and_then(Value::as_bool) == Some(true);
    let ctx = Ctx {
        n,
        model,
        created: unix_now(),
        usage,
        request: json_body,
    };
    match action {
        Action::Error {
            header_delay,
            status,
            body,
            headers,
        } => {
            sleep(header_delay).await;
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut b = HttpResponse::build(status);
            for (k, v) in request_id_headers(proto, n) {
                b.insert_header((k, v));
            }
            // Scripted headers replace the defaults of the same name.
            for (k, v) in headers {
                b.insert_header((k, v));
            }
            b.json(body)
        }
        Action::Reply(reply, delivery) => {
            sleep(delivery.header_delay).await;
            respond(proto, &reply, &ctx, delivery, stream).await
        }
    }
}

/// The provider's "too long" answer when the prompt is over its model's window.
fn refuse_over_window(
    proto: Protocol,
    req: &HttpRequest,
    json_body: &Value,
    n: u64,
    shared: &Shared,
) -> Option<HttpResponse> {
    let model = json_body
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake-model");
    let limit = crate::context_limit::limit_for(&shared.settings.context_limits, model)?;
    let credential = header(req, "x-api-key")
        .or_else(|| header(req, "authorization"))
        .unwrap_or_default();
    let key: CacheKey = (credential, model.to_string());
    let total = {
        let mut oracle = lock(&shared.oracle);
        match proto {
            Protocol::Anthropic => oracle.anthropic(&key, json_body, false),
            Protocol::Chat => oracle.openai_chat(&key, json_body, false),
            Protocol::Responses => oracle.openai_responses(&key, json_body, false),
        }
        .total
    };
    if total <= limit {
        return None;
    }
    if shared.settings.record {
        lock(&shared.overflows).push((model.to_string(), total, limit));
    }
    Some(crate::context_limit::too_long(proto, n, total, limit))
}

async fn sleep(d: Duration) {
    if !d.is_zero() {
        tokio::time::sleep(d).await;
    }
}

pub(crate) async fn respond(
    proto: Protocol,
    reply: &Reply,
    ctx: &Ctx,
    delivery: Delivery,
    stream: bool,
) -> HttpResponse {
    let mut b = HttpResponse::Ok();
    for (k, v) in request_id_headers(proto, ctx.n) {
        b.insert_header((k, v));
    }
    if stream {
        let frames = match proto {
            Protocol::Anthropic => anthropic::events(reply, ctx),
            Protocol::Chat => openai::events(reply, ctx),
            Protocol::Responses => responses::events(reply, ctx),
        };
        return b
            .content_type("text/event-stream")
            .insert_header(("cache-control", "no-cache"))
            .streaming(sse::paced(frames, delivery));
    }
    let v = match proto {
        Protocol::Anthropic => anthropic::json(reply, ctx),
        Protocol::Chat => openai::json(reply, ctx),
        Protocol::Responses => responses::json(reply, ctx),
    };
    let bytes = Bytes::from(serde_json::to_vec(&v).unwrap_or_default());
    // Pacing faults on a non-streamed request: stall delays the whole body, a broken
    // stream sends half the body and aborts.
    if let Some((_, d)) = delivery.stall {
        sleep(d).await;
    }
    if let Some(interval) = delivery.delta_interval {
        let deltas = reply.text.as_ref().map_or(0, Vec::len) as u32;
        sleep(interval * deltas).await;
    }
    b.content_type("application/json");
    if delivery.abort_after.is_some() {
        return b.streaming(sse::truncated(bytes));
    }
    b.body(bytes)
}
