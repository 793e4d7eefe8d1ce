//! Owns the OpenAI Responses API: lossless wire types ([`request`], [`response`]), the fast
//! request summary, the non-streaming reply parser and the stream accumulator.

mod accumulator;
mod parse;
pub mod request;
pub mod response;

pub use accumulator::Accumulator;
pub(crate) use accumulator::reply_from_value;
pub(crate) use parse::parse_request;
