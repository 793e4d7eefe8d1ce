//! Wire formats, the SSE codec, stream accumulators and the canonical conversation model of Lore.
//!
//! This crate does no IO and owns no runtime: everything here is pure parsing and data.
//!
//! * [`sse`]: incremental Server-Sent Events decoder and encoder.
//! * [`canonical`]: the protocol-neutral conversation model ([`Message`], [`Part`], [`Role`], [`Usage`]).
//! * [`protocol`]: the entry points the gateway uses: [`parse_request`], [`parse_response`], [`new_accumulator`].
//! * [`anthropic`], [`openai_chat`], [`openai_responses`]: lossless wire types plus the per-protocol
//!   fast request parsers, non-streaming response parsers and stream accumulators.
//! * [`wire`]: shared helpers for the lossless wire types ([`wire::Tolerant`], [`wire::Field`]).
//! * [`error`]: the crate error, [`ProtoError`].
//! * [`cards`]: the lore-card file format (Markdown + YAML frontmatter) and `kinds.yaml`.
//! * [`recall_tool`]: the `recall` tool on the wire: its definition, markers, expansion, follow-ups.
//! * [`rebuild`]: a request body rebuilt around a new message array (the context manager's
//!   output), element transformations, and the usage a managed client is shown.
//! * [`lorebook`]: SillyTavern World Info and Character Card V2/V3 `character_book` import/export.

pub mod anthropic;
pub mod canonical;
pub mod cards;
pub mod error;
mod fast;
pub mod inject;
pub mod lorebook;
pub mod openai_chat;
pub mod openai_responses;
pub mod protocol;
pub mod rebuild;
pub mod recall_tool;
pub mod reuse;
pub mod sse;
pub mod wire;

pub use canonical::{Message, Part, Role, Usage};
pub use error::ProtoError;
pub use protocol::{
    CanonicalRequest, Protocol, Reply, RequestHead, StreamAccumulator, new_accumulator,
    parse_request, parse_response, peek_head,
};
pub use sse::{SseDecoder, SseEvent};
