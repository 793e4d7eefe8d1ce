//! One session as the management API shows it: `GET /api/v1/sessions/{id}` (its summary and
//! what its context manager is doing), and the JSON of that context state, which the session
//! list, `lore sessions` and `lore status` show too.

use actix_web::{HttpRequest, HttpResponse, web};
use lore_storage::{ContextRecord, SessionRecord};
use serde_json::{Value, json};

use crate::api::{session_not_found, session_summary, storage_error};
use crate::gateway::access::refuse_management;
use crate::server::AppState;

/// The context manager's state of a session: layer, floor, cap, calibration, the latest
/// estimate against what the upstream counted, cache reads and busts, and why.
pub fn context_json(context: &ContextRecord) -> Value {
    let read_share = if context.total_input > 0 {
        context.total_cache_read as f64 / context.total_input as f64
    } else {
        0.0
    };
    json!({
        "layer": context.last_layer,
        "floor": context.force_min_layer,
        "layer0_cap_tokens": context.last_cap,
        "calibrated": context.calibrated,
        "overhead_tokens": context.overhead.round() as u64,
        "last_estimate_tokens": context.last_total_estimate,
        "last_actual_input_tokens": context.last_actual_input,
        "last_cache_read_tokens": context.last_cache_read,
        "last_cache_write_tokens": context.last_cache_write,
        "cache_read_share": (read_share * 1000.0).round() / 1000.0,
        "busts": context.busts,
        "consecutive_busts": context.consecutive_busts,
        "conversation_ttl": if context.ttl_1h { "1h" } else { "5m" },
        "pinned_window": context.window_start.is_some(),
        "window_budget_tokens": context.window_budget,
        "prefix_logs": context.prefix_logs.len(),
        "replaced_outputs": context.stripped_calls.len() + context.duplicate_calls.len(),
        "turns_planned": context.turns_planned,
        "layer_changes": context.layer_changes,
        "reason": context.last_reason,
        "provider_managed": context.provider_managed,
    })
}

/// What long-term knowledge the session's prompt carries: system[1], system[2], the deltas.
pub fn knowledge_json(record: &SessionRecord) -> Value {
    let ltm = &record.ltm;
    let deltas = ltm.deltas.len()
        + record
            .ledger
            .iter()
            .filter(|entry| entry.kind == lore_storage::InsertionKind::Delta)
            .count();
    json!({
        "baseline": ltm.stable.as_deref().is_some_and(|text| !text.is_empty()),
        "baseline_tokens": ltm.stable.as_deref().map_or(0, |text| text.len().div_ceil(4)),
        "pinned": ltm.pinned.as_deref().is_some_and(|text| !text.is_empty()),
        "pinned_tokens": ltm.pinned.as_deref().map_or(0, |text| text.len().div_ceil(4)),
        "entries_shown": ltm.keys.len(),
        "deltas": deltas,
        "pending": ltm.pending.len(),
        "searched": ltm.epoch > 0 || ltm.pinned.is_some(),
    })
}

/// `GET /api/v1/sessions/{id}`.
pub async fn show(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    let id = path.into_inner();
    let store = state.store.clone();
    match web::block(move || store.load_session(&id)).await {
        Ok(Ok(Some(record))) => HttpResponse::Ok().json(session_summary(&record)),
        Ok(Ok(None)) => session_not_found(),
        Ok(Err(err)) => storage_error(&err.to_string()),
        Err(err) => storage_error(&err.to_string()),
    }
}
