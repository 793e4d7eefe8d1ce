//! The read side of the management API: the data of every dashboard page.

use actix_web::web;

use super::{ApiResult, ok};
use crate::dashboard::error::blocking;
use crate::dashboard::paging::PageQuery;
use crate::dashboard::{
    costs, entities, knowledge, overview, projects, search, sessions, settings,
};
use crate::server::AppState;

/// `GET /api/v1/overview`.
pub async fn overview(state: web::Data<AppState>) -> ApiResult {
    ok(&overview::load(&state).await?)
}

/// `GET /api/v1/stats`.
pub async fn stats(state: web::Data<AppState>) -> ApiResult {
    ok(&overview::stats(&state).await?)
}

/// `GET /api/v1/projects`.
pub async fn projects(state: web::Data<AppState>) -> ApiResult {
    let store = state.store.clone();
    let rows = blocking(move || {
        Ok(projects::list(
            &store.session_summaries()?,
            &store.all_knowledge()?,
        ))
    })
    .await?;
    ok(&serde_json::json!({"projects": rows}))
}

/// `GET /api/v1/projects/{id}?offset=&limit=` (an id or `?path=`-style path as the id).
pub async fn project(
    path: web::Path<String>,
    page: web::Query<PageQuery>,
    state: web::Data<AppState>,
) -> ApiResult {
    let store = state.store.clone();
    let id = path.into_inner();
    let page = page.into_inner();
    ok(&blocking(move || projects::detail(&store, &id, page)).await?)
}

/// `GET /api/v1/sessions/{id}/conversation?offset=&limit=`.
pub async fn session(
    path: web::Path<String>,
    page: web::Query<PageQuery>,
    state: web::Data<AppState>,
) -> ApiResult {
    let store = state.store.clone();
    let id = path.into_inner();
    let page = page.into_inner();
    let catalogue = state.config.context.catalogue.clone();
    ok(&blocking(move || sessions::view(&store, &catalogue, &id, page, None)).await?)
}

/// `GET /api/v1/sessions/{id}/turns`.
pub async fn session_turns(path: web::Path<String>, state: web::Data<AppState>) -> ApiResult {
    let store = state.store.clone();
    let id = path.into_inner();
    let catalogue = state.config.context.catalogue.clone();
    let turns = blocking(move || sessions::turns(&store, &catalogue, &id)).await?;
    ok(&serde_json::json!({"turns": turns}))
}

/// `GET /api/v1/knowledge/browse?project=&category=&scope=&q=&offset=&limit=`.
pub async fn knowledge(
    filter: web::Query<knowledge::Filter>,
    page: web::Query<PageQuery>,
    state: web::Data<AppState>,
) -> ApiResult {
    let store = state.store.clone();
    let filter = filter.into_inner();
    let page = page.into_inner();
    ok(&blocking(move || knowledge::list(&store, &filter, page)).await?)
}

/// `GET /api/v1/knowledge/{id}/history`: the entry, its versions and their diffs.
pub async fn knowledge_entry(path: web::Path<String>, state: web::Data<AppState>) -> ApiResult {
    let store = state.store.clone();
    let id = path.into_inner();
    ok(&blocking(move || knowledge::detail(&store, &id)).await?)
}

/// `GET /api/v1/entities?project=&type=&q=&offset=&limit=`.
pub async fn entities(
    filter: web::Query<entities::Filter>,
    page: web::Query<PageQuery>,
    state: web::Data<AppState>,
) -> ApiResult {
    let store = state.store.clone();
    let filter = filter.into_inner();
    let page = page.into_inner();
    ok(&blocking(move || entities::list(&store, &filter, page)).await?)
}

/// `GET /api/v1/entities/{id}`.
pub async fn entity(path: web::Path<String>, state: web::Data<AppState>) -> ApiResult {
    let store = state.store.clone();
    let id = path.into_inner();
    ok(&blocking(move || entities::detail(&store, &id)).await?)
}

/// `GET /api/v1/search?q=&mode=&scope=&project=&session=`.
pub async fn search(
    query: web::Query<search::SearchQuery>,
    state: web::Data<AppState>,
) -> ApiResult {
    ok(&search::run(&state, &query.into_inner()).await?)
}

/// `GET /api/v1/settings`.
pub async fn settings(state: web::Data<AppState>) -> ApiResult {
    ok(&settings::load(&state.config))
}

/// `GET /api/v1/worker-usage`.
pub async fn worker_usage(state: web::Data<AppState>) -> ApiResult {
    let store = state.store.clone();
    ok(&blocking(move || costs::worker_usage(&store)).await?)
}

/// `GET /api/v1/costs/page?days=`: the costs page's data (the report with the budget's notes).
pub async fn costs_page(
    query: web::Query<costs::CostsQuery>,
    state: web::Data<AppState>,
) -> ApiResult {
    ok(&costs::load(&state, query.days).await?)
}
