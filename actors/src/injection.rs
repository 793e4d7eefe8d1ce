//! Planning the card injection of one request, cache-stably (pure; the `SessionActor` runs it).
//!
//! The session's ledger remembers every block it injected: the index of the message that got
//! it, that message's identity, and the exact block text. On each request:
//! 1. every ledger entry whose message is still at its index is replayed there, byte for byte,
//!    so everything the provider cached before stays a prefix of the new prompt; an entry whose
//!    message is gone (the client compacted or rewrote history) is dropped, and its cards may
//!    fire again;
//! 2. when the request ends with a message the user wrote, cards are matched against it and the
//!    recent turns; cards already shown by a live entry are not injected twice;
//! 3. new cards go into one block before the text of that last message, and into the ledger.
//!
//! A resend of the same turn (retry, regenerate) finds its own ledger entry and gets the same
//! block again. Anything that fails leaves the request untouched.

use std::ops::Range;

use lore_proto::inject::{
    is_user_text, item_message, message_items, splice, with_block, with_system_blocks,
};
use lore_proto::{Message, Protocol, Role};
use lore_storage::{LedgerEntry, now_ms};
use sha2::{Digest, Sha256};

use crate::cards::book::CardBook;
use crate::cards::{BpeTokenCounter, MatchOptions, Turn, consult, render_block};

/// Most ledger entries kept per session.
const MAX_LEDGER_ENTRIES: usize = 200;
/// History turns handed to the engine (the engine narrows further by scan depth).
const HISTORY_TURNS: usize = 20;

/// Where blocks go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Placement {
    /// Before the text of the user message that made the cards fire (cache-stable; default).
    #[default]
    User,
    /// At the end of the system prompt. Every new block changes the system prompt, so each one
    /// costs a prompt-cache write of the whole conversation; for clients that want it anyway.
    System,
}

/// How cards are injected; the gateway's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardSettings {
    /// Where blocks go (`LORE_CARDS_PLACEMENT`).
    pub placement: Placement,
    /// Token budget of a block (framing included).
    pub budget_tokens: usize,
    /// Default window in turns.
    pub scan_depth: u8,
    /// Text after the opening marker.
    pub framing: String,
}

impl Default for CardSettings {
    fn default() -> Self {
        Self {
            placement: Placement::User,
            budget_tokens: 600,
            scan_depth: 3,
            framing: crate::cards::DEFAULT_FRAMING.to_string(),
        }
    }
}

/// What the planner decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InjectionPlan {
    /// The body to forward; `None` forwards the original bytes.
    pub body: Option<Vec<u8>>,
    /// Keys injected by this request for the first time.
    pub injected: Vec<String>,
    /// The ledger after this request.
    pub ledger: Vec<LedgerEntry>,
}

/// Plans the injection for one request. `history` is the canonical conversation (for matching).
pub fn plan(
    session_id: &str,
    protocol: Protocol,
    body: &[u8],
    history: &[Message],
    ledger: &[LedgerEntry],
    book: &CardBook,
    settings: &CardSettings,
) -> InjectionPlan {
    let unchanged = InjectionPlan {
        body: None,
        injected: Vec::new(),
        ledger: ledger.to_vec(),
    };
    let Ok(items) = message_items(protocol, body) else {
        return unchanged;
    };
    if items.is_empty() {
        return unchanged;
    }
    let identity_at = |index: usize| -> Option<[u8; 16]> {
        let range = items.get(index)?;
        item_message(protocol, &body[range.clone()]).map(|message| message.identity())
    };
    // 1. Entries whose message is still where it was.
    let mut live: Vec<LedgerEntry> = ledger
        .iter()
        .filter(|entry| identity_at(entry.position as usize) == Some(entry.identity))
        .cloned()
        .collect();
    // 2. Match for the last message when the user wrote it and it has no block yet.
    let last = items.len() - 1;
    let mut injected = Vec::new();
    let last_message = item_message(protocol, &body[items[last].clone()]);
    let already_has_block = live.iter().any(|entry| entry.position as usize == last);
    if let Some(message) = last_message.filter(|m| is_user_text(m) && !already_has_block) {
        let turns: Vec<Turn> = history
            .iter()
            .take(history.len().saturating_sub(1))
            .filter_map(|m| match m.role {
                Role::User => Some(Turn::user(&m.text())),
                Role::Assistant => Some(Turn::assistant(&m.text())),
                _ => None,
            })
            .filter(|turn| !turn.text.trim().is_empty())
            .collect();
        let recent = &turns[turns.len().saturating_sub(HISTORY_TURNS)..];
        let mut options = MatchOptions::with_budget(settings.budget_tokens);
        options.scan_depth = settings.scan_depth;
        options.framing = settings.framing.clone();
        options.already_present = live
            .iter()
            .flat_map(|entry| entry.keys.iter().cloned())
            .collect();
        let consultation = consult(
            &book.cards,
            recent,
            &message.text(),
            &options,
            &BpeTokenCounter,
        );
        if !consultation.fired.is_empty() {
            let nonce = nonce(session_id, last);
            let block = render_block(&consultation.fired, &nonce, &settings.framing);
            injected = consultation
                .fired
                .iter()
                .map(|card| card.key.clone())
                .collect();
            live.push(LedgerEntry {
                position: last as u32,
                identity: message.identity(),
                block,
                keys: injected.clone(),
                created_at_ms: now_ms(),
            });
        }
    }
    if live.len() > MAX_LEDGER_ENTRIES {
        live.drain(..live.len() - MAX_LEDGER_ENTRIES);
    }
    // 3. Rewrite the messages that carry a block, or the system prompt.
    if settings.placement == Placement::System {
        let blocks: Vec<String> = live.iter().map(|entry| entry.block.clone()).collect();
        if blocks.is_empty() {
            return InjectionPlan {
                body: None,
                injected,
                ledger: live,
            };
        }
        return match with_system_blocks(protocol, body, &blocks) {
            Ok(rewritten) => InjectionPlan {
                body: Some(rewritten),
                injected,
                ledger: live,
            },
            Err(_) => unchanged,
        };
    }
    let mut replacements: Vec<(Range<usize>, String)> = Vec::with_capacity(live.len());
    for entry in &live {
        let range = items[entry.position as usize].clone();
        match with_block(protocol, &body[range.clone()], &entry.block) {
            Ok(text) => replacements.push((range, text)),
            Err(_) => return unchanged,
        }
    }
    let body = (!replacements.is_empty()).then(|| splice(body, &replacements));
    InjectionPlan {
        body,
        injected,
        ledger: live,
    }
}

/// A stable nonce for the block at `position` of a session: the same bytes on every replay.
fn nonce(session_id: &str, position: usize) -> String {
    let digest = Sha256::new()
        .chain_update(session_id.as_bytes())
        .chain_update(position.to_be_bytes())
        .finalize();
    hex::encode(&digest[..3])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::MatchCard;
    use lore_proto::parse_request;
    use serde_json::{Value, json};

    fn book() -> CardBook {
        let mut mira = MatchCard::new(
            "mira",
            "people",
            "Mira Okafor",
            "## who\nRuns the payments team.",
        );
        mira.keywords = vec!["Mira".into()];
        let mut deploy = MatchCard::new(
            "friday-deploy",
            "event",
            "The Friday deploy",
            "## what\nShip on Fridays before noon.",
        );
        deploy.keywords = vec!["deploy".into()];
        CardBook {
            cards: vec![mira, deploy],
            ..Default::default()
        }
    }

    fn run(body: &Value, ledger: &[LedgerEntry]) -> InjectionPlan {
        let bytes = serde_json::to_vec(body).unwrap();
        let history = parse_request(Protocol::Anthropic, &bytes).unwrap().messages;
        plan(
            "s1",
            Protocol::Anthropic,
            &bytes,
            &history,
            ledger,
            &book(),
            &CardSettings::default(),
        )
    }

    #[test]
    fn a_block_is_replayed_byte_for_byte_and_not_injected_twice() {
        let mut messages = vec![json!({"role": "user", "content": "Ask Mira about it"})];
        let first = run(&json!({"messages": messages}), &[]);
        assert_eq!(first.injected, ["mira"]);
        let first_body: Value = serde_json::from_slice(first.body.as_ref().unwrap()).unwrap();
        let injected_message = first_body["messages"][0].clone();
        assert!(
            injected_message["content"]
                .as_str()
                .unwrap()
                .contains("Runs the payments team")
        );

        messages.push(json!({"role": "assistant", "content": "Sure."}));
        messages.push(json!({"role": "user", "content": "And Mira again, plus the deploy?"}));
        let second = run(&json!({"messages": messages}), &first.ledger);
        assert_eq!(
            second.injected,
            ["friday-deploy"],
            "mira is still in the window"
        );
        let second_body: Value = serde_json::from_slice(second.body.as_ref().unwrap()).unwrap();
        assert_eq!(
            second_body["messages"][0], injected_message,
            "the earlier block is replayed unchanged"
        );
        assert_eq!(second.ledger.len(), 2);
    }

    #[test]
    fn a_retry_of_the_same_turn_gets_the_same_block() {
        let body = json!({"messages": [{"role": "user", "content": "Mira?"}]});
        let first = run(&body, &[]);
        let again = run(&body, &first.ledger);
        assert_eq!(again.body, first.body);
        assert!(again.injected.is_empty());
    }

    #[test]
    fn a_lost_message_lets_its_cards_fire_again() {
        let first = run(
            &json!({"messages": [{"role": "user", "content": "Mira?"}]}),
            &[],
        );
        let compacted = json!({"messages": [{"role": "user", "content": "summary of earlier work"}, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "Mira once more"}]});
        let next = run(&compacted, &first.ledger);
        assert_eq!(next.injected, ["mira"]);
        assert_eq!(next.ledger.len(), 1);
        assert_eq!(next.ledger[0].position, 2);
    }

    #[test]
    fn system_placement_puts_every_live_block_in_the_system_prompt() {
        let settings = CardSettings {
            placement: Placement::System,
            ..CardSettings::default()
        };
        let body = json!({"system": "S", "messages": [{"role": "user", "content": "Mira?"}]});
        let bytes = serde_json::to_vec(&body).unwrap();
        let history = parse_request(Protocol::Anthropic, &bytes).unwrap().messages;
        let plan = plan(
            "s1",
            Protocol::Anthropic,
            &bytes,
            &history,
            &[],
            &book(),
            &settings,
        );
        let sent: Value = serde_json::from_slice(plan.body.as_ref().unwrap()).unwrap();
        assert!(
            sent["system"]
                .as_str()
                .unwrap()
                .starts_with("S\n\n<!-- lore:cards:")
        );
        assert_eq!(
            sent["messages"][0]["content"], "Mira?",
            "messages are untouched"
        );
        assert_eq!(plan.injected, ["mira"]);
    }

    #[test]
    fn nothing_to_inject_forwards_the_original() {
        let plan = run(
            &json!({"messages": [{"role": "user", "content": "hello"}]}),
            &[],
        );
        assert!(plan.body.is_none() && plan.injected.is_empty() && plan.ledger.is_empty());
        let tool_turn = json!({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "Mira"}]}]});
        assert!(
            run(&tool_turn, &[]).injected.is_empty(),
            "tool results are not the user speaking"
        );
    }
}
