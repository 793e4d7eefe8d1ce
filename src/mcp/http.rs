//! Streamable HTTP for `lore mcp --http`: `POST /mcp` on 127.0.0.1 only, every request
//! authenticated with `Authorization: Bearer <token>` (from `LORE_MCP_TOKEN`, or generated and
//! printed at start; there is no unauthenticated mode).
//!
//! Each `initialize` opens a session (`Mcp-Session-Id`): an rmcp server speaking the same
//! newline-delimited JSON-RPC as stdio over an in-memory pipe. A POSTed request is answered with
//! its response as `application/json`; notifications and responses get `202 Accepted`. `DELETE`
//! ends a session; there is no server-initiated stream, so `GET` is `405`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::http::{StatusCode, header};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use anyhow::Context;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use subtle::ConstantTimeEq;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, WriteHalf};
use tokio::sync::oneshot;

use super::{Book, CardServer};

/// How long a request may take before the client gets a 504.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// Largest accepted request body.
const MAX_BODY: usize = 4 * 1024 * 1024;

type Pending = Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>;

struct Session {
    input: tokio::sync::Mutex<WriteHalf<DuplexStream>>,
    pending: Pending,
}

struct State {
    book: Arc<Book>,
    token: String,
    port: u16,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

/// Serves the card tools over streamable HTTP on `127.0.0.1:port` until the process is stopped.
pub fn serve(vault: &Path, port: u16) -> anyhow::Result<()> {
    let token = match std::env::var("LORE_MCP_TOKEN") {
        Ok(token) if !token.trim().is_empty() => token.trim().to_owned(),
        _ => {
            let token = random_hex()?;
            eprintln!("lore mcp token (send as Authorization: Bearer <token>): {token}");
            token
        }
    };
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}; pass another --port"))?;
    let port = listener.local_addr()?.port();
    eprintln!("lore mcp listening on http://127.0.0.1:{port}/mcp");
    let state = web::Data::new(State {
        book: Arc::new(Book::new(vault)),
        token,
        port,
        sessions: Mutex::new(HashMap::new()),
    });
    actix_web::rt::System::new().block_on(async move {
        HttpServer::new(move || {
            App::new()
                .app_data(state.clone())
                .app_data(web::PayloadConfig::new(MAX_BODY))
                .route("/mcp", web::to(handle))
        })
        .workers(1)
        .shutdown_timeout(1)
        .listen(listener)?
        .run()
        .await
        .context("the MCP HTTP server failed")
    })
}

/// 32 random bytes from the OS, in hex.
fn random_hex() -> anyhow::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .context("cannot read /dev/urandom to make a token; set LORE_MCP_TOKEN")?;
    Ok(hex::encode(bytes))
}

fn error(status: StatusCode, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({
        "jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": message}
    }))
}

fn header_text<'a>(req: &'a HttpRequest, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Token, Host and Origin checks; `None` when the request may proceed.
fn refuse(req: &HttpRequest, state: &State) -> Option<HttpResponse> {
    let presented = header_text(req, "authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .trim();
    if !bool::from(presented.as_bytes().ct_eq(state.token.as_bytes())) {
        return Some(
            HttpResponse::Unauthorized()
                .insert_header((header::WWW_AUTHENTICATE, "Bearer"))
                .json(json!({"error": "send Authorization: Bearer <token> (LORE_MCP_TOKEN or the token lore mcp printed)"})),
        );
    }
    let local = |authority: &str| {
        [
            format!("127.0.0.1:{}", state.port),
            format!("localhost:{}", state.port),
        ]
        .iter()
        .any(|allowed| authority.eq_ignore_ascii_case(allowed))
    };
    if !header_text(req, "host").is_some_and(local) {
        return Some(error(
            StatusCode::FORBIDDEN,
            "Host must be 127.0.0.1 or localhost",
        ));
    }
    if let Some(origin) = header_text(req, "origin") {
        let authority = origin.strip_prefix("http://").unwrap_or("");
        if !local(authority) {
            return Some(error(
                StatusCode::FORBIDDEN,
                "cross-origin requests are refused",
            ));
        }
    }
    None
}

async fn handle(req: HttpRequest, body: web::Bytes, state: web::Data<State>) -> HttpResponse {
    if let Some(response) = refuse(&req, &state) {
        return response;
    }
    let session_id = header_text(&req, "mcp-session-id").map(str::to_owned);
    match *req.method() {
        actix_web::http::Method::POST => post(&state, session_id, &body).await,
        actix_web::http::Method::DELETE => {
            let removed = session_id.and_then(|id| lock(&state.sessions).remove(&id));
            match removed {
                Some(session) => {
                    // End of input ends the server, which ends the reader.
                    let _ = session.input.lock().await.shutdown().await;
                    HttpResponse::NoContent().finish()
                }
                None => error(StatusCode::NOT_FOUND, "unknown session"),
            }
        }
        _ => HttpResponse::MethodNotAllowed()
            .insert_header((header::ALLOW, "POST, DELETE"))
            .finish(),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

async fn post(state: &State, session_id: Option<String>, body: &[u8]) -> HttpResponse {
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "the body must be one JSON-RPC message",
        );
    };
    if !message.is_object() {
        return error(
            StatusCode::BAD_REQUEST,
            "send one JSON-RPC message per POST (no batches)",
        );
    }
    let (id, session) = if message["method"] == "initialize" {
        match open_session(state) {
            Ok(opened) => opened,
            Err(err) => return error(StatusCode::INTERNAL_SERVER_ERROR, &err.to_string()),
        }
    } else {
        let Some(id) = session_id else {
            return error(
                StatusCode::BAD_REQUEST,
                "missing Mcp-Session-Id; initialize first",
            );
        };
        let Some(session) = lock(&state.sessions).get(&id).cloned() else {
            return error(
                StatusCode::NOT_FOUND,
                "unknown or ended session; initialize again",
            );
        };
        (id, session)
    };
    let is_request = message.get("method").is_some() && message.get("id").is_some();
    let waiter = is_request.then(|| {
        let (sender, receiver) = oneshot::channel();
        lock(&session.pending).insert(message["id"].to_string(), sender);
        receiver
    });
    let mut line = message.to_string();
    line.push('\n');
    let written = session.input.lock().await.write_all(line.as_bytes()).await;
    if written.is_err() {
        lock(&state.sessions).remove(&id);
        return error(
            StatusCode::NOT_FOUND,
            "the session has ended; initialize again",
        );
    }
    let Some(receiver) = waiter else {
        return HttpResponse::Accepted()
            .insert_header(("Mcp-Session-Id", id))
            .finish();
    };
    match tokio::time::timeout(REQUEST_TIMEOUT, receiver).await {
        Ok(Ok(response)) => HttpResponse::Ok()
            .insert_header(("Mcp-Session-Id", id))
            .json(response),
        Ok(Err(_)) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the session ended before answering",
        ),
        Err(_) => error(StatusCode::GATEWAY_TIMEOUT, "no answer in time"),
    }
}

/// Starts an rmcp server on an in-memory pipe and a reader that routes its answers by id.
fn open_session(state: &State) -> anyhow::Result<(String, Arc<Session>)> {
    let id = random_hex()?;
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let server = CardServer::new(state.book.clone());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let (output, input) = tokio::io::split(client_end);
    let pending: Pending = Arc::default();
    let routes = pending.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(output).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            // Answers go to the waiting POST; server notifications have no stream to go to.
            if message.get("method").is_none()
                && let Some(sender) = lock(&routes).remove(&message["id"].to_string())
            {
                let _ = sender.send(message);
            }
        }
        lock(&routes).clear();
    });
    let session = Arc::new(Session {
        input: tokio::sync::Mutex::new(input),
        pending,
    });
    lock(&state.sessions).insert(id.clone(), session.clone());
    Ok((id, session))
}
