//! `Vectorizer`: keeps the embedding vectors of stored documents current.
//!
//! It receives the documents the `Indexer` receives ([`EmbedDocs`]), embeds them in batches of
//! [`BATCH`] through the [`EmbedderHandle`] and writes them to the [`VectorStore`]. [`Backfill`]
//! walks every stored message and memory document and embeds those without a vector, one batch at a time, live
//! documents first. It runs on its own arbiter (storage reads block that thread only); at start
//! it stamps the store with the model, which wipes vectors of another model. When the embedder
//! is unavailable it does nothing and its counters say why. [`backfill_blocking`] is the same
//! backfill for `lore reindex` without a gateway.

use std::collections::VecDeque;

use actix::prelude::*;
use lore_storage::{IndexDoc, Store, VectorDoc, VectorStore};
use serde::Serialize;
use tracing::{info, warn};

use crate::embedder::{EmbedError, EmbedderHandle, EmbeddingModel, MODEL_DIM, MODEL_NAME, Purpose};
use crate::indexer::message_doc;

/// Documents per embedding call.
pub const BATCH: usize = 32;
/// Longest text embedded, in bytes; the model reads at most 512 tokens anyway.
const MAX_TEXT_BYTES: usize = 8 * 1024;

/// Embeds and stores documents.
#[derive(Message)]
#[rtype(result = "()")]
pub struct EmbedDocs {
    /// The documents, as sent to the `Indexer`.
    pub docs: Vec<IndexDoc>,
}

/// Embeds every stored message that has no vector; answers how many are scheduled (the work
/// continues in the background, see [`VectorizerCounters`]).
#[derive(Message)]
#[rtype(result = "Result<u64, String>")]
pub struct Backfill;

/// Asks for the counters.
#[derive(Message)]
#[rtype(result = "VectorizerCounters")]
pub struct Observe;

/// Counters of the vectorizer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VectorizerCounters {
    /// Live documents waiting or being embedded.
    pub pending: usize,
    /// Documents embedded and stored since start.
    pub embedded: u64,
    /// Backfill documents done (embedded, failed or found embedded meanwhile).
    pub backfill_done: u64,
    /// Documents the latest backfill found without a vector.
    pub backfill_total: u64,
    /// Documents that could not be embedded or stored.
    pub failed: u64,
    /// The latest failure.
    pub last_error: Option<String>,
    /// Why the vectorizer does nothing, when the embedder is unavailable.
    pub unavailable: Option<String>,
}

/// The vectorizer actor.
pub struct Vectorizer {
    store: Store,
    vectors: VectorStore,
    embedder: EmbedderHandle,
    live: VecDeque<IndexDoc>,
    /// Sessions still to backfill, then the missing documents of the current one.
    /// Sessions (id, project) still to backfill, with how many documents the plan found missing.
    backfill_sessions: VecDeque<PlannedSession>,
    backfill_docs: VecDeque<IndexDoc>,
    /// Live documents in the batch being embedded.
    in_flight: usize,
    busy: bool,
    counters: VectorizerCounters,
}

impl Vectorizer {
    /// A vectorizer writing the vectors of `store` with `embedder`.
    pub fn new(store: Store, embedder: EmbedderHandle) -> Self {
        Self {
            vectors: store.vectors(),
            store,
            embedder,
            live: VecDeque::new(),
            backfill_sessions: VecDeque::new(),
            backfill_docs: VecDeque::new(),
            in_flight: 0,
            busy: false,
            counters: VectorizerCounters::default(),
        }
    }

    fn fail(&mut self, docs: u64, error: &str) {
        warn!(error, docs, "embedding documents failed");
        self.counters.failed += docs;
        self.counters.last_error = Some(error.to_string());
    }

    /// Up to [`BATCH`] documents: live ones first, then the backfill.
    fn next_batch(&mut self) -> Vec<(IndexDoc, bool)> {
        let mut batch = Vec::with_capacity(BATCH);
        while batch.len() < BATCH {
            if let Some(doc) = self.live.pop_front() {
                batch.push((doc, false));
                continue;
            }
            if let Some(doc) = self.backfill_docs.pop_front() {
                // Embedded live since the backfill was planned: nothing to do.
                if self.vectors.contains(&doc.id).unwrap_or(false) {
                    self.counters.backfill_done += 1;
                } else {
                    batch.push((doc, true));
                }
                continue;
            }
            let Some((session, project, planned)) = self.backfill_sessions.pop_front() else {
                break;
            };
            match missing_docs(&self.store, &self.vectors, &session, &project) {
                Ok(docs) => {
                    // Documents the live path embedded since the plan are done too.
                    self.counters.backfill_done += planned.saturating_sub(docs.len() as u64);
                    self.backfill_docs.extend(docs);
                }
                Err(err) => {
                    self.counters.backfill_done += planned;
                    self.fail(0, &err);
                }
            }
        }
        batch
    }

    fn pump(&mut self, ctx: &mut Context<Self>) {
        if self.busy {
            return;
        }
        let batch = self.next_batch();
        if batch.is_empty() {
            return;
        }
        self.busy = true;
        self.in_flight = batch.iter().filter(|(_, backfill)| !backfill).count();
        let texts = batch.iter().map(|(doc, _)| doc_text(doc)).collect();
        let embedder = self.embedder.clone();
        let work = async move { embedder.embed(texts, Purpose::Document).await };
        ctx.spawn(work.into_actor(self).map(move |result, act, ctx| {
            act.busy = false;
            act.in_flight = 0;
            act.finish(batch, result);
            act.pump(ctx);
        }));
    }

    fn finish(&mut self, batch: Vec<(IndexDoc, bool)>, result: Result<Vec<Vec<f32>>, EmbedError>) {
        let count = batch.len() as u64;
        let backfilled = batch.iter().filter(|(_, backfill)| *backfill).count() as u64;
        self.counters.backfill_done += backfilled;
        let stored = result.map_err(|err| err.to_string()).and_then(|vectors| {
            let items: Vec<(VectorDoc, Vec<f32>)> = batch
                .iter()
                .map(|(doc, _)| VectorDoc::from(doc))
                .zip(vectors)
                // An entry forgotten while it waited here must not get its vector back.
                .filter(|(doc, _)| still_live(&self.store, doc))
                .collect();
            self.vectors.put_many(&items).map_err(|err| err.to_string())
        });
        match stored {
            Ok(()) => self.counters.embedded += count,
            Err(err) => self.fail(count, &err),
        }
        if backfilled > 0 && self.counters.backfill_done >= self.counters.backfill_total {
            info!(
                documents = self.counters.backfill_total,
                "vector backfill done"
            );
        }
    }
}

impl Actor for Vectorizer {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Self::Context) {
        if !self.embedder.is_ready() {
            self.counters.unavailable = Some(unavailable_reason(&self.embedder));
            return;
        }
        match self.vectors.ensure_model(MODEL_NAME, MODEL_DIM) {
            Ok(true) => info!(
                model = MODEL_NAME,
                "embedding model changed; old vectors cleared"
            ),
            Ok(false) => {}
            Err(err) => self.fail(0, &err.to_string()),
        }
    }
}

impl Handler<EmbedDocs> for Vectorizer {
    type Result = ();

    fn handle(&mut self, msg: EmbedDocs, ctx: &mut Self::Context) {
        if self.counters.unavailable.is_some() {
            return;
        }
        self.live.extend(msg.docs.into_iter().filter(wants_vector));
        self.pump(ctx);
    }
}

impl Handler<Backfill> for Vectorizer {
    type Result = Result<u64, String>;

    fn handle(&mut self, _: Backfill, ctx: &mut Self::Context) -> Self::Result {
        if let Some(reason) = &self.counters.unavailable {
            return Err(reason.clone());
        }
        if !self.backfill_sessions.is_empty() || !self.backfill_docs.is_empty() {
            return Ok(self.counters.backfill_total - self.counters.backfill_done);
        }
        let (sessions, total) = plan_backfill(&self.store, &self.vectors)?;
        self.counters.backfill_total = total;
        self.counters.backfill_done = 0;
        self.backfill_sessions = sessions.into();
        info!(documents = total, "vector backfill started");
        self.pump(ctx);
        Ok(total)
    }
}

impl Handler<Observe> for Vectorizer {
    type Result = MessageResult<Observe>;

    fn handle(&mut self, _: Observe, _: &mut Self::Context) -> Self::Result {
        let mut counters = self.counters.clone();
        counters.pending = self.live.len() + self.in_flight;
        MessageResult(counters)
    }
}

/// False for a knowledge entry that is forgotten or gone; true for everything else.
fn still_live(store: &Store, doc: &VectorDoc) -> bool {
    match doc.id.strip_prefix("k:") {
        Some(id) => store
            .knowledge_entry(id)
            .ok()
            .flatten()
            .is_some_and(|entry| !entry.deleted),
        None => true,
    }
}

fn unavailable_reason(embedder: &EmbedderHandle) -> String {
    match embedder.status() {
        crate::embedder::EmbedderStatus::Unavailable { missing, fix } => {
            format!("embeddings unavailable: {missing}; {fix}")
        }
        crate::embedder::EmbedderStatus::Ready { .. } => String::new(),
    }
}

/// The text embedded for a document: the body, after the title for non-message kinds, cut at
/// [`MAX_TEXT_BYTES`].
pub fn doc_text(doc: &IndexDoc) -> String {
    let mut text = if doc.kind == lore_storage::DocKind::Message || doc.title.is_empty() {
        doc.body.clone()
    } else {
        format!("{}\n{}", doc.title, doc.body)
    };
    if text.len() > MAX_TEXT_BYTES {
        let mut cut = MAX_TEXT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    text
}

/// Whether a document gets a vector: only if it has some text.
pub fn wants_vector(doc: &IndexDoc) -> bool {
    !doc.body.trim().is_empty()
        || (doc.kind != lore_storage::DocKind::Message && !doc.title.trim().is_empty())
}

/// The backfill's name for the memory documents (distillations, knowledge, entities), which
/// belong to no single session; no session id contains a NUL.
const MEMORY: &str = "\0memory";

/// The message documents of a session (or, for [`MEMORY`], the memory documents) that want a
/// vector and have none.
fn missing_docs(
    store: &Store,
    vectors: &VectorStore,
    session: &str,
    project: &str,
) -> Result<Vec<IndexDoc>, String> {
    let candidates: Vec<IndexDoc> = if session == MEMORY {
        crate::documents::memory_docs(store).map_err(|err| err.to_string())?
    } else {
        let log = store.session_log(session).map_err(|err| err.to_string())?;
        log.iter()
            .map(|stored| message_doc(stored, project))
            .collect()
    };
    let mut docs = Vec::new();
    for doc in candidates {
        if wants_vector(&doc) && !vectors.contains(&doc.id).map_err(|err| err.to_string())? {
            docs.push(doc);
        }
    }
    Ok(docs)
}

/// The sessions (id, project) with messages lacking a vector, and how many such messages.
/// A session to backfill: its id, its project, and how many documents it lacked a vector for.
type PlannedSession = (String, String, u64);

fn plan_backfill(
    store: &Store,
    vectors: &VectorStore,
) -> Result<(Vec<PlannedSession>, u64), String> {
    let mut sessions = Vec::new();
    let mut total = 0u64;
    for session in store.list_sessions().map_err(|err| err.to_string())? {
        let project = session.project.clone().unwrap_or_default();
        let missing = missing_docs(store, vectors, &session.id, &project)?.len() as u64;
        if missing > 0 {
            total += missing;
            sessions.push((session.id, project, missing));
        }
    }
    let missing = missing_docs(store, vectors, MEMORY, "")?.len() as u64;
    if missing > 0 {
        total += missing;
        sessions.push((MEMORY.to_string(), String::new(), missing));
    }
    Ok((sessions, total))
}

/// Embeds, with `model` on the calling thread, every stored message of `store` that has no
/// vector (after stamping the store with the model); calls `progress(done, total)` after each
/// batch and returns how many were embedded. For `lore reindex` when no gateway runs.
pub fn backfill_blocking(
    store: &Store,
    model: &mut EmbeddingModel,
    mut progress: impl FnMut(u64, u64),
) -> Result<u64, String> {
    let vectors = store.vectors();
    vectors
        .ensure_model(MODEL_NAME, MODEL_DIM)
        .map_err(|err| err.to_string())?;
    let (sessions, total) = plan_backfill(store, &vectors)?;
    let mut done = 0u64;
    progress(0, total);
    for (session, project, _) in sessions {
        for chunk in missing_docs(store, &vectors, &session, &project)?.chunks(BATCH) {
            let texts: Vec<String> = chunk.iter().map(doc_text).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let embedded = model
                .embed(&refs, Purpose::Document)
                .map_err(|err| err.to_string())?;
            let items: Vec<(VectorDoc, Vec<f32>)> =
                chunk.iter().map(VectorDoc::from).zip(embedded).collect();
            vectors.put_many(&items).map_err(|err| err.to_string())?;
            done += chunk.len() as u64;
            progress(done, total);
        }
    }
    store.flush().map_err(|err| err.to_string())?;
    Ok(done)
}
