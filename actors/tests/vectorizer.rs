//! The vectorizer against the real model and a real sled store.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use actix::prelude::*;
use lore_actors::embedder::{
    Embedder, EmbedderConfig, EmbeddingModel, MODEL_DIM, MODEL_NAME, Purpose,
};
use lore_actors::indexer::message_doc;
use lore_actors::vectorizer::{
    Backfill, EmbedDocs, Observe, Vectorizer, VectorizerCounters, backfill_blocking,
};
use lore_proto::{Message, Part, Role};
use lore_storage::records::RECORD_VERSION;
use lore_storage::{
    DocKind, MessageSource, SearchFilter, SessionRecord, Store, StoredMessage, VectorDoc,
};

/// The installed model with one worker.
fn installed() -> EmbedderConfig {
    EmbedderConfig {
        pool_size: 1,
        ..common::installed()
    }
}

fn stored(session: &str, seq: u64, text: &str) -> StoredMessage {
    let message = Message {
        role: if seq.is_multiple_of(2) {
            Role::User
        } else {
            Role::Assistant
        },
        parts: vec![Part::Text { text: text.into() }],
    };
    StoredMessage {
        version: RECORD_VERSION,
        session_id: session.into(),
        seq,
        position: seq as u32,
        identity: message.identity(),
        message,
        source: MessageSource::Request,
        created_at_ms: 1000 + seq,
        model: None,
        usage: None,
        partial: false,
        context_layer: None,
    }
}

/// Stores a session of `texts` under project `/proj`; returns its messages.
fn save_session(store: &Store, id: &str, texts: &[&str]) -> Vec<StoredMessage> {
    let mut record = SessionRecord::new(id.into());
    record.project = Some("/proj".into());
    let messages: Vec<_> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| stored(id, i as u64, t))
        .collect();
    store.commit_turn(&record, &messages).unwrap();
    messages
}

async fn settled(addr: &Addr<Vectorizer>) -> VectorizerCounters {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let counters = addr.send(Observe).await.unwrap();
        if counters.pending == 0 && counters.backfill_done >= counters.backfill_total {
            return counters;
        }
        assert!(
            Instant::now() < deadline,
            "vectorizer did not settle: {counters:?}"
        );
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

#[actix_rt::test]
async fn embedded_docs_are_found_by_a_search() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let messages = save_session(
        &store,
        "s1",
        &[
            "the deploy script pushes the docker image and restarts the service on the server",
            "grandma's banana bread needs three ripe bananas",
            "the unit tests for the parser fail on empty input",
        ],
    );
    let embedder = Embedder::start(installed());
    let addr = Vectorizer::new(store.clone(), embedder.clone()).start();
    let docs = messages.iter().map(|m| message_doc(m, "/proj")).collect();
    addr.send(EmbedDocs { docs }).await.unwrap();
    let counters = settled(&addr).await;
    assert_eq!((counters.embedded, counters.failed), (3, 0), "{counters:?}");

    let query = embedder
        .embed(vec!["how do I deploy to production".into()], Purpose::Query)
        .await
        .unwrap();
    let vectors = store.vectors();
    let hits = vectors
        .search(&query[0], &SearchFilter::default(), 3)
        .unwrap();
    assert_eq!(hits[0].id, "t:s1:0", "{hits:?}");
    assert_eq!(
        (hits[0].kind, hits[0].project.as_str()),
        (DocKind::Message, "/proj")
    );
    let other_project = SearchFilter {
        project: Some("/elsewhere".into()),
        ..SearchFilter::default()
    };
    assert!(
        vectors
            .search(&query[0], &other_project, 3)
            .unwrap()
            .is_empty()
    );
    assert_eq!(vectors.model().unwrap().name, MODEL_NAME);
}

#[actix_rt::test]
async fn backfill_embeds_exactly_the_messages_without_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let a = save_session(
        &store,
        "a",
        &["rust borrow checker error", "use a clone", "   "],
    );
    save_session(
        &store,
        "b",
        &["sled flush every 100 ms", "tantivy commit latency"],
    );
    // One message already has a vector (a marker vector, recognisable afterwards).
    let vectors = store.vectors();
    vectors.ensure_model(MODEL_NAME, MODEL_DIM).unwrap();
    let marker = {
        let mut v = vec![0.0; MODEL_DIM];
        v[7] = 1.0;
        v
    };
    let first = message_doc(&a[0], "/proj");
    vectors
        .put_many(&[(VectorDoc::from(&first), marker.clone())])
        .unwrap();

    let addr = Vectorizer::new(store.clone(), Embedder::start(installed())).start();
    // 5 messages, one whitespace-only (never embedded), one already embedded.
    assert_eq!(addr.send(Backfill).await.unwrap(), Ok(3));
    let counters = settled(&addr).await;
    assert_eq!(
        (
            counters.backfill_total,
            counters.backfill_done,
            counters.embedded,
            counters.failed
        ),
        (3, 3, 3, 0),
        "{counters:?}"
    );
    assert_eq!(vectors.len().unwrap(), 4);
    assert!(!vectors.contains("t:a:2").unwrap());
    let hit = &vectors
        .search(&marker, &SearchFilter::default(), 1)
        .unwrap()[0];
    assert_eq!(hit.id, "t:a:0");
    assert!(
        hit.score > 0.999,
        "the existing vector was re-embedded: {hit:?}"
    );
    // Nothing left: a second backfill schedules nothing.
    assert_eq!(addr.send(Backfill).await.unwrap(), Ok(0));
}

#[actix_rt::test]
async fn an_unavailable_embedder_leaves_the_store_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let messages = save_session(&store, "a", &["hello there"]);
    let embedder = Embedder::start(EmbedderConfig::in_dir(dir.path().join("no-models")));
    let addr = Vectorizer::new(store.clone(), embedder).start();
    let docs = messages.iter().map(|m| message_doc(m, "")).collect();
    addr.send(EmbedDocs { docs }).await.unwrap();
    let err = addr.send(Backfill).await.unwrap().unwrap_err();
    assert!(err.contains("scripts/setup"), "{err}");
    let counters = addr.send(Observe).await.unwrap();
    assert!(counters.unavailable.is_some(), "{counters:?}");
    assert_eq!((counters.embedded, counters.pending), (0, 0));
    assert!(
        store.vectors().model().is_none(),
        "no model stamp without a model"
    );
}

#[test]
fn blocking_backfill_reports_progress() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let texts: Vec<String> = (0..40)
        .map(|i| format!("message number {i} about the build"))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    save_session(&store, "big", &refs);
    let mut model = EmbeddingModel::load(&installed()).unwrap();
    let mut seen = Vec::new();
    let done =
        backfill_blocking(&store, &mut model, |done, total| seen.push((done, total))).unwrap();
    assert_eq!(done, 40);
    assert_eq!(seen, [(0, 40), (32, 40), (40, 40)]);
    assert_eq!(store.vectors().len().unwrap(), 40);
    assert_eq!(backfill_blocking(&store, &mut model, |_, _| {}).unwrap(), 0);
}
