//! Search for the dashboard: recall with a mode and a scope, each hit with the dashboard page
//! of its source (the message in its session, the knowledge entry, the observation log, the
//! entity). The engine and its corpus are [`crate::recall`]'s.

use lore_actors::recall::RecallMode;
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use crate::server::AppState;

/// The query of the search page.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SearchQuery {
    /// Words to look for.
    #[serde(default)]
    pub q: Option<String>,
    /// `hybrid` (default), `bm25` or `vector`.
    #[serde(default)]
    pub mode: Option<String>,
    /// `all` (default), `project`, `session` or `knowledge`.
    #[serde(default)]
    pub scope: Option<String>,
    /// Project path for scope `project`.
    #[serde(default)]
    pub project: Option<String>,
    /// Session id for scope `session`.
    #[serde(default)]
    pub session: Option<String>,
}

/// One hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHitRow {
    /// Document id (`t:`, `d:`, `k:`, `e:`).
    pub id: String,
    /// `message`, `distillation`, `knowledge` or `entity`.
    pub kind: String,
    /// Fused score.
    pub score: f64,
    /// The role, the title or the name.
    pub title: String,
    /// The first 300 characters.
    pub snippet: String,
    /// Session, when it has one.
    pub session: String,
    /// Project, when it has one.
    pub project: String,
    /// When it was written.
    pub created_at_ms: u64,
    /// The dashboard page of its source.
    pub source_url: String,
}

/// The results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResults {
    /// The words searched (empty before a search).
    pub q: String,
    /// The mode used.
    pub mode: String,
    /// The scope used.
    pub scope: String,
    /// Whether the query was embedded (vector lists used).
    pub vectors: bool,
    /// The hits, best first.
    pub hits: Vec<SearchHitRow>,
    /// Notes of the engine (a list it skipped, why).
    pub notes: Vec<String>,
}

/// The dashboard page of a document id.
pub fn source_url(id: &str) -> String {
    let mut parts = id.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("t"), Some(session), Some(seq)) => format!("/ui/sessions/{session}?seq={seq}#m{seq}"),
        (Some("d"), Some(session), Some(n)) => format!("/ui/sessions/{session}#d{n}"),
        (Some("k"), Some(rest), None) => format!("/ui/knowledge/{rest}"),
        (Some("e"), Some(rest), None) => format!("/ui/entities/{rest}"),
        _ => "/ui/search".to_string(),
    }
}

/// Runs a search; an empty query answers no hits.
pub async fn run(
    state: &actix_web::web::Data<AppState>,
    query: &SearchQuery,
) -> Result<SearchResults, ApiError> {
    let q = query.q.clone().unwrap_or_default().trim().to_string();
    let blank = |v: &Option<String>| {
        v.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let mode = blank(&query.mode).unwrap_or_else(|| "hybrid".into());
    let scope = blank(&query.scope).unwrap_or_else(|| "all".into());
    let mut results = SearchResults {
        q: q.clone(),
        mode: mode.clone(),
        scope: scope.clone(),
        vectors: false,
        hits: Vec::new(),
        notes: Vec::new(),
    };
    if q.is_empty() {
        return Ok(results);
    }
    let Some(index) = state.index.clone() else {
        return Err(ApiError::unavailable(
            "index_unavailable",
            "the search index could not be opened; see the gateway log, then run `lore reindex`",
        ));
    };
    let mut request = crate::recall::build_request(
        &q,
        Some(&scope),
        blank(&query.session).as_deref(),
        blank(&query.project).as_deref(),
        Some(30),
        Some(&mode),
    )
    .map_err(ApiError::bad_request)?;
    if request.mode != RecallMode::Bm25 {
        request.query_vector = state.embeddings.query_vector(&request.query).await;
    }
    results.vectors = request.query_vector.is_some();
    let outcome = crate::recall::search_blocking(state.get_ref(), index, request)
        .await
        .map_err(ApiError::internal)?;
    results.notes = outcome.notes.clone();
    results.hits = outcome
        .hits
        .iter()
        .map(|fused| {
            let hit = &fused.hit;
            SearchHitRow {
                id: hit.id.clone(),
                kind: hit.kind.clone(),
                score: f64::from(fused.score),
                title: hit.title.clone(),
                snippet: hit.body.chars().take(300).collect(),
                session: hit.session.clone(),
                project: hit.project.clone(),
                created_at_ms: hit.created_at_ms,
                source_url: source_url(&hit.id),
            }
        })
        .collect();
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::source_url;

    #[test]
    fn every_source_has_a_page() {
        assert_eq!(source_url("t:abc:7"), "/ui/sessions/abc?seq=7#m7");
        assert_eq!(source_url("d:abc:2"), "/ui/sessions/abc#d2");
        assert_eq!(source_url("k:0190"), "/ui/knowledge/0190");
        assert_eq!(source_url("e:0191"), "/ui/entities/0191");
    }
}
