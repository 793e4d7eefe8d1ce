//! `GET /api/v1/sessions/{id}/memory`: what the memory workers made of one session — its
//! distillations (observation logs and consolidations, archived or not) and the Distiller's
//! cursors.

use actix_web::{HttpRequest, HttpResponse, web};
use lore_storage::memory::{DistillState, Distillation};
use serde_json::json;

use crate::api::{session_not_found, storage_error};
use crate::gateway::access::refuse_management;
use crate::server::AppState;

/// The JSON of one distillation.
pub fn distillation_json(d: &Distillation) -> serde_json::Value {
    json!({
        "id": d.doc_id(),
        "n": d.n,
        "generation": d.generation,
        "archived": d.archived,
        "source_messages": d.source_seqs.len(),
        "consumed": d.consumed,
        "source_tokens": d.source_tokens,
        "tokens": d.tokens,
        "model": d.model,
        "created_at_ms": d.created_at_ms,
        "observations": d.observations,
    })
}

/// The handler.
pub async fn session_memory(
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
        move || -> Result<Option<(DistillState, Vec<Distillation>)>, lore_storage::StorageError> {
            if store.load_session(&id)?.is_none() {
                return Ok(None);
            }
            Ok(Some((
                store.distill_state(&id)?,
                store.session_distillations(&id)?,
            )))
        },
    )
    .await;
    match lookup {
        Ok(Ok(Some((state, rows)))) => HttpResponse::Ok().json(json!({
            "distilled_through_seq": state.next_seq,
            "curated_through": state.curated_through_n,
            "rejected_messages": state.rejected,
            "distillations": rows.iter().map(distillation_json).collect::<Vec<_>>(),
        })),
        Ok(Ok(None)) => session_not_found(),
        Ok(Err(err)) => storage_error(&err.to_string()),
        Err(err) => storage_error(&err.to_string()),
    }
}
