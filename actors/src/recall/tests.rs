//! Tests of recall's lists and fusion against the in-memory [`FakeCorpus`].

use lore_storage::SearchFilter;

use super::fake::{FakeCorpus, doc};
use super::fusion::{FusionWeights, KNOWLEDGE_DOWNWEIGHT, ListOrigin, RRF_K, VECTOR_BOOST_WEIGHT};
use super::*;

fn ids(outcome: &RecallOutcome) -> Vec<&str> {
    outcome.hits.iter().map(|h| h.hit.id.as_str()).collect()
}

fn score_of(outcome: &RecallOutcome, id: &str) -> f32 {
    outcome
        .hits
        .iter()
        .find(|h| h.hit.id == id)
        .map_or(f32::NAN, |h| h.score)
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-6
}

fn rrf(rank: usize) -> f32 {
    1.0 / (RRF_K + rank as f32)
}

/// A request with the reference weights, whose arithmetic these tests check by hand.
fn reference(query: &str) -> RecallRequest {
    RecallRequest {
        weights: FusionWeights::reference(),
        ..RecallRequest::new(query)
    }
}

#[test]
fn the_default_weights_lean_on_vectors_when_bm25_matches_few_terms() {
    // The query shares one of its four terms with a distractor the vectors rank 11th, and none
    // with the answer the vectors rank first.
    let mut docs = vec![
        doc(
            "t:s:0",
            "s",
            "flyway applies the sql migrations every tuesday",
            1,
        ),
        doc("t:s:1", "s", "the tables of the billing report are wide", 2),
    ];
    let mut vector_order = vec!["t:s:0".to_string()];
    for n in 2..12 {
        let id = format!("t:s:{n}");
        docs.push(doc(&id, "s", "unrelated chatter about lunch", 3));
        vector_order.push(id);
    }
    vector_order.push("t:s:1".into());
    let corpus = FakeCorpus {
        docs,
        vector_order,
        ..FakeCorpus::default()
    };
    let query = "how do we evolve tables schema upgrades";
    let with = |weights: FusionWeights| {
        let request = RecallRequest {
            query_vector: Some(vec![1.0]),
            weights,
            ..RecallRequest::new(query)
        };
        recall(&corpus, &request).unwrap()
    };
    assert_eq!(ids(&with(FusionWeights::reference()))[0], "t:s:1");
    assert_eq!(ids(&with(FusionWeights::default()))[0], "t:s:0");
}

#[test]
fn hybrid_finds_what_either_list_alone_misses() {
    let corpus = FakeCorpus {
        docs: vec![
            doc("t:s:0", "s", "the ledger migration failed on refunds", 1),
            doc("t:s:1", "s", "a ledger was printed", 1),
            doc(
                "t:s:2",
                "s",
                "moving the accounts database to the new schema",
                1,
            ),
            doc("t:s:3", "s", "weather is nice today", 1),
        ],
        vector_order: vec!["t:s:2".into(), "t:s:3".into()],
        ..Default::default()
    };
    let relevant = ["t:s:0", "t:s:2"];
    let found = |mode: RecallMode| {
        let request = RecallRequest {
            mode,
            limit: 3,
            query_vector: Some(vec![1.0, 0.0]),
            ..reference("ledger migration")
        };
        let outcome = recall(&corpus, &request).unwrap();
        relevant
            .iter()
            .filter(|id| ids(&outcome).contains(id))
            .count()
    };
    assert_eq!(found(RecallMode::Bm25), 1, "BM25 misses the paraphrase");
    assert_eq!(found(RecallMode::Vector), 1, "vectors miss the exact words");
    assert_eq!(found(RecallMode::Hybrid), 2, "hybrid finds both");
}

#[test]
fn other_sessions_are_halved_only_when_a_session_asks() {
    let corpus = FakeCorpus {
        docs: vec![
            doc("t:mine:0", "mine", "refunds ledger", 5),
            doc("t:other:0", "other", "refunds ledger", 5),
        ],
        ..Default::default()
    };
    let asking = RecallRequest {
        session: Some("mine".into()),
        ..reference("refunds ledger")
    };
    let outcome = recall(&corpus, &asking).unwrap();
    assert_eq!(ids(&outcome), ["t:mine:0", "t:other:0"]);
    // Text, affinity, exact terms and recency lists put mine first; other is second in three.
    assert!(close(score_of(&outcome, "t:mine:0"), 4.0 * rrf(0)));
    assert!(close(score_of(&outcome, "t:other:0"), 0.5 * 3.0 * rrf(1)));

    let anonymous = recall(&corpus, &reference("refunds ledger")).unwrap();
    assert!(close(score_of(&anonymous, "t:other:0"), 3.0 * rrf(1)));

    let project = RecallRequest {
        scope: RecallScope::Project,
        project: Some("/p".into()),
        ..asking.clone()
    };
    let outcome = recall(&corpus, &project).unwrap();
    assert!(close(score_of(&outcome, "t:other:0"), 0.5 * 3.0 * rrf(1)));
}

#[test]
fn knowledge_weighs_less_only_for_scope_all_with_session_context() {
    let with_distillation = FakeCorpus {
        docs: vec![
            doc("k:1", "", "refunds are retried nightly", 1),
            doc("d:s:0", "s", "refunds failed twice", 1),
        ],
        vector_order: vec!["k:1".into()],
        ..Default::default()
    };
    let request = RecallRequest {
        query_vector: Some(vec![1.0]),
        ..reference("refunds retried")
    };
    let knowledge_weights = |corpus: &FakeCorpus, request: &RecallRequest| {
        let terms = terms::query_terms(&request.query);
        let filter = scope_filter(request).unwrap();
        let gathered = gather::gather(corpus, request, &terms, &filter, 10).unwrap();
        gathered
            .lists
            .iter()
            .filter(|l| l.kind == Some(DocKind::Knowledge))
            .map(|l| (l.origin, l.weight))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        knowledge_weights(&with_distillation, &request),
        [
            (ListOrigin::Text, KNOWLEDGE_DOWNWEIGHT),
            (
                ListOrigin::Vector,
                VECTOR_BOOST_WEIGHT * KNOWLEDGE_DOWNWEIGHT
            )
        ]
    );
    let outcome = recall(&with_distillation, &request).unwrap();
    // Knowledge text rank 0 (×0.6), vector rank 0 (×1.5×0.6), exact terms rank 0.
    let expected = KNOWLEDGE_DOWNWEIGHT * rrf(0)
        + VECTOR_BOOST_WEIGHT * KNOWLEDGE_DOWNWEIGHT * rrf(0)
        + rrf(0);
    assert!(close(score_of(&outcome, "k:1"), expected));

    let project = RecallRequest {
        scope: RecallScope::Project,
        project: Some("/p".into()),
        ..request.clone()
    };
    assert_eq!(
        knowledge_weights(&with_distillation, &project),
        [
            (ListOrigin::Text, 1.0),
            (ListOrigin::Vector, VECTOR_BOOST_WEIGHT)
        ]
    );
    let knowledge_only = FakeCorpus {
        docs: vec![doc("k:1", "", "refunds are retried nightly", 1)],
        ..Default::default()
    };
    assert_eq!(
        knowledge_weights(&knowledge_only, &request),
        [(ListOrigin::Text, 1.0)],
        "no session or distillation hits: full weight"
    );
}

#[test]
fn scope_session_never_searches_vectors_or_other_sessions() {
    let corpus = FakeCorpus {
        docs: vec![
            doc("t:mine:0", "mine", "deploy script broke", 1),
            doc("t:other:0", "other", "deploy script broke again", 2),
            doc("d:other:0", "other", "deploy script", 2),
            doc("k:1", "", "deploy script lives in ops", 2),
        ],
        vector_order: vec!["t:other:0".into(), "k:1".into()],
        ..Default::default()
    };
    let request = RecallRequest {
        scope: RecallScope::Session,
        session: Some("mine".into()),
        query_vector: Some(vec![1.0]),
        variants: vec!["deployment script failure".into()],
        ..reference("deploy script")
    };
    let outcome = recall(&corpus, &request).unwrap();
    assert_eq!(ids(&outcome), ["t:mine:0"]);
    assert_eq!(corpus.vector_calls.get(), 0);
    let filters = corpus.text_filters.borrow();
    assert!(!filters.is_empty());
    assert!(filters.iter().all(|f| f.session.as_deref() == Some("mine")));
    assert!(filters.iter().all(|f| f.kind != Some(DocKind::Knowledge)));

    let vector_mode = RecallRequest {
        mode: RecallMode::Vector,
        ..request.clone()
    };
    let outcome = recall(&corpus, &vector_mode).unwrap();
    assert!(outcome.hits.is_empty());
    assert_eq!(corpus.vector_calls.get(), 0);

    let no_session = RecallRequest {
        session: None,
        ..request
    };
    assert!(
        recall(&corpus, &no_session)
            .unwrap_err()
            .contains("session")
    );
}

#[test]
fn the_exact_term_list_lifts_the_document_with_every_term() {
    let corpus = FakeCorpus {
        docs: vec![
            doc("k:x", "", "alphabetical alphabet alphanumeric alphas", 1),
            doc("k:w", "", "alphas betas gammas", 1),
            doc("k:y", "", "alpha beta gamma", 1),
        ],
        ..Default::default()
    };
    let request = RecallRequest {
        scope: RecallScope::Knowledge,
        ..reference("alpha beta gamma")
    };
    let bm25 = corpus
        .text_search("alpha beta gamma", &SearchFilter::default(), 10)
        .unwrap();
    assert_eq!(bm25.last().map(|h| h.id.as_str()), Some("k:y"));
    let outcome = recall(&corpus, &request).unwrap();
    assert_eq!(ids(&outcome)[0], "k:y");
    assert!(close(score_of(&outcome, "k:y"), rrf(2) + rrf(0)));
}

#[test]
fn a_query_without_terms_finds_nothing_and_asks_nothing() {
    let corpus = FakeCorpus {
        docs: vec![doc("t:s:0", "s", "the of and", 1)],
        ..Default::default()
    };
    for query in ["", "the of and", "a b c ?!", "   "] {
        let outcome = recall(&corpus, &reference(query)).unwrap();
        assert!(outcome.hits.is_empty());
        assert_eq!(outcome.candidates, 0);
    }
    assert!(corpus.text_filters.borrow().is_empty());
}

#[test]
fn without_a_query_vector_recall_is_bm25_alone() {
    let corpus = FakeCorpus {
        docs: vec![doc("t:s:0", "s", "cache warmup", 1)],
        vector_order: vec!["t:s:0".into()],
        ..Default::default()
    };
    let outcome = recall(&corpus, &reference("cache warmup")).unwrap();
    assert_eq!(ids(&outcome), ["t:s:0"]);
    assert_eq!(corpus.vector_calls.get(), 0);
    let bm25 = RecallRequest {
        mode: RecallMode::Bm25,
        query_vector: Some(vec![1.0]),
        ..reference("cache warmup")
    };
    recall(&corpus, &bm25).unwrap();
    assert_eq!(corpus.vector_calls.get(), 0);
}

#[test]
fn vector_failures_and_stale_ids_degrade_without_failing() {
    let mut corpus = FakeCorpus {
        docs: vec![doc("t:s:0", "s", "cache warmup", 1)],
        vector_order: vec!["t:gone:9".into(), "t:s:0".into()],
        ..Default::default()
    };
    let request = RecallRequest {
        query_vector: Some(vec![1.0]),
        ..reference("cache warmup")
    };
    let outcome = recall(&corpus, &request).unwrap();
    assert_eq!(ids(&outcome), ["t:s:0"]);
    assert!(outcome.notes.iter().any(|n| n.contains("t:gone:9")));
    corpus.vector_fails = true;
    let outcome = recall(&corpus, &request).unwrap();
    assert_eq!(ids(&outcome), ["t:s:0"]);
    assert!(outcome.notes.iter().any(|n| n.contains("offline")));
}

#[test]
fn limits_cap_candidates_and_results() {
    let docs = (0..40)
        .map(|i| doc(&format!("t:s:{i}"), "s", "flaky test again", i))
        .collect();
    let corpus = FakeCorpus {
        docs,
        ..Default::default()
    };
    let request = RecallRequest {
        limit: 4,
        ..reference("flaky test")
    };
    let outcome = recall(&corpus, &request).unwrap();
    assert_eq!(outcome.hits.len(), 4);
    assert!(outcome.candidates <= 12 && outcome.candidates > 4);
    assert!(outcome.hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert_eq!(reference("x").effective_limit(), DEFAULT_LIMIT);
}

#[test]
fn variants_add_bm25_lists_within_the_list_cap() {
    let corpus = FakeCorpus {
        docs: vec![
            doc("t:s:0", "s", "cache warmup", 1),
            doc("d:s:0", "s", "prefetch on boot", 1),
        ],
        ..Default::default()
    };
    let request = RecallRequest {
        variants: vec![
            "prefetch boot".into(),
            "cache warmup".into(),
            "boot prefetch".into(),
        ],
        ..reference("cache warmup")
    };
    let outcome = recall(&corpus, &request).unwrap();
    assert!(ids(&outcome).contains(&"d:s:0"), "found through a variant");
    assert_eq!(corpus.vector_calls.get(), 0);
}

#[test]
fn scopes_and_modes_parse_with_clear_errors() {
    assert_eq!("Session".parse::<RecallScope>(), Ok(RecallScope::Session));
    assert_eq!(
        "knowledge".parse::<RecallScope>(),
        Ok(RecallScope::Knowledge)
    );
    let err = "everything".parse::<RecallScope>().unwrap_err();
    assert!(err.contains("everything") && err.contains("all, session, project or knowledge"));
    assert_eq!("bm25".parse::<RecallMode>(), Ok(RecallMode::Bm25));
    assert!(
        "fuzzy"
            .parse::<RecallMode>()
            .unwrap_err()
            .contains("hybrid, bm25 or vector")
    );
    assert_eq!(RecallScope::Project.label(), "project archives");
}

#[test]
fn sources_come_from_the_id_prefix_then_the_kind() {
    let mut hit = doc("xk:9", "", "", 0);
    assert_eq!(RecallSource::of(&hit), RecallSource::Knowledge);
    hit.id = "e:ann".into();
    assert_eq!(RecallSource::of(&hit), RecallSource::Entity);
    hit.id = "odd".into();
    hit.kind = "distillation".into();
    assert_eq!(RecallSource::of(&hit), RecallSource::Distillation);
}

#[test]
fn a_document_holding_every_term_beats_vector_neighbours_even_without_a_vector() {
    // The answer was captured a moment ago and has no vector yet; twenty others are nearer.
    let mut docs = vec![doc(
        "t:s:0",
        "s",
        "the release train leaves from branch rel-42",
        1,
    )];
    let mut vector_order = Vec::new();
    for n in 1..=20 {
        let id = format!("t:s:{n}");
        docs.push(doc(&id, "s", "ok: stream it", 2));
        vector_order.push(id);
    }
    let corpus = FakeCorpus {
        docs,
        vector_order,
        ..FakeCorpus::default()
    };
    let request = RecallRequest {
        query_vector: Some(vec![1.0]),
        ..RecallRequest::new("release train rel-42")
    };
    let outcome = recall(&corpus, &request).unwrap();
    assert_eq!(ids(&outcome)[0], "t:s:0");
}
