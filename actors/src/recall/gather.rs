//! The ranked lists of one recall (reference §18.1 steps 3–5), read from a [`RecallCorpus`]:
//! BM25 per kind and query variant, vectors per kind, session affinity, exact terms and
//! recency, with their weights set; plus the pool of documents the lists name.

use std::collections::HashMap;

use lore_storage::{DocKind, SearchFilter, SearchHit};

use super::fusion::{
    self, FusionWeights, KNOWLEDGE_DOWNWEIGHT, ListOrigin, MAX_LISTS, RankedList,
    VECTOR_BOOST_WEIGHT, vector_weight,
};
use super::terms::{bm25_query, query_terms, whole_word_matches};
use super::{MAX_VARIANTS, RecallCorpus, RecallMode, RecallRequest, RecallScope};

/// The lists of one recall and the documents they name.
#[derive(Debug, Default)]
pub struct Gathered {
    /// The lists to fuse, weights set.
    pub lists: Vec<RankedList>,
    /// Every document named by a list, by id.
    pub pool: HashMap<String, SearchHit>,
    /// What degraded without failing.
    pub notes: Vec<String>,
}

/// The kinds searched for a scope.
pub fn kinds_for(scope: RecallScope) -> &'static [DocKind] {
    match scope {
        RecallScope::All | RecallScope::Project => &[
            DocKind::Message,
            DocKind::Distillation,
            DocKind::Knowledge,
            DocKind::Entity,
        ],
        RecallScope::Session => &[DocKind::Message, DocKind::Distillation],
        RecallScope::Knowledge => &[DocKind::Knowledge],
    }
}

struct Gathering<'a> {
    corpus: &'a dyn RecallCorpus,
    depth: usize,
    out: Gathered,
}

impl Gathering<'_> {
    fn text_list(
        &mut self,
        origin: ListOrigin,
        query: &str,
        filter: &SearchFilter,
        kind: DocKind,
    ) -> Result<(), String> {
        let filter = SearchFilter {
            kind: Some(kind),
            ..filter.clone()
        };
        let hits = self.corpus.text_search(query, &filter, self.depth)?;
        let ids = hits.iter().map(|hit| hit.id.clone()).collect();
        for hit in hits {
            self.out.pool.entry(hit.id.clone()).or_insert(hit);
        }
        self.out
            .lists
            .push(RankedList::new(origin, Some(kind), ids));
        Ok(())
    }

    /// One vector list per kind, from a single question to the corpus; a failure only drops
    /// the vector lists (noted).
    fn vector_lists(
        &mut self,
        vector: &[f32],
        filter: &SearchFilter,
        kinds: &[DocKind],
        weight: f32,
    ) {
        let per_kind = match self
            .corpus
            .vector_search_by_kind(vector, filter, kinds, self.depth)
        {
            Ok(per_kind) => per_kind,
            Err(err) => {
                self.out.notes.push(format!("vector search failed: {err}"));
                return;
            }
        };
        // The documents of every hit the text lists did not bring, read at once.
        let mut missing: Vec<&str> = Vec::new();
        for (_, nearest) in &per_kind {
            for (id, _) in nearest {
                if !self.out.pool.contains_key(id) && !missing.contains(&id.as_str()) {
                    missing.push(id);
                }
            }
        }
        let mut unreadable = HashMap::new();
        for (id, found) in missing.iter().zip(self.corpus.documents(&missing)) {
            match found {
                Ok(Some(hit)) => {
                    self.out.pool.insert((*id).to_string(), hit);
                }
                Ok(None) => {
                    unreadable.insert(*id, format!("vector hit {id} has no document"));
                }
                Err(err) => {
                    unreadable.insert(*id, format!("cannot read {id}: {err}"));
                }
            }
        }
        for &kind in kinds {
            let nearest = per_kind
                .iter()
                .find(|(found, _)| *found == kind)
                .map(|(_, nearest)| nearest.as_slice())
                .unwrap_or_default();
            let mut ids = Vec::with_capacity(nearest.len());
            for (id, _) in nearest {
                match unreadable.get(id.as_str()) {
                    Some(note) => self.out.notes.push(note.clone()),
                    None => ids.push(id.clone()),
                }
            }
            let mut list = RankedList::new(ListOrigin::Vector, Some(kind), ids);
            list.weight = weight;
            self.out.lists.push(list);
        }
    }
}

/// Reads every list of `request` from `corpus`. `terms` are the request's meaningful terms
/// (not empty), `filter` its scope filter, `limit` its effective limit (lists fetch 2×).
/// A BM25 failure fails the recall; a vector failure only drops that list (and is noted).
pub fn gather(
    corpus: &dyn RecallCorpus,
    request: &RecallRequest,
    terms: &[String],
    filter: &SearchFilter,
    limit: usize,
) -> Result<Gathered, String> {
    let mut gathering = Gathering {
        corpus,
        depth: limit.saturating_mul(2).max(1),
        out: Gathered::default(),
    };
    let kinds = kinds_for(request.scope);
    let with_text = request.mode != RecallMode::Vector;
    let with_vectors = request.mode != RecallMode::Bm25 && request.scope != RecallScope::Session;
    let query = bm25_query(terms);
    if with_text {
        for &kind in kinds {
            gathering.text_list(ListOrigin::Text, &query, filter, kind)?;
        }
    }
    if with_vectors {
        match &request.query_vector {
            Some(vector) => {
                let weight = vector_weight(&request.weights, terms.len());
                gathering.vector_lists(vector, filter, kinds, weight);
            }
            None if request.mode == RecallMode::Vector => gathering
                .out
                .notes
                .push("vector recall without a query vector (no embedder)".into()),
            None => {}
        }
    } else if request.mode == RecallMode::Vector {
        gathering
            .out
            .notes
            .push("scope session searches no vectors".into());
    }
    if with_text {
        if let (RecallScope::All, Some(session)) = (request.scope, &request.session) {
            let own = SearchFilter {
                session: Some(session.clone()),
                ..filter.clone()
            };
            for kind in [DocKind::Message, DocKind::Distillation] {
                gathering.text_list(ListOrigin::SessionAffinity, &query, &own, kind)?;
            }
        }
        for variant in variant_queries(&query, &request.variants) {
            for &kind in kinds {
                gathering.text_list(ListOrigin::Variant, &variant, filter, kind)?;
            }
        }
    }
    let mut out = gathering.out;
    fusion::trim_lists(&mut out.lists, MAX_LISTS.saturating_sub(2));
    if with_text {
        let exact = exact_terms_list(&out, terms);
        let recent = recency_list(&out);
        out.lists.extend([exact, recent]);
        let coverage = if request.weights.coverage_scaling {
            best_coverage(&out, terms)
        } else {
            1.0
        };
        apply_weights(&mut out.lists, &request.weights, coverage);
        out.lists
            .retain(|list| !list.ids.is_empty() && list.weight > 0.0);
    }
    if request.scope == RecallScope::All && has_session_context(&out.lists) {
        for list in &mut out.lists {
            if list.kind == Some(DocKind::Knowledge) {
                list.weight *= KNOWLEDGE_DOWNWEIGHT;
            }
        }
    }
    Ok(out)
}

/// Sets the weight of every list from `weights`: the BM25-derived ones scaled by `coverage`,
/// the vector ones eased back towards the reference boost as `coverage` nears 1.
fn apply_weights(lists: &mut [RankedList], weights: &FusionWeights, coverage: f32) {
    for list in lists {
        list.weight = match list.origin {
            ListOrigin::Text | ListOrigin::Variant => weights.text * coverage,
            ListOrigin::SessionAffinity => weights.session_affinity * coverage,
            ListOrigin::ExactTerms => weights.exact_terms * coverage,
            ListOrigin::Recency => weights.recency * coverage,
            // When the best BM25 hit holds every term, vectors weigh no more than the
            // reference's boost: an exact match (or a message not embedded yet) still wins.
            ListOrigin::Vector if weights.coverage_scaling && list.weight > VECTOR_BOOST_WEIGHT => {
                list.weight + (VECTOR_BOOST_WEIGHT - list.weight) * coverage
            }
            ListOrigin::Vector => list.weight,
        };
    }
}

/// The share of the query's terms that the best of the first BM25 hits holds as whole words.
fn best_coverage(out: &Gathered, terms: &[String]) -> f32 {
    if terms.is_empty() {
        return 1.0;
    }
    let best = out
        .lists
        .iter()
        .filter(|list| list.origin == ListOrigin::Text)
        .flat_map(|list| list.ids.iter().take(3))
        .filter_map(|id| out.pool.get(id))
        .map(|hit| whole_word_matches(terms, &hit.title, &hit.body))
        .max()
        .unwrap_or(0);
    best as f32 / terms.len() as f32
}

/// The BM25 texts of the expansion variants: non-empty, different from the query and each
/// other, at most [`MAX_VARIANTS`].
fn variant_queries(query: &str, variants: &[String]) -> Vec<String> {
    let mut texts: Vec<String> = Vec::new();
    for variant in variants {
        let text = bm25_query(&query_terms(variant));
        if !text.is_empty() && text != query && !texts.contains(&text) {
            texts.push(text);
        }
        if texts.len() == MAX_VARIANTS {
            break;
        }
    }
    texts
}

/// Every id named by a list, once, in the order first named.
fn candidate_order(lists: &[RankedList]) -> Vec<&str> {
    let mut seen = std::collections::HashSet::new();
    lists
        .iter()
        .flat_map(|list| list.ids.iter().map(String::as_str))
        .filter(|id| seen.insert(*id))
        .collect()
}

/// The candidates containing at least one query term as a whole word, most terms first.
fn exact_terms_list(out: &Gathered, terms: &[String]) -> RankedList {
    let mut matched: Vec<(&str, usize)> = candidate_order(&out.lists)
        .into_iter()
        .filter_map(|id| {
            let hit = out.pool.get(id)?;
            let count = whole_word_matches(terms, &hit.title, &hit.body);
            (count > 0).then_some((id, count))
        })
        .collect();
    matched.sort_by_key(|&(_, count)| std::cmp::Reverse(count));
    let ids = matched.into_iter().map(|(id, _)| id.to_string()).collect();
    RankedList::new(ListOrigin::ExactTerms, None, ids)
}

/// The message and distillation BM25 hits, newest first.
fn recency_list(out: &Gathered) -> RankedList {
    let bm25_lists: Vec<RankedList> = out
        .lists
        .iter()
        .filter(|list| {
            matches!(
                list.origin,
                ListOrigin::Text | ListOrigin::Variant | ListOrigin::SessionAffinity
            ) && matches!(list.kind, Some(DocKind::Message | DocKind::Distillation))
        })
        .cloned()
        .collect();
    let mut dated: Vec<(&str, u64)> = candidate_order(&bm25_lists)
        .into_iter()
        .filter_map(|id| Some((id, out.pool.get(id)?.created_at_ms)))
        .collect();
    dated.sort_by_key(|&(_, created)| std::cmp::Reverse(created));
    let ids = dated.into_iter().map(|(id, _)| id.to_string()).collect();
    RankedList::new(ListOrigin::Recency, None, ids)
}

/// Whether the asking session or any distillation has hits (knowledge then weighs less).
fn has_session_context(lists: &[RankedList]) -> bool {
    lists.iter().any(|list| {
        !list.ids.is_empty()
            && (list.origin == ListOrigin::SessionAffinity
                || list.kind == Some(DocKind::Distillation))
    })
}
