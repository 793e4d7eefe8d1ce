//! Worker calls: the gateway's own LLM requests (distillation, curation, query expansion),
//! recognised by a `User-Agent` that starts with `lore-worker/` and names its bucket in
//! trailing parentheses.
//!
//! They have their own FIFO of [`WorkerScript`]s (conversation [`crate::Script`]s are never
//! consumed by them, nor theirs by conversations), their own record ([`WorkerCallRecord`],
//! with the number of conversation requests in flight when each arrived), stay out of the
//! cache oracle, and, unscripted, get the deterministic answers of [`crate::worker_answers`].

use crate::script::{Ctx, Delivery, Reply, split_chunks};
use crate::server::{Protocol, Shared, lock, request_id_headers, respond, unix_now};
use crate::{anthropic, cache_oracle::PromptUsage, openai, responses, worker_answers};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use serde_json::Value;
use std::time::{Duration, Instant};

/// One scripted worker reply, consumed by exactly one worker call (FIFO).
#[derive(Clone, Debug)]
pub enum WorkerScript {
    /// Reply with this text.
    Text(String),
    /// A 200 reply whose text is empty.
    Empty,
    /// Answer with this status and JSON body (a 429 carries `retry-after: 1`).
    Error {
        /// HTTP status.
        status: u16,
        /// JSON body, sent verbatim.
        body: Value,
    },
    /// Wait before answering with this text.
    Slow {
        /// Pause before the response headers.
        delay: Duration,
        /// Reply text.
        text: String,
    },
}

/// One worker call as received.
#[derive(Clone, Debug)]
pub struct WorkerCallRecord {
    /// `distillation`, `curation`, `query_expansion` (the `User-Agent`'s parentheses).
    pub bucket: String,
    /// Request path.
    pub path: String,
    /// The request body (`Null` if it was not JSON).
    pub body: Value,
    /// Conversation (non-worker) requests whose response was not completely sent yet when
    /// this call arrived.
    pub conversation_in_flight: usize,
    /// When it arrived.
    pub received_at: Instant,
}

/// `Some(bucket)` when the request is a worker call (`User-Agent: lore-worker/… (bucket)`).
pub(crate) fn bucket_of(req: &HttpRequest) -> Option<String> {
    let agent = req.headers().get("user-agent")?.to_str().ok()?.trim();
    if !agent.starts_with("lore-worker/") {
        return None;
    }
    let bucket = agent
        .strip_suffix(')')
        .and_then(|head| head.rsplit_once('(').map(|(_, bucket)| bucket.trim()))
        .unwrap_or("");
    Some(bucket.to_string())
}

/// Answers one worker call in the request's protocol (JSON; SSE if it asked to stream).
pub(crate) async fn reply(
    proto: Protocol,
    req: &HttpRequest,
    bucket: &str,
    body: &[u8],
    n: u64,
    shared: &Shared,
    conversation_in_flight: usize,
) -> HttpResponse {
    let json_body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    if shared.settings.record {
        lock(&shared.worker_calls).push(WorkerCallRecord {
            bucket: bucket.to_string(),
            path: req.path().to_string(),
            body: json_body.clone(),
            conversation_in_flight,
            received_at: Instant::now(),
        });
    }
    let script = lock(&shared.worker_scripts).pop_front();
    let mut delivery = Delivery::default();
    let text = match script {
        Some(WorkerScript::Error { status, body }) => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut b = HttpResponse::build(status);
            for (k, v) in request_id_headers(proto, n) {
                b.insert_header((k, v));
            }
            if status == StatusCode::TOO_MANY_REQUESTS {
                b.insert_header(("retry-after", "1"));
            }
            return b.json(body);
        }
        Some(WorkerScript::Text(text)) => text,
        Some(WorkerScript::Empty) => String::new(),
        Some(WorkerScript::Slow { delay, text }) => {
            delivery.header_delay = delay;
            text
        }
        None => {
            let user = match proto {
                Protocol::Anthropic => anthropic::last_user_text(&json_body),
                Protocol::Chat => openai::last_user_text(&json_body),
                Protocol::Responses => responses::last_user_text(&json_body),
            };
            let user = user.unwrap_or_default();
            if bucket == "curation" && shared.settings.extractive_curator {
                crate::extractive_curator::answer(&user)
            } else {
                worker_answers::answer(bucket, &user)
            }
        }
    };
    let reply = Reply {
        text: Some(split_chunks(&text, 4)),
        ..Reply::default()
    };
    let input = (String::from_utf8_lossy(body).chars().count() as u64)
        .div_ceil(4)
        .max(1);
    let ctx = Ctx {
        n,
        model: json_body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("fake-model")
            .to_string(),
        created: unix_now(),
        usage: PromptUsage {
            input_tokens: input,
            cache_read: 0,
            cache_creation: 0,
            cache_creation_1h: 0,
            total: input,
        },
        request: json_body.clone(),
    };
    let stream = json_body.get("stream").and_then(Value::as_bool) == Some(true);
    if !delivery.header_delay.is_zero() {
        tokio::time::sleep(delivery.header_delay).await;
    }
    respond(proto, &reply, &ctx, delivery, stream).await
}
