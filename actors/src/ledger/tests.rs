//! The ledger's placement: each insertion exactly once, never between a tool call and its
//! result, the same order at every layer, earlier places unchanged as the conversation grows.

#![allow(clippy::unwrap_used)]

use lore_proto::Role;
use proptest::prelude::*;

use super::*;
use crate::gradient::ResultView;

fn unit(role: Role, user_text: bool, calls: &[&str], results: &[&str], n: usize) -> Unit {
    let mut identity = [0u8; 16];
    identity[..8].copy_from_slice(&(n as u64).to_be_bytes());
    Unit {
        role,
        tokens: 10,
        identity,
        seq: None,
        user_text,
        text_only_assistant: role == Role::Assistant && calls.is_empty(),
        calls: calls.iter().map(|c| c.to_string()).collect(),
        results: results
            .iter()
            .map(|r| ResultView {
                call_id: r.to_string(),
                tokens: 10,
                hash: 0,
                chars: 10,
            })
            .collect(),
    }
}

/// A conversation: per turn, the number of tool rounds, and whether the user's text rides
/// with the last tool result (Anthropic allows text after the results).
fn conversation(turns: &[(u8, bool)]) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut call = 0;
    let mut pending: Option<String> = None;
    for (rounds, text_with_result) in turns {
        let n = units.len();
        match pending.take().filter(|_| *text_with_result) {
            Some(id) => units.push(unit(Role::User, true, &[], &[&id], n)),
            None => {
                if let Some(id) = pending.take() {
                    units.push(unit(Role::User, false, &[], &[&id], n));
                    let n = units.len();
                    units.push(unit(Role::Assistant, false, &[], &[], n));
                }
                let n = units.len();
                units.push(unit(Role::User, true, &[], &[], n));
            }
        }
        for round in 0..*rounds {
            call += 1;
            let id = format!("c{call}");
            let n = units.len();
            units.push(unit(Role::Assistant, false, &[&id], &[], n));
            if round + 1 < *rounds {
                let n = units.len();
                units.push(unit(Role::User, false, &[], &[&id], n));
            } else {
                pending = Some(id);
            }
        }
        if pending.is_none() {
            let n = units.len();
            units.push(unit(Role::Assistant, false, &[], &[], n));
        }
    }
    units
}

fn insertion(kind: InsertionKind, at: usize, units: &[Unit], text: &str) -> Insertion {
    Insertion {
        kind,
        position: at as u32,
        anchor: units[at].identity,
        text: text.to_string(),
        keys: vec![text.to_string()],
        created_at_ms: 0,
    }
}

/// The texts of `placed` in the order they are sent.
fn sent_order(placed: &Placed) -> Vec<String> {
    let mut events: Vec<(usize, u8, usize, String)> = Vec::new();
    for (i, pair) in placed.pairs.iter().enumerate() {
        events.push((pair.before_unit, 0, i, pair.text.clone()));
    }
    for (i, (unit, text)) in placed.blocks.iter().enumerate() {
        events.push((*unit, 1, i, text.clone()));
    }
    events.sort();
    events.into_iter().map(|(_, _, _, text)| text).collect()
}

#[test]
fn a_card_and_a_delta_of_one_message_keep_their_order_when_the_message_is_dropped() {
    let units = conversation(&[(1, false), (1, false), (0, false), (1, false)]);
    let at = units
        .iter()
        .rposition(|u| u.user_text && u.results.is_empty())
        .unwrap();
    let at = units[..at].iter().rposition(|u| u.user_text).unwrap();
    let ledger = vec![
        insertion(InsertionKind::Card, at, &units, "card"),
        insertion(InsertionKind::Delta, at, &units, "delta"),
    ];
    let layer0 = place(&ledger, &units, 0, true);
    assert_eq!(layer0.blocks, vec![(at, "card".to_string())]);
    assert_eq!(layer0.pairs.len(), 1);
    assert_eq!(layer0.pairs[0].before_unit, at);
    assert_eq!(layer0.pairs[0].notice, DELTA_NOTICE);
    // The gradient drops the message: both go to the window's start, the delta first.
    let start = units.iter().rposition(|u| u.user_text).unwrap();
    let layer1 = place(&ledger, &units, start, true);
    assert!(layer1.blocks.is_empty());
    let pairs: Vec<(usize, &str, &str)> = layer1
        .pairs
        .iter()
        .map(|p| (p.before_unit, p.notice, p.text.as_str()))
        .collect();
    assert_eq!(
        pairs,
        vec![(start, DELTA_NOTICE, "delta"), (start, CARD_NOTICE, "card")]
    );
    assert_eq!(sent_order(&layer0), sent_order(&layer1));
}

#[test]
fn a_delta_never_splits_a_tool_call_from_its_result() {
    // The user's text rides with a tool result: a pair before it would split the call.
    let units = conversation(&[(1, false), (1, true), (0, false)]);
    let at = units
        .iter()
        .position(|u| u.user_text && !u.results.is_empty())
        .unwrap();
    let ledger = vec![insertion(InsertionKind::Delta, at, &units, "delta")];
    let placed = place(&ledger, &units, 0, true);
    let before = placed.pairs[0].before_unit;
    assert_ne!(before, at);
    assert!(Shape::of(&units).valid[before]);
}

#[test]
fn resolve_follows_moved_messages_drops_lost_cards_and_keeps_lost_deltas() {
    let units = conversation(&[(0, false), (0, false), (0, false)]);
    let ids: Vec<[u8; 16]> = units.iter().map(|u| u.identity).collect();
    let mut ledger = vec![
        insertion(InsertionKind::Card, 2, &units, "moved card"),
        insertion(InsertionKind::Card, 4, &units, "lost card"),
        insertion(InsertionKind::Delta, 4, &units, "lost delta"),
    ];
    // The client dropped its first exchange and rewrote the last turn.
    let mut now: Vec<[u8; 16]> = ids[2..4].to_vec();
    now.push([9; 16]);
    resolve(&mut ledger, &now);
    let kept: Vec<(&str, u32)> = ledger
        .iter()
        .map(|i| (i.text.as_str(), i.position))
        .collect();
    assert_eq!(kept, vec![("moved card", 0), ("lost delta", 2)]);
    assert_eq!(ledger[1].anchor, [9; 16]);
}

#[test]
fn blocks_of_one_message_keep_the_ledger_order_and_a_missing_message_fails() {
    let body = br#"{"messages":[{"role":"user","content":"hi"}]}"#;
    let spans = vec![vec![0]];
    let blocks = vec![(0, "A".to_string()), (0, "B".to_string())];
    let out = with_blocks(Protocol::Anthropic, body, &spans, &blocks)
        .unwrap()
        .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(r"A\n\nB\n\nhi"), "{text}");
    assert!(with_blocks(Protocol::Anthropic, body, &spans, &[(3, "C".into())]).is_err());
    assert_eq!(
        with_blocks(Protocol::Anthropic, body, &spans, &[]).unwrap(),
        None
    );
}

/// Turns (tool rounds, text with the result), insertions (card?, where), the window start.
type Case = (Vec<(u8, bool)>, Vec<(bool, usize)>, usize);

fn arb_case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((0u8..3, any::<bool>()), 2..12),
        prop::collection::vec((any::<bool>(), 0usize..1000), 0..8),
        0usize..1000,
    )
}

proptest! {
    #[test]
    fn every_insertion_goes_once_at_a_safe_place_in_one_order_at_every_layer(
        (turns, picks, start_pick) in arb_case()
    ) {
        let units = conversation(&turns);
        let valid = Shape::of(&units).valid;
        // Cards come with a user's text; deltas wait for a turn boundary.
        let texts: Vec<usize> = (0..units.len()).filter(|&i| units[i].user_text).collect();
        let ledger: Vec<Insertion> = picks
            .iter()
            .enumerate()
            .map(|(n, (card, pick))| {
                let at = texts[pick % texts.len()];
                let kind = if *card { InsertionKind::Card } else { InsertionKind::Delta };
                insertion(kind, at, &units, &format!("insertion {n}"))
            })
            .collect();
        let starts: Vec<usize> = (0..units.len()).filter(|&i| valid[i]).collect();
        let start = starts[start_pick % starts.len()];
        let layer0 = place(&ledger, &units, 0, true);
        let later = place(&ledger, &units, start, true);
        for placed in [&layer0, &later] {
            let mut seen = sent_order(placed);
            seen.sort();
            let mut all: Vec<String> = ledger.iter().map(|i| i.text.clone()).collect();
            all.sort();
            prop_assert_eq!(seen, all, "each insertion exactly once");
            for pair in &placed.pairs {
                prop_assert!(valid[pair.before_unit], "a pair before unit {} splits a tool call", pair.before_unit);
            }
        }
        for pair in &later.pairs {
            prop_assert!(pair.before_unit >= start);
        }
        for (unit, _) in &later.blocks {
            prop_assert!(*unit >= start);
        }
        prop_assert_eq!(sent_order(&layer0), sent_order(&later), "the order changed with the layer");
        // The conversation grows by a turn: every earlier place stays.
        let mut grown_turns = turns.clone();
        grown_turns.push((0, false));
        let grown = conversation(&grown_turns);
        let again = place(&ledger, &grown, start, true);
        let homes = |p: &Placed| -> Vec<(usize, String)> {
            p.pairs.iter().map(|d| (d.before_unit, d.text.clone())).chain(p.blocks.iter().cloned()).collect()
        };
        let moved: Vec<(usize, String)> = homes(&again)
            .into_iter()
            .filter(|placed| !homes(&later).contains(placed))
            .collect();
        // Only a delta with no safe place after it may move on (it waited for one).
        for (_, text) in moved {
            let entry = ledger.iter().find(|i| i.text == text).unwrap();
            prop_assert_eq!(entry.kind, InsertionKind::Delta);
            prop_assert!(!valid[entry.position as usize..].iter().any(|v| *v));
        }
    }
}
