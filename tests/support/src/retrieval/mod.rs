//! A labelled retrieval set for Lore's recall, generated deterministically without external
//! data, plus the filler that scales a data directory to 10k or 100k messages and the loader
//! that writes both through the real storage API.
//!
//! - [`topics`] parses the hand-written projects (one labelled session each).
//! - [`questions`] owns the fact kinds: message wordings, evidence, question templates.
//! - [`sessions`] builds conversations (facts among chatter) and the random source.
//! - [`filler`] generates plausible unlabelled coding chatter.
//! - [`loader`] writes sessions into a data directory with `lore_storage::Store`.
//! - [`held_out`] is the harder half, kept apart from tuning: facts buried in long tool
//!   outputs ([`long_output`] writes those), answers that changed later in the session,
//!   near-duplicate distractors, and paraphrases sharing almost no word with their answer.
//!
//! Every topic states ten facts, each in one message; each fact gets three questions (lexical,
//! paraphrase, mixed) whose answer is that message, `t:<session id>:<seq>` once loaded. This is
//! the tuning half: the engine's weights were chosen on it. The held-out half is only measured.

pub mod filler;
pub mod held_out;
pub mod loader;
pub mod long_output;
pub mod questions;
pub mod sessions;
pub mod topics;

#[cfg(test)]
mod tests;

use serde::Serialize;

pub use questions::QuestionType;
pub use sessions::{Rng, Session, Turn};

/// The seed of the labelled set; change it and every figure changes.
pub const SEED: u64 = 0x4C4F_5245_5345_5431;

/// One question with its single answering message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Question {
    /// Stable id, `q<number>`.
    pub id: String,
    /// Lexical, paraphrase or mixed.
    #[serde(rename = "type")]
    pub question_type: QuestionType,
    /// The fact kind asked about.
    pub fact: &'static str,
    /// What is asked.
    pub text: String,
    /// Index of the answering session in [`RetrievalSet::sessions`].
    pub session: usize,
    /// Index of the answering message in that session (its stored `seq`).
    pub message: usize,
    /// The search id of the answer: `t:<session id>:<seq>`.
    pub answer_id: String,
    /// A substring of the answer that no other message of the set contains.
    pub evidence: String,
    /// The search id of an older message the answer replaced (held-out `changed` facts): it
    /// states the same thing with the value that no longer holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded: Option<String>,
}

/// The labelled sessions and their questions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RetrievalSet {
    /// The seed it was generated from.
    pub seed: u64,
    /// One session per topic.
    pub sessions: Vec<Session>,
    /// Three questions per fact.
    pub questions: Vec<Question>,
}

impl RetrievalSet {
    /// Generates the set from [`SEED`].
    pub fn generate() -> Self {
        let mut rng = Rng::new(SEED);
        let mut sessions = Vec::new();
        let mut questions = Vec::new();
        for (index, topic) in topics::all().iter().enumerate() {
            let (session, positions) = sessions::labelled(index, topic, &mut rng);
            for (fact, &message) in topic.facts.iter().zip(&positions) {
                let evidence = questions::render(fact.kind.evidence, &fact.fields);
                for (question_type, template) in QuestionType::ALL.iter().zip(fact.kind.questions) {
                    questions.push(Question {
                        id: format!("q{:03}", questions.len() + 1),
                        question_type: *question_type,
                        fact: fact.kind.name,
                        text: questions::render(template, &fact.fields),
                        session: index,
                        message,
                        answer_id: format!("t:{}:{}", session.id, message),
                        evidence: evidence.clone(),
                        superseded: None,
                    });
                }
            }
            sessions.push(session);
        }
        Self {
            seed: SEED,
            sessions,
            questions,
        }
    }

    /// Number of messages over all sessions.
    pub fn message_count(&self) -> usize {
        self.sessions.iter().map(|s| s.turns.len()).sum()
    }

    /// The set as JSON, one question per line for readable diffs.
    pub fn to_json(&self) -> String {
        let mut out = format!("{{\"seed\":{},\"sessions\":[\n", self.seed);
        let lines: Vec<String> = self
            .sessions
            .iter()
            .map(|s| serde_json::to_string(s).unwrap_or_default())
            .collect();
        out.push_str(&lines.join(",\n"));
        out.push_str("\n],\"questions\":[\n");
        let lines: Vec<String> = self
            .questions
            .iter()
            .map(|q| serde_json::to_string(q).unwrap_or_default())
            .collect();
        out.push_str(&lines.join(",\n"));
        out.push_str("\n]}\n");
        out
    }
}
