//! Owns the Anthropic Messages API: lossless wire types ([`request`], [`response`], [`stream`]),
//! the fast request summary, the non-streaming reply parser and the stream accumulator.

mod accumulator;
mod parse;
pub mod request;
pub mod response;
pub mod stream;

pub use accumulator::Accumulator;
pub(crate) use accumulator::reply_from_value;
pub(crate) use parse::{parse_request, parse_reusing};
