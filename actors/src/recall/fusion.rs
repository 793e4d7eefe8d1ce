//! Fusion of ranked lists into one ranking: reciprocal rank fusion (RRF) and the weights of
//! reference §18.1 (vector boost, knowledge downweight, other-session factor, list cap).

use lore_storage::DocKind;

/// The `k` of RRF: `score = Σ weight / (k + rank)`, rank 0-based.
pub const RRF_K: f32 = 60.0;
/// Weight of a vector list when the query has at least [`VECTOR_BOOST_MIN_TERMS`] terms.
pub const VECTOR_BOOST_WEIGHT: f32 = 1.5;
/// Meaningful terms a query needs for the vector boost.
pub const VECTOR_BOOST_MIN_TERMS: usize = 2;
/// Weight of knowledge lists for scope `all` when the session or distillations have hits.
pub const KNOWLEDGE_DOWNWEIGHT: f32 = 0.6;
/// Factor on message and distillation hits from sessions other than the asking one.
pub const OTHER_SESSION_FACTOR: f32 = 0.5;
/// Most lists fused; query-variant lists are dropped first.
pub const MAX_LISTS: usize = 14;

/// The weights of the lists a recall fuses. The defaults were chosen on the labelled retrieval
/// set (`examples/recall_tune.rs`, figures in `docs/benchmarks.md`): with the reference's
/// weights ([`FusionWeights::reference`]) three lists built from the same BM25 hits outvote the
/// vectors, and hybrid recall ranks below vectors alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionWeights {
    /// BM25 lists of the query and its variants.
    pub text: f32,
    /// Vector lists, when the query has at least [`VECTOR_BOOST_MIN_TERMS`] terms (two thirds of
    /// it below).
    pub vector: f32,
    /// BM25 lists restricted to the asking session.
    pub session_affinity: f32,
    /// The exact-term list.
    pub exact_terms: f32,
    /// The recency-sorted copy of the message and distillation hits (0 leaves it out).
    pub recency: f32,
    /// Scale the BM25-derived lists by how many query terms the best BM25 hit holds, so a
    /// question phrased unlike its answer leans on the vectors.
    pub coverage_scaling: bool,
}

impl Default for FusionWeights {
    /// Chosen on one half of the labelled set, checked on the other.
    fn default() -> Self {
        Self {
            text: 1.0,
            vector: 4.0,
            session_affinity: 1.0,
            exact_terms: 0.5,
            recency: 0.0,
            coverage_scaling: true,
        }
    }
}

impl FusionWeights {
    /// The weights of the reference implementation: 1.0 for every BM25-derived list, 1.5 for
    /// vectors, no coverage scaling.
    pub fn reference() -> Self {
        Self {
            text: 1.0,
            vector: VECTOR_BOOST_WEIGHT,
            session_affinity: 1.0,
            exact_terms: 1.0,
            recency: 1.0,
            coverage_scaling: false,
        }
    }
}

/// Where a ranked list comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOrigin {
    /// BM25 for the original query.
    Text,
    /// BM25 for an expansion variant of the query.
    Variant,
    /// Vector similarity for the original query.
    Vector,
    /// BM25 restricted to the asking session.
    SessionAffinity,
    /// Candidates ranked by how many query terms they contain as whole words.
    ExactTerms,
    /// Message and distillation BM25 hits, newest first.
    Recency,
}

/// One ranked list of document ids, best first, with its fusion weight.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedList {
    /// Where it comes from.
    pub origin: ListOrigin,
    /// The kind it was restricted to, if any.
    pub kind: Option<DocKind>,
    /// Its RRF weight.
    pub weight: f32,
    /// Ids, best first, each once.
    pub ids: Vec<String>,
}

impl RankedList {
    /// A list of weight 1.0; repeated ids keep their best rank only.
    pub fn new(origin: ListOrigin, kind: Option<DocKind>, ids: Vec<String>) -> Self {
        let mut seen = std::collections::HashSet::new();
        let ids = ids
            .into_iter()
            .filter(|id| seen.insert(id.clone()))
            .collect();
        Self {
            origin,
            kind,
            weight: 1.0,
            ids,
        }
    }
}

/// The weight of vector lists for a query of `term_count` meaningful terms.
pub fn vector_weight(weights: &FusionWeights, term_count: usize) -> f32 {
    if term_count >= VECTOR_BOOST_MIN_TERMS {
        weights.vector
    } else {
        weights.vector / VECTOR_BOOST_WEIGHT
    }
}

/// Drops empty lists, then query-variant lists from the end until at most `max` lists remain
/// (primary lists are always kept).
pub fn trim_lists(lists: &mut Vec<RankedList>, max: usize) {
    lists.retain(|list| !list.ids.is_empty());
    while lists.len() > max {
        match lists
            .iter()
            .rposition(|list| list.origin == ListOrigin::Variant)
        {
            Some(position) => {
                lists.remove(position);
            }
            None => break,
        }
    }
}

/// Reciprocal rank fusion: each id scores `Σ weight / (RRF_K + rank)` over the lists it is in.
/// Best first; equal scores keep the order in which ids were first seen.
pub fn reciprocal_rank_fusion(lists: &[RankedList]) -> Vec<(String, f32)> {
    let mut order: Vec<String> = Vec::new();
    let mut scores: std::collections::HashMap<String, f32> = std::collections::HashMap::new();
    for list in lists {
        for (rank, id) in list.ids.iter().enumerate() {
            let contribution = list.weight / (RRF_K + rank as f32);
            match scores.get_mut(id) {
                Some(score) => *score += contribution,
                None => {
                    scores.insert(id.clone(), contribution);
                    order.push(id.clone());
                }
            }
        }
    }
    let mut fused: Vec<(String, f32)> = order
        .into_iter()
        .map(|id| {
            let score = scores.get(&id).copied().unwrap_or(0.0);
            (id, score)
        })
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(origin: ListOrigin, weight: f32, ids: &[&str]) -> RankedList {
        let mut list = RankedList::new(origin, None, ids.iter().map(|s| s.to_string()).collect());
        list.weight = weight;
        list
    }

    #[test]
    fn rrf_matches_a_hand_computed_example() {
        // a: 1/60 + 1.5/61; b: 1/61 + 1.5/60; c: 1/62.
        let fused = reciprocal_rank_fusion(&[
            list(ListOrigin::Text, 1.0, &["a", "b", "c"]),
            list(ListOrigin::Vector, 1.5, &["b", "a"]),
        ]);
        let ids: Vec<&str> = fused.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!(ids, ["b", "a", "c"]);
        let expected = [1.0 / 61.0 + 1.5 / 60.0, 1.0 / 60.0 + 1.5 / 61.0, 1.0 / 62.0];
        for ((_, score), want) in fused.iter().zip(expected) {
            assert!((score - want).abs() < 1e-6, "{score} vs {want}");
        }
    }

    #[test]
    fn repeated_ids_keep_their_best_rank_and_ties_keep_first_seen_order() {
        let repeated = RankedList::new(ListOrigin::Text, None, vec!["x".into(), "x".into()]);
        assert_eq!(repeated.ids, ["x"]);
        let fused = reciprocal_rank_fusion(&[
            list(ListOrigin::Text, 1.0, &["p"]),
            list(ListOrigin::Text, 1.0, &["q"]),
        ]);
        assert_eq!(fused[0].0, "p");
        assert_eq!(fused[1].0, "q");
    }

    #[test]
    fn trimming_drops_empty_lists_then_the_last_variants() {
        let mut lists = vec![
            list(ListOrigin::Text, 1.0, &["a"]),
            list(ListOrigin::Variant, 1.0, &["b"]),
            list(ListOrigin::Text, 1.0, &[]),
            list(ListOrigin::Vector, 1.0, &["c"]),
            list(ListOrigin::Variant, 1.0, &["d"]),
        ];
        trim_lists(&mut lists, 3);
        let firsts: Vec<&str> = lists.iter().map(|l| l.ids[0].as_str()).collect();
        assert_eq!(firsts, ["a", "b", "c"]);
        trim_lists(&mut lists, 1);
        assert_eq!(lists.len(), 2, "primary lists are never trimmed");
    }

    #[test]
    fn the_vector_boost_needs_two_terms() {
        let weights = FusionWeights::reference();
        assert_eq!(vector_weight(&weights, 1), 1.0);
        assert_eq!(vector_weight(&weights, 2), VECTOR_BOOST_WEIGHT);
    }
}
