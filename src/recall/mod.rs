//! Recall in the service: `GET /api/v1/recall`, `POST /api/v1/reindex`, and the answers of the
//! gateway's `recall` tool. The engine (lists, fusion, the tiered Markdown) is
//! [`lore_actors::recall`]; [`corpus`] plugs in the index and the vectors.
//!
//! The query is embedded (asynchronously, by the embedder's query worker) when embeddings are
//! available, while the recall's BM25 searches run on the blocking pool
//! ([`lore_actors::recall::prefetch`]); the rest of the search runs there once the vector is in.

pub mod corpus;

use actix_web::{HttpRequest, HttpResponse, web};
use lore_actors::recall::prefetch::{Prefetched, TextPrefetch, prefetch_text};
use lore_actors::recall::terms::query_terms;
use lore_actors::recall::{
    DEFAULT_CHAR_BUDGET, RecallMode, RecallOutcome, RecallRequest, RecallScope, format_detail,
    format_missing, format_results, lookup, recall as run_recall, rerank,
};
use lore_actors::reranker::DEFAULT_DEADLINE;
use lore_proto::recall_tool::RecallArguments;
use lore_storage::now_ms;
use serde::Deserialize;
use serde_json::json;

use crate::gateway::access::refuse_management;
use crate::server::AppState;
use corpus::{Corpus, hit_json, search};

/// The query string of `GET /api/v1/recall`.
#[derive(Debug, Deserialize)]
pub struct RecallQuery {
    /// The words to look for.
    pub q: String,
    /// `all` (default), `session`, `project` or `knowledge`.
    #[serde(default)]
    pub scope: Option<String>,
    /// The asking session (scope `session`; session affinity otherwise).
    #[serde(default)]
    pub session: Option<String>,
    /// Project path for scope `project`.
    #[serde(default)]
    pub project: Option<String>,
    /// Most results (default 10, at most 100).
    #[serde(default)]
    pub limit: Option<usize>,
    /// `hybrid` (default), `bm25` or `vector`.
    #[serde(default)]
    pub mode: Option<String>,
    /// `json` (default) or `markdown` (the recall tool's answer).
    #[serde(default)]
    pub format: Option<String>,
    /// `on` or `off`: rerank the top candidates with the cross-encoder; default `LORE_RERANK`.
    #[serde(default)]
    pub rerank: Option<String>,
    /// The reranker's weight against the fused order (a number, or `inf` for the reranker's
    /// order alone); default [`rerank::DEFAULT_WEIGHT`]. For measuring.
    #[serde(default)]
    pub rerank_weight: Option<String>,
    /// Candidates the reranker reads (1 to 100); default [`rerank::DEPTH`]. For measuring.
    #[serde(default)]
    pub rerank_depth: Option<usize>,
    /// Most chunks of one long candidate it reads (1 to 10); default
    /// [`rerank::CHUNKS_PER_DOCUMENT`]. For measuring.
    #[serde(default)]
    pub rerank_chunks: Option<usize>,
}

/// How a recall is reranked: the weight against the fused order, and what is read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Rerank {
    /// [`rerank::apply`]'s weight.
    pub weight: f32,
    /// Candidates and chunks read.
    pub shape: rerank::Shape,
}

impl Rerank {
    /// The default weight and shape.
    pub fn default_shape() -> Self {
        Self {
            weight: rerank::DEFAULT_WEIGHT,
            shape: rerank::Shape::default(),
        }
    }
}

/// Whether to rerank, and how, from the query's `rerank`, `rerank_weight`, `rerank_depth` and
/// `rerank_chunks`.
fn rerank_choice(query: &RecallQuery, state: &AppState) -> Result<Option<Rerank>, String> {
    let wanted = match query.rerank.as_deref().map(str::trim) {
        None | Some("") => state.embeddings.reranker.by_default(),
        Some("on") => true,
        Some("off") => false,
        Some(other) => return Err(format!("rerank must be on or off, not `{other}`")),
    };
    if !wanted {
        return Ok(None);
    }
    let weight = match query.rerank_weight.as_deref().map(str::trim) {
        None | Some("") => rerank::DEFAULT_WEIGHT,
        Some("inf") => f32::INFINITY,
        Some(raw) => match raw.parse::<f32>() {
            Ok(weight) if weight > 0.0 => weight,
            _ => {
                return Err(format!(
                    "rerank_weight must be a positive number or `inf`, not `{raw}`"
                ));
            }
        },
    };
    let defaults = rerank::Shape::default();
    let depth = query.rerank_depth.unwrap_or(defaults.depth);
    let chunks = query.rerank_chunks.unwrap_or(defaults.chunks);
    if !(1..=100).contains(&depth) || !(1..=10).contains(&chunks) {
        return Err(format!(
            "rerank_depth must be 1 to 100 and rerank_chunks 1 to 10, not {depth} and {chunks}"
        ));
    }
    Ok(Some(Rerank {
        weight,
        shape: rerank::Shape { depth, chunks },
    }))
}

/// Builds the engine's request from the query parameters, or says what is wrong.
pub fn build_request(
    text: &str,
    scope: Option<&str>,
    session: Option<&str>,
    project: Option<&str>,
    limit: Option<usize>,
    mode: Option<&str>,
) -> Result<RecallRequest, String> {
    let scope: RecallScope = scope.unwrap_or("all").parse()?;
    let mode: RecallMode = mode.unwrap_or("hybrid").parse()?;
    match scope {
        RecallScope::Session if session.is_none() => {
            return Err("scope `session` needs a session id (session=… or --session)".into());
        }
        RecallScope::Project if project.is_none() => {
            return Err("scope `project` needs a project path (project=… or --project)".into());
        }
        _ => {}
    }
    Ok(RecallRequest {
        query: text.to_string(),
        scope,
        mode,
        session: session.map(str::to_string),
        project: project.map(str::to_string),
        limit: limit.unwrap_or(10).clamp(1, 100),
        ..RecallRequest::default()
    })
}

/// `GET /api/v1/recall?q=&scope=&session=&project=&limit=&mode=&format=`.
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
    let rerank_with = match rerank_choice(&query, state.get_ref()) {
        Ok(choice) => choice,
        Err(message) => {
            return HttpResponse::BadRequest()
                .json(json!({"error": {"type": "invalid_request_error", "message": message}}));
        }
    };
    let request = match build_request(
        &query.q,
        query.scope.as_deref(),
        query.session.as_deref(),
        query.project.as_deref(),
        query.limit,
        query.mode.as_deref(),
    ) {
        Ok(request) => request,
        Err(message) => {
            return HttpResponse::BadRequest()
                .json(json!({"error": {"type": "invalid_request_error", "message": message}}));
        }
    };
    let markdown = query.format.as_deref() == Some("markdown");
    let text = request.query.clone();
    match search_ranked(state.get_ref(), index, request, rerank_with).await {
        Ok(Ranked { outcome, .. }) if markdown => HttpResponse::Ok()
            .content_type("text/markdown; charset=utf-8")
            .body(format_results(
                &text,
                &outcome,
                now_ms(),
                DEFAULT_CHAR_BUDGET,
            )),
        Ok(Ranked {
            outcome,
            reranked,
            vectors,
        }) => HttpResponse::Ok().json(json!({
            "results": outcome.hits.iter().map(hit_json).collect::<Vec<_>>(),
            "vectors": vectors,
            "reranked": reranked,
            "reranker": state.embeddings.reranker.status(),
            "notes": outcome.notes,
        })),
        Err(message) => HttpResponse::InternalServerError()
            .json(json!({"error": {"type": "search_error", "message": message}})),
    }
}

/// Runs one recall over the index and the vectors on the blocking pool.
pub(crate) async fn search_blocking(
    state: &AppState,
    index: std::sync::Arc<lore_storage::SearchIndex>,
    request: RecallRequest,
) -> Result<lore_actors::recall::RecallOutcome, String> {
    search_prefetched(state, index, request, None).await
}

/// [`search_blocking`] with the request's text searches already done (`text`).
async fn search_prefetched(
    state: &AppState,
    index: std::sync::Arc<lore_storage::SearchIndex>,
    request: RecallRequest,
    text: Option<TextPrefetch>,
) -> Result<lore_actors::recall::RecallOutcome, String> {
    let vectors = state.embeddings.vectors.clone();
    let store = state.store.clone();
    web::block(move || {
        let corpus = Corpus {
            index: &index,
            vectors: Some(&vectors),
            store: Some(&store),
        };
        match &text {
            Some(text) => run_recall(
                &Prefetched {
                    corpus: &corpus,
                    text,
                },
                &request,
            ),
            None => search(&corpus, &request),
        }
    })
    .await
    .map_err(|err| err.to_string())?
}

/// Embeds the query of `request` (unless its mode is `bm25` or it has a vector) while its
/// BM25 searches run on the blocking pool, then the rest of the recall; the flag says whether
/// the query had a vector.
async fn search_embedding(
    state: &AppState,
    index: std::sync::Arc<lore_storage::SearchIndex>,
    mut request: RecallRequest,
) -> Result<(RecallOutcome, bool), String> {
    // Scope `session` searches no vectors: its query is not embedded either.
    let no_vector = request.mode == RecallMode::Bm25 || request.scope == RecallScope::Session;
    if no_vector || request.query_vector.is_some() {
        let vectors = request.query_vector.is_some();
        return Ok((search_blocking(state, index, request).await?, vectors));
    }
    let text = {
        let (index, store, request) = (index.clone(), state.store.clone(), request.clone());
        web::block(move || {
            let corpus = Corpus {
                index: &index,
                vectors: None,
                store: Some(&store),
            };
            prefetch_text(&corpus, &request)
        })
    };
    let (vector, text) = tokio::join!(state.embeddings.query_vector(&request.query), text);
    request.query_vector = vector;
    let vectors = request.query_vector.is_some();
    let outcome = search_prefetched(state, index, request, text.ok()).await?;
    Ok((outcome, vectors))
}

/// What [`search_ranked`] found.
pub(crate) struct Ranked {
    /// The results.
    pub outcome: RecallOutcome,
    /// Whether the reranker reordered them.
    pub reranked: bool,
    /// Whether the query had a vector.
    pub vectors: bool,
}

/// The query embedded while BM25 runs ([`search_embedding`]), then, with a [`Rerank`], its
/// top candidates rescored by the cross-encoder within
/// [`DEFAULT_DEADLINE`]; [`Ranked::reranked`] says whether that happened. Any reranker failure
/// keeps the fused order (and is noted).
pub(crate) async fn search_ranked(
    state: &AppState,
    index: std::sync::Arc<lore_storage::SearchIndex>,
    mut request: RecallRequest,
    rerank_with: Option<Rerank>,
) -> Result<Ranked, String> {
    let Some(Rerank { weight, shape }) = rerank_with else {
        let (outcome, vectors) = search_embedding(state, index, request).await?;
        return Ok(Ranked {
            outcome,
            reranked: false,
            vectors,
        });
    };
    let limit = request.effective_limit();
    request.limit = limit.max(shape.depth);
    let query = request.query.clone();
    let (mut outcome, vectors) = search_embedding(state, index, request).await?;
    let pairs = rerank::pairs(&outcome, &query_terms(&query), shape);
    let passages = pairs
        .iter()
        .filter_map(|pair| {
            let fused = outcome.hits.get(pair.hit)?;
            Some(rerank::passage_text(fused, &pair.range))
        })
        .collect();
    let reranked = match state
        .embeddings
        .reranker
        .score(query, passages, DEFAULT_DEADLINE)
        .await
    {
        Ok(scores) => {
            rerank::apply(&mut outcome, &pairs, &scores, weight, shape.depth);
            true
        }
        Err(err) => {
            outcome.notes.push(err.to_string());
            false
        }
    };
    outcome.hits.truncate(limit);
    Ok(Ranked {
        outcome,
        reranked,
        vectors,
    })
}

/// Answers one call of the gateway's `recall` tool: Markdown for the model. Never fails: a
/// problem becomes text the model can read.
pub async fn answer_tool(
    state: &web::Data<AppState>,
    session: Option<&str>,
    arguments: &RecallArguments,
) -> String {
    let Some(index) = state.index.clone() else {
        return "Recall is unavailable: the search index could not be opened.".to_string();
    };
    if let Some(id) = arguments.id.clone().filter(|id| !id.trim().is_empty()) {
        let id = id.trim().to_string();
        let store = state.store.clone();
        let found = web::block(move || {
            let corpus = Corpus {
                index: &index,
                vectors: None,
                store: Some(&store),
            };
            lookup(&corpus, &id).map(|hit| (id, hit))
        })
        .await;
        return match found {
            Ok(Ok((_, Some(hit)))) => format_detail(&hit),
            Ok(Ok((id, None))) => format_missing(&id),
            Ok(Err(message)) => format!("Recall failed: {message}"),
            Err(err) => format!("Recall failed: {err}"),
        };
    }
    let project = match session {
        Some(id) => {
            let store = state.store.clone();
            let id = id.to_string();
            web::block(move || store.load_session(&id))
                .await
                .ok()
                .and_then(Result::ok)
                .flatten()
                .and_then(|record| record.project)
        }
        None => None,
    };
    let request = match build_request(
        &arguments.query,
        arguments.scope.as_deref(),
        session,
        project.as_deref(),
        None,
        None,
    ) {
        Ok(request) => request,
        Err(message) => return format!("Recall could not run: {message}."),
    };
    let text = request.query.clone();
    let rerank_weight = state
        .embeddings
        .reranker
        .by_default()
        .then(Rerank::default_shape);
    match search_ranked(state.get_ref(), index, request, rerank_weight).await {
        Ok(Ranked { outcome, .. }) => {
            format_results(&text, &outcome, now_ms(), DEFAULT_CHAR_BUDGET)
        }
        Err(message) => format!("Recall failed: {message}"),
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
        Ok(Ok(documents)) => {
            let embedding = match state.embeddings.vectorizer() {
                Some(vectorizer) => {
                    match vectorizer.send(lore_actors::vectorizer::Backfill).await {
                        Ok(Ok(scheduled)) => json!({"scheduled": scheduled}),
                        Ok(Err(message)) => json!({"error": message}),
                        Err(err) => json!({"error": err.to_string()}),
                    }
                }
                None => json!({"unavailable": state.embeddings.handle().status()}),
            };
            HttpResponse::Ok().json(json!({"indexed": documents, "embedding": embedding}))
        }
        Ok(Err(message)) => HttpResponse::InternalServerError()
            .json(json!({"error": {"type": "index_error", "message": message}})),
        Err(err) => HttpResponse::InternalServerError()
            .json(json!({"error": {"type": "index_error", "message": err.to_string()}})),
    }
}
