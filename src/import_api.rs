//! `POST /api/v1/import[?dry_run=1]`: sessions read from a harness's transcripts (`lore
//! import`), written as ordinary sessions while the gateway owns the database.
//!
//! Body: `{"sessions": [ImportSession, …]}`. Each session is written (or, in a dry run, only
//! measured) idempotently by `Store::import_session`, its new messages go to the index (and from
//! there to the embedder), and, when the memory workers have a route of their own
//! (`LORE_WORKER_UPSTREAM` with `LORE_WORKER_API_KEY`; a transcript holds no credential), it is
//! put on the activity board so the Distiller distils it once the idle timeout has passed.

use actix_web::http::header::HeaderMap;
use actix_web::{HttpRequest, HttpResponse, web};
use lore_actors::indexer::{IndexDocs, message_doc};
use lore_storage::{ImportOutcome, ImportSession, ImportStatus};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::gateway::access::refuse_management;
use crate::gateway::worker_route::worker_route;
use crate::server::AppState;

/// The body of an import.
#[derive(Debug, Deserialize)]
pub struct ImportBody {
    /// The sessions.
    pub sessions: Vec<ImportSession>,
}

/// The query of an import.
#[derive(Debug, Deserialize)]
pub struct ImportQuery {
    /// Measure only.
    #[serde(default)]
    pub dry_run: Option<String>,
}

fn error(status: actix_web::http::StatusCode, kind: &str, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({"error": {"type": kind, "message": message}}))
}

/// The JSON of one outcome (also printed by the CLI when it writes the store itself).
pub fn outcome_json(session: &ImportSession, outcome: &ImportOutcome) -> Value {
    json!({
        "harness": session.harness,
        "external_id": session.external_id,
        "project": session.project,
        "status": outcome.status,
        "session_id": outcome.session_id,
        "added": outcome.added_count,
    })
}

/// Whether the workers can distil imported sessions, and why not.
pub fn distill_note(state: &AppState) -> (bool, &'static str) {
    let memory = &state.config.memory;
    if state.memory.is_none() || !memory.enabled {
        return (false, "memory workers are off (LORE_MEMORY=off)");
    }
    match &memory.upstream {
        Some(upstream) if upstream.api_key.is_some() => (
            true,
            "queued for distillation once quiet for LORE_IDLE_TIMEOUT",
        ),
        _ => (
            false,
            "not distilled: a transcript holds no credential; set LORE_WORKER_UPSTREAM and LORE_WORKER_API_KEY on the gateway and import again",
        ),
    }
}

/// The handler.
pub async fn import(
    req: HttpRequest,
    query: web::Query<ImportQuery>,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> HttpResponse {
    use actix_web::http::StatusCode;
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    if req.headers().get("x-lore-request").is_none() {
        return error(
            StatusCode::FORBIDDEN,
            "forbidden",
            "send the header x-lore-request: 1 with management writes",
        );
    }
    let dry_run = query
        .dry_run
        .as_deref()
        .is_some_and(|v| matches!(v, "1" | "true" | "yes"));
    let parsed: ImportBody = match serde_json::from_slice(&body) {
        Ok(parsed) => parsed,
        Err(err) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                &format!(
                    "the body is not an import ({err}); send {{\"sessions\": [...]}} as `lore import` does"
                ),
            );
        }
    };
    let store = state.store.clone();
    let written = web::block(move || {
        parsed
            .sessions
            .into_iter()
            .map(|session| {
                let outcome = store.import_session(&session, dry_run);
                (session, outcome)
            })
            .collect::<Vec<_>>()
    })
    .await;
    let Ok(written) = written else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "storage_error",
            "the blocking pool failed",
        );
    };
    let (distilling, note) = distill_note(&state);
    let mut results = Vec::new();
    for (session, outcome) in written {
        match outcome {
            Ok(outcome) => {
                if !outcome.added.is_empty()
                    && let Some(indexer) = &state.indexer
                {
                    let project = session.project.clone().unwrap_or_default();
                    indexer.do_send(IndexDocs {
                        docs: outcome
                            .added
                            .iter()
                            .map(|stored| message_doc(stored, &project))
                            .collect(),
                    });
                }
                if !dry_run
                    && distilling
                    && outcome.status != ImportStatus::Empty
                    && let (Some(id), Some(upstream)) =
                        (&outcome.session_id, &state.config.memory.upstream)
                    && let Some(route) = worker_route(
                        &state.config.memory,
                        session.protocol,
                        false,
                        &upstream.url,
                        &HeaderMap::new(),
                        &[],
                        session.model.as_deref(),
                    )
                {
                    state.board.adopt(id, route);
                }
                results.push(outcome_json(&session, &outcome));
            }
            Err(err) => results.push(json!({
                "harness": session.harness,
                "external_id": session.external_id,
                "status": "failed",
                "error": err.to_string(),
            })),
        }
    }
    HttpResponse::Ok().json(json!({
        "dry_run": dry_run,
        "results": results,
        "distillation": {"queued": distilling && !dry_run, "note": note},
    }))
}
