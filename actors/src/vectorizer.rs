//! `Vectorizer`: keeps the embedding vectors of stored documents current.
//!
//! It receives the documents the `Indexer` receives ([`EmbedDocs`]), embeds them in batches of
//! at most [`BATCH`] documents and [`BATCH_BYTES`] of text through the [`EmbedderHandle`] (each
//! document cut into passages, one vector per passage) and writes them to the [`VectorStore`].
//! [`Backfill`] walks every stored message and memory document and embeds those without a
//! vector, one batch at a time, live documents first. It runs on its own low-priority arbiter
//! (storage reads block that thread only); while requests are in flight it rests between
//! batches (`background::Throttle`). At start it stamps the store with the model, which wipes
//! vectors of another model. When the embedder is unavailable it does nothing and its counters
//! say why. [`backfill_blocking`] is the same backfill for `lore reindex` without a gateway.
//!
//! Bounded: the live queue holds at most [`MAX_LIVE_DOCS`] documents and [`MAX_LIVE_BYTES`] of
//! text; documents past it are shed
//! (counted in `shed`) and picked up by a rescan of the store once the queue has drained, so
//! none is lost. A batch that the embedder does not answer within [`EMBED_DEADLINE`] fails (the
//! embedder is hung); its documents wait for the next rescan.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use lore_storage::{IndexDoc, Store, VectorDoc, VectorStore};
use serde::Serialize;
use tracing::{info, warn};

use crate::embedder::{EmbedError, EmbedderHandle, EmbeddingModel, MODEL_DIM, MODEL_NAME};
use crate::indexer::message_doc;

use crate::background::Throttle;
use crate::worker::ActivityBoard;

/// Most documents per embedding call.
pub const BATCH: usize = 32;
/// Most bytes of text per embedding call (the model cuts each document into passages and runs
/// them in token-bounded batches; this bounds what one call holds).
pub const BATCH_BYTES: usize = 256 * 1024;
/// Longest text embedded, in bytes: the model embeds at most 16 passages of 512 tokens.
const MAX_TEXT_BYTES: usize = 96 * 1024;
/// Most bytes of text waiting in the live queue; past it documents are shed and rescanned.
pub const MAX_LIVE_BYTES: usize = 8 * 1024 * 1024;
/// Most documents waiting in the live queue (each also carries its ids and fields).
pub const MAX_LIVE_DOCS: usize = 2048;
/// Fewest time between two scans of the store for documents without a vector.
const RESCAN_EVERY: Duration = Duration::from_secs(120);
/// Longest wait for one embedding call before it counts as hung.
pub const EMBED_DEADLINE: Duration = Duration::from_secs(120);

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
    /// Live documents dropped from a full queue (embedded later by a rescan).
    pub shed: u64,
    /// Embedding calls that passed [`EMBED_DEADLINE`].
    pub timeouts: u64,
    /// How long the running embedding call has taken, ms (0 when none runs).
    pub busy_ms: u64,
    /// Bytes of text in the live queue.
    pub queued_bytes: usize,
}

/// The vectorizer actor.
pub struct Vectorizer {
    store: Store,
    vectors: VectorStore,
    embedder: EmbedderHandle,
    live: VecDeque<IndexDoc>,
    live_bytes: usize,
    /// A rescan of the store is due once the queues drain (documents were shed or failed).
    rescan: bool,
    throttle: Throttle,
    /// When the running embedding call started.
    started: Option<Instant>,
    /// When the store was last scanned for documents without a vector.
    last_plan: Option<Instant>,
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
            live_bytes: 0,
            rescan: false,
            throttle: Throttle::new(None),
            started: None,
            last_plan: None,
            backfill_sessions: VecDeque::new(),
            backfill_docs: VecDeque::new(),
            in_flight: 0,
            busy: false,
            counters: VectorizerCounters::default(),
        }
    }

    /// Rests between batches while requests of `board` are in flight.
    pub fn with_board(mut self, board: Arc<ActivityBoard>) -> Self {
        self.throttle = Throttle::new(Some(board));
        self
    }

    fn fail(&mut self, docs: u64, error: &str) {
        warn!(error, docs, "embedding documents failed");
        self.counters.failed += docs;
        self.counters.last_error = Some(error.to_string());
    }

    /// Up to [`BATCH`] documents and about [`BATCH_BYTES`] of text: live ones first, then the
    /// backfill.
    fn next_batch(&mut self) -> Vec<(IndexDoc, bool)> {
        let mut batch = Vec::with_capacity(BATCH);
        let mut bytes = 0usize;
        while batch.len() < BATCH && bytes < BATCH_BYTES {
            if let Some(doc) = self.live.pop_front() {
                self.live_bytes = self.live_bytes.saturating_sub(doc_bytes(&doc));
                bytes += doc_bytes(&doc);
                batch.push((doc, false));
                continue;
            }
            if let Some(doc) = self.backfill_docs.pop_front() {
                // Embedded live since the backfill was planned: nothing to do.
                if self.vectors.contains(&doc.id).unwrap_or(false) {
                    self.counters.backfill_done += 1;
                } else {
                    bytes += doc_bytes(&doc);
                    batch.push((doc, true));
                }
                continue;
            }
            let Some((session, project, planned)) = self.backfill_sessions.pop_front() else {
                if batch.is_empty() && self.rescan && self.rescan_wait().is_zero() {
                    self.rescan = false;
                    if let Err(err) = self.plan(false) {
                        self.fail(0, &err);
                    }
                    continue;
                }
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
            if self.rescan {
                // Not before RESCAN_EVERY since the last plan: a failing embedder must not
                // make the vectorizer re-read the store in a loop.
                let wait = self.rescan_wait();
                self.busy = true;
                ctx.run_later(wait, |act, ctx| {
                    act.busy = false;
                    act.pump(ctx);
                });
            }
            return;
        }
        self.busy = true;
        self.in_flight = batch.iter().filter(|(_, backfill)| !backfill).count();
        let texts = batch.iter().map(|(doc, _)| doc_text(doc)).collect();
        let embedder = self.embedder.clone();
        let work = async move {
            match actix::clock::timeout(EMBED_DEADLINE, embedder.embed_passages(texts)).await {
                Ok(result) => result,
                Err(_) => Err(EmbedError::Embedding(format!(
                    "the embedder did not answer within {} s (hung?)",
                    EMBED_DEADLINE.as_secs()
                ))),
            }
        };
        let started = Instant::now();
        self.started = Some(started);
        ctx.spawn(work.into_actor(self).map(move |result, act, ctx| {
            act.busy = false;
            act.in_flight = 0;
            act.started = None;
            act.finish(batch, result);
            let rest = act.throttle.rest_after(started.elapsed());
            if rest.is_zero() {
                act.pump(ctx);
            } else {
                act.busy = true;
                ctx.run_later(rest, |act, ctx| {
                    act.busy = false;
                    act.pump(ctx);
                });
            }
        }));
    }

    /// How long until a rescan may run.
    fn rescan_wait(&self) -> Duration {
        self.last_plan.map_or(Duration::ZERO, |at| {
            RESCAN_EVERY.saturating_sub(at.elapsed())
        })
    }

    /// Plans a backfill of every document without a vector; `fresh` restarts the counters.
    fn plan(&mut self, fresh: bool) -> Result<u64, String> {
        self.last_plan = Some(Instant::now());
        let (sessions, total) = plan_backfill(&self.store, &self.vectors)?;
        if fresh {
            self.counters.backfill_total = total;
            self.counters.backfill_done = 0;
        } else {
            self.counters.backfill_total += total;
        }
        self.backfill_sessions = sessions.into();
        Ok(total)
    }

    fn finish(
        &mut self,
        batch: Vec<(IndexDoc, bool)>,
        result: Result<Vec<Vec<Vec<f32>>>, EmbedError>,
    ) {
        let count = batch.len() as u64;
        let backfilled = batch.iter().filter(|(_, backfill)| *backfill).count() as u64;
        self.counters.backfill_done += backfilled;
        let stored = result.map_err(|err| err.to_string()).and_then(|vectors| {
            let items: Vec<(VectorDoc, Vec<Vec<f32>>)> = batch
                .iter()
                .map(|(doc, _)| VectorDoc::from(doc))
                .zip(vectors)
                // An entry forgotten while it waited here must not get its vector back.
                .filter(|(doc, _)| still_live(&self.store, doc))
                .collect();
            self.vectors
                .put_passages(&items)
                .map_err(|err| err.to_string())
        });
        match stored {
            Ok(()) => self.counters.embedded += count,
            Err(err) => {
                if err.contains("did not answer") {
                    self.counters.timeouts += 1;
                }
                self.fail(count, &err);
                // They stay without a vector; a later rescan embeds them.
                self.rescan = true;
            }
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
        for doc in msg.docs.into_iter().filter(wants_vector) {
            let bytes = doc_bytes(&doc);
            if self.live_bytes + bytes > MAX_LIVE_BYTES || self.live.len() >= MAX_LIVE_DOCS {
                // Shed, not lost: the document is stored, and the rescan finds it.
                self.counters.shed += 1;
                self.rescan = true;
                continue;
            }
            self.live_bytes += bytes;
            self.live.push_back(doc);
        }
        if self.counters.shed > 0 && self.counters.shed.is_power_of_two() {
            warn!(
                shed = self.counters.shed,
                "embedding queue full; documents are embedded later by a rescan"
            );
        }
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
        let total = self.plan(true)?;
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
        counters.queued_bytes = self.live_bytes;
        counters.busy_ms = self
            .started
            .map_or(0, |started| started.elapsed().as_millis() as u64);
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

/// Bytes a queued document holds (what it will embed).
fn doc_bytes(doc: &IndexDoc) -> usize {
    (doc.title.len() + doc.body.len()).min(MAX_TEXT_BYTES)
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
            let embedded = model.embed_passages(&refs).map_err(|err| err.to_string())?;
            let items: Vec<(VectorDoc, Vec<Vec<f32>>)> =
                chunk.iter().map(VectorDoc::from).zip(embedded).collect();
            vectors
                .put_passages(&items)
                .map_err(|err| err.to_string())?;
            done += chunk.len() as u64;
            progress(done, total);
        }
    }
    store.flush().map_err(|err| err.to_string())?;
    Ok(done)
}
