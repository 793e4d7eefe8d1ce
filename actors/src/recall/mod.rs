//! Hybrid recall (reference §18), pure: it owns what a recall asks, which ranked lists it
//! builds, how they fuse, and how results read. The corpus behind it is abstract
//! ([`RecallCorpus`]): the integrator plugs in the tantivy index (BM25) and the vector store.
//!
//! - [`terms`]: which words of a query count; the safe BM25 query text; whole-word matching.
//! - [`gather`]: the ranked lists of one recall, read from the corpus.
//! - [`fusion`]: reciprocal rank fusion and its weights.
//! - [`format`]: the tiered Markdown answer and the `id` detail.
//! - [`snippet`]: cutting text at sentence boundaries, ages and dates.
//! - [`focus`]: the window of a result that best matches the query, and the excerpt around it.
//! - [`rerank`]: the passages a cross-encoder reads for the top candidates, and the new order.
//! - [`prefetch`]: the text searches of a recall run ahead, while the query is embedded.

pub mod focus;
pub mod format;
pub mod fusion;
pub mod gather;
pub mod prefetch;
pub mod rerank;
pub mod snippet;
pub mod terms;

#[cfg(test)]
mod fake;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_format;
#[cfg(test)]
mod tests_index;

use std::str::FromStr;

use lore_storage::{DocKind, SearchFilter, SearchHit};

pub use format::{DEFAULT_CHAR_BUDGET, format_detail, format_missing, format_results};

/// Results a recall returns when the request does not say (`recallLimit`).
pub const DEFAULT_LIMIT: usize = 10;
/// Most results one recall may ask for.
pub const MAX_LIMIT: usize = 100;
/// Most query-expansion variants searched.
pub const MAX_VARIANTS: usize = 3;

/// Nearest documents as `(id, cosine)`, best first.
pub type Neighbours = Vec<(String, f32)>;

/// The documents recall searches. Implementations own the index details (BM25 field weights,
/// how vectors are stored); errors are plain messages.
pub trait RecallCorpus {
    /// BM25 hits for `query`, best first. `query` is tantivy query-parser text built by
    /// [`terms::bm25_query`] (quoted terms, no user syntax).
    fn text_search(
        &self,
        query: &str,
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<SearchHit>, String>;
    /// The nearest documents to a unit query vector: `(id, cosine)`, best first.
    fn vector_search(
        &self,
        vector: &[f32],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<(String, f32)>, String>;
    /// One document by id with its full body (vector-only hits, `id` lookups).
    fn document(&self, id: &str) -> Result<Option<SearchHit>, String>;
    /// [`RecallCorpus::document`] of each of `ids`, in order (the vector hits of one recall). A
    /// corpus that can read several at once overrides this; the default reads one by one.
    fn documents(&self, ids: &[&str]) -> Vec<Result<Option<SearchHit>, String>> {
        ids.iter().map(|id| self.document(id)).collect()
    }
    /// [`RecallCorpus::vector_search`] for each of `kinds` (the filter's own kind is ignored):
    /// per kind, the nearest documents, best first. A corpus that can answer every kind in one
    /// scan overrides this; the default asks once per kind.
    fn vector_search_by_kind(
        &self,
        vector: &[f32],
        filter: &SearchFilter,
        kinds: &[DocKind],
        limit: usize,
    ) -> Result<Vec<(DocKind, Neighbours)>, String> {
        kinds
            .iter()
            .map(|&kind| {
                let filter = SearchFilter {
                    kind: Some(kind),
                    ..filter.clone()
                };
                Ok((kind, self.vector_search(vector, &filter, limit)?))
            })
            .collect()
    }
}

/// What a recall searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecallScope {
    /// Everything, with affinity for the asking session.
    #[default]
    All,
    /// Only the asking session's messages and distillations (BM25 only).
    Session,
    /// Only the request's project.
    Project,
    /// Only knowledge entries.
    Knowledge,
}

impl RecallScope {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RecallScope::All => "all",
            RecallScope::Session => "session",
            RecallScope::Project => "project",
            RecallScope::Knowledge => "knowledge",
        }
    }

    /// The words of the `📚 Searching <label> for …` marker.
    pub fn label(self) -> &'static str {
        match self {
            RecallScope::All => "all archives",
            RecallScope::Session => "session history",
            RecallScope::Project => "project archives",
            RecallScope::Knowledge => "knowledge base",
        }
    }
}

impl FromStr for RecallScope {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "all" => Ok(RecallScope::All),
            "session" => Ok(RecallScope::Session),
            "project" => Ok(RecallScope::Project),
            "knowledge" => Ok(RecallScope::Knowledge),
            _ => Err(format!(
                "unknown recall scope `{text}`; use all, session, project or knowledge"
            )),
        }
    }
}

/// Which lists a recall fuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecallMode {
    /// BM25 and vector lists.
    #[default]
    Hybrid,
    /// Only the BM25-derived lists.
    Bm25,
    /// Only the vector lists.
    Vector,
}

impl FromStr for RecallMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "hybrid" => Ok(RecallMode::Hybrid),
            "bm25" => Ok(RecallMode::Bm25),
            "vector" => Ok(RecallMode::Vector),
            _ => Err(format!(
                "unknown recall mode `{text}`; use hybrid, bm25 or vector"
            )),
        }
    }
}

/// One recall question.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecallRequest {
    /// The user's words.
    pub query: String,
    /// What to search.
    pub scope: RecallScope,
    /// Which lists to fuse.
    pub mode: RecallMode,
    /// The asking session: scope `session` filters on it; otherwise it brings session affinity
    /// (scope `all`) and halves other sessions' messages and distillations.
    pub session: Option<String>,
    /// Scope `project` filters on it.
    pub project: Option<String>,
    /// Results wanted; 0 means [`DEFAULT_LIMIT`], at most [`MAX_LIMIT`].
    pub limit: usize,
    /// The unit vector of the query; `None` (no embedder) skips the vector lists.
    pub query_vector: Option<Vec<f32>>,
    /// Extra phrasings from query expansion; searched with BM25 only.
    pub variants: Vec<String>,
    /// The weights of the fused lists.
    pub weights: fusion::FusionWeights,
}

impl RecallRequest {
    /// A hybrid recall of `query` over everything with the default limit.
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            ..Default::default()
        }
    }

    /// The limit actually used.
    pub fn effective_limit(&self) -> usize {
        match self.limit {
            0 => DEFAULT_LIMIT,
            limit => limit.min(MAX_LIMIT),
        }
    }
}

/// Where a result comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecallSource {
    /// An entity (`e:`).
    Entity,
    /// A knowledge entry (`k:`, `xk:`).
    Knowledge,
    /// A distillation (`d:`).
    Distillation,
    /// A captured message (`t:`).
    Message,
}

impl RecallSource {
    /// The source of a hit: by id prefix, else by kind name, else a message.
    pub fn of(hit: &SearchHit) -> Self {
        let prefix = hit.id.split(':').next().unwrap_or_default();
        match prefix {
            "e" => RecallSource::Entity,
            "k" | "xk" => RecallSource::Knowledge,
            "d" => RecallSource::Distillation,
            "t" => RecallSource::Message,
            _ => match hit.kind.as_str() {
                "entity" => RecallSource::Entity,
                "knowledge" => RecallSource::Knowledge,
                "distillation" => RecallSource::Distillation,
                _ => RecallSource::Message,
            },
        }
    }

    /// Whether hits of this source belong to a session.
    pub fn is_session_bound(self) -> bool {
        matches!(self, RecallSource::Message | RecallSource::Distillation)
    }
}

/// One fused result.
#[derive(Debug, Clone, PartialEq)]
pub struct FusedHit {
    /// The document (its `score` is the corpus's own, BM25 or 0).
    pub hit: SearchHit,
    /// Where it comes from.
    pub source: RecallSource,
    /// The fused score.
    pub score: f32,
    /// The byte range of `hit.body` that best answers the query (see [`focus`]); excerpts are
    /// cut around it. `None`: the start.
    pub focus: Option<std::ops::Range<usize>>,
}

impl FusedHit {
    /// About `max_chars` characters of the body around its focus, and whether any was cut.
    pub fn excerpt(&self, max_chars: usize) -> (String, bool) {
        focus::excerpt(&self.hit.body, self.focus.clone(), max_chars)
    }
}

/// The answer of one recall.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecallOutcome {
    /// The top results, best first, at most the request's limit.
    pub hits: Vec<FusedHit>,
    /// Fused candidates before the limit (at most 3 × limit).
    pub candidates: usize,
    /// What degraded without failing the recall (a vector search error, a stale vector id).
    pub notes: Vec<String>,
}

/// The base filter of a request's scope, or what it is missing.
pub fn scope_filter(request: &RecallRequest) -> Result<SearchFilter, String> {
    let mut filter = SearchFilter::default();
    match request.scope {
        RecallScope::All => {}
        RecallScope::Session => match &request.session {
            Some(session) => filter.session = Some(session.clone()),
            None => return Err("recall scope `session` needs the asking session".into()),
        },
        RecallScope::Project => match &request.project {
            Some(project) => filter.project = Some(project.clone()),
            None => return Err("recall scope `project` needs a project".into()),
        },
        RecallScope::Knowledge => filter.kind = Some(DocKind::Knowledge),
    }
    Ok(filter)
}

/// Runs one recall: builds the lists of the request's scope and mode, fuses them (RRF with
/// the §18.1 weights) and returns the top `limit`. No meaningful terms → no results.
pub fn recall(corpus: &dyn RecallCorpus, request: &RecallRequest) -> Result<RecallOutcome, String> {
    let filter = scope_filter(request)?;
    let terms = terms::query_terms(&request.query);
    if terms.is_empty() {
        return Ok(RecallOutcome::default());
    }
    let limit = request.effective_limit();
    let gathered = gather::gather(corpus, request, &terms, &filter, limit)?;
    let fused = fusion::reciprocal_rank_fusion(&gathered.lists);
    let mut scored: Vec<FusedHit> = fused
        .into_iter()
        .filter_map(|(id, score)| {
            let hit = gathered.pool.get(&id)?.clone();
            let source = RecallSource::of(&hit);
            let other_session = match &request.session {
                Some(asking) => {
                    source.is_session_bound() && !hit.session.is_empty() && hit.session != *asking
                }
                None => false,
            };
            let factor = if other_session {
                fusion::OTHER_SESSION_FACTOR
            } else {
                1.0
            };
            Some(FusedHit {
                hit,
                source,
                score: score * factor,
                focus: None,
            })
        })
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score));
    scored.truncate(limit.saturating_mul(3));
    let candidates = scored.len();
    scored.truncate(limit);
    for fused in &mut scored {
        fused.focus = focus::best_window(&fused.hit.body, &terms, None);
    }
    Ok(RecallOutcome {
        hits: scored,
        candidates,
        notes: gathered.notes,
    })
}

/// The document of a recall `id` (e.g. `t:<session>:<seq>`), for [`format_detail`].
pub fn lookup(corpus: &dyn RecallCorpus, id: &str) -> Result<Option<SearchHit>, String> {
    let id = id.trim();
    if id.is_empty() {
        return Err("recall needs a non-empty id".into());
    }
    corpus.document(id)
}
