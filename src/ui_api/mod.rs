//! The management API behind the dashboard (`/api/v1/…`, JSON): every page's data, and the
//! writes the pages make. Errors are `{"error": code, "detail": message}`
//! ([`crate::dashboard::error::ApiError`]). The guard of the whole `/api/v1` scope
//! ([`crate::ui::guard`]) has already checked the peer, the `Host`, the `Origin` and, for
//! writes, `x-lore-request: 1`.
//!
//! - [`pages`]: the read side (overview, stats, projects, sessions, knowledge, entities, search,
//!   settings, worker usage, the costs page).
//! - [`writes`]: session delete and move, knowledge edit and scope, entity merge.
//! - [`cards`]: the card editor's endpoints.

pub mod cards;
pub mod pages;
pub mod writes;

use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::dashboard::error::ApiError;

/// The answer of a handler.
pub type ApiResult = Result<HttpResponse, ApiError>;

/// 200 with a JSON body, never cached.
pub fn ok<T: Serialize>(value: &T) -> ApiResult {
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-store"))
        .json(value))
}

/// A JSON body, or a 400 that says what was wrong with it.
pub fn parse_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|err| {
        ApiError::new(
            actix_web::http::StatusCode::BAD_REQUEST,
            "bad_json",
            format!("the body is not the JSON this endpoint takes: {err}"),
        )
    })
}

/// Registers the routes, relative to `/api/v1`. Registered before the older routes of the
/// scope, so `/knowledge/browse` is not taken for a knowledge id.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/overview", web::get().to(pages::overview))
        .route("/stats", web::get().to(pages::stats))
        .route("/projects", web::get().to(pages::projects))
        .route("/projects/{id}", web::get().to(pages::project))
        .route("/sessions/{id}/conversation", web::get().to(pages::session))
        .route("/sessions/{id}/turns", web::get().to(pages::session_turns))
        .route("/sessions/{id}", web::delete().to(writes::delete_session))
        .route("/sessions/{id}/move", web::post().to(writes::move_session))
        .route("/knowledge/browse", web::get().to(pages::knowledge))
        .route(
            "/knowledge/{id}/history",
            web::get().to(pages::knowledge_entry),
        )
        .route("/knowledge/{id}", web::patch().to(writes::edit_knowledge))
        .route(
            "/knowledge/{id}/scope",
            web::post().to(writes::scope_knowledge),
        )
        .route("/entities", web::get().to(pages::entities))
        .route("/entities/merge", web::post().to(writes::merge_entities))
        .route("/entities/{id}", web::get().to(pages::entity))
        .route("/search", web::get().to(pages::search))
        .route("/settings", web::get().to(pages::settings))
        .route("/worker-usage", web::get().to(pages::worker_usage))
        .route("/costs/page", web::get().to(pages::costs_page))
        .route("/cards/kinds", web::get().to(cards::kinds))
        .route("/cards", web::get().to(cards::list))
        .route("/cards", web::post().to(cards::create))
        .route("/cards/try", web::post().to(cards::try_sentence))
        .route("/cards/check", web::get().to(cards::check))
        .route("/cards/recent", web::get().to(cards::recent))
        .route("/cards/export", web::get().to(cards::export))
        .route("/cards/import", web::post().to(cards::import))
        .route("/cards/{kind}/{key}", web::get().to(cards::show))
        .route("/cards/{kind}/{key}", web::put().to(cards::update))
        .route("/cards/{kind}/{key}", web::delete().to(cards::archive))
        .route(
            "/cards/{kind}/{key}/restore",
            web::post().to(cards::restore),
        );
}
