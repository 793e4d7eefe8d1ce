//! The actors of Lore and the pure logic they own.
//!
//! Table of contents:
//! - [`background`]: background threads at low priority, and their CPU share while requests are
//!   in flight.
//! - [`cards`]: the card matching engine (pure): which lore cards fire, in which order, within a
//!   token budget.
//! - [`catalogue`]: the model catalogue (windows, output limits, prices) and its overrides.
//! - [`costs`]: `CostTracker`, the supervised actor that prices every turn and worker call,
//!   keeps the daily budget and its throttle, and polls OAuth quota pressure.
//! - [`registry`]: `SessionRegistry`, which maps a request to its conversation and owns the map
//!   of live `SessionActor`s.
//! - [`session`]: `SessionActor`, one per live conversation; the single owner of that session's
//!   state, so the turns of one session are serialized and turns of different sessions run in
//!   parallel.
//! - [`embedder`]: the embedding model (ONNX Runtime, loaded at run time) and its worker pool.
//! - [`reranker`]: the optional cross-encoder that rescores the top recall candidates.
//! - [`onnx`]: what the embedder and the reranker share of ONNX Runtime (the environment, model
//!   loading with one set of session options, a padded batch run).
//! - [`vectorizer`]: `Vectorizer`, which keeps the embedding vectors of stored documents current.
//! - [`knowledge`]: long-term knowledge as every writer changes it (create or merge, update,
//!   forget, with the same limits), the `.lore.md` format, its import and export.
//! - [`ltm`]: long-term knowledge in the prompt (system[1], system[2], deltas), pure.
//! - [`documents`]: the search documents of distillations, knowledge entries and entities.
//! - [`gradient`]: the context manager's pure engine (layers 0–4, budgets, pins, calibration).
//! - [`entity_merge`]: merging two entities the user knows are one.
//! - [`indexer`]: `Indexer`, the single writer of the search index, committing in batches.
//! - [`worker`]: the worker LLM client and the activity board that keeps background work off
//!   a session's requests.
//! - [`distiller`]: `Distiller`, which turns quiet sessions' messages into observation logs and
//!   consolidates them. [`curator`]: `Curator`, which turns observations into long-term knowledge
//!   and entities.
//! - [`pruner`]: `Pruner`, retention and the size cap of the raw conversation data.
//! - [`history`]: pure functions that compare an incoming history with a stored one.
//! - [`injection`]: the pure, cache-stable plan of a request's card injection.
//! - [`cards`]: the card matching engine and the card book.
//! - [`model`]: data passed between the HTTP layer and the actors.
//! - [`turn`]: the outgoing body of a turn (card injection and the context plan, rendered).
//! - [`tokens`]: the token estimator (o200k_base), shared by every budget.
//! - [`error`]: the crate's error type.

pub mod background;
pub mod cards;
pub mod catalogue;
pub mod costs;
pub mod curator;
pub mod distiller;
pub mod documents;
pub mod embedder;
pub mod entity_merge;
pub mod error;
pub mod gradient;
pub mod history;
pub mod indexer;
pub mod injection;
pub mod knowledge;
pub mod ledger;
pub mod ltm;
pub mod model;
pub mod onnx;
pub mod pruner;
pub mod recall;
pub mod registry;
pub mod reranker;
pub mod session;
pub mod tokens;
pub mod turn;
pub mod vectorizer;
pub mod worker;

pub use error::ActorError;
pub use model::{ProjectHint, SessionCounters, SessionHandle, SessionIdentity};
pub use registry::{Observe as ObserveRegistry, RegistryCounters, ResolveSession, SessionRegistry};
pub use session::{
    CardInput, ContextOverflow, FollowUp, Observe as ObserveSession, Overflow, PrepareTurn,
    SessionActor, SetAmnesia, TurnCompleted, TurnEnded, TurnPlan,
};
