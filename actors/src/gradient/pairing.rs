//! The validator every transformation passes (wire rule: tool pairing is an invariant): in the
//! messages a plan sends, no tool output without its call before it, no call without its
//! output after it (but in the last message, whose outputs the client is about to send), the
//! raw window starting at a user message, and the conversation ending with the client's own
//! last message.

use std::collections::HashSet;

use lore_proto::Role;

use super::{Plan, Unit};

/// What a plan would break.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairingError {
    /// A tool output whose call is not sent before it.
    OrphanResult(String),
    /// A tool call whose output is not sent after it.
    OrphanCall(String),
    /// The raw window after the prefix does not start with a user message.
    WindowStart(usize),
    /// The plan starts past the conversation.
    OutOfRange(usize),
}

impl std::fmt::Display for PairingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PairingError::OrphanResult(id) => write!(f, "tool output {id} has no call before it"),
            PairingError::OrphanCall(id) => write!(f, "tool call {id} has no output after it"),
            PairingError::WindowStart(at) => {
                write!(
                    f,
                    "the raw window starts at message {at}, which is not a user message"
                )
            }
            PairingError::OutOfRange(at) => write!(f, "the raw window starts past the end ({at})"),
        }
    }
}

/// Checks what `plan` sends of `units`. Calls and outputs the client itself left unpaired
/// (before the window or in its own history) are not held against the plan.
pub fn validate(units: &[Unit], plan: &Plan) -> Result<(), PairingError> {
    if plan.start > units.len() || (plan.start == units.len() && !units.is_empty()) {
        return Err(PairingError::OutOfRange(plan.start));
    }
    if plan.layer == 0 {
        return Ok(());
    }
    let window = &units[plan.start..];
    if window.first().is_some_and(|unit| unit.role != Role::User) {
        return Err(PairingError::WindowStart(plan.start));
    }
    // What the client's own history leaves unpaired is the client's business.
    let client_results: HashSet<&str> = units
        .iter()
        .flat_map(|unit| unit.results.iter().map(|r| r.call_id.as_str()))
        .collect();
    let client_calls: HashSet<&str> = units
        .iter()
        .flat_map(|unit| unit.calls.iter().map(String::as_str))
        .collect();
    let mut seen_calls: HashSet<&str> = HashSet::new();
    for unit in window {
        for result in &unit.results {
            let id = result.call_id.as_str();
            if client_calls.contains(id) && !seen_calls.contains(id) {
                return Err(PairingError::OrphanResult(result.call_id.clone()));
            }
        }
        seen_calls.extend(unit.calls.iter().map(String::as_str));
    }
    let last = window.len().saturating_sub(1);
    let mut answered: HashSet<&str> = HashSet::new();
    for (i, unit) in window.iter().enumerate().rev() {
        if i != last {
            for call in &unit.calls {
                if client_results.contains(call.as_str()) && !answered.contains(call.as_str()) {
                    return Err(PairingError::OrphanCall(call.clone()));
                }
            }
        }
        answered.extend(unit.results.iter().map(|r| r.call_id.as_str()));
    }
    Ok(())
}
