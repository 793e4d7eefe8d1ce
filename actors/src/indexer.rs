//! `Indexer`: the single writer of the search index.
//!
//! Session actors send it the messages they stored; it adds them at once and commits in
//! batches (every [`COMMIT_EVERY`], or sooner past [`COMMIT_AFTER_DOCS`] documents), so a
//! captured message is searchable within a second. It runs on its own arbiter: a commit blocks
//! that thread only, never an HTTP worker. `Rebuild` re-reads every captured message from
//! storage (start-up after a schema change, `lore reindex`). Once embeddings are available it
//! hands each document to the `Vectorizer` as well.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use lore_proto::{Message as ChatMessage, Part};
use lore_storage::{DocKind, IndexDoc, SearchIndex, Store, StoredMessage};
use serde::Serialize;
use tracing::{info, warn};

use crate::vectorizer::EmbedDocs;

/// Longest time a document waits before it is committed.
pub const COMMIT_EVERY: Duration = Duration::from_millis(250);
/// Pending documents that trigger a commit before the timer.
pub const COMMIT_AFTER_DOCS: usize = 512;

/// Adds documents to the index.
#[derive(Message)]
#[rtype(result = "()")]
pub struct IndexDocs {
    /// The documents.
    pub docs: Vec<IndexDoc>,
}

/// Clears the index and indexes every captured message again; answers the count.
#[derive(Message)]
#[rtype(result = "Result<u64, String>")]
pub struct Rebuild;

/// Removes documents (a forgotten knowledge entry) from the index and their vectors.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RemoveDocs {
    /// Document ids.
    pub ids: Vec<String>,
}

/// Asks for the counters.
#[derive(Message)]
#[rtype(result = "IndexerCounters")]
pub struct Observe;

/// From now on, hands every indexed document to the vectorizer too (sent once the embedding
/// model has loaded).
#[derive(Message)]
#[rtype(result = "()")]
pub struct AttachVectorizer(pub Recipient<EmbedDocs>);

/// Counters of the indexer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IndexerCounters {
    /// Documents waiting for the next commit.
    pub pending: usize,
    /// Documents added since start.
    pub indexed: u64,
    /// Commits done.
    pub commits: u64,
    /// Failures.
    pub failed: u64,
    /// The latest failure.
    pub last_error: Option<String>,
}

/// The indexer actor.
pub struct Indexer {
    /// The index (shared with searchers, who only read).
    index: Arc<SearchIndex>,
    /// Storage, for rebuilds.
    store: Store,
    /// Counters; `pending` drives the commits.
    counters: IndexerCounters,
    /// Where documents go to be embedded, once embeddings are available.
    vectorizer: Option<Recipient<EmbedDocs>>,
}

impl Indexer {
    /// An indexer writing `index`.
    pub fn new(index: Arc<SearchIndex>, store: Store) -> Self {
        Self {
            index,
            store,
            counters: IndexerCounters::default(),
            vectorizer: None,
        }
    }

    fn commit(&mut self) {
        if self.counters.pending == 0 {
            return;
        }
        match self.index.commit() {
            Ok(()) => {
                self.counters.commits += 1;
                self.counters.pending = 0;
            }
            Err(err) => self.fail(&err.to_string()),
        }
    }

    fn fail(&mut self, error: &str) {
        warn!(error, "search index write failed");
        self.counters.failed += 1;
        self.counters.last_error = Some(error.to_string());
    }

    fn rebuild(&mut self) -> Result<u64, String> {
        let count = rebuild_from(&self.store, &self.index)?;
        self.counters.pending = 0;
        Ok(count)
    }
}

/// Clears `index` and indexes every captured message (forked-off ones too), distillation,
/// live knowledge entry and entity of `store` again;
/// returns how many were indexed. Used by the `Indexer` and by `lore reindex` without a gateway.
pub fn rebuild_from(store: &Store, index: &SearchIndex) -> Result<u64, String> {
    index.clear().map_err(|err| err.to_string())?;
    let mut count = 0u64;
    for session in store.list_sessions().map_err(|err| err.to_string())? {
        let log = store
            .session_log(&session.id)
            .map_err(|err| err.to_string())?;
        let project = session.project.clone().unwrap_or_default();
        let docs: Vec<IndexDoc> = log
            .iter()
            .map(|stored| message_doc(stored, &project))
            .collect();
        count += docs.len() as u64;
        index.add(&docs).map_err(|err| err.to_string())?;
    }
    let memory = crate::documents::memory_docs(store).map_err(|err| err.to_string())?;
    count += memory.len() as u64;
    index.add(&memory).map_err(|err| err.to_string())?;
    index.commit().map_err(|err| err.to_string())?;
    info!(documents = count, "search index rebuilt from storage");
    Ok(count)
}

/// The search document of a stored message.
pub fn message_doc(stored: &StoredMessage, project: &str) -> IndexDoc {
    IndexDoc {
        id: format!("t:{}:{}", stored.session_id, stored.seq),
        kind: DocKind::Message,
        project: project.to_string(),
        session: stored.session_id.clone(),
        title: stored.message.role.as_str().to_string(),
        body: searchable_text(&stored.message),
        category: String::new(),
        created_at_ms: stored.created_at_ms,
    }
}

/// Everything a search should find in a message: its text, tool calls and tool results.
pub fn searchable_text(message: &ChatMessage) -> String {
    let mut pieces = Vec::new();
    for part in &message.parts {
        match part {
            Part::Text { text } => pieces.push(text.clone()),
            Part::ToolCall {
                name, arguments, ..
            } => pieces.push(format!("[tool:{name}] {arguments}")),
            Part::ToolResult { content, .. } => pieces.push(content.clone()),
            Part::Thinking { .. } | Part::Other { .. } => {}
        }
    }
    pieces.join("\n")
}

impl Actor for Indexer {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        // On this (low-priority) thread, so tantivy's writer threads inherit its priority.
        if let Err(err) = self.index.open_writer() {
            self.fail(&err.to_string());
        }
        ctx.run_interval(COMMIT_EVERY, |indexer, _| indexer.commit());
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        self.commit();
    }
}

impl Handler<IndexDocs> for Indexer {
    type Result = ();

    fn handle(&mut self, msg: IndexDocs, _: &mut Self::Context) {
        if let Some(vectorizer) = &self.vectorizer {
            vectorizer.do_send(EmbedDocs {
                docs: msg.docs.clone(),
            });
        }
        match self.index.add(&msg.docs) {
            Ok(()) => {
                self.counters.pending += msg.docs.len();
                self.counters.indexed += msg.docs.len() as u64;
                if self.counters.pending >= COMMIT_AFTER_DOCS {
                    self.commit();
                }
            }
            Err(err) => self.fail(&err.to_string()),
        }
    }
}

impl Handler<RemoveDocs> for Indexer {
    type Result = ();

    fn handle(&mut self, msg: RemoveDocs, _: &mut Self::Context) {
        let vectors = self.store.vectors();
        for id in &msg.ids {
            if let Err(err) = vectors.remove(id) {
                self.fail(&err.to_string());
            }
        }
        match self.index.remove(&msg.ids) {
            Ok(()) => {
                self.counters.pending += msg.ids.len();
                self.commit();
            }
            Err(err) => self.fail(&err.to_string()),
        }
    }
}

impl Handler<Rebuild> for Indexer {
    type Result = Result<u64, String>;

    fn handle(&mut self, _: Rebuild, _: &mut Self::Context) -> Self::Result {
        let result = self.rebuild();
        if let Err(err) = &result {
            self.fail(err);
        }
        result
    }
}

impl Handler<AttachVectorizer> for Indexer {
    type Result = ();

    fn handle(&mut self, msg: AttachVectorizer, _: &mut Self::Context) {
        self.vectorizer = Some(msg.0);
    }
}

impl Handler<Observe> for Indexer {
    type Result = MessageResult<Observe>;

    fn handle(&mut self, _: Observe, _: &mut Self::Context) -> Self::Result {
        MessageResult(self.counters.clone())
    }
}
