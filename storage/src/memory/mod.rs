//! The memory the workers derive from the conversation log: distillations (observation logs
//! and their meta-distillations), long-term knowledge entries, the entity graph, and the worker
//! spend view of the cost ledger ([`crate::costs`]).
//!
//! Trees and key layouts:
//! - `distillations`: `<session id>/<n as u64 big-endian>` → [`Distillation`]; a prefix scan
//!   yields a session's distillations in the order they were written.
//! - `distill_state`: session id → [`DistillState`], the Distiller's cursors for that session.
//! - `knowledge`: entry id → [`KnowledgeEntry`] (the current version, deleted ones included).
//! - `knowledge_history`: `<entry id>/<version as u32 big-endian>` → the versions it replaced.
//! - `entities`: entity id → [`Entity`].
//! - `worker_usage`: the worker ledger of earlier builds (`<YYYY-MM-DD>/<bucket>` →
//!   [`UsageTotals`]), folded into the cost ledger once and emptied.
//!
//! Temporal storage stays the ground truth: everything here is derived from it, and a failed
//! worker call changes nothing here.

mod costs;
pub(crate) mod distillations;
pub(crate) mod entities;
mod knowledge;
mod records;

pub use costs::day_of;
pub use knowledge::new_memory_id;
pub use records::{
    Alias, Category, DistillState, Distillation, Entity, KnowledgeEntry, Relation, UsageTotals,
    WorkerBucket,
};
