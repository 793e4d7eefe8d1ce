//! Checks of the labelled set (determinism, size, unique evidence) and of the loader.

use std::collections::BTreeMap;

use lore_proto::{Part, Role};

use super::filler::Filler;
use super::held_out::HeldOutSet;
use super::loader;
use super::{QuestionType, RetrievalSet, Session};

/// Everything the search index sees of a message: its text, tool-call arguments and results.
fn searchable(sessions: &[Session], session: usize, message: usize) -> String {
    let stored = loader::message_of(&sessions[session], message);
    stored
        .parts
        .iter()
        .map(|part| match part {
            Part::Text { text } => text.clone(),
            Part::ToolCall { arguments, .. } => arguments.clone(),
            Part::ToolResult { content, .. } => content.clone(),
            _ => String::new(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_set_is_deterministic_and_large_enough() {
    let set = RetrievalSet::generate();
    assert_eq!(set, RetrievalSet::generate());
    assert!(set.sessions.len() >= 24, "{} sessions", set.sessions.len());
    assert!(
        set.questions.len() >= 240,
        "{} questions",
        set.questions.len()
    );
    let mut by_type = BTreeMap::new();
    for question in &set.questions {
        *by_type.entry(question.question_type).or_insert(0) += 1;
    }
    for question_type in QuestionType::ALL {
        assert_eq!(by_type[&question_type] * 3, set.questions.len());
    }
    for session in &set.sessions {
        assert!((20..=40).contains(&session.turns.len()), "{}", session.id);
        for (index, turn) in session.turns.iter().enumerate() {
            let role = if index.is_multiple_of(2) {
                Role::User
            } else {
                Role::Assistant
            };
            assert_eq!(turn.role, role);
        }
    }
    let ids: std::collections::BTreeSet<_> = set.sessions.iter().map(|s| &s.id).collect();
    assert_eq!(ids.len(), set.sessions.len(), "session ids are unique");
}

#[test]
fn every_answer_exists_and_holds_evidence_no_other_message_holds() {
    let set = RetrievalSet::generate();
    let corpus: Vec<(usize, usize, String)> = set
        .sessions
        .iter()
        .enumerate()
        .flat_map(|(s, session)| (0..session.turns.len()).map(move |m| (s, m)))
        .map(|(s, m)| (s, m, searchable(&set.sessions, s, m)))
        .collect();
    for question in &set.questions {
        let session = &set.sessions[question.session];
        assert!(question.message < session.turns.len(), "{}", question.id);
        assert_eq!(
            question.answer_id,
            format!("t:{}:{}", session.id, question.message)
        );
        let holders: Vec<(usize, usize)> = corpus
            .iter()
            .filter(|(_, _, text)| text.contains(&question.evidence))
            .map(|(s, m, _)| (*s, *m))
            .collect();
        assert_eq!(
            holders,
            vec![(question.session, question.message)],
            "{}: evidence {:?} must be in its answer and nowhere else",
            question.id,
            question.evidence
        );
        assert!(
            !question.text.contains('{'),
            "unfilled template: {}",
            question.text
        );
    }
}

#[test]
fn filler_is_deterministic_sized_and_free_of_the_evidence() {
    let set = RetrievalSet::generate();
    let held = HeldOutSet::generate();
    let first: Vec<_> = Filler::new(7, 5_000).collect();
    assert_eq!(first, Filler::new(7, 5_000).collect::<Vec<_>>());
    assert_eq!(first.iter().map(|s| s.turns.len()).sum::<usize>(), 5_000);
    let distinct: std::collections::BTreeSet<&str> = first
        .iter()
        .flat_map(|s| s.turns.iter().map(|t| t.text.as_str()))
        .collect();
    assert!(
        distinct.len() > 4_500,
        "only {} distinct texts",
        distinct.len()
    );
    for session in &first {
        for turn in &session.turns {
            for question in set.questions.iter().chain(&held.questions) {
                assert!(
                    !turn.text.contains(&question.evidence),
                    "filler repeats {:?}",
                    question.evidence
                );
            }
        }
    }
}

#[test]
fn the_loader_round_trips_through_the_store() -> anyhow::Result<()> {
    let set = RetrievalSet::generate();
    let dir = tempfile::tempdir()?;
    let filler: Vec<_> = Filler::new(3, 500).collect();
    let count = loader::load(dir.path(), set.sessions.iter().chain(&filler))?;
    assert_eq!(count, set.message_count() + 500);
    let store = loader::open(dir.path())?;
    assert_eq!(
        store.list_sessions()?.len(),
        set.sessions.len() + filler.len()
    );
    for session in set.sessions.iter().chain(&filler) {
        let log = store.session_log(&session.id)?;
        assert_eq!(log.len(), session.turns.len());
        for (index, stored) in log.iter().enumerate() {
            assert_eq!(stored.seq, index as u64);
            assert_eq!(stored.message, loader::message_of(session, index));
            assert_eq!(stored.created_at_ms, session.turns[index].at_ms);
        }
        let record = store
            .load_session(&session.id)?
            .ok_or_else(|| anyhow::anyhow!("no record for {}", session.id))?;
        assert_eq!(record.next_seq, session.turns.len() as u64);
        assert_eq!(record.path.len(), session.turns.len());
        assert_eq!(record.project.as_deref(), Some(session.project.as_str()));
        assert_eq!(store.session_messages(&record)?, log);
    }
    Ok(())
}

#[test]
fn the_held_out_half_is_deterministic_hard_and_unambiguous() {
    let tuning = RetrievalSet::generate();
    let held = HeldOutSet::generate();
    assert_eq!(held, HeldOutSet::generate());
    assert_eq!(held.sessions.len(), 8);
    assert_eq!(held.questions.len(), 8 * 6 * 2, "every fact found a place");
    let mut by_fact = BTreeMap::new();
    for question in &held.questions {
        *by_fact.entry(question.fact).or_insert(0) += 1;
    }
    assert_eq!(by_fact["buried"], 32);
    assert_eq!(by_fact["changed"], 16);
    assert_eq!(by_fact["near"], 16);
    assert_eq!(by_fact["para"], 32);
    // Both halves are searched together: evidence must be unique over all of their messages.
    let mut corpus: Vec<(usize, usize, String)> = Vec::new();
    for (s, session) in held.sessions.iter().enumerate() {
        for m in 0..session.turns.len() {
            corpus.push((s, m, searchable(&held.sessions, s, m)));
        }
    }
    let tuning_texts: Vec<String> = (0..tuning.sessions.len())
        .flat_map(|s| (0..tuning.sessions[s].turns.len()).map(move |m| (s, m)))
        .map(|(s, m)| searchable(&tuning.sessions, s, m))
        .collect();
    for question in &held.questions {
        let session = &held.sessions[question.session];
        assert_eq!(
            question.answer_id,
            format!("t:{}:{}", session.id, question.message)
        );
        let holders: Vec<(usize, usize)> = corpus
            .iter()
            .filter(|(_, _, text)| text.contains(&question.evidence))
            .map(|(s, m, _)| (*s, *m))
            .collect();
        assert_eq!(
            holders,
            vec![(question.session, question.message)],
            "{}: evidence {:?} must be in its answer and nowhere else",
            question.id,
            question.evidence
        );
        assert!(
            tuning_texts
                .iter()
                .all(|text| !text.contains(&question.evidence)),
            "{}: the tuning half holds {:?}",
            question.id,
            question.evidence
        );
        let answer = &corpus
            .iter()
            .find(|(s, m, _)| *s == question.session && *m == question.message)
            .map(|(_, _, text)| text.clone())
            .unwrap_or_default();
        match question.fact {
            "buried" => {
                let at = answer.find(&question.evidence).unwrap_or(0);
                assert!(
                    answer.len() > 4_500,
                    "{}: {} bytes",
                    question.id,
                    answer.len()
                );
                assert!(
                    at > 1_500 && at > answer.len() / 4,
                    "{}: the fact is at byte {at} of {}",
                    question.id,
                    answer.len()
                );
                let turn = &session.turns[question.message];
                assert!(turn.tool_output.is_some() && turn.role == Role::User);
                assert!(session.turns[question.message - 1].command.is_some());
            }
            "changed" => {
                let stale = question.superseded.as_deref().unwrap_or_default();
                let seq: usize = stale
                    .rsplit(':')
                    .next()
                    .unwrap_or("")
                    .parse()
                    .unwrap_or(usize::MAX);
                assert!(
                    seq + 8 <= question.message,
                    "{}: {seq} then {}",
                    question.id,
                    question.message
                );
            }
            _ => assert!(question.superseded.is_none()),
        }
    }
}
