//! The cost tracker's management API: `GET /api/v1/costs?days=N` (the report),
//! `POST /api/v1/costs/budget` (`{"daily_usd": 20}` or `{"daily_usd": null}`, with the header
//! `x-lore-request: 1`), and `GET /api/v1/sessions/{id}/costs`. Without a running tracker
//! (`LORE_COSTS=off`) the report and the session costs are read from the ledger on the blocking
//! pool, and the budget cannot be set.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use lore_actors::ActorError;
use lore_actors::costs::report::{self, QuotaStatus, ReportInputs};
use lore_actors::costs::throttle::rate_now;
use lore_actors::costs::{CostsQuery, CostsReport, SessionCost, SessionCosts, SetBudget};
use lore_storage::Store;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::costs_config::CostsConfig;
use crate::gateway::access::refuse_management;
use crate::server::AppState;

/// Days shown when the query names none.
const DEFAULT_DAYS: u32 = 7;
/// The most days one report shows.
const MAX_DAYS: u32 = 366;

/// `?days=`.
#[derive(Debug, Deserialize)]
pub struct DaysQuery {
    days: Option<u32>,
}

/// Reads `{"daily_usd": <number or null>}`, nothing else.
fn budget_body(body: &[u8]) -> Result<Option<f64>, String> {
    let shape =
        "the body must be {\"daily_usd\": <US dollars per UTC day, or null to remove the budget>}";
    let value: Value =
        serde_json::from_slice(body).map_err(|err| format!("{shape} (it is not JSON: {err})"))?;
    let Some(object) = value.as_object().filter(|o| o.len() == 1) else {
        return Err(format!("{shape}; got {value}"));
    };
    match object.get("daily_usd") {
        Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("{shape}; {n} is not a usable number")),
        _ => Err(format!("{shape}; got {value}")),
    }
}

fn error(status: StatusCode, kind: &str, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({"error": {"type": kind, "message": message}}))
}

fn actor_error(err: &ActorError) -> HttpResponse {
    match err {
        ActorError::Invalid(message) => error(StatusCode::BAD_REQUEST, "invalid_request", message),
        other => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "costs_unavailable",
            &other.to_string(),
        ),
    }
}

/// The report read from the ledger alone (no rate decay of a running tracker, no quota): what
/// `lore costs` prints when no gateway runs.
pub fn offline_report(
    store: &Store,
    config: &CostsConfig,
    days: u32,
) -> Result<CostsReport, ActorError> {
    let now_ms = config.settings.clock.now_ms();
    let inputs = ReportInputs {
        now_ms,
        days: days.clamp(1, MAX_DAYS),
        budget_env: config.settings.budget_env,
        rate_usd_per_hour: rate_now(store.cost_rate()?, now_ms),
        quota: QuotaStatus {
            enabled: config.enabled && config.settings.quota.enabled,
            ..Default::default()
        },
        tracker: None,
    };
    Ok(report::build(store, &inputs)?)
}

/// `GET /api/v1/costs?days=N`.
pub async fn costs(
    req: HttpRequest,
    query: web::Query<DaysQuery>,
    state: web::Data<AppState>,
) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    let days = query.days.unwrap_or(DEFAULT_DAYS).clamp(1, MAX_DAYS);
    let answer = match &state.costs {
        Some(costs) => costs
            .addr()
            .send(CostsQuery { days })
            .await
            .map_err(ActorError::from)
            .and_then(|result| result),
        None => {
            let (store, config) = (state.store.clone(), state.config.costs.clone());
            web::block(move || offline_report(&store, &config, days))
                .await
                .map_err(|err| ActorError::Mailbox(err.to_string()))
                .and_then(|result| result)
        }
    };
    match answer {
        Ok(report) => HttpResponse::Ok().json(report),
        Err(err) => actor_error(&err),
    }
}

/// `POST /api/v1/costs/budget` with `{"daily_usd": <dollars or null>}`.
pub async fn set_budget(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> HttpResponse {
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
    let daily_usd = match budget_body(&body) {
        Ok(daily_usd) => daily_usd,
        Err(message) => return error(StatusCode::BAD_REQUEST, "invalid_request", &message),
    };
    let Some(costs) = &state.costs else {
        return error(
            StatusCode::CONFLICT,
            "costs_off",
            "cost tracking is off (LORE_COSTS=off); unset it and restart the gateway to use a budget",
        );
    };
    let answer = costs
        .addr()
        .send(SetBudget { daily_usd })
        .await
        .map_err(ActorError::from)
        .and_then(|result| result);
    match answer {
        Ok(status) => {
            let note = match status.source.as_deref() {
                Some("LORE_DAILY_BUDGET") => Value::String(
                    "LORE_DAILY_BUDGET is set and wins over the stored budget; unset it to use this one".into(),
                ),
                _ => Value::Null,
            };
            HttpResponse::Ok().json(json!({"budget": status, "note": note}))
        }
        Err(err) => actor_error(&err),
    }
}

/// `GET /api/v1/sessions/{id}/costs`.
pub async fn session_costs(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    let session_id = path.into_inner();
    let answer = match &state.costs {
        Some(costs) => costs
            .addr()
            .send(SessionCost {
                session_id: session_id.clone(),
            })
            .await
            .map_err(ActorError::from)
            .and_then(|result| result),
        None => {
            let store = state.store.clone();
            let id = session_id.clone();
            web::block(move || -> Result<SessionCosts, ActorError> {
                Ok(SessionCosts::from_record(&id, store.session_costs(&id)?))
            })
            .await
            .map_err(|err| ActorError::Mailbox(err.to_string()))
            .and_then(|result| result)
        }
    };
    match answer {
        Ok(costs) if costs.found => HttpResponse::Ok().json(costs),
        Ok(_) => error(
            StatusCode::NOT_FOUND,
            "not_found",
            "no cost is recorded for this session id; list sessions with GET /api/v1/sessions",
        ),
        Err(err) => actor_error(&err),
    }
}

/// The tracker's counters for `/api/v1/actors` (null when it is off).
pub async fn tracker_counters(state: &AppState) -> Value {
    match &state.costs {
        Some(costs) => costs
            .addr()
            .send(lore_actors::costs::Observe)
            .await
            .map(|counters| json!(counters))
            .unwrap_or(Value::Null),
        None => Value::Null,
    }
}
