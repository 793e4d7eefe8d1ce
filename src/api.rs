//! The management API (`/api/v1/*`, loopback only) and `/health`.
//!
//! Storage reads run on the blocking pool, never on the HTTP executor.

use actix_web::{HttpRequest, HttpResponse, web};
use lore_actors::ObserveRegistry;
use lore_storage::{SessionRecord, StoredMessage};
use serde_json::{Value, json};

use crate::gateway::access::refuse_management;
use crate::server::AppState;

/// `GET /health`: liveness and what this build can do.
pub async fn health(state: web::Data<AppState>) -> HttpResponse {
    let cards = match &state.cards {
        Some(library) => {
            let book = library.current();
            json!({
                "vault": state.config.cards_vault.as_ref().map(|path| path.display().to_string()),
                "loaded": book.cards.len(),
                "problems": book.snapshot.problems.len(),
            })
        }
        None => json!("off"),
    };
    let watch = state.watchdog.report();
    // Requests pass whatever this says (fail open); it says what is not working behind them.
    let capture = if watch.storage.ok { "on" } else { "failing" };
    HttpResponse::Ok().json(json!({
        "status": if watch.healthy() { "ok" } else { "degraded" },
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_ms": state.started_at.elapsed().as_millis() as u64,
        "capture": capture,
        "storage": watch.storage,
        "actors": watch.actors,
        "retention": state
            .retention
            .read()
            .map(|counters| json!(*counters))
            .unwrap_or(Value::Null),
        "cards": cards,
        "embeddings": state.embeddings.handle().status(),
        "vectors": vectorizer_counters(&state).await,
    }))
}

/// `GET /api/v1/sessions`: every session, most recent first.
pub async fn list_sessions(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    let store = state.store.clone();
    match web::block(move || store.list_sessions()).await {
        Ok(Ok(sessions)) => HttpResponse::Ok().json(json!({
            "sessions": sessions.iter().map(session_summary).collect::<Vec<_>>()
        })),
        Ok(Err(err)) => storage_error(&err.to_string()),
        Err(err) => storage_error(&err.to_string()),
    }
}

/// `GET /api/v1/sessions/{id}/messages`: the session's current conversation, in order.
pub async fn session_messages(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    let id = path.into_inner();
    let store = state.store.clone();
    let lookup = web::block(
        move || -> Result<Option<Value>, lore_storage::StorageError> {
            let Some(record) = store.load_session(&id)? else {
                return Ok(None);
            };
            let messages = store.session_messages(&record)?;
            let forks = store.session_forks(&record)?;
            let prompts = store.session_prompts(&record.id)?;
            Ok(Some(session_detail(&record, &forks, &messages, &prompts)))
        },
    )
    .await;
    match lookup {
        Ok(Ok(Some(detail))) => HttpResponse::Ok().json(detail),
        Ok(Ok(None)) => session_not_found(),
        Ok(Err(err)) => storage_error(&err.to_string()),
        Err(err) => storage_error(&err.to_string()),
    }
}

/// `GET /api/v1/actors`: the actors' counters.
pub async fn actors(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    let registry = match state.registry.send(ObserveRegistry).await {
        Ok(counters) => counters,
        Err(err) => return storage_error(&err.to_string()),
    };
    let indexer = match &state.indexer {
        Some(indexer) => indexer
            .send(lore_actors::indexer::Observe)
            .await
            .map(|counters| json!(counters))
            .unwrap_or(Value::Null),
        None => Value::Null,
    };
    let (distiller, curator) = memory_counters(&state).await;
    let (busy, unresolved) = state.board.in_flight();
    let usage = web::block({
        let store = state.store.clone();
        move || store.worker_usage()
    })
    .await
    .ok()
    .and_then(Result::ok)
    .unwrap_or_default();
    HttpResponse::Ok().json(json!({
        "session_registry": registry,
        "indexer": indexer,
        "vectorizer": vectorizer_counters(&state).await,
        "distiller": distiller,
        "curator": curator,
        "activity": {"sessions_in_flight": busy, "requests_unresolved": unresolved},
        "worker_usage": usage_json(&usage),
        "cost_tracker": crate::costs_api::tracker_counters(&state).await,
    }))
}

/// The Distiller's and the Curator's counters (null when the workers are off).
pub(crate) async fn memory_counters(state: &AppState) -> (Value, Value) {
    let Some(workers) = &state.memory else {
        return (Value::Null, Value::Null);
    };
    let distiller = workers
        .distiller
        .send(lore_actors::distiller::Observe)
        .await
        .map(|counters| json!(counters))
        .unwrap_or(Value::Null);
    let curator = workers
        .curator
        .send(lore_actors::curator::Observe)
        .await
        .map(|counters| json!(counters))
        .unwrap_or(Value::Null);
    (distiller, curator)
}

/// Worker usage per day and bucket, as JSON rows.
pub fn usage_json(usage: &[(String, String, lore_storage::memory::UsageTotals)]) -> Value {
    Value::Array(
        usage
            .iter()
            .map(|(day, bucket, totals)| {
                let mut row = json!(totals);
                row["day"] = json!(day);
                row["bucket"] = json!(bucket);
                row
            })
            .collect(),
    )
}

/// The vectorizer's counters and how many vectors are stored (null before the model loaded).
pub async fn vectorizer_counters(state: &AppState) -> Value {
    let Some(vectorizer) = state.embeddings.vectorizer() else {
        return Value::Null;
    };
    let mut counters = vectorizer
        .send(lore_actors::vectorizer::Observe)
        .await
        .map(|counters| json!(counters))
        .unwrap_or(Value::Null);
    if let Ok(stored) = state.embeddings.vectors.len() {
        counters["stored"] = json!(stored);
    }
    counters
}

/// The 404 of a session id that is not stored.
pub(crate) fn session_not_found() -> HttpResponse {
    HttpResponse::NotFound().json(json!({
        "error": {"type": "not_found", "message": "no session with this id; list sessions with GET /api/v1/sessions or `lore sessions`"}
    }))
}

/// The 500 of a storage failure.
pub(crate) fn storage_error(message: &str) -> HttpResponse {
    HttpResponse::InternalServerError()
        .json(json!({"error": {"type": "storage_error", "message": message}}))
}

/// The JSON summary of a session, shared by the API and the CLI.
pub fn session_summary(record: &SessionRecord) -> Value {
    json!({
        "id": record.id,
        "project": record.project,
        "project_provisional": record.project_provisional,
        "protocol": record.protocol,
        "model": record.model,
        "messages": record.path.iter().filter(|entry| entry.is_stored()).count(),
        "turns": record.turns,
        "forks": record.forks_seen(),
        "created_at_ms": record.created_at_ms,
        "updated_at_ms": record.updated_at_ms,
        "usage": record.usage,
        "context": crate::session_api::context_json(&record.context),
        "knowledge": crate::session_api::knowledge_json(record),
    })
}

/// The JSON of a session with its messages, shared by the API and the CLI.
/// A session's prompt versions in log order, each with the row that says from where it held.
pub type Prompts = Vec<(lore_storage::PromptUse, lore_storage::PromptVersion)>;

/// The JSON of one prompt version used by a session: from which `seq` of its log, for how many
/// turns, the system text and the tool definitions (as JSON) with their names.
pub fn prompt_json(row: &lore_storage::PromptUse, version: &lore_storage::PromptVersion) -> Value {
    let tools: Value = version
        .tools
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or(Value::Null);
    let names: Vec<&str> = tools
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| {
                    tool["name"]
                        .as_str()
                        .or_else(|| tool["function"]["name"].as_str())
                        .or_else(|| tool["type"].as_str())
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "hash": version.hash,
        "from_seq": row.from_seq,
        "turn": row.turn,
        "turns": row.turns,
        "first_used_ms": row.at_ms,
        "last_used_ms": row.last_ms,
        "system": version.system,
        "system_chars": version.system.as_deref().map_or(0, |s| s.chars().count()),
        "tool_count": version.tool_count,
        "tool_names": names,
        "tools": tools,
    })
}

pub fn session_detail(
    record: &SessionRecord,
    forks: &[lore_storage::ForkRecord],
    messages: &[StoredMessage],
    prompts: &[(lore_storage::PromptUse, lore_storage::PromptVersion)],
) -> Value {
    json!({
        "session": session_summary(record),
        "prompts": prompts.iter().map(|(row, version)| prompt_json(row, version)).collect::<Vec<_>>(),
        "forks": forks.iter().map(|fork| json!({
            "at_position": fork.at_position,
            "replaced_seqs": fork.replaced_seqs,
            "created_at_ms": fork.created_at_ms,
        })).collect::<Vec<_>>(),
        "messages": messages.iter().map(|stored| json!({
            "position": stored.position,
            "seq": stored.seq,
            "role": stored.message.role,
            "source": stored.source,
            "text": stored.message.text(),
            "parts": stored.message.parts,
            "model": stored.model,
            "usage": stored.usage,
            "partial": stored.partial,
            "created_at_ms": stored.created_at_ms,
        })).collect::<Vec<_>>(),
    })
}
