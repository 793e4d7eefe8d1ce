//! The embedding model and pool against the real bge-small-en-v1.5 and ONNX Runtime
//! (installed by `scripts/setup`; these tests fail, never skip, when they are absent).
#![allow(clippy::unwrap_used)]

mod common;

use lore_actors::ActorError;
use lore_actors::embedder::{
    Embedder, EmbedderConfig, EmbedderStatus, EmbeddingModel, MODEL_DIM, MODEL_NAME, Purpose,
};

use common::installed;

fn cos(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn vectors_are_unit_length_and_rank_related_text_higher() {
    let mut model = EmbeddingModel::load(&installed()).unwrap();
    let vectors = model
        .embed(
            &[
                "how do I deploy the service",
                "deployment steps for the server",
                "banana bread recipe",
            ],
            Purpose::Document,
        )
        .unwrap();
    assert_eq!(vectors.len(), 3);
    for vector in &vectors {
        assert_eq!(vector.len(), MODEL_DIM);
        let norm = cos(vector, vector).sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    }
    let related = cos(&vectors[0], &vectors[1]);
    let unrelated = cos(&vectors[0], &vectors[2]);
    eprintln!(
        "cos(deploy, deployment steps) = {related:.3}, cos(deploy, banana bread) = {unrelated:.3}"
    );
    assert!(
        related > unrelated + 0.2,
        "related {related}, unrelated {unrelated}"
    );
}

#[test]
fn a_batch_matches_single_calls_and_keeps_the_order() {
    let mut model = EmbeddingModel::load(&installed()).unwrap();
    let texts = [
        "fix the failing cargo test in the storage crate",
        "short",
        "the proxy forwards every request to the upstream API and records the reply in sled",
        "",
        "why does the borrow checker reject this closure?",
    ];
    let batch = model.embed(&texts, Purpose::Document).unwrap();
    for (text, batched) in texts.iter().zip(&batch) {
        let single = model.embed(&[text], Purpose::Document).unwrap();
        let similarity = cos(&single[0], batched);
        assert!(similarity >= 0.99, "{text:?}: cos {similarity}");
    }
}

#[test]
fn queries_and_documents_are_embedded_differently() {
    let mut model = EmbeddingModel::load(&installed()).unwrap();
    let text = "how do I deploy the service";
    let query = model.embed(&[text], Purpose::Query).unwrap();
    let document = model.embed(&[text], Purpose::Document).unwrap();
    let similarity = cos(&query[0], &document[0]);
    assert!(
        similarity < 0.999,
        "the query prefix changed nothing: cos {similarity}"
    );
    assert!(
        similarity > 0.5,
        "query and document drifted apart: cos {similarity}"
    );
}

#[test]
fn long_input_is_truncated_not_refused() {
    let mut model = EmbeddingModel::load(&installed()).unwrap();
    let long = "word ".repeat(5000);
    let vectors = model.embed(&[&long, "x"], Purpose::Document).unwrap();
    assert_eq!(vectors[0].len(), MODEL_DIM);
}

#[test]
fn a_missing_model_directory_is_reported_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let config = EmbedderConfig::in_dir(dir.path().join("nothing-here"));
    let err = EmbeddingModel::load(&config).unwrap_err();
    match &err {
        ActorError::EmbedderUnavailable { missing, fix } => {
            assert!(missing.contains("nothing-here"), "{missing}");
            assert!(fix.contains("scripts/setup"), "{fix}");
        }
        other => panic!("expected EmbedderUnavailable, got {other:?}"),
    }
    // A runtime that is present but a model that is not: the model file is named.
    let mut config = installed();
    config.models_dir = dir.path().to_path_buf();
    let err = EmbeddingModel::load(&config).unwrap_err().to_string();
    assert!(
        err.contains("model.onnx") && err.contains("scripts/setup"),
        "{err}"
    );
}

#[actix_rt::test]
async fn the_pool_reports_unavailable_and_fails_fast() {
    let dir = tempfile::tempdir().unwrap();
    let handle = Embedder::start(EmbedderConfig::in_dir(dir.path()));
    let EmbedderStatus::Unavailable { missing, fix } = handle.status() else {
        panic!("expected Unavailable, got {:?}", handle.status());
    };
    assert!(
        missing.contains(&dir.path().display().to_string()),
        "{missing}"
    );
    assert!(fix.contains("scripts/setup"), "{fix}");
    let json = serde_json::to_value(handle.status()).unwrap();
    assert_eq!(json["state"], "unavailable");
    let err = handle
        .embed(vec!["anything".into()], Purpose::Query)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ActorError::EmbedderUnavailable { .. }),
        "{err:?}"
    );
}

#[actix_rt::test]
async fn the_pool_embeds_like_the_model() {
    let mut config = installed();
    config.pool_size = 2;
    let handle = Embedder::start(config.clone());
    assert_eq!(
        handle.status(),
        EmbedderStatus::Ready {
            model: MODEL_NAME.into(),
            dim: MODEL_DIM,
            threads: 2
        }
    );
    let texts = vec!["deployment steps for the server".to_string(); 3];
    // Two calls at once: each goes to a worker of its own.
    let spawn = |texts: Vec<String>| {
        let handle = handle.clone();
        actix_rt::spawn(async move { handle.embed(texts, Purpose::Query).await })
    };
    let (a, b) = (spawn(texts.clone()), spawn(texts));
    let (a, b) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
    let direct = EmbeddingModel::load(&config)
        .unwrap()
        .embed(&["deployment steps for the server"], Purpose::Query)
        .unwrap();
    for vector in a.iter().chain(&b) {
        assert!(cos(vector, &direct[0]) >= 0.99);
    }
    assert!(
        handle
            .embed(Vec::new(), Purpose::Query)
            .await
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_long_document_gets_one_vector_per_passage_and_its_parts_are_findable() {
    let mut model = EmbeddingModel::load(&installed()).unwrap();
    let filler = "the quarterly report lists revenue, costs and headcount per region. ".repeat(120);
    let needle = "The flaky integration test failed because the sled lock was still held by a zombie process.";
    let long = format!("{filler}{needle} {filler}");
    let passages = model.embed_passages(&[&long, "short text"]).unwrap();
    assert_eq!(passages[1].len(), 1, "a short text is one passage");
    let count = passages[0].len();
    assert!(
        (3..=lore_actors::embedder::model::MAX_PASSAGES).contains(&count),
        "{count} passages"
    );
    let query = model
        .embed(&["why was the integration test flaky?"], Purpose::Query)
        .unwrap();
    let scores: Vec<f32> = passages[0].iter().map(|p| cos(&query[0], p)).collect();
    let best = scores.iter().cloned().fold(f32::MIN, f32::max);
    let first = scores[0];
    eprintln!("passage scores {scores:?}");
    assert!(
        best > first + 0.05,
        "the passage holding the answer ranks above the first: {scores:?}"
    );
    let whole = model.embed(&[&long], Purpose::Document).unwrap();
    // Dynamic int8 quantization scales per batch, so the same input in another batch differs a
    // little (the batch test above allows the same).
    let same = cos(&whole[0], &passages[0][0]);
    assert!(same > 0.99, "embed keeps the first passage: cos {same}");
}

/// A recall query goes to the query worker: it is answered while the only pool worker is still
/// busy with a batch of long documents (without the query worker it would wait behind the
/// batch). Both workers are loaded first, and the batch is seconds of work against a query's
/// milliseconds, so the order checked does not depend on how fast the models load.
#[actix_rt::test]
async fn a_query_does_not_wait_behind_a_document_batch() {
    let mut config = installed();
    config.pool_size = 1;
    config.query_threads = 1;
    let handle = Embedder::start(config);
    handle
        .embed(vec!["warm the pool".into()], Purpose::Document)
        .await
        .unwrap();
    handle
        .embed(vec!["warm the query worker".into()], Purpose::Query)
        .await
        .unwrap();
    let long = "the deployment notes list every server, its role and its owner. ".repeat(40);
    let documents = {
        let handle = handle.clone();
        let texts = vec![long; 48];
        actix_rt::spawn(async move {
            handle.embed(texts, Purpose::Document).await.unwrap();
            std::time::Instant::now()
        })
    };
    // The batch goes to the pool worker first.
    actix_rt::time::sleep(std::time::Duration::from_millis(200)).await;
    let query = handle
        .embed(vec!["who owns the servers?".into()], Purpose::Query)
        .await
        .unwrap();
    let answered = std::time::Instant::now();
    assert_eq!(query.len(), 1);
    let batch_done = documents.await.unwrap();
    assert!(
        answered < batch_done,
        "the query was answered only after the document batch"
    );
}
