//! Recall over the search index: `GET /api/v1/recall`, `POST /api/v1/reindex`, and the shared
//! query logic that `lore recall` uses when no gateway runs.
//!
//! This is BM25 over captured messages (title 6, body 2, category 3); vector search, fusion and
//! the recall tool come with the embedder.

use actix_web::{HttpRequest, HttpResponse, web};
use lore_storage::{DocKind, SearchFilter, SearchHit, SearchIndex};
use serde::Deserialize;
use serde_json::{Value, json};

use lore_proto::recall_tool::RecallArguments;

use crate::gateway::access::refuse_management;
use crate::server::AppState;

/// Field weights of `search.ftsWeights`: title, body, category.
pub const FTS_WEIGHTS: (f32, f32, f32) = (6.0, 2.0, 3.0);

/// The query string of `GET /api/v1/recall`.
#[derive(Debug, Deserialize)]
pub struct RecallQuery {
    /// The words to look for.
    pub q: String,
    /// `all` (default), `session`, `project` or `knowledge`.
    #[serde(default)]
    pub scope: Option<String>,
    /// Session id for scope `session`.
    #[serde(default)]
    pub session: Option<String>,
    /// Project path for scope `project`.
    #[serde(default)]
    pub project: Option<String>,
    /// Most results (default 10, at most 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// Turns a scope into a filter, or says what is missing.
pub fn filter_for(
    scope: Option<&str>,
    session: Option<&str>,
    project: Option<&str>,
) -> Result<SearchFilter, String> {
    match scope.unwrap_or("all") {
        "all" => Ok(SearchFilter::default()),
        "session" => match session {
            Some(session) => Ok(SearchFilter {
                session: Some(session.to_string()),
                ..Default::default()
            }),
            None => Err("scope `session` needs a session id (session=… or --session)".into()),
        },
        "project" => match project {
            Some(project) => Ok(SearchFilter {
                project: Some(project.to_string()),
                ..Default::default()
            }),
            None => Err("scope `project` needs a project path (project=… or --project)".into()),
        },
        "knowledge" => Ok(SearchFilter {
            kind: Some(DocKind::Knowledge),
            ..Default::default()
        }),
        other => Err(format!(
            "unknown scope `{other}`; use all, session, project or knowledge"
        )),
    }
}

/// Runs a recall query against an index.
pub fn run(
    index: &SearchIndex,
    text: &str,
    filter: &SearchFilter,
    limit: usize,
) -> Result<Vec<Value>, String> {
    let hits = index
        .search(text, filter, limit.clamp(1, 100), FTS_WEIGHTS)
        .map_err(|err| err.to_string())?;
    Ok(hits.iter().map(hit_json).collect())
}

fn hit_json(hit: &SearchHit) -> Value {
    let snippet: String = hit.body.chars().take(300).collect();
    json!({
        "id": hit.id,
        "source": hit.id.split(':').next().unwrap_or(""),
        "kind": hit.kind,
        "score": hit.score,
        "snippet": snippet,
        "role": hit.title,
        "session": hit.session,
        "project": hit.project,
        "created_at_ms": hit.created_at_ms,
    })
}

/// `GET /api/v1/recall?q=&scope=&session=&project=&limit=`.
pub async fn recall(
    req: HttpRequest,
    query: web::Query<RecallQuery>,
    state: web::Data<AppState>,
) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    let Some(index) = state.index.clone() else {
        return HttpResponse::ServiceUnavailable().json(json!({"error": {"type": "index_unavailable", "message": "the search index could not be opened; see the gateway log, then run `lore reindex`"}}));
    };
    let query = query.into_inner();
    let filter = match filter_for(
        query.scope.as_deref(),
        query.session.as_deref(),
        query.project.as_deref(),
    ) {
        Ok(filter) => filter,
        Err(message) => {
            return HttpResponse::BadRequest()
                .json(json!({"error": {"type": "invalid_request_error", "message": message}}));
        }
    };
    let limit = query.limit.unwrap_or(10);
    match web::block(move || run(&index, &query.q, &filter, limit)).await {
        Ok(Ok(results)) => HttpResponse::Ok().json(json!({"results": results})),
        Ok(Err(message)) => HttpResponse::InternalServerError()
            .json(json!({"error": {"type": "search_error", "message": message}})),
        Err(err) => HttpResponse::InternalServerError()
            .json(json!({"error": {"type": "search_error", "message": err.to_string()}})),
    }
}

/// `POST /api/v1/reindex` (needs the header `x-lore-request: 1`, so a web page cannot send it).
pub async fn reindex(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    if let Some(refusal) = refuse_management(&req) {
        return refusal;
    }
    if req.headers().get("x-lore-request").is_none() {
        return HttpResponse::Forbidden().json(json!({"error": {"type": "forbidden", "message": "send the header x-lore-request: 1 with management writes"}}));
    }
    let Some(indexer) = state.indexer.clone() else {
        return HttpResponse::ServiceUnavailable().json(json!({"error": {"type": "index_unavailable", "message": "the search index could not be opened; see the gateway log"}}));
    };
    match indexer.send(lore_actors::indexer::Rebuild).await {
        Ok(Ok(documents)) => HttpResponse::Ok().json(json!({"indexed": documents})),
        Ok(Err(message)) => HttpResponse::InternalServerError()
            .json(json!({"error": {"type": "index_error", "message": message}})),
        Err(err) => HttpResponse::InternalServerError()
            .json(json!({"error": {"type": "index_error", "message": err.to_string()}})),
    }
}

/// Answers one call of the gateway's `recall` tool: Markdown for the model. Never fails: a
/// problem becomes text the model can read.
pub fn answer_tool(state: &AppState, session: Option<&str>, arguments: &RecallArguments) -> String {
    if let Some(id) = arguments.id.as_deref().filter(|id| !id.trim().is_empty()) {
        return detail(state, id.trim());
    }
    let Some(index) = state.index.as_ref() else {
        return "Recall is unavailable: the search index could not be opened.".to_string();
    };
    let project = session
        .and_then(|id| state.store.load_session(id).ok().flatten())
        .and_then(|record| record.project);
    let filter = match filter_for(arguments.scope.as_deref(), session, project.as_deref()) {
        Ok(filter) => filter,
        Err(message) => return format!("Recall could not run: {message}."),
    };
    match index.search(&arguments.query, &filter, TOOL_RESULTS, FTS_WEIGHTS) {
        Ok(hits) if hits.is_empty() => format!("No results for \"{}\".", arguments.query),
        Ok(hits) => {
            let mut out = format!("## Recall Results\n\nFound {} results.\n\n", hits.len());
            for hit in &hits {
                let snippet: String = hit.body.chars().take(600).collect();
                out.push_str(&format!(
                    "- ({}) {} ({})\n",
                    hit.title,
                    snippet.replace('\n', " "),
                    hit.id
                ));
            }
            out
        }
        Err(err) => format!("Recall failed: {err}"),
    }
}

/// Results the tool lists.
const TOOL_RESULTS: usize = 10;

/// The full text of one stored record, by id.
fn detail(state: &AppState, id: &str) -> String {
    let found = id
        .strip_prefix("t:")
        .and_then(|rest| rest.rsplit_once(':'))
        .and_then(|(session, seq)| Some((session, seq.parse::<u64>().ok()?)))
        .and_then(|(session, seq)| state.store.load_message(session, seq).ok().flatten());
    match found {
        Some(stored) => format!(
            "## Recall Detail: {id}\n\n({})\n{}",
            stored.message.role.as_str(),
            lore_actors::indexer::searchable_text(&stored.message)
        ),
        None => format!("Nothing is stored under {id}."),
    }
}
