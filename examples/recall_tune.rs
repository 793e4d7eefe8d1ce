//! Chooses the recall fusion weights on the labelled retrieval set, in process: loads the set
//! into a scratch data directory, builds the index and the vectors with the real model, embeds
//! every question once, then scores each candidate weighting (recall@5 and MRR@10, overall and
//! per question type) with the engine the gateway runs.
//!
//! Run: `cargo run --release --example recall_tune` (after `scripts/setup`).

use std::collections::BTreeMap;

use anyhow::Context as _;
use lore::recall::corpus::{Corpus, search};
use lore_actors::embedder::{EmbedderConfig, EmbeddingModel, Purpose};
use lore_actors::indexer::rebuild_from;
use lore_actors::recall::fusion::FusionWeights;
use lore_actors::recall::{RecallMode, RecallRequest};
use lore_actors::vectorizer::backfill_blocking;
use lore_storage::SearchIndex;
use lore_test_support::retrieval::{RetrievalSet, loader};

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let set = RetrievalSet::generate();
    loader::load(dir.path(), &set.sessions)?;
    let store = loader::open(dir.path())?;
    let (index, _) = SearchIndex::open(&dir.path().join("index")).map_err(anyhow::Error::msg)?;
    rebuild_from(&store, &index).map_err(anyhow::Error::msg)?;
    let mut model =
        EmbeddingModel::load(&EmbedderConfig::from_env()).context("run scripts/setup")?;
    backfill_blocking(&store, &mut model, |_, _| {}).map_err(anyhow::Error::msg)?;
    let vectors = store.vectors();
    let corpus = Corpus {
        index: &index,
        vectors: Some(&vectors),
        store: Some(&store),
    };
    let mut query_vectors = Vec::with_capacity(set.questions.len());
    for question in &set.questions {
        let mut embedded = model
            .embed(&[question.text.as_str()], Purpose::Query)
            .map_err(|err| anyhow::anyhow!("{err}"))?;
        query_vectors.push(embedded.pop().unwrap_or_default());
    }
    let base = FusionWeights::reference();
    let candidates: Vec<(&str, RecallMode, FusionWeights)> = vec![
        ("bm25", RecallMode::Bm25, base),
        ("vector", RecallMode::Vector, base),
        ("hybrid, reference weights", RecallMode::Hybrid, base),
        (
            "hybrid, no recency",
            RecallMode::Hybrid,
            FusionWeights {
                recency: 0.0,
                ..base
            },
        ),
        (
            "hybrid, coverage, no recency, exact 0.5, vector 3",
            RecallMode::Hybrid,
            FusionWeights {
                recency: 0.0,
                exact_terms: 0.5,
                vector: 3.0,
                coverage_scaling: true,
                ..base
            },
        ),
        (
            "hybrid, the defaults (coverage, no recency, exact 0.5, vector 4)",
            RecallMode::Hybrid,
            FusionWeights::default(),
        ),
        (
            "hybrid, coverage, no recency, exact 0.25, vector 3",
            RecallMode::Hybrid,
            FusionWeights {
                recency: 0.0,
                exact_terms: 0.25,
                vector: 3.0,
                coverage_scaling: true,
                ..base
            },
        ),
        (
            "hybrid, coverage, no recency, exact 0.5, vector 2.5",
            RecallMode::Hybrid,
            FusionWeights {
                recency: 0.0,
                exact_terms: 0.5,
                vector: 2.5,
                coverage_scaling: true,
                ..base
            },
        ),
    ];
    println!(
        "| weighting | recall@5 | MRR@10 | lexical r@5 | paraphrase r@5 | mixed r@5 | even half r@5 / MRR | odd half r@5 / MRR |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (label, mode, weights) in candidates {
        let mut by_type: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        let (mut at5, mut reciprocal) = (0usize, 0f64);
        let mut halves = [(0usize, 0f64, 0usize); 2];
        for (number, (question, vector)) in set.questions.iter().zip(&query_vectors).enumerate() {
            let request = RecallRequest {
                query: question.text.clone(),
                mode,
                limit: 10,
                query_vector: Some(vector.clone()),
                weights,
                ..RecallRequest::default()
            };
            let outcome = search(&corpus, &request).map_err(anyhow::Error::msg)?;
            let rank = outcome
                .hits
                .iter()
                .position(|hit| hit.hit.id == question.answer_id)
                .map(|at| at + 1);
            let hit5 = rank.is_some_and(|rank| rank <= 5);
            at5 += usize::from(hit5);
            reciprocal += rank.map_or(0.0, |rank| 1.0 / rank as f64);
            let half = &mut halves[number % 2];
            half.0 += usize::from(hit5);
            half.1 += rank.map_or(0.0, |rank| 1.0 / rank as f64);
            half.2 += 1;
            let cell = by_type.entry(question.question_type.as_str()).or_default();
            cell.0 += 1;
            cell.1 += usize::from(hit5);
        }
        let n = set.questions.len() as f64;
        let share = |kind: &str| {
            by_type
                .get(kind)
                .map_or(0.0, |(all, hits)| *hits as f64 / (*all).max(1) as f64)
        };
        let half = |(hits, reciprocal, all): (usize, f64, usize)| {
            let all = all.max(1) as f64;
            format!("{:.3} / {:.3}", hits as f64 / all, reciprocal / all)
        };
        println!(
            "| {label} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} |",
            at5 as f64 / n,
            reciprocal / n,
            share("lexical"),
            share("paraphrase"),
            share("mixed"),
            half(halves[0]),
            half(halves[1])
        );
    }
    Ok(())
}
