//! The card injection of one request (pure; the `SessionActor` runs it): which cards fire on
//! the user's latest message, as a new insertion of the session's one ledger.
//!
//! The ledger ([`crate::ledger`]) remembers every block injected, with the message it belongs
//! to and its exact text, next to the knowledge deltas, and replays each at its place on every
//! later request, so everything the provider cached before stays a prefix of the new prompt; a
//! block whose message the client no longer sends is dropped, and its cards may fire again.
//! When the request ends with a message the user wrote, cards are matched against it and the
//! recent turns; cards the ledger still shows are not injected twice; new cards make one block
//! before the text of that message. A resend of the same turn (retry, regenerate) finds its own
//! block and gets it again.

use lore_proto::inject::is_user_text;
use lore_proto::{Message, Role};
use lore_storage::{Insertion, InsertionKind, now_ms};
use sha2::{Digest, Sha256};

use crate::cards::book::CardBook;
use crate::cards::{BpeTokenCounter, MatchOptions, Turn, consult, render_block};

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

/// The cards that fire on the request's last message, as a new ledger insertion: only when the
/// user wrote that message (`history`, with `identities`) and it has no card block yet; a card
/// the ledger still shows is not injected twice. Where the block goes is the ledger's business
/// ([`crate::ledger::place`]).
pub fn consult_last(
    session_id: &str,
    history: &[Message],
    identities: &[[u8; 16]],
    ledger: &[Insertion],
    book: &CardBook,
    settings: &CardSettings,
) -> Option<Insertion> {
    let last = history.len().checked_sub(1)?;
    let message = history.get(last).filter(|m| is_user_text(m))?;
    let cards = || ledger.iter().filter(|e| e.kind == InsertionKind::Card);
    if cards().any(|entry| entry.position as usize == last) {
        return None;
    }
    let turns: Vec<Turn> = history[..last]
        .iter()
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
    options.already_present = cards()
        .flat_map(|entry| entry.keys.iter().cloned())
        .collect();
    let consultation = consult(
        &book.cards,
        recent,
        &message.text(),
        &options,
        &BpeTokenCounter,
    );
    if consultation.fired.is_empty() {
        return None;
    }
    let block = render_block(
        &consultation.fired,
        &nonce(session_id, last),
        &settings.framing,
    );
    Some(Insertion {
        kind: InsertionKind::Card,
        position: u32::try_from(last).ok()?,
        anchor: identities
            .get(last)
            .copied()
            .unwrap_or_else(|| message.identity()),
        text: block,
        keys: consultation
            .fired
            .iter()
            .map(|card| card.key.clone())
            .collect(),
        created_at_ms: now_ms(),
    })
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
    use lore_proto::{Protocol, parse_request};
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

    /// What one request gets at layer 0 (the session actor's path without a context plan).
    struct InjectionPlan {
        body: Option<Vec<u8>>,
        injected: Vec<String>,
        ledger: Vec<Insertion>,
    }

    fn run_with(body: &Value, ledger: &[Insertion], settings: &CardSettings) -> InjectionPlan {
        let bytes = serde_json::to_vec(body).unwrap();
        let mut request = parse_request(Protocol::Anthropic, &bytes).unwrap();
        let spans = request.spans();
        let history = std::mem::take(&mut request.messages);
        let identities: Vec<[u8; 16]> = history.iter().map(Message::identity).collect();
        let mut ledger = ledger.to_vec();
        crate::ledger::resolve(&mut ledger, &identities);
        let mut injected = Vec::new();
        if let Some(new) = consult_last("s1", &history, &identities, &ledger, &book(), settings) {
            injected = new.keys.clone();
            ledger.push(new);
        }
        let body = if settings.placement == Placement::System {
            crate::ledger::in_system(Protocol::Anthropic, &bytes, &ledger).unwrap()
        } else {
            let mut estimated = Vec::new();
            let units = crate::turn::units::units_of(&history, &identities, &[], &mut estimated);
            let placed = crate::ledger::place(&ledger, &units, 0, true);
            crate::ledger::with_blocks(Protocol::Anthropic, &bytes, &spans, &placed.blocks).unwrap()
        };
        InjectionPlan {
            body,
            injected,
            ledger,
        }
    }

    fn run(body: &Value, ledger: &[Insertion]) -> InjectionPlan {
        run_with(body, ledger, &CardSettings::default())
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
        let plan = run_with(&body, &[], &settings);
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
