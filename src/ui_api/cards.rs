//! The card editor's endpoints under `/api/v1/cards`: the section table, the list, one card,
//! create, update (optimistic locking by the mtime string), archive and restore, try a
//! sentence, the health check, the recently surfaced cards, and SillyTavern import and export.
//! File reads and writes run on the blocking pool.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::{ApiResult, ok, parse_body};
use crate::dashboard::cards::{self, CardDesk, book_io, detail, parse_kind, probe, write};
use crate::dashboard::error::blocking;
use crate::server::AppState;

/// `?kind=&archived=` of the list and of one card.
#[derive(Debug, Default, Deserialize)]
pub struct CardQuery {
    /// Only this kind.
    #[serde(default)]
    pub kind: Option<String>,
    /// `1` or `true`: the archive.
    #[serde(default)]
    pub archived: Option<String>,
}

fn archived(query: &CardQuery) -> bool {
    matches!(query.archived.as_deref(), Some("1" | "true"))
}

/// `GET /api/v1/cards/kinds`.
pub async fn kinds(state: web::Data<AppState>) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    ok(&blocking(move || Ok(cards::kinds(&desk))).await?)
}

/// `GET /api/v1/cards?kind=&archived=`.
pub async fn list(query: web::Query<CardQuery>, state: web::Data<AppState>) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    let query = query.into_inner();
    let kind = query
        .kind
        .as_deref()
        .filter(|k| !k.is_empty())
        .map(parse_kind)
        .transpose()?;
    let archived = archived(&query);
    ok(&blocking(move || Ok(cards::list(&desk, kind, archived))).await?)
}

/// `GET /api/v1/cards/{kind}/{key}?archived=`.
pub async fn show(
    path: web::Path<(String, String)>,
    query: web::Query<CardQuery>,
    state: web::Data<AppState>,
) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    let (kind, key) = path.into_inner();
    let kind = parse_kind(&kind)?;
    let archived = archived(&query);
    ok(&blocking(move || detail::show(&desk, kind, &key, archived)).await?)
}

/// `POST /api/v1/cards`: 201 and the new card.
pub async fn create(body: web::Bytes, state: web::Data<AppState>) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    let body: write::CardBody = parse_body(&body)?;
    let created = blocking(move || write::create(&desk, body)).await?;
    Ok(HttpResponse::Created()
        .insert_header(("cache-control", "no-store"))
        .json(created))
}

/// `PUT /api/v1/cards/{kind}/{key}`: the body carries the `mtime` the editor read.
pub async fn update(
    path: web::Path<(String, String)>,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    let (kind, key) = path.into_inner();
    let kind = parse_kind(&kind)?;
    let body: write::CardBody = parse_body(&body)?;
    ok(&blocking(move || write::update(&desk, kind, &key, body)).await?)
}

/// `DELETE /api/v1/cards/{kind}/{key}`: moves the card to the archive.
pub async fn archive(path: web::Path<(String, String)>, state: web::Data<AppState>) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    let (kind, key) = path.into_inner();
    let kind = parse_kind(&kind)?;
    ok(&blocking(move || write::archive(&desk, kind, &key)).await?)
}

/// `POST /api/v1/cards/{kind}/{key}/restore`.
pub async fn restore(path: web::Path<(String, String)>, state: web::Data<AppState>) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    let (kind, key) = path.into_inner();
    let kind = parse_kind(&kind)?;
    ok(&blocking(move || write::restore(&desk, kind, &key)).await?)
}

/// `POST /api/v1/cards/try` with `{"text": …}`.
pub async fn try_sentence(body: web::Bytes, state: web::Data<AppState>) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    let body: probe::TryBody = parse_body(&body)?;
    ok(&blocking(move || probe::try_sentence(&desk, &body)).await?)
}

/// `GET /api/v1/cards/check`.
pub async fn check(state: web::Data<AppState>) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    ok(&blocking(move || Ok(probe::check(&desk))).await?)
}

/// `GET /api/v1/cards/recent`: the latest card injections into conversations.
pub async fn recent(state: web::Data<AppState>) -> ApiResult {
    let store = state.store.clone();
    let recent = blocking(move || probe::recent(&store, probe::RECENT_LIMIT)).await?;
    ok(&serde_json::json!({"recent": recent}))
}

/// `POST /api/v1/cards/import` with `{"book": …, "kind": …, "force": false}`.
pub async fn import(body: web::Bytes, state: web::Data<AppState>) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    let body: book_io::ImportBody = parse_body(&body)?;
    ok(&blocking(move || book_io::import(&desk, body)).await?)
}

/// `GET /api/v1/cards/export`: World Info JSON as a download.
pub async fn export(state: web::Data<AppState>) -> ApiResult {
    let desk = CardDesk::of(&state)?;
    let book = blocking(move || Ok(book_io::export(&desk))).await?;
    let mut text = serde_json::to_string_pretty(&book)
        .map_err(|err| crate::dashboard::error::ApiError::internal(err.to_string()))?;
    text.push('\n');
    Ok(HttpResponse::Ok()
        .insert_header(("cache-control", "no-store"))
        .insert_header((
            "content-disposition",
            "attachment; filename=\"lore-cards.json\"",
        ))
        .content_type("application/json")
        .body(text))
}
