//! The cross-encoder against the real ms-marco-MiniLM-L-12-v2 and ONNX Runtime (installed by
//! `scripts/setup`; these tests fail, never skip, when they are absent).
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use lore_actors::ActorError;
use lore_actors::reranker::model::CrossEncoder;
use lore_actors::reranker::{RerankerConfig, SETUP_FIX};

/// The reranker of this machine; panics with the fix when it is not installed.
fn installed() -> RerankerConfig {
    let config = RerankerConfig::beside(&common::installed());
    for file in [config.model_file(), config.tokenizer_file()] {
        assert!(
            file.is_file(),
            "{} is missing: run scripts/setup (or set LORE_MODELS_DIR) before the tests",
            file.display()
        );
    }
    config
}

/// What loading `config` says is missing (with the reranker's fix).
fn missing(config: &RerankerConfig) -> String {
    match CrossEncoder::load(config, 1).unwrap_err() {
        ActorError::EmbedderUnavailable { missing, fix } => {
            assert_eq!(fix, SETUP_FIX, "{missing}");
            missing
        }
        other => panic!("expected EmbedderUnavailable, got {other:?}"),
    }
}

#[test]
fn a_relevant_passage_scores_higher_and_a_batch_matches_single_calls() {
    let mut model = CrossEncoder::load(&installed(), 1).unwrap();
    let query = "how do I deploy the service";
    let long = "the deploy script copies the binary to the server. ".repeat(200);
    let passages = [
        "banana bread recipe with walnuts",
        "to deploy the service, run scripts/deploy on the server",
        "",
        long.as_str(),
    ];
    let scores = model.score(query, &passages, None).unwrap();
    assert_eq!(scores.len(), passages.len());
    assert!(scores.iter().all(|s| s.is_finite()), "{scores:?}");
    assert!(scores[1] > scores[0] + 1.0, "{scores:?}");
    // int8 with dynamic quantization: a batch's scales depend on all of its rows, so a logit
    // moves a little with its neighbours.
    for (passage, batched) in passages.iter().zip(&scores) {
        let single = model.score(query, &[passage], None).unwrap();
        assert!(
            (single[0] - batched).abs() < 0.25,
            "{single:?} vs {batched}"
        );
    }
    let long_query = "é".repeat(300);
    assert_eq!(
        model.score(&long_query, &passages, None).unwrap().len(),
        4,
        "a long query is cut at a character boundary, not refused"
    );
    let past = std::time::Instant::now() - std::time::Duration::from_secs(1);
    let err = model.score(query, &passages, Some(past)).unwrap_err();
    assert!(matches!(err, ActorError::Rerank(_)), "{err:?}");
}

#[test]
fn missing_or_broken_files_are_named_with_the_fix() {
    let real = installed();
    let dir = tempfile::tempdir().unwrap();
    let config = RerankerConfig {
        models_dir: dir.path().to_path_buf(),
        runtime: real.runtime.clone(),
    };
    let (model, tokenizer) = (config.model_file(), config.tokenizer_file());
    assert_eq!(
        missing(&config),
        format!("the reranker model file {} does not exist", model.display())
    );

    std::fs::create_dir_all(model.parent().unwrap()).unwrap();
    std::fs::write(&model, b"not a graph").unwrap();
    let said = missing(&config);
    let expected = format!(
        "the reranker tokenizer file {} does not exist",
        tokenizer.display()
    );
    assert_eq!(said, expected);

    std::fs::write(&tokenizer, b"not json").unwrap();
    let said = missing(&config);
    assert!(
        said.starts_with(&format!(
            "the reranker model {} cannot be loaded: ",
            model.display()
        )),
        "{said}"
    );

    link(&real.model_file(), &model);
    let said = missing(&config);
    let prefix = format!(
        "the reranker tokenizer {} cannot be loaded: ",
        tokenizer.display()
    );
    assert!(said.starts_with(&prefix), "{said}");
}

fn link(target: &Path, at: &Path) {
    std::fs::remove_file(at).unwrap();
    std::os::unix::fs::symlink(target, at).unwrap();
}
