//! The full-text search index (tantivy, BM25): captured messages now, and distillations,
//! knowledge entries and entities as they arrive (the `kind` field is there from the start).
//!
//! Fields: `id` (`t:<session>:<seq>` for messages), `kind`, `project`, `session`, `title`,
//! `body`, `category`, `created_at`; the query parser weighs title 6, body 2, category 3. The
//! schema version is written beside the index; a different version, or an index that cannot be
//! opened, makes [`SearchIndex::open`] start an empty index and report that it must be rebuilt
//! from storage. Writes are batched by the caller; [`SearchIndex::commit`] makes them visible.
//! [`SearchIndex::get`] finds one document by its exact id (the `id` field is a raw term);
//! [`SearchIndex::get_many`] finds several with one searcher and plain term lookups.

use std::path::Path;
use std::sync::Mutex;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, TermQuery};
use tantivy::schema::{Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TEXT, Value};
use tantivy::{
    DocAddress, DocSet, Index, IndexReader, IndexWriter, ReloadPolicy, TERMINATED, TantivyDocument,
    Term,
};

use crate::error::{StorageError, StorageErrorKind};

/// Version of the schema below; bump it on any change.
pub const INDEX_SCHEMA_VERSION: u32 = 1;
const VERSION_FILE: &str = "lore-schema-version";
/// Memory of the single indexing thread (tantivy's minimum is 15 MB).
const WRITER_MEMORY: usize = 15_000_000;

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocKind {
    /// A captured message (`t:` ids).
    Message,
    /// A distillation (`d:` ids).
    Distillation,
    /// A knowledge entry (`k:` ids).
    Knowledge,
    /// An entity (`e:` ids).
    Entity,
}

impl DocKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Message => "message",
            DocKind::Distillation => "distillation",
            DocKind::Knowledge => "knowledge",
            DocKind::Entity => "entity",
        }
    }
}

/// A document to index.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexDoc {
    /// Source id, e.g. `t:<session>:<seq>`.
    pub id: String,
    /// What it is.
    pub kind: DocKind,
    /// Project path, empty when unknown.
    pub project: String,
    /// Session id, empty for cross-session documents.
    pub session: String,
    /// Title (weighted 6): a role for messages.
    pub title: String,
    /// Body text (weighted 2).
    pub body: String,
    /// Category (weighted 3).
    pub category: String,
    /// Creation time, ms since the epoch.
    pub created_at_ms: u64,
}

/// Restricts a search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchFilter {
    /// Only this session.
    pub session: Option<String>,
    /// Only this project.
    pub project: Option<String>,
    /// Only this kind.
    pub kind: Option<DocKind>,
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// Source id.
    pub id: String,
    /// BM25 score.
    pub score: f32,
    /// Kind name.
    pub kind: String,
    /// Session id.
    pub session: String,
    /// Project path.
    pub project: String,
    /// Title.
    pub title: String,
    /// Body text.
    pub body: String,
    /// Creation time.
    pub created_at_ms: u64,
}

impl From<IndexDoc> for SearchHit {
    /// The hit of a document read from storage rather than found by a search (scored 0).
    fn from(doc: IndexDoc) -> Self {
        Self {
            id: doc.id,
            score: 0.0,
            kind: doc.kind.as_str().to_string(),
            session: doc.session,
            project: doc.project,
            title: doc.title,
            body: doc.body,
            created_at_ms: doc.created_at_ms,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Fields {
    id: Field,
    kind: Field,
    project: Field,
    session: Field,
    title: Field,
    body: Field,
    category: Field,
    created_at: Field,
}

/// The index of one data directory.
pub struct SearchIndex {
    index: Index,
    reader: IndexReader,
    /// Created on first use (`None`: opened read-only), so its indexing and merge threads are
    /// spawned by, and inherit the scheduling priority of, the thread that first writes.
    writer: Option<std::sync::OnceLock<Result<Mutex<IndexWriter>, String>>>,
    fields: Fields,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex").finish_non_exhaustive()
    }
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let fields = Fields {
        id: builder.add_text_field("id", STRING | STORED),
        kind: builder.add_text_field("kind", STRING | STORED),
        project: builder.add_text_field("project", STRING | STORED),
        session: builder.add_text_field("session", STRING | STORED),
        title: builder.add_text_field("title", TEXT | STORED),
        body: builder.add_text_field("body", TEXT | STORED),
        category: builder.add_text_field("category", TEXT | STORED),
        created_at: builder.add_u64_field("created_at", INDEXED | STORED),
    };
    (builder.build(), fields)
}

fn index_error(what: &str, err: impl std::fmt::Display) -> StorageError {
    StorageError::new(StorageErrorKind::Io, format!("search index: {what}: {err}"))
}

impl SearchIndex {
    /// Opens the index under `dir` for writing. The flag is true when the index was (re)created
    /// empty and must be rebuilt from storage.
    pub fn open(dir: &Path) -> Result<(Self, bool), StorageError> {
        let (schema, fields) = schema();
        let version_path = dir.join(VERSION_FILE);
        let current = std::fs::read_to_string(&version_path)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok());
        let reusable = current == Some(INDEX_SCHEMA_VERSION);
        let opened = if reusable {
            Index::open_in_dir(dir)
                .ok()
                .filter(|index| index.schema() == schema)
        } else {
            None
        };
        let (index, rebuilt) = match opened {
            Some(index) => (index, false),
            None => {
                let _ = std::fs::remove_dir_all(dir);
                std::fs::create_dir_all(dir)
                    .map_err(|err| index_error("cannot create the folder", err))?;
                let index = Index::create_in_dir(dir, schema)
                    .map_err(|err| index_error("cannot create", err))?;
                std::fs::write(&version_path, INDEX_SCHEMA_VERSION.to_string())
                    .map_err(|err| index_error("cannot write the version", err))?;
                (index, true)
            }
        };
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|err| index_error("cannot open a reader", err))?;
        Ok((
            Self {
                index,
                reader,
                writer: Some(std::sync::OnceLock::new()),
                fields,
            },
            rebuilt,
        ))
    }

    /// Opens an existing index for searching only (another process may be writing it).
    pub fn open_read_only(dir: &Path) -> Result<Self, StorageError> {
        let (_, fields) = schema();
        let index = Index::open_in_dir(dir)
            .map_err(|err| index_error("cannot open (run `lore reindex`)", err))?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|err| index_error("cannot open a reader", err))?;
        Ok(Self {
            index,
            reader,
            writer: None,
            fields,
        })
    }

    fn writer(&self) -> Result<std::sync::MutexGuard<'_, IndexWriter>, StorageError> {
        let slot = self
            .writer
            .as_ref()
            .ok_or_else(|| index_error("read-only", "opened for searching"))?;
        let made = slot.get_or_init(|| {
            self.index
                .writer_with_num_threads(1, WRITER_MEMORY)
                .map(Mutex::new)
                .map_err(|err| err.to_string())
        });
        match made {
            Ok(writer) => writer.lock().map_err(|_| index_error("writer", "poisoned")),
            Err(err) => Err(index_error("cannot open the writer", err)),
        }
    }

    /// Creates the writer now, on the calling thread (the `Indexer` does so on its
    /// low-priority thread, so tantivy's threads run at that priority).
    pub fn open_writer(&self) -> Result<(), StorageError> {
        self.writer().map(drop)
    }

    /// Adds documents (visible after [`SearchIndex::commit`]). Messages never change, so they
    /// are only added; any other kind replaces the document with the same id.
    pub fn add(&self, docs: &[IndexDoc]) -> Result<(), StorageError> {
        let writer = self.writer()?;
        let f = self.fields;
        for doc in docs {
            if doc.kind != DocKind::Message {
                writer.delete_term(Term::from_field_text(f.id, &doc.id));
            }
            let mut document = TantivyDocument::default();
            document.add_text(f.id, &doc.id);
            document.add_text(f.kind, doc.kind.as_str());
            document.add_text(f.project, &doc.project);
            document.add_text(f.session, &doc.session);
            document.add_text(f.title, &doc.title);
            document.add_text(f.body, &doc.body);
            document.add_text(f.category, &doc.category);
            document.add_u64(f.created_at, doc.created_at_ms);
            writer
                .add_document(document)
                .map_err(|err| index_error("cannot add a document", err))?;
        }
        Ok(())
    }

    /// Removes the documents with these ids (visible after [`SearchIndex::commit`]).
    pub fn remove(&self, ids: &[String]) -> Result<(), StorageError> {
        let writer = self.writer()?;
        for id in ids {
            writer.delete_term(Term::from_field_text(self.fields.id, id));
        }
        Ok(())
    }

    /// Removes the message documents of `sessions` (pruned), keeping their other documents
    /// (distillations); visible after [`SearchIndex::commit`].
    pub fn remove_session_messages(&self, sessions: &[String]) -> Result<(), StorageError> {
        let writer = self.writer()?;
        let f = self.fields;
        for session in sessions {
            let term = |field, text: &str| -> Box<dyn Query> {
                Box::new(TermQuery::new(
                    Term::from_field_text(field, text),
                    IndexRecordOption::Basic,
                ))
            };
            let query = BooleanQuery::new(vec![
                (Occur::Must, term(f.session, session)),
                (Occur::Must, term(f.kind, DocKind::Message.as_str())),
            ]);
            writer
                .delete_query(Box::new(query))
                .map_err(|err| index_error("cannot delete", err))?;
        }
        Ok(())
    }

    /// Removes every document (before a rebuild).
    pub fn clear(&self) -> Result<(), StorageError> {
        self.writer()?
            .delete_all_documents()
            .map_err(|err| index_error("cannot clear", err))?;
        Ok(())
    }

    /// Makes added documents searchable.
    pub fn commit(&self) -> Result<(), StorageError> {
        self.writer()?
            .commit()
            .map_err(|err| index_error("cannot commit", err))?;
        self.reader
            .reload()
            .map_err(|err| index_error("cannot reload", err))?;
        Ok(())
    }

    /// Documents visible to searches.
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// BM25 search with field weights title 6, body 2, category 3 (`weights` overrides them).
    pub fn search(
        &self,
        text: &str,
        filter: &SearchFilter,
        limit: usize,
        weights: (f32, f32, f32),
    ) -> Result<Vec<SearchHit>, StorageError> {
        let f = self.fields;
        let mut parser = QueryParser::for_index(&self.index, vec![f.title, f.body, f.category]);
        parser.set_field_boost(f.title, weights.0);
        parser.set_field_boost(f.body, weights.1);
        parser.set_field_boost(f.category, weights.2);
        let (query, _errors) = parser.parse_query_lenient(text);
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, query)];
        let mut exact = |field: Field, value: &str| {
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(field, value),
                    IndexRecordOption::Basic,
                )),
            ));
        };
        if let Some(session) = &filter.session {
            exact(f.session, session);
        }
        if let Some(project) = &filter.project {
            exact(f.project, project);
        }
        if let Some(kind) = filter.kind {
            exact(f.kind, kind.as_str());
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(limit.max(1)).order_by_score())
            .map_err(|err| index_error("search failed", err))?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher
                .doc(address)
                .map_err(|err| index_error("cannot read a hit", err))?;
            hits.push(self.hit_from(&doc, score));
        }
        Ok(hits)
    }

    /// The document whose id is exactly `id` (the `id` field is a raw `STRING` term), scored 0.
    pub fn get(&self, id: &str) -> Result<Option<SearchHit>, StorageError> {
        let query = TermQuery::new(
            Term::from_field_text(self.fields.id, id),
            IndexRecordOption::Basic,
        );
        let searcher = self.reader.searcher();
        let top = searcher
            .search(&query, &TopDocs::with_limit(1).order_by_score())
            .map_err(|err| index_error("lookup failed", err))?;
        let Some((_, address)) = top.into_iter().next() else {
            return Ok(None);
        };
        let doc: TantivyDocument = searcher
            .doc(address)
            .map_err(|err| index_error("cannot read a document", err))?;
        Ok(Some(self.hit_from(&doc, 0.0)))
    }

    /// [`SearchIndex::get`] of each of `ids`, in order, from one searcher: each id is looked up
    /// in every segment's term dictionary (no query, no scoring), its first live document read.
    pub fn get_many(&self, ids: &[&str]) -> Result<Vec<Option<SearchHit>>, StorageError> {
        let searcher = self.reader.searcher();
        let postings: Vec<_> = searcher
            .segment_readers()
            .iter()
            .map(|segment| segment.inverted_index(self.fields.id))
            .collect::<Result<_, _>>()
            .map_err(|err| index_error("lookup failed", err))?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let term = Term::from_field_text(self.fields.id, id);
            let mut found = None;
            for (ord, (segment, inverted)) in
                searcher.segment_readers().iter().zip(&postings).enumerate()
            {
                let Some(mut docs) = inverted
                    .read_postings(&term, IndexRecordOption::Basic)
                    .map_err(|err| index_error("lookup failed", err))?
                else {
                    continue;
                };
                let mut doc = docs.doc();
                while doc != TERMINATED && segment.is_deleted(doc) {
                    doc = docs.advance();
                }
                if doc != TERMINATED {
                    found = Some(DocAddress::new(ord as u32, doc));
                    break;
                }
            }
            let hit = match found {
                Some(address) => {
                    let doc: TantivyDocument = searcher
                        .doc(address)
                        .map_err(|err| index_error("cannot read a document", err))?;
                    Some(self.hit_from(&doc, 0.0))
                }
                None => None,
            };
            out.push(hit);
        }
        Ok(out)
    }

    fn hit_from(&self, doc: &TantivyDocument, score: f32) -> SearchHit {
        let f = self.fields;
        let text = |field: Field| {
            doc.get_first(field)
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        SearchHit {
            id: text(f.id),
            score,
            kind: text(f.kind),
            session: text(f.session),
            project: text(f.project),
            title: text(f.title),
            body: text(f.body),
            created_at_ms: doc
                .get_first(f.created_at)
                .and_then(|v| v.as_u64())
                .unwrap_or(0),
        }
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
