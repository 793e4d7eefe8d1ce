//! Durable storage of Lore: the conversation log and the persisted session state, on sled.
//!
//! Everything here is synchronous and free of any async runtime; callers in `lore-actors` run it
//! off the HTTP executor. Values are MessagePack (rmp-serde, named fields) and every record carries
//! a schema version, so a later release can read what an earlier one wrote.
//!
//! - [`store`] opens the data directory and owns the sled trees; `handle` keeps the open
//!   database replaceable, so a write failure (a full disk) is recovered from without a restart.
//! - [`records`] defines what is stored: sessions, messages, forks; [`forks`] keeps the forks
//!   in their own tree.
//! - [`context`] is the persisted state of a session's context manager.
//! - [`import`] writes sessions imported from a harness's own transcripts (`lore import`).
//! - [`prompts`] keeps what the model was told besides the conversation (system prompt, tool
//!   definitions), once per distinct version, with the turns of each session that used it.
//! - [`index`] is the tantivy full-text index (BM25) over captured messages.
//! - [`memory`] holds what the workers derive: distillations, knowledge, entities.
//! - [`costs`] is the cost ledger: spend per UTC day and bucket and per session, the throttle's
//!   counters, the cost rate and the daily budget set through the API.
//! - [`vectors`] holds the embedding vectors and answers nearest-neighbour searches.
//! - [`prune`] deletes old sessions' raw data (keeping what the memory derived from them).
//! - [`vault`] reads and writes the card vault, a folder of Markdown files.
//! - [`admin`] holds the management writes: delete or move a session, delete an entity.
//! - [`summaries`]: light, cached session summaries for listings.
//! - [`error`] is the one error type of the crate.

pub mod admin;
pub mod context;
pub mod costs;
pub mod error;
pub mod forks;
mod handle;
pub mod import;
pub mod index;
pub mod insertions;
pub mod memory;
pub mod prompts;
pub mod prune;
pub mod recalls;
pub mod records;
pub mod store;
pub mod summaries;
pub mod vault;
pub mod vectors;

pub use admin::DeletedSession;
pub use context::{ContextRecord, DeltaRecord, LtmRecord};
pub use error::{StorageError, StorageErrorKind};
pub use forks::NewFork;
pub use import::{ImportMessage, ImportOutcome, ImportRecord, ImportSession, ImportStatus};
pub use index::{DocKind, IndexDoc, SearchFilter, SearchHit, SearchIndex};
pub use insertions::{Insertion, InsertionKind};
pub use prompts::{PromptUse, PromptVersion};
pub use records::{
    ForkRecord, LedgerEntry, MessageSource, PathEntry, SessionRecord, StoredMessage, now_ms,
};
pub use store::{Store, StoreHealth};
pub use summaries::{CardInjection, SessionSummary};

/// Sum of the sizes of the files under `dir` (0 when it cannot be read).
pub fn disk_usage(dir: &std::path::Path) -> u64 {
    handle::dir_bytes(dir)
}
pub use vault::{Vault, VaultCard, VaultProblem, VaultSnapshot};
pub use vectors::{ModelStamp, VectorDoc, VectorHit, VectorStore};
