//! The in-memory copy of the stored vectors: one contiguous int8 matrix (one scale per row) with
//! the filter fields beside it, scanned brute force to pick the candidates of a search.
//!
//! A row costs `dim` bytes plus about 40 bytes of bookkeeping; the scan is a plain loop of
//! integer dot products that the compiler vectorises. A scan by kind of many rows is split in
//! two halves scanned on two threads (the best of each half merged: the same answer).

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap};
use std::ops::Range;
use std::sync::Arc;

/// Rows from which a scan by kind is split over two threads (a thread costs tens of µs; 32k
/// rows of 384 values take about 1.5 ms).
const PARALLEL_ROWS: usize = 32_768;

/// The best rows of each kind seen by a scan, by kind code in the order first seen.
type KindHeaps = Vec<(u8, BinaryHeap<Reverse<Scored>>)>;
/// Which rows a scan may return: kind code, interned session and project.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct RowFilter {
    pub kind: Option<u8>,
    pub session: Option<u32>,
    pub project: Option<u32>,
}

/// The quantised rows and their filter fields, by slot.
#[derive(Debug)]
pub(super) struct Matrix {
    dim: usize,
    codes: Vec<i8>,
    scales: Vec<f32>,
    ids: Vec<Arc<str>>,
    kinds: Vec<u8>,
    sessions: Vec<u32>,
    projects: Vec<u32>,
    slots: HashMap<Arc<str>, usize>,
    names: HashMap<Arc<str>, u32>,
}

impl Matrix {
    /// An empty matrix of rows of `dim` values.
    pub fn new(dim: usize) -> Self {
        Self {
            dim,
            codes: Vec::new(),
            scales: Vec::new(),
            ids: Vec::new(),
            kinds: Vec::new(),
            sessions: Vec::new(),
            projects: Vec::new(),
            slots: HashMap::new(),
            names: HashMap::new(),
        }
    }

    /// Row length.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Gives back spare capacity (after a bulk load).
    pub fn shrink(&mut self) {
        self.codes.shrink_to_fit();
        self.scales.shrink_to_fit();
        self.ids.shrink_to_fit();
        self.kinds.shrink_to_fit();
        self.sessions.shrink_to_fit();
        self.projects.shrink_to_fit();
        self.slots.shrink_to_fit();
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The interned number of a session or project name, if any row uses it.
    pub fn name_id(&self, name: &str) -> Option<u32> {
        self.names.get(name).copied()
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.names.get(name) {
            return id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
        self.names.insert(Arc::from(name), id);
        id
    }

    /// Adds or replaces the row `id`. `vector` must have `dim` values.
    pub fn upsert(&mut self, id: &str, kind: u8, session: &str, project: &str, vector: &[f32]) {
        let session = self.intern(session);
        let project = self.intern(project);
        let slot = match self.slots.get(id) {
            Some(&slot) => slot,
            None => {
                let slot = self.ids.len();
                let id: Arc<str> = Arc::from(id);
                self.slots.insert(id.clone(), slot);
                self.ids.push(id);
                self.codes.resize(self.codes.len() + self.dim, 0);
                self.scales.push(0.0);
                self.kinds.push(0);
                self.sessions.push(0);
                self.projects.push(0);
                slot
            }
        };
        let row = &mut self.codes[slot * self.dim..(slot + 1) * self.dim];
        self.scales[slot] = quantize(vector, row);
        self.kinds[slot] = kind;
        self.sessions[slot] = session;
        self.projects[slot] = project;
    }

    /// Removes the row `id` (the last row moves into its slot); says whether it was there.
    pub fn remove(&mut self, id: &str) -> bool {
        let Some(slot) = self.slots.remove(id) else {
            return false;
        };
        let last = self.ids.len() - 1;
        if slot != last {
            let (head, tail) = self.codes.split_at_mut(last * self.dim);
            head[slot * self.dim..(slot + 1) * self.dim].copy_from_slice(&tail[..self.dim]);
            let moved = self.ids[last].clone();
            self.slots.insert(moved, slot);
        }
        self.codes.truncate(last * self.dim);
        self.ids.swap_remove(slot);
        self.scales.swap_remove(slot);
        self.kinds.swap_remove(slot);
        self.sessions.swap_remove(slot);
        self.projects.swap_remove(slot);
        true
    }

    /// The ids of the (at most) `k` rows passing `filter` with the highest approximate dot
    /// product with `query` (length `dim`), best first.
    pub fn candidates(&self, query: &[f32], filter: RowFilter, k: usize) -> Vec<Arc<str>> {
        if k == 0 || query.len() != self.dim || self.dim == 0 {
            return Vec::new();
        }
        let mut codes = vec![0i8; self.dim];
        quantize(query, &mut codes);
        let codes: Vec<i16> = codes.into_iter().map(i16::from).collect();
        let mut best: BinaryHeap<Reverse<Scored>> = BinaryHeap::with_capacity(k + 1);
        let plain = filter.kind.is_none() && filter.session.is_none() && filter.project.is_none();
        for (slot, row) in self.codes.chunks_exact(self.dim).enumerate() {
            if !plain && !self.passes(slot, filter) {
                continue;
            }
            let score = dot_i8(&codes, row) as f32 * self.scales[slot];
            if best.len() < k {
                best.push(Reverse(Scored(score, slot)));
            } else if best.peek().is_some_and(|worst| score > worst.0.0) {
                best.pop();
                best.push(Reverse(Scored(score, slot)));
            }
        }
        let mut ranked: Vec<Scored> = best.into_iter().map(|Reverse(scored)| scored).collect();
        ranked.sort_by(|a, b| b.cmp(a));
        ranked
            .into_iter()
            .map(|Scored(_, slot)| self.ids[slot].clone())
            .collect()
    }

    /// [`Matrix::candidates`] for every kind at once, in one pass: the (at most) `k` best rows
    /// of each kind passing `filter` (its kind is ignored), by kind code, best first.
    pub fn candidates_by_kind(
        &self,
        query: &[f32],
        filter: RowFilter,
        k: usize,
    ) -> Vec<(u8, Vec<Arc<str>>)> {
        if k == 0 || query.len() != self.dim || self.dim == 0 {
            return Vec::new();
        }
        let filter = RowFilter {
            kind: None,
            ..filter
        };
        let mut codes = vec![0i8; self.dim];
        quantize(query, &mut codes);
        let codes: Vec<i16> = codes.into_iter().map(i16::from).collect();
        let rows = self.len();
        let best = if rows >= PARALLEL_ROWS && two_cores() {
            let middle = rows / 2;
            let (first, second) = std::thread::scope(|scope| {
                let second = scope.spawn(|| self.scan_by_kind(&codes, filter, k, middle..rows));
                let first = self.scan_by_kind(&codes, filter, k, 0..middle);
                // A panic of the other half (none is expected) costs only its rows.
                (first, second.join().unwrap_or_default())
            });
            merge(first, second, k)
        } else {
            self.scan_by_kind(&codes, filter, k, 0..rows)
        };
        best.into_iter()
            .map(|(kind, heap)| {
                let mut ranked: Vec<Scored> = heap.into_iter().map(|Reverse(s)| s).collect();
                ranked.sort_by(|a, b| b.cmp(a));
                let ids = ranked
                    .into_iter()
                    .map(|Scored(_, slot)| self.ids[slot].clone());
                (kind, ids.collect())
            })
            .collect()
    }

    /// The `k` best rows of each kind among `slots`, by kind code in the order first seen.
    fn scan_by_kind(
        &self,
        codes: &[i16],
        filter: RowFilter,
        k: usize,
        slots: Range<usize>,
    ) -> KindHeaps {
        let mut best: KindHeaps = Vec::new();
        let plain = filter.session.is_none() && filter.project.is_none();
        let rows = self.codes[slots.start * self.dim..slots.end * self.dim].chunks_exact(self.dim);
        for (slot, row) in slots.zip(rows) {
            if !plain && !self.passes(slot, filter) {
                continue;
            }
            let kind = self.kinds[slot];
            let position = match best.iter().position(|(code, _)| *code == kind) {
                Some(position) => position,
                None => {
                    best.push((kind, BinaryHeap::with_capacity(k + 1)));
                    best.len() - 1
                }
            };
            let score = dot_i8(codes, row) as f32 * self.scales[slot];
            keep_best(&mut best[position].1, Scored(score, slot), k);
        }
        best
    }

    fn passes(&self, slot: usize, filter: RowFilter) -> bool {
        filter.kind.is_none_or(|kind| self.kinds[slot] == kind)
            && filter.session.is_none_or(|s| self.sessions[slot] == s)
            && filter.project.is_none_or(|p| self.projects[slot] == p)
    }

    /// Bytes held by the rows (codes, scales and filter fields), an estimate for reports.
    pub fn approx_bytes(&self) -> usize {
        self.codes.capacity()
            + self.scales.capacity() * 4
            + self.kinds.capacity()
            + (self.sessions.capacity() + self.projects.capacity()) * 4
            + self.ids.iter().map(|id| id.len() + 16 + 48).sum::<usize>()
    }
}

/// Whether a big scan is split: this process may run on two cores or more and
/// `LORE_VECTOR_SCAN_THREADS` is not 1 (asked once).
fn two_cores() -> bool {
    static TWO: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TWO.get_or_init(|| {
        let one = std::env::var("LORE_VECTOR_SCAN_THREADS").is_ok_and(|v| v.trim() == "1");
        !one && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
    })
}

/// Pushes `scored` into a heap of the `k` best, dropping the worst beyond `k`.
fn keep_best(heap: &mut BinaryHeap<Reverse<Scored>>, scored: Scored, k: usize) {
    if heap.len() < k {
        heap.push(Reverse(scored));
    } else if heap.peek().is_some_and(|worst| scored > worst.0) {
        heap.pop();
        heap.push(Reverse(scored));
    }
}

/// The `k` best of each kind of two scans, kinds in the order `first` then `second` saw them.
fn merge(mut first: KindHeaps, second: KindHeaps, k: usize) -> KindHeaps {
    for (kind, heap) in second {
        match first.iter_mut().find(|(code, _)| *code == kind) {
            Some((_, into)) => {
                for Reverse(scored) in heap {
                    keep_best(into, scored, k);
                }
            }
            None => first.push((kind, heap)),
        }
    }
    first
}

/// A score and a slot, ordered by score (total order), then slot.
#[derive(Debug, Clone, Copy)]
struct Scored(f32, usize);

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .total_cmp(&other.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

/// Writes `vector` as int8 codes into `out` and returns the scale (value = code × scale).
pub(super) fn quantize(vector: &[f32], out: &mut [i8]) -> f32 {
    let max = vector.iter().fold(0f32, |max, v| max.max(v.abs()));
    if !max.is_finite() || max == 0.0 {
        out.fill(0);
        return 0.0;
    }
    let scale = max / 127.0;
    for (code, value) in out.iter_mut().zip(vector) {
        *code = (value / scale).round().clamp(-127.0, 127.0) as i8;
    }
    scale
}

/// Lanes of the dot product: independent accumulators the compiler keeps in SIMD registers.
const LANES: usize = 32;

/// Integer dot product of a widened query and a row of codes. Written as `LANES` independent
/// sums so it vectorises into multiply-adds even for the baseline x86-64 target (measured about
/// twice as fast as a single `i8 × i8` reduction).
#[inline]
fn dot_i8(query: &[i16], row: &[i8]) -> i32 {
    let mut acc = [0i32; LANES];
    let (q_chunks, r_chunks) = (query.chunks_exact(LANES), row.chunks_exact(LANES));
    let tail: i32 = q_chunks
        .remainder()
        .iter()
        .zip(r_chunks.remainder())
        .map(|(&q, &r)| i32::from(q) * i32::from(r))
        .sum();
    for (q, r) in q_chunks.zip(r_chunks) {
        for lane in 0..LANES {
            acc[lane] += i32::from(q[lane]) * i32::from(r[lane]);
        }
    }
    acc.iter().sum::<i32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removing_moves_the_last_row_into_the_gap() {
        let mut matrix = Matrix::new(2);
        matrix.upsert("a", 0, "s", "p", &[1.0, 0.0]);
        matrix.upsert("b", 0, "s", "p", &[0.0, 1.0]);
        matrix.upsert("c", 0, "s", "p", &[0.7, 0.7]);
        assert!(matrix.remove("a"));
        assert!(!matrix.remove("a"));
        assert_eq!(matrix.len(), 2);
        let top = matrix.candidates(&[0.0, 1.0], RowFilter::default(), 1);
        assert_eq!(top.first().map(|id| &**id), Some("b"));
        let all = matrix.candidates(&[1.0, 0.0], RowFilter::default(), 5);
        assert_eq!(all.iter().map(|id| &**id).collect::<Vec<_>>(), ["c", "b"]);
    }

    /// A scan big enough to be split over two threads answers as one pass over all rows.
    #[test]
    fn a_split_scan_by_kind_finds_what_one_pass_finds() {
        let dim = 8;
        let mut matrix = Matrix::new(dim);
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 2001) as f32 / 1000.0 - 1.0
        };
        let rows = PARALLEL_ROWS + 5_001;
        for row in 0..rows {
            let vector: Vec<f32> = (0..dim).map(|_| next()).collect();
            // Kinds first seen in the second half too (kind 3 only there).
            let kind = if row > rows / 2 && row % 7 == 0 {
                3
            } else {
                (row % 3) as u8
            };
            matrix.upsert(&format!("r{row}"), kind, "s", "p", &vector);
        }
        let query: Vec<f32> = (0..dim).map(|_| next()).collect();
        let split = matrix.candidates_by_kind(&query, RowFilter::default(), 40);
        let mut codes = vec![0i8; dim];
        quantize(&query, &mut codes);
        let codes: Vec<i16> = codes.into_iter().map(i16::from).collect();
        let whole = matrix.scan_by_kind(&codes, RowFilter::default(), 40, 0..rows);
        let whole: Vec<(u8, Vec<Arc<str>>)> = whole
            .into_iter()
            .map(|(kind, heap)| {
                let mut ranked: Vec<Scored> = heap.into_iter().map(|Reverse(s)| s).collect();
                ranked.sort_by(|a, b| b.cmp(a));
                let ids = ranked
                    .into_iter()
                    .map(|Scored(_, slot)| matrix.ids[slot].clone());
                (kind, ids.collect())
            })
            .collect();
        assert_eq!(split.len(), 4);
        assert_eq!(split, whole);
    }

    #[test]
    fn quantisation_keeps_the_direction() {
        let vector = [0.5f32, -0.25, 0.125, 0.0];
        let mut codes = [0i8; 4];
        let scale = quantize(&vector, &mut codes);
        for (code, value) in codes.iter().zip(vector) {
            assert!((f32::from(*code) * scale - value).abs() <= scale / 2.0 + f32::EPSILON);
        }
        assert_eq!(quantize(&[0.0; 4], &mut codes), 0.0);
    }
}
