//! [`VectorStore`]: the embedding vectors of the searchable documents, in the sled tree
//! `vectors`, plus an in-memory int8 copy that answers nearest-neighbour searches.
//!
//! - Tree `vectors`: document id (`t:<session>:<seq>`, later `d:`/`k:`/`e:`) → a
//!   [`VectorRecord`]-shaped value (rmp-serde): the f32 vector, the kind, session, project and
//!   creation time.
//! - Tree `meta`, key `vectors.model`: the model stamp `{name, dim}`. [`VectorStore::ensure_model`]
//!   wipes every vector when the stamp changes, so vectors of two models never mix; writes are
//!   refused until a stamp is set.
//!
//! A long document has one vector per passage: the first under the document id, passage `n ≥ 1`
//! under `<document id>\0p<n>` ([`passage_key`]); a search ranks passages and answers each
//! document once, with its best passage's score.
//!
//! Search: the in-memory matrix (loaded on first use, kept current by every put and remove)
//! ranks all rows by an int8 dot product, then the best `4 × limit` (at least 32) are rescored
//! exactly from the f32 values in sled. Stored vectors and queries are L2-normalised, so the
//! score is the cosine. Clones share one store; one writer and many readers may use it at once.

mod codec;
mod matrix;

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use serde::{Deserialize, Serialize};

use crate::error::{StorageError, StorageErrorKind};
use crate::handle::DbHandle;
use crate::index::{DocKind, IndexDoc, SearchFilter};
use crate::records::{decode, encode};
use codec::{f32_bytes, kind_code, parse_kind};
use matrix::{Matrix, RowFilter};

/// Version written into every vector record.
const VECTOR_RECORD_VERSION: u16 = 1;
/// Key of the model stamp in the `meta` tree.
const STAMP_KEY: &str = "vectors.model";
/// What separates a document id from a passage number in a key; no document id holds a NUL.
const PASSAGE_SEPARATOR: &str = "\0p";

/// The key of passage `n` of document `id` (`n = 0` is the document id itself).
pub fn passage_key(id: &str, n: usize) -> String {
    if n == 0 {
        id.to_string()
    } else {
        format!("{id}{PASSAGE_SEPARATOR}{n}")
    }
}

/// The document id of a vector key.
fn document_of(key: &str) -> &str {
    key.split_once(PASSAGE_SEPARATOR).map_or(key, |(id, _)| id)
}

/// Fewest candidates rescored exactly, whatever the limit.
const MIN_CANDIDATES: usize = 32;

/// The embedding model the stored vectors come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelStamp {
    /// Model name, e.g. `bge-small-en-v1.5`.
    pub name: String,
    /// Dimension of its vectors.
    pub dim: usize,
}

/// What a vector is about: the fields a search filters on and reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VectorDoc {
    /// Document id, e.g. `t:<session>:<seq>`.
    pub id: String,
    /// What the document is.
    pub kind: DocKind,
    /// Session id, empty for cross-session documents.
    pub session: String,
    /// Project path, empty when unknown.
    pub project: String,
    /// Creation time, ms since the epoch.
    pub created_at_ms: u64,
}

impl From<&IndexDoc> for VectorDoc {
    fn from(doc: &IndexDoc) -> Self {
        Self {
            id: doc.id.clone(),
            kind: doc.kind,
            session: doc.session.clone(),
            project: doc.project.clone(),
            created_at_ms: doc.created_at_ms,
        }
    }
}

/// One result of a vector search.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorHit {
    /// Document id.
    pub id: String,
    /// Cosine similarity with the query, in [-1, 1].
    pub score: f32,
    /// What the document is.
    pub kind: DocKind,
    /// Session id.
    pub session: String,
    /// Project path.
    pub project: String,
    /// Creation time, ms since the epoch.
    pub created_at_ms: u64,
}

/// The stored value of one vector.
#[derive(Debug, Serialize, Deserialize)]
struct VectorRecord {
    version: u16,
    kind: String,
    session: String,
    project: String,
    created_at_ms: u64,
    #[serde(with = "f32_bytes")]
    vector: Vec<f32>,
}

/// Vectors by document id. Cheap to clone; clones share the trees and the in-memory copy.
#[derive(Clone)]
pub struct VectorStore {
    inner: Arc<Inner>,
}

struct Inner {
    handle: DbHandle,
    state: RwLock<State>,
}

#[derive(Default)]
struct State {
    /// The stamp, read at open and changed by `ensure_model` only.
    stamp: Option<ModelStamp>,
    /// The in-memory copy, once something searched or counted.
    matrix: Option<Matrix>,
}

impl std::fmt::Debug for VectorStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorStore").finish_non_exhaustive()
    }
}

impl VectorStore {
    /// The store over the `vectors` tree of `handle`, its stamp in `meta`.
    pub(crate) fn open(handle: DbHandle) -> Result<Self, StorageError> {
        let stamp = handle
            .trees()?
            .meta
            .get(STAMP_KEY)?
            .map(|raw| decode::<ModelStamp>("vector model stamp", &raw))
            .transpose()?;
        Ok(Self {
            inner: Arc::new(Inner {
                handle,
                state: RwLock::new(State {
                    stamp,
                    matrix: None,
                }),
            }),
        })
    }

    /// The `vectors` tree of the open database.
    fn tree(&self) -> Result<sled::Tree, StorageError> {
        Ok(self.inner.handle.trees()?.vectors.clone())
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.inner.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.inner.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The model the stored vectors come from, if one was set.
    pub fn model(&self) -> Option<ModelStamp> {
        self.read().stamp.clone()
    }

    /// Makes `name`/`dim` the model of the store. When another model (or no stamp) was recorded
    /// and vectors exist, every vector is deleted and `true` is returned: they must be embedded
    /// again, never mixed.
    pub fn ensure_model(&self, name: &str, dim: usize) -> Result<bool, StorageError> {
        let wanted = ModelStamp {
            name: name.to_string(),
            dim,
        };
        let mut state = self.write();
        if state.stamp.as_ref() == Some(&wanted) {
            return Ok(false);
        }
        let tree = self.tree()?;
        let cleared = !tree.is_empty();
        tree.clear()?;
        self.inner
            .handle
            .trees()?
            .meta
            .insert(STAMP_KEY, encode("vector model stamp", &wanted)?)?;
        state.matrix = state.matrix.as_ref().map(|_| Matrix::new(dim));
        state.stamp = Some(wanted);
        Ok(cleared)
    }

    /// Stores (or replaces) vectors, one per document. Each is L2-normalised first; its
    /// length must be the dimension of the model set with [`VectorStore::ensure_model`].
    pub fn put_many(&self, items: &[(VectorDoc, Vec<f32>)]) -> Result<(), StorageError> {
        let items: Vec<(VectorDoc, Vec<Vec<f32>>)> = items
            .iter()
            .map(|(doc, vector)| (doc.clone(), vec![vector.clone()]))
            .collect();
        self.put_passages(&items)
    }

    /// Stores (or replaces) the passage vectors of documents: passage 0 under the document id,
    /// the others under [`passage_key`]; passages a replaced document no longer has are removed.
    pub fn put_passages(&self, items: &[(VectorDoc, Vec<Vec<f32>>)]) -> Result<(), StorageError> {
        if items.is_empty() {
            return Ok(());
        }
        let mut state = self.write();
        let dim = match &state.stamp {
            Some(stamp) => stamp.dim,
            None => {
                return Err(invalid(
                    "no embedding model is set for the vectors; call ensure_model first",
                ));
            }
        };
        let mut batch = sled::Batch::default();
        let mut rows: Vec<(String, &VectorDoc, VectorRecord)> = Vec::new();
        let mut stale: Vec<String> = Vec::new();
        for (doc, passages) in items {
            for (n, vector) in passages.iter().enumerate() {
                if vector.len() != dim {
                    return Err(invalid(format!(
                        "vector of {} has {} values, the model has {dim}",
                        doc.id,
                        vector.len()
                    )));
                }
                let record = VectorRecord {
                    version: VECTOR_RECORD_VERSION,
                    kind: doc.kind.as_str().to_string(),
                    session: doc.session.clone(),
                    project: doc.project.clone(),
                    created_at_ms: doc.created_at_ms,
                    vector: normalise(vector),
                };
                let key = passage_key(&doc.id, n);
                batch.insert(key.as_bytes(), encode("vector", &record)?);
                rows.push((key, doc, record));
            }
            for item in self.tree()?.scan_prefix(passage_prefix(&doc.id)) {
                let (key, _) = item?;
                let key = String::from_utf8_lossy(&key).into_owned();
                let n = key
                    .rsplit_once(PASSAGE_SEPARATOR)
                    .and_then(|(_, n)| n.parse::<usize>().ok())
                    .unwrap_or(usize::MAX);
                if n >= passages.len() {
                    batch.remove(key.as_bytes());
                    stale.push(key);
                }
            }
        }
        self.tree()?.apply_batch(batch)?;
        if let Some(matrix) = state.matrix.as_mut() {
            for (key, doc, record) in &rows {
                let kind = kind_code(doc.kind);
                matrix.upsert(key, kind, &doc.session, &doc.project, &record.vector);
            }
            for key in &stale {
                matrix.remove(key);
            }
        }
        Ok(())
    }

    /// Whether a vector is stored for `id`.
    pub fn contains(&self, id: &str) -> Result<bool, StorageError> {
        Ok(self.tree()?.contains_key(id.as_bytes())?)
    }

    /// Deletes the vectors of `id` (every passage); says whether there was one.
    pub fn remove(&self, id: &str) -> Result<bool, StorageError> {
        let mut state = self.write();
        let mut keys = vec![id.to_string()];
        for item in self.tree()?.scan_prefix(passage_prefix(id)) {
            let (key, _) = item?;
            keys.push(String::from_utf8_lossy(&key).into_owned());
        }
        let mut existed = false;
        for key in &keys {
            existed |= self.tree()?.remove(key.as_bytes())?.is_some();
            if let Some(matrix) = state.matrix.as_mut() {
                matrix.remove(key);
            }
        }
        Ok(existed)
    }

    /// Deletes every vector whose key starts with `prefix` (a pruned session's messages).
    pub fn remove_prefix(&self, prefix: &str) -> Result<u64, StorageError> {
        let mut state = self.write();
        let tree = self.tree()?;
        let mut batch = sled::Batch::default();
        let mut keys = Vec::new();
        for item in tree.scan_prefix(prefix.as_bytes()) {
            let (key, _) = item?;
            batch.remove(key.clone());
            keys.push(String::from_utf8_lossy(&key).into_owned());
        }
        tree.apply_batch(batch)?;
        if let Some(matrix) = state.matrix.as_mut() {
            for key in &keys {
                matrix.remove(key);
            }
        }
        Ok(keys.len() as u64)
    }

    /// Number of stored vectors, passages counted one by one (loads the in-memory copy).
    pub fn len(&self) -> Result<usize, StorageError> {
        self.load()?;
        Ok(self.read().matrix.as_ref().map_or(0, Matrix::len))
    }

    /// Whether no vector is stored.
    pub fn is_empty(&self) -> Result<bool, StorageError> {
        Ok(self.len()? == 0)
    }

    /// Loads the in-memory copy now rather than on the first search.
    pub fn warm(&self) -> Result<(), StorageError> {
        self.load()
    }

    /// Approximate bytes of the in-memory copy (0 before it is loaded).
    pub fn memory_bytes(&self) -> usize {
        self.read().matrix.as_ref().map_or(0, Matrix::approx_bytes)
    }

    fn load(&self) -> Result<(), StorageError> {
        if self.read().matrix.is_some() {
            return Ok(());
        }
        let mut state = self.write();
        if state.matrix.is_some() {
            return Ok(());
        }
        let Some(dim) = state.stamp.as_ref().map(|stamp| stamp.dim) else {
            state.matrix = Some(Matrix::new(0));
            return Ok(());
        };
        let mut matrix = Matrix::new(dim);
        for item in self.tree()?.iter() {
            let (key, raw) = item?;
            let record: VectorRecord = decode("vector", &raw)?;
            if record.vector.len() != dim {
                continue;
            }
            let id = String::from_utf8_lossy(&key);
            let kind = parse_kind(&record.kind).map_or(u8::MAX, kind_code);
            matrix.upsert(&id, kind, &record.session, &record.project, &record.vector);
        }
        matrix.shrink();
        state.matrix = Some(matrix);
        Ok(())
    }

    /// The `limit` stored vectors most similar to `query` (cosine, best first) among those
    /// passing `filter`.
    pub fn search(
        &self,
        query: &[f32],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<VectorHit>, StorageError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.load()?;
        let query = normalise(query);
        let candidates = {
            let state = self.read();
            let Some((matrix, row_filter)) = scan_plan(state.matrix.as_ref(), &query, filter)?
            else {
                return Ok(Vec::new());
            };
            matrix.candidates(&query, row_filter, candidates_for(limit))
        };
        self.rescore(&query, &candidates, limit)
    }

    /// [`VectorStore::search`] for each kind at once (the filter's kind is ignored), with one
    /// scan of the vectors: the `limit` best of every kind that has any, best first.
    pub fn search_by_kind(
        &self,
        query: &[f32],
        filter: &SearchFilter,
        limit: usize,
    ) -> Result<Vec<(DocKind, Vec<VectorHit>)>, StorageError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.load()?;
        let query = normalise(query);
        let per_kind = {
            let state = self.read();
            let Some((matrix, row_filter)) = scan_plan(state.matrix.as_ref(), &query, filter)?
            else {
                return Ok(Vec::new());
            };
            matrix.candidates_by_kind(&query, row_filter, candidates_for(limit))
        };
        let mut out = Vec::with_capacity(per_kind.len());
        for (_, candidates) in per_kind {
            let hits = self.rescore(&query, &candidates, limit)?;
            if let Some(kind) = hits.first().map(|hit| hit.kind) {
                out.push((kind, hits));
            }
        }
        Ok(out)
    }

    /// The exact cosine of each candidate from its stored f32 values, the best `limit`.
    fn rescore(
        &self,
        query: &[f32],
        candidates: &[Arc<str>],
        limit: usize,
    ) -> Result<Vec<VectorHit>, StorageError> {
        let mut hits: Vec<VectorHit> = Vec::with_capacity(candidates.len());
        for id in candidates {
            let Some(raw) = self.tree()?.get(id.as_bytes())? else {
                continue;
            };
            let record: VectorRecord = decode("vector", &raw)?;
            let Some(kind) = parse_kind(&record.kind) else {
                continue;
            };
            let score = query.iter().zip(&record.vector).map(|(a, b)| a * b).sum();
            hits.push(VectorHit {
                id: document_of(id).to_string(),
                score,
                kind,
                session: record.session,
                project: record.project,
                created_at_ms: record.created_at_ms,
            });
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
        // One hit per document: its best passage.
        let mut seen = std::collections::HashSet::new();
        hits.retain(|hit| seen.insert(hit.id.clone()));
        hits.truncate(limit);
        Ok(hits)
    }
}

/// The key prefix of the passages `n ≥ 1` of document `id`.
fn passage_prefix(id: &str) -> Vec<u8> {
    format!("{id}{PASSAGE_SEPARATOR}").into_bytes()
}

fn invalid(message: impl Into<String>) -> StorageError {
    StorageError::new(StorageErrorKind::Io, message)
}

/// `vector / |vector|`; a zero or non-finite vector becomes zeros.
fn normalise(vector: &[f32]) -> Vec<f32> {
    let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
    if !norm.is_finite() || norm <= f32::EPSILON {
        return vec![0.0; vector.len()];
    }
    vector.iter().map(|v| v / norm).collect()
}

#[cfg(test)]
mod tests;

/// Candidates read from the int8 scan for `limit` results (rescored exactly afterwards).
fn candidates_for(limit: usize) -> usize {
    limit.saturating_mul(4).max(MIN_CANDIDATES)
}

/// The matrix to scan and the row filter for `filter`; `None` when nothing can match (no
/// vectors, or a session or project the store has never seen).
fn scan_plan<'a>(
    matrix: Option<&'a Matrix>,
    query: &[f32],
    filter: &SearchFilter,
) -> Result<Option<(&'a Matrix, RowFilter)>, StorageError> {
    let Some(matrix) = matrix.filter(|matrix| matrix.len() > 0) else {
        return Ok(None);
    };
    if query.len() != matrix.dim() {
        return Err(invalid(format!(
            "query vector has {} values, the stored vectors {}",
            query.len(),
            matrix.dim()
        )));
    }
    let mut row_filter = RowFilter {
        kind: filter.kind.map(kind_code),
        ..RowFilter::default()
    };
    for (wanted, slot) in [
        (&filter.session, &mut row_filter.session),
        (&filter.project, &mut row_filter.project),
    ] {
        if let Some(name) = wanted {
            match matrix.name_id(name) {
                Some(id) => *slot = Some(id),
                None => return Ok(None),
            }
        }
    }
    Ok(Some((matrix, row_filter)))
}
