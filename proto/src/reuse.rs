//! Owns the reuse of an earlier parse of the same conversation: a client resends its whole
//! history every turn, so most wire items of a request are byte for byte the items of the turn
//! before. Each item gets a fingerprint ([`ItemPrint`]: its length and two 64-bit hashes of its
//! bytes); an item whose fingerprint equals the earlier request's at the same position takes
//! that request's message and identity instead of being parsed and hashed again.
//!
//! The message built from an item depends on the item's bytes alone, so a reused message is
//! the message the parse would have built. Only protocols whose items map one to one onto
//! messages (Anthropic Messages) reuse; the others parse in full.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;

use crate::canonical::Message;
use crate::error::ProtoError;
use crate::protocol::Protocol;

/// The fingerprint of one wire item: its length and two independent 64-bit hashes of its
/// bytes (a false match needs both to collide at the same length).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ItemPrint {
    len: u64,
    first: u64,
    second: u64,
}

const FIRST_SEED: u64 = 0x6c6f_7265_5f69_7465;
const SECOND_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

impl ItemPrint {
    /// The fingerprint of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Self {
            len: bytes.len() as u64,
            first: FixedState::with_seed(FIRST_SEED).hash_one(bytes),
            second: FixedState::with_seed(SECOND_SEED).hash_one(bytes),
        }
    }
}

/// An earlier parse of the conversation: its items' fingerprints with, position by position,
/// the message each became and that message's identity.
#[derive(Debug, Clone, Copy)]
pub struct Prior<'a> {
    /// Fingerprint of each wire item.
    pub prints: &'a [ItemPrint],
    /// The message of each item.
    pub messages: &'a [Message],
    /// The identity of each message.
    pub identities: &'a [[u8; 16]],
}

impl Prior<'_> {
    /// The message and identity of item `index` when the earlier request had the same item
    /// there.
    pub fn reuse(&self, index: usize, print: &ItemPrint) -> Option<(Message, [u8; 16])> {
        if self.prints.get(index) != Some(print) {
            return None;
        }
        let message = self.messages.get(index)?;
        let identity = self.identities.get(index)?;
        Some((message.clone(), *identity))
    }
}

/// What holds an earlier parse while a request reuses it.
pub trait PriorTurn {
    /// The earlier parse.
    fn prior(&self) -> Prior<'_>;
}

/// No earlier parse.
pub struct NoPrior;

impl<T: PriorTurn> PriorTurn for &T {
    fn prior(&self) -> Prior<'_> {
        (**self).prior()
    }
}

impl PriorTurn for NoPrior {
    fn prior(&self) -> Prior<'_> {
        Prior {
            prints: &[],
            messages: &[],
            identities: &[],
        }
    }
}

/// Parses a request body; for Anthropic Messages, the messages of the items that `find`'s
/// earlier parse (looked up by the first item's fingerprint) had at the same position are
/// taken from it. Other protocols parse in full and leave `identities` and `prints` empty: their
/// caller merges messages first and hashes after.
pub fn parse_reusing<R: PriorTurn>(
    protocol: Protocol,
    body: &[u8],
    find: impl FnOnce(&ItemPrint) -> Option<R>,
) -> Result<ParsedWithPrints, ProtoError> {
    match protocol {
        Protocol::Anthropic => crate::anthropic::parse_reusing(body, find),
        Protocol::OpenAiChat | Protocol::OpenAiResponses => Ok(ParsedWithPrints {
            request: crate::protocol::parse_request(protocol, body)?,
            ..ParsedWithPrints::default()
        }),
    }
}

/// A request parsed with what a later turn of the conversation needs to reuse it.
#[derive(Debug, Clone, Default)]
pub struct ParsedWithPrints {
    /// The request.
    pub request: crate::protocol::CanonicalRequest,
    /// The identity of each of its messages (empty when `prints` is).
    pub identities: Vec<[u8; 16]>,
    /// The fingerprint of each wire item, when the protocol reuses (empty otherwise).
    pub prints: Vec<ItemPrint>,
    /// How many messages were taken from the earlier parse.
    pub reused: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// An earlier parse held by the test.
    struct Held(ParsedWithPrints);

    impl PriorTurn for Held {
        fn prior(&self) -> Prior<'_> {
            Prior {
                prints: &self.0.prints,
                messages: &self.0.request.messages,
                identities: &self.0.identities,
            }
        }
    }

    fn body(messages: &[Value]) -> Vec<u8> {
        let mut messages = messages.to_vec();
        if let Some(Value::Array(blocks)) = messages.last_mut().map(|m| &mut m["content"])
            && let Some(Value::Object(last)) = blocks.last_mut()
        {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        serde_json::to_vec(&json!({"model": "claude-x", "system": "s", "messages": messages}))
            .unwrap()
    }

    fn history(turns: usize) -> Vec<Value> {
        let mut out = Vec::new();
        for t in 0..turns {
            out.push(json!({"role": "user", "content": [{"type": "text", "text": format!("step {t}\nwith \"quotes\"")}]}));
            out.push(json!({"role": "assistant", "content": [{"type": "text", "text": "running"}, {"type": "tool_use", "id": format!("tu_{t}"), "name": "Bash", "input": {"command": format!("ls {t}")}}]}));
            out.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("tu_{t}"), "content": format!("file_{t}\nline two")}]}));
            out.push(json!({"role": "assistant", "content": format!("done {t}")}));
        }
        out
    }

    fn fresh(body: &[u8]) -> ParsedWithPrints {
        parse_reusing::<NoPrior>(Protocol::Anthropic, body, |_| None).unwrap()
    }

    #[test]
    fn a_reusing_parse_equals_a_fresh_one() {
        let mut messages = history(6);
        messages.push(json!({"role": "user", "content": [{"type": "text", "text": "next?"}]}));
        let before = Held(fresh(&body(&messages)));
        // The next turn: the reply and a new question; the breakpoint moves to the end.
        messages.push(json!({"role": "assistant", "content": "answer"}));
        messages.push(json!({"role": "user", "content": [{"type": "text", "text": "and then?"}]}));
        let next = body(&messages);
        let reused = parse_reusing(Protocol::Anthropic, &next, |_| Some(&before)).unwrap();
        let expected = fresh(&next);
        assert_eq!(reused.request, expected.request);
        assert_eq!(reused.identities, expected.identities);
        assert_eq!(reused.prints, expected.prints);
        // All but the message that lost its breakpoint and the two new ones.
        assert_eq!(reused.reused, messages.len() - 3);
        // An edited message in the middle is parsed again; the rest still reused.
        messages[5] = json!({"role": "assistant", "content": [{"type": "text", "text": "edited"}]});
        let edited = body(&messages);
        let reused = parse_reusing(Protocol::Anthropic, &edited, |_| Some(&before)).unwrap();
        let expected = fresh(&edited);
        assert_eq!(reused.request, expected.request);
        assert_eq!(reused.identities, expected.identities);
        assert_eq!(reused.reused, messages.len() - 4);
    }

    #[test]
    fn another_protocol_parses_in_full() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
        let parsed = parse_reusing::<NoPrior>(Protocol::OpenAiChat, body, |_| None).unwrap();
        assert_eq!(parsed.request.messages.len(), 1);
        assert!(parsed.prints.is_empty() && parsed.identities.is_empty());
    }

    #[test]
    fn prints_tell_bytes_apart() {
        assert_eq!(ItemPrint::of(b"{\"a\":1}"), ItemPrint::of(b"{\"a\":1}"));
        assert_ne!(ItemPrint::of(b"{\"a\":1}"), ItemPrint::of(b"{\"a\":2}"));
        assert_ne!(ItemPrint::of(b""), ItemPrint::of(b" "));
    }
}
