//! The `recall` tool the gateway adds to tool-bearing requests, on the wire.
//!
//! * [`definition`]: the tool's definition per protocol, its arguments and the text marker that
//!   stands in for a recall call in what the client sees.
//! * [`tools`]: adds the definition as the last element of a request's `tools` array, touching
//!   no other byte.
//! * [`expand`]: turns markers in a resent history back into the recall call and its result, so
//!   the model sees what it saw when it made the call.
//! * [`followup`]: the request that carries a recall result back to the model within the same
//!   client response.
//!
//! Anthropic Messages, OpenAI Chat Completions and OpenAI Responses carry the tool (a Responses
//! request that continues a stored response by `previous_response_id` does not).

pub mod definition;
pub mod expand;
pub mod followup;
pub mod tools;

pub use definition::{
    RECALL_TOOL_NAME, RecallArguments, RecallRecord, chat_marker, find_marker_keys, marker_key,
    marker_text, new_key,
};
pub use expand::expand_markers;
pub use followup::{anthropic_followup, chat_followup, responses_followup};
pub use tools::with_recall_tool;

#[cfg(test)]
mod tests;
