//! Durable storage of Lore: the conversation log and the persisted session state, on sled.
//!
//! Everything here is synchronous and free of any async runtime; callers in `lore-actors` run it
//! off the HTTP executor. Values are MessagePack (rmp-serde, named fields) and every record carries
//! a schema version, so a later release can read what an earlier one wrote.
//!
//! - [`store`] opens the data directory and owns the sled trees.
//! - [`records`] defines what is stored: sessions, messages, forks.
//! - [`context`] is the persisted state of a session's context manager.
//! - [`import`] writes sessions imported from a harness's own transcripts (`lore import`).
//! - [`prompts`] keeps what the model was told besides the conversation (system prompt, tool
//!   definitions), once per distinct version, with the turns of each session that used it.
//! - [`index`] is the tantivy full-text index (BM25) over captured messages.
//! - [`memory`] holds what the workers derive: distillations, knowledge, entities, worker usage.
//! - [`vectors`] holds the embedding vectors and answers nearest-neighbour searches.
//! - [`vault`] reads and writes the card vault, a folder of Markdown files.
//! - [`error`] is the one error type of the crate.

pub mod context;
pub mod error;
pub mod import;
pub mod index;
pub mod memory;
pub mod prompts;
pub mod recalls;
pub mod records;
pub mod store;
pub mod vault;
pub mod vectors;

pub use context::ContextRecord;
pub use error::{StorageError, StorageErrorKind};
pub use import::{ImportMessage, ImportOutcome, ImportRecord, ImportSession, ImportStatus};
pub use index::{DocKind, IndexDoc, SearchFilter, SearchHit, SearchIndex};
pub use prompts::{PromptUse, PromptVersion};
pub use records::{
    ForkRecord, LedgerEntry, MessageSource, PathEntry, SessionRecord, StoredMessage, now_ms,
};
pub use store::Store;
pub use vault::{Vault, VaultCard, VaultProblem, VaultSnapshot};
pub use vectors::{ModelStamp, VectorDoc, VectorHit, VectorStore};
