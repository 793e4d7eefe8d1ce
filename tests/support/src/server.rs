//! The actix-web server: routing, request recording, script dispatch and response
//! building (JSON or paced SSE) for all protocols.

use crate::cache_oracle::{CacheKey, CacheObservation, CacheOracle, PromptUsage};
use crate::recording::RecordedRequest;
use crate::script::{self, Action, Ctx, Delivery, Reply, Script, Settings};
use crate::{anthropic, openai, responses, sse};
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
enum Protocol {
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

async fn handle(
    req: HttpRequest,
    payload: web::Payload,
    shared: web::Data<Shared>,
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
        });
    }
    if let Some(proto) = llm_protocol(&method, req.path()) {
        let body = decoded(&req, &raw).await;
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

fn request_id_headers(proto: Protocol, n: u64) -> Vec<(&'static str, String)> {
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

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `[[call:NAME]]` or `[[call:NAME {json arguments}]]` in the text of the request's final
/// message, a user message → a call of tool NAME (fixed arguments when none are given). Several
/// directives make parallel calls. Only the final message's own text counts (never a tool
/// result), so the follow-up carrying the tool result gets an ordinary text reply.
fn tool_call_directive(body: &Value, n: u64) -> Option<Script> {
    let last = match body.get("messages").or_else(|| body.get("input"))? {
        Value::Array(items) => items.last()?,
        other => other,
    };
    let is_user = last.is_string() || last.get("role").and_then(Value::as_str) == Some("user");
    if !is_user {
        return None;
    }
    let text = own_text(last);
    let mut calls = Vec::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("[[call:") {
        let after = &rest[start + "[[call:".len()..];
        let Some(end) = after.find("]]") else { break };
        let directive = after[..end].trim();
        rest = &after[end + 2..];
        let (name, arguments) = match directive.split_once(char::is_whitespace) {
            Some((name, json)) => (name, serde_json::from_str(json.trim()).ok()),
            None => (directive, None),
        };
        if name.is_empty() || name.len() > 64 {
            continue;
        }
        let arguments =
            arguments.unwrap_or_else(|| serde_json::json!({"requested_by": "directive", "n": n}));
        let id = if calls.is_empty() {
            format!("call_fake_{n}")
        } else {
            format!("call_fake_{n}_{}", calls.len())
        };
        calls.push((name.to_string(), id, arguments));
    }
    match calls.len() {
        0 => None,
        1 => calls.pop().map(|(name, id, arguments)| Script::ToolCall {
            name,
            id,
            arguments,
            text: None,
        }),
        _ => Some(Script::ToolCalls { calls, text: None }),
    }
}

/// Characters of a tool result the default reply echoes.
const TOOL_ECHO_CHARS: usize = 2000;

/// The content of the tool result that ends the request, if it ends with one: an OpenAI `tool`
/// message, an Anthropic user message of `tool_result` blocks, or a Responses
/// `function_call_output` item.
fn last_tool_result(body: &Value) -> Option<String> {
    let last = body
        .get("messages")
        .or_else(|| body.get("input"))?
        .as_array()?
        .last()?;
    if last.get("type").and_then(Value::as_str) == Some("function_call_output") {
        return last
            .get("output")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if last.get("role").and_then(Value::as_str) == Some("tool") {
        return Some(own_text(last));
    }
    let blocks = last.get("content")?.as_array()?;
    let result = blocks
        .iter()
        .find(|block| block.get("type").and_then(Value::as_str) == Some("tool_result"))?;
    Some(match result.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(content @ Value::Array(_)) => own_text(&serde_json::json!({"content": content})),
        _ => String::new(),
    })
}

/// The text a message itself carries: a plain string, or its text blocks (never tool results).
fn own_text(message: &Value) -> String {
    let content = match message {
        Value::String(text) => return text.clone(),
        other => other.get("content"),
    };
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|block| {
                matches!(
                    block.get("type").and_then(Value::as_str),
                    Some("text" | "input_text")
                )
            })
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
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

async fn sleep(d: Duration) {
    if !d.is_zero() {
        tokio::time::sleep(d).await;
    }
}

async fn respond(
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
