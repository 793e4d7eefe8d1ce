//! Tests of the vector store on a real sled database.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::store::Store;

fn doc(id: &str, kind: DocKind, session: &str, project: &str) -> VectorDoc {
    VectorDoc {
        id: id.into(),
        kind,
        session: session.into(),
        project: project.into(),
        created_at_ms: 7,
    }
}

/// A unit vector of `dim` pointing mostly along axis `axis`, tilted by `tilt` along axis 0.
fn axis(dim: usize, axis: usize, tilt: f32) -> Vec<f32> {
    let mut v = vec![0.0; dim];
    v[axis] = 1.0;
    v[0] += tilt;
    v
}

#[test]
fn writes_need_a_model_stamp() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = Store::open(dir.path()).unwrap().vectors();
    let err = vectors
        .put_many(&[(doc("t:s:0", DocKind::Message, "s", "p"), vec![1.0; 4])])
        .unwrap_err();
    assert!(err.message.contains("ensure_model"), "{err}");
    assert!(!vectors.ensure_model("m", 4).unwrap());
    let err = vectors
        .put_many(&[(doc("t:s:0", DocKind::Message, "s", "p"), vec![1.0; 3])])
        .unwrap_err();
    assert!(err.message.contains("has 3 values"), "{err}");
}

#[test]
fn round_trip_and_reopen_keep_vectors() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        let vectors = store.vectors();
        vectors.ensure_model("m", 8).unwrap();
        vectors
            .put_many(&[
                (doc("t:a:0", DocKind::Message, "a", "/p"), axis(8, 1, 0.0)),
                (doc("t:a:1", DocKind::Message, "a", "/p"), axis(8, 2, 0.0)),
            ])
            .unwrap();
        assert!(vectors.contains("t:a:0").unwrap());
        assert!(!vectors.contains("t:a:9").unwrap());
        assert_eq!(vectors.len().unwrap(), 2);
        store.flush().unwrap();
    }
    let store = crate::store::reopen(dir.path());
    let vectors = store.vectors();
    assert!(
        !vectors.ensure_model("m", 8).unwrap(),
        "same model keeps vectors"
    );
    assert_eq!(vectors.len().unwrap(), 2);
    let hits = vectors
        .search(&axis(8, 2, 0.0), &SearchFilter::default(), 1)
        .unwrap();
    assert_eq!(hits.len(), 1);
    let hit = &hits[0];
    assert_eq!(hit.id, "t:a:1");
    assert!((hit.score - 1.0).abs() < 1e-5, "{}", hit.score);
    assert_eq!(
        (
            hit.kind,
            hit.session.as_str(),
            hit.project.as_str(),
            hit.created_at_ms
        ),
        (DocKind::Message, "a", "/p", 7)
    );
}

#[test]
fn search_ranks_the_nearest_first() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = Store::open(dir.path()).unwrap().vectors();
    vectors.ensure_model("m", 16).unwrap();
    let items: Vec<_> = (0..10)
        .map(|i| {
            let tilt = i as f32 * 0.3;
            (
                doc(&format!("t:s:{i}"), DocKind::Message, "s", ""),
                axis(16, 5, tilt),
            )
        })
        .collect();
    vectors.put_many(&items).unwrap();
    let hits = vectors
        .search(&axis(16, 5, 0.0), &SearchFilter::default(), 4)
        .unwrap();
    let ids: Vec<_> = hits.iter().map(|hit| hit.id.as_str()).collect();
    assert_eq!(ids, ["t:s:0", "t:s:1", "t:s:2", "t:s:3"]);
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
}

#[test]
fn filters_by_session_project_and_kind() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = Store::open(dir.path()).unwrap().vectors();
    vectors.ensure_model("m", 4).unwrap();
    vectors
        .put_many(&[
            (
                doc("t:a:0", DocKind::Message, "a", "/x"),
                vec![1.0, 0.0, 0.0, 0.0],
            ),
            (
                doc("t:b:0", DocKind::Message, "b", "/y"),
                vec![0.9, 0.1, 0.0, 0.0],
            ),
            (
                doc("k:1", DocKind::Knowledge, "", "/y"),
                vec![0.8, 0.2, 0.0, 0.0],
            ),
        ])
        .unwrap();
    let query = [1.0, 0.0, 0.0, 0.0];
    let ids = |filter: SearchFilter| -> Vec<String> {
        let hits = vectors.search(&query, &filter, 10).unwrap();
        hits.into_iter().map(|hit| hit.id).collect()
    };
    assert_eq!(ids(SearchFilter::default()), ["t:a:0", "t:b:0", "k:1"]);
    let session = |s: &str| SearchFilter {
        session: Some(s.into()),
        ..SearchFilter::default()
    };
    assert_eq!(ids(session("b")), ["t:b:0"]);
    assert!(ids(session("nope")).is_empty());
    let project = SearchFilter {
        project: Some("/y".into()),
        ..SearchFilter::default()
    };
    assert_eq!(ids(project), ["t:b:0", "k:1"]);
    let kind = SearchFilter {
        kind: Some(DocKind::Knowledge),
        ..SearchFilter::default()
    };
    assert_eq!(ids(kind), ["k:1"]);
    let both = SearchFilter {
        project: Some("/x".into()),
        kind: Some(DocKind::Knowledge),
        ..SearchFilter::default()
    };
    assert!(ids(both).is_empty());
}

#[test]
fn a_model_change_clears_every_vector() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let vectors = store.vectors();
    vectors.ensure_model("old", 4).unwrap();
    vectors
        .put_many(&[(doc("t:a:0", DocKind::Message, "a", ""), vec![1.0; 4])])
        .unwrap();
    assert_eq!(vectors.len().unwrap(), 1);
    assert!(vectors.ensure_model("new", 6).unwrap());
    assert_eq!(vectors.len().unwrap(), 0);
    assert!(!vectors.contains("t:a:0").unwrap());
    assert_eq!(
        store.vectors().model(),
        Some(ModelStamp {
            name: "new".into(),
            dim: 6
        })
    );
    vectors
        .put_many(&[(doc("t:a:0", DocKind::Message, "a", ""), vec![1.0; 6])])
        .unwrap();
    assert_eq!(
        vectors
            .search(&[1.0; 6], &SearchFilter::default(), 3)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn remove_and_replace_keep_the_memory_copy_current() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = Store::open(dir.path()).unwrap().vectors();
    vectors.ensure_model("m", 4).unwrap();
    vectors.warm().unwrap();
    let a = doc("t:a:0", DocKind::Message, "a", "");
    let b = doc("t:a:1", DocKind::Message, "a", "");
    vectors
        .put_many(&[
            (a.clone(), vec![1.0, 0.0, 0.0, 0.0]),
            (b.clone(), vec![0.0, 1.0, 0.0, 0.0]),
        ])
        .unwrap();
    assert!(vectors.remove("t:a:0").unwrap());
    assert!(!vectors.remove("t:a:0").unwrap());
    let hits = vectors
        .search(&[1.0, 0.0, 0.0, 0.0], &SearchFilter::default(), 5)
        .unwrap();
    assert_eq!(
        hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
        ["t:a:1"]
    );
    vectors.put_many(&[(b, vec![1.0, 0.0, 0.0, 0.0])]).unwrap();
    assert_eq!(vectors.len().unwrap(), 1);
    let hits = vectors
        .search(&[1.0, 0.0, 0.0, 0.0], &SearchFilter::default(), 5)
        .unwrap();
    assert!((hits[0].score - 1.0).abs() < 1e-5);
}

#[test]
fn readers_and_a_writer_share_the_store_across_threads() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = Store::open(dir.path()).unwrap().vectors();
    vectors.ensure_model("m", 8).unwrap();
    let writer = {
        let vectors = vectors.clone();
        std::thread::spawn(move || {
            for i in 0..200 {
                let item = (
                    doc(&format!("t:w:{i}"), DocKind::Message, "w", ""),
                    axis(8, 1 + i % 7, 0.1),
                );
                vectors.put_many(&[item]).unwrap();
            }
        })
    };
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let vectors = vectors.clone();
            std::thread::spawn(move || {
                for _ in 0..200 {
                    vectors
                        .search(&axis(8, 3, 0.0), &SearchFilter::default(), 5)
                        .unwrap();
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for reader in readers {
        reader.join().unwrap();
    }
    assert_eq!(vectors.len().unwrap(), 200);
}

#[test]
fn one_scan_by_kind_matches_a_search_per_kind() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = Store::open(dir.path()).unwrap().vectors();
    vectors.ensure_model("m", 4).unwrap();
    let kinds = [DocKind::Message, DocKind::Knowledge, DocKind::Distillation];
    let items: Vec<(VectorDoc, Vec<f32>)> = (0..60u32)
        .map(|n| {
            let doc = VectorDoc {
                id: format!("x:{n}"),
                kind: kinds[n as usize % 3],
                session: format!("s{}", n % 2),
                project: "/p".into(),
                created_at_ms: u64::from(n),
            };
            let angle = n as f32 / 10.0;
            (
                doc,
                vec![angle.cos(), angle.sin(), 0.5, (n % 7) as f32 / 7.0],
            )
        })
        .collect();
    vectors.put_many(&items).unwrap();
    let query = [1.0, 0.2, 0.5, 0.1];
    for filter in [
        SearchFilter::default(),
        SearchFilter {
            session: Some("s1".into()),
            ..SearchFilter::default()
        },
    ] {
        let together = vectors.search_by_kind(&query, &filter, 5).unwrap();
        assert_eq!(together.len(), 3);
        for (kind, hits) in together {
            let alone = vectors
                .search(
                    &query,
                    &SearchFilter {
                        kind: Some(kind),
                        ..filter.clone()
                    },
                    5,
                )
                .unwrap();
            let ids = |hits: &[crate::vectors::VectorHit]| {
                hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>()
            };
            assert_eq!(ids(&hits), ids(&alone), "{kind:?}");
        }
    }
}

#[test]
fn a_document_with_passages_is_answered_once_with_its_best_passage() {
    let dir = tempfile::tempdir().unwrap();
    let vectors = Store::open(dir.path()).unwrap().vectors();
    vectors.ensure_model("m", 8).unwrap();
    let long = doc("t:a:0", DocKind::Message, "a", "/p");
    vectors
        .put_passages(&[
            (
                long.clone(),
                vec![axis(8, 1, 0.0), axis(8, 2, 0.0), axis(8, 3, 0.1)],
            ),
            (
                doc("t:a:1", DocKind::Message, "a", "/p"),
                vec![axis(8, 3, 0.5)],
            ),
        ])
        .unwrap();
    assert_eq!(vectors.len().unwrap(), 4, "every passage is a row");
    let hits = vectors
        .search(&axis(8, 3, 0.0), &SearchFilter::default(), 10)
        .unwrap();
    let ids: Vec<&str> = hits.iter().map(|hit| hit.id.as_str()).collect();
    assert_eq!(
        ids,
        ["t:a:0", "t:a:1"],
        "one hit per document, best passage first"
    );
    assert!(
        hits[0].score > 0.99,
        "scored by its third passage: {}",
        hits[0].score
    );

    // Re-embedded with fewer passages: the extra ones go.
    vectors
        .put_passages(&[(long, vec![axis(8, 1, 0.0)])])
        .unwrap();
    assert_eq!(vectors.len().unwrap(), 2);
    let hits = vectors
        .search(&axis(8, 3, 0.0), &SearchFilter::default(), 1)
        .unwrap();
    assert_eq!(hits[0].id, "t:a:1");

    vectors
        .put_passages(&[(
            doc("t:a:2", DocKind::Message, "a", "/p"),
            vec![axis(8, 4, 0.0), axis(8, 5, 0.0)],
        )])
        .unwrap();
    assert!(vectors.remove("t:a:2").unwrap());
    assert_eq!(
        vectors.len().unwrap(),
        2,
        "removing a document removes its passages"
    );
    assert!(!vectors.contains("t:a:2").unwrap());
}
