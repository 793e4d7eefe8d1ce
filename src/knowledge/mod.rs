//! Long-term knowledge in the service: `GET /api/v1/knowledge` (list), `GET` and `DELETE
//! /api/v1/knowledge/{id}` (show with history, forget), `GET /api/v1/knowledge/export` and
//! `POST /api/v1/knowledge/import` (the `.lore.md` text as the body). The rules are
//! [`lore_actors::knowledge`]; storage runs on the blocking pool, and every change is sent to
//! the indexer (embeddings follow through it).
//!
//! The gateway never reads or writes a file in a project directory (it may be hosted, far
//! from the project): the CLI reads and writes `.lore.md` and sends or receives its text.

pub mod json;

use actix_web::{HttpRequest, HttpResponse, web};
use lore_actors::ActorError;
use lore_actors::indexer::{IndexDocs, RemoveDocs};
use lore_actors::knowledge::{self, Change, ImportError, index_work};
use lore_storage::memory::Category;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::gateway::access::refuse_management;
use crate::server::AppState;
use json::{detail_json, entry_json, problems_error, summary_json};

/// Who writes through the API.
const USER: &str = "user";

/// The query of `GET /api/v1/knowledge`.
#[derive(Debug, Deserialize)]
pub struct ListQuery {
    /// Only this project's entries (plus global ones unless `include_global=false`).
    #[serde(default)]
    pub project: Option<String>,
    /// Only this category (singular or plural, any case).
    #[serde(default)]
    pub category: Option<String>,
    /// With a project: whether entries that hold in every project are listed too (default true).
    #[serde(default)]
    pub include_global: Option<bool>,
}

/// The query of export and import.
#[derive(Debug, Deserialize)]
pub struct ProjectQuery {
    /// The project path.
    #[serde(default)]
    pub project: Option<String>,
}

/// Reads a category name, or says which ones exist.
pub fn parse_category(name: &str) -> Result<Category, String> {
    Category::parse(name).ok_or_else(|| {
        format!(
            "unknown category `{name}`; use one of {}",
            Category::ALL.map(Category::as_str).join(", ")
        )
    })
}

/// Sends every entry of a project to the index again (live ones replaced, forgotten ones
/// removed), after a write that stopped part way.
async fn resync_project(state: &AppState, project: String) {
    let Some(indexer) = &state.indexer else {
        return;
    };
    let store = state.store.clone();
    let Ok(Ok(entries)) = web::block(move || store.all_knowledge()).await else {
        return;
    };
    let (live, forgotten): (Vec<_>, Vec<_>) = entries
        .into_iter()
        .filter(|entry| entry.project.as_deref() == Some(project.as_str()))
        .partition(|entry| !entry.deleted);
    indexer.do_send(IndexDocs {
        docs: live
            .iter()
            .map(lore_actors::documents::knowledge_doc)
            .collect(),
    });
    indexer.do_send(RemoveDocs {
        ids: forgotten.iter().map(|entry| entry.doc_id()).collect(),
    });
}

/// Sends the changes to the indexer, when there is one.
pub(crate) fn reindex(state: &AppState, changes: &[Change]) {
    let Some(indexer) = &state.indexer else {
        return;
    };
    let (docs, ids) = index_work(changes);
    if !docs.is_empty() {
        indexer.do_send(IndexDocs { docs });
    }
    if !ids.is_empty() {
        indexer.do_send(RemoveDocs { ids });
    }
}

fn error(status: actix_web::http::StatusCode, kind: &str, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({"error": {"type": kind, "message": message}}))
}

fn bad_request(message: &str) -> HttpResponse {
    error(
        actix_web::http::StatusCode::BAD_REQUEST,
        "invalid_request_error",
        message,
    )
}

/// The response of a failed knowledge call.
fn actor_error(err: &ActorError) -> HttpResponse {
    use actix_web::http::StatusCode;
    match err {
        ActorError::NotFound(message) => error(StatusCode::NOT_FOUND, "not_found", message),
        ActorError::Invalid(message) => bad_request(message),
        other => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "storage_error",
            &other.to_string(),
        ),
    }
}

/// Runs storage work on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ActorError> + Send + 'static,
) -> Result<T, ActorError> {
    web::block(work)
        .await
        .map_err(|err| ActorError::Mailbox(format!("the blocking pool failed: {err}")))?
}

/// Management writes need `x-lore-request`, so a web page cannot send them.
fn refuse_write(req: &HttpRequest) -> Option<HttpResponse> {
    if let Some(refusal) = refuse_management(req) {
        return Some(refusal);
    }
    req.headers().get("x-lore-request").is_none().then(|| {
        error(
            actix_web::http::StatusCode::FORBIDDEN,
            "forbidden",
            "send the header x-lore-request: 1 with management writes",
        )
    })
}

/// The project of an export or import; `None` when the query names none.
fn required_project(query: ProjectQuery) -> Option<String> {
    query.project.filter(|p| !p.trim().is_empty())
}

fn missing_project() -> HttpResponse {
    bad_request("name the project: ?project=<absolute path of the project directory>")
}

/// `GET /api/v1/knowledge?project=&category=&include_global=`: live entries, by category then
/// title.
pub async fn list(
    req: HttpRequest,
    query: web::Query<ListQuery>,
    state: web::Data<AppState>,
) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    let query = query.into_inner();
    let category = match query.category.as_deref().map(parse_category).transpose() {
        Ok(category) => category,
        Err(message) => return bad_request(&message),
    };
    let store = state.store.clone();
    let include_global = query.include_global.unwrap_or(true);
    let project = query.project.filter(|p| !p.trim().is_empty());
    let listed =
        blocking(move || knowledge::live_entries(&store, project.as_deref(), include_global)).await;
    match listed {
        Ok(entries) => HttpResponse::Ok().json(Value::Array(
            entries
                .iter()
                .filter(|entry| category.is_none_or(|c| entry.category == c))
                .map(entry_json)
                .collect(),
        )),
        Err(err) => actor_error(&err),
    }
}

/// `GET /api/v1/knowledge/{id}` (an id or a unique prefix): the entry and its `history`.
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
    let found = blocking(move || {
        let entry = knowledge::resolve_id(&store, &id)?;
        let history = store.knowledge_history(&entry.id)?;
        Ok(detail_json(&entry, &history))
    })
    .await;
    match found {
        Ok(detail) => HttpResponse::Ok().json(detail),
        Err(err) => actor_error(&err),
    }
}

/// `DELETE /api/v1/knowledge/{id}`: forgets the entry; answers it as now stored.
pub async fn forget(
    req: HttpRequest,
    path: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    if let Some(refusal) = refuse_write(&req) {
        return refusal;
    }
    let id = path.into_inner();
    let store = state.store.clone();
    let forgotten = blocking(move || {
        let entry = knowledge::resolve_id(&store, &id)?;
        knowledge::forget(&store, &entry.id, USER)
    })
    .await;
    match forgotten {
        Ok(change) => {
            reindex(&state, std::slice::from_ref(&change));
            HttpResponse::Ok().json(entry_json(change.entry()))
        }
        Err(err) => actor_error(&err),
    }
}

/// `GET /api/v1/knowledge/export?project=`: the project's `.lore.md` text.
pub async fn export(
    req: HttpRequest,
    query: web::Query<ProjectQuery>,
    state: web::Data<AppState>,
) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    let Some(project) = required_project(query.into_inner()) else {
        return missing_project();
    };
    let store = state.store.clone();
    match blocking(move || knowledge::export(&store, &project)).await {
        Ok(text) => HttpResponse::Ok()
            .content_type("text/markdown; charset=utf-8")
            .body(text),
        Err(err) => actor_error(&err),
    }
}

/// `POST /api/v1/knowledge/import?project=` with the `.lore.md` text as the body: the summary,
/// or 400 with every problem and its line (nothing is written then).
pub async fn import(
    req: HttpRequest,
    query: web::Query<ProjectQuery>,
    body: web::Bytes,
    state: web::Data<AppState>,
) -> HttpResponse {
    if let Some(refusal) = refuse_write(&req) {
        return refusal;
    }
    let Some(project) = required_project(query.into_inner()) else {
        return missing_project();
    };
    let Ok(text) = String::from_utf8(body.to_vec()) else {
        return bad_request("the body is not UTF-8 text; send the .lore.md file as it is");
    };
    let store = state.store.clone();
    let importing = project.clone();
    let imported = web::block(move || knowledge::import(&store, &importing, &text)).await;
    if let Ok(Err(ImportError::Failed(_))) = &imported {
        // What was written before the failure must reach the index too.
        resync_project(&state, project).await;
    }
    match imported {
        Ok(Ok(summary)) => {
            reindex(&state, &summary.changes);
            HttpResponse::Ok().json(summary_json(&summary))
        }
        Ok(Err(ImportError::Problems(problems))) => {
            HttpResponse::BadRequest().json(problems_error(&problems))
        }
        Ok(Err(ImportError::Failed(err))) => actor_error(&err),
        Err(err) => actor_error(&ActorError::Mailbox(format!(
            "the blocking pool failed: {err}"
        ))),
    }
}
