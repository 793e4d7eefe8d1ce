//! The held-out half of the labelled set: harder questions the recall engine is never tuned
//! on, generated deterministically from the hand-written `held_out.txt` (eight projects, six
//! facts each, two questions per fact).
//!
//! Fact kinds (the `fact` of each [`Question`]):
//! - `buried`: one line in the middle of a 5–11 KB tool output (a log, a test run, a query
//!   plan), stored as the tool result of the command the assistant ran;
//! - `changed`: a value stated early in the session and changed later; the answer is the later
//!   message, the earlier one is its `superseded` id;
//! - `near`: the answer among two near-duplicates about another environment or variant;
//! - `para`: a short statement.
//!
//! Question 1 of every fact ([`QuestionType::Paraphrase`]) shares almost no content word with
//! its answer; question 2 ([`QuestionType::Mixed`]) keeps one identifier.

use super::long_output::{self, Style};
use super::sessions::{BASE_MS, Rng, Session, Turn, Vocab, chatter, intro, role_at, session_id};
use super::{Question, QuestionType};

/// The seed of the held-out half (not the tuning half's).
pub const HELD_OUT_SEED: u64 = 0x484F_4C44_4F55_5431;
/// Messages in every held-out session.
const MESSAGES: usize = 44;
const DAY_MS: u64 = 86_400_000;

const DATA: &str = include_str!("held_out.txt");

/// One fact of a held-out project, as written in the data file.
#[derive(Debug, Clone)]
enum Fact {
    Buried {
        style: Style,
        command: String,
        line: String,
        evidence: String,
        questions: [String; 2],
    },
    Changed {
        early: String,
        later: String,
        evidence: String,
        questions: [String; 2],
    },
    Near {
        answer: String,
        distractors: [String; 2],
        evidence: String,
        questions: [String; 2],
    },
    Para {
        statement: String,
        evidence: String,
        questions: [String; 2],
    },
}

impl Fact {
    fn name(&self) -> &'static str {
        match self {
            Fact::Buried { .. } => "buried",
            Fact::Changed { .. } => "changed",
            Fact::Near { .. } => "near",
            Fact::Para { .. } => "para",
        }
    }
}

/// One held-out project: its vocabulary for the chatter and its facts.
#[derive(Debug, Clone, Default)]
struct Project {
    vocab: Vocab,
    project: String,
    facts: Vec<Fact>,
}

/// The held-out sessions and their questions.
#[derive(Debug, Clone, PartialEq)]
pub struct HeldOutSet {
    /// One session per project.
    pub sessions: Vec<Session>,
    /// Two questions per fact; `session` indexes [`HeldOutSet::sessions`].
    pub questions: Vec<Question>,
}

impl HeldOutSet {
    /// Generates the half from [`HELD_OUT_SEED`].
    pub fn generate() -> Self {
        let mut rng = Rng::new(HELD_OUT_SEED);
        let mut sessions = Vec::new();
        let mut questions = Vec::new();
        for (index, project) in parse(DATA).iter().enumerate() {
            let (session, asked) = build(index, project, &mut rng);
            for (fact, answer, superseded) in asked {
                let questions_of = match fact {
                    Fact::Buried { questions, .. }
                    | Fact::Changed { questions, .. }
                    | Fact::Near { questions, .. }
                    | Fact::Para { questions, .. } => questions,
                };
                let evidence = match fact {
                    Fact::Buried { evidence, .. }
                    | Fact::Changed { evidence, .. }
                    | Fact::Near { evidence, .. }
                    | Fact::Para { evidence, .. } => evidence,
                };
                let types = [QuestionType::Paraphrase, QuestionType::Mixed];
                for (question_type, text) in types.into_iter().zip(questions_of) {
                    questions.push(Question {
                        id: format!("h{:03}", questions.len() + 1),
                        question_type,
                        fact: fact.name(),
                        text: text.clone(),
                        session: index,
                        message: answer,
                        answer_id: format!("t:{}:{answer}", session.id),
                        evidence: evidence.clone(),
                        superseded: superseded.map(|seq| format!("t:{}:{seq}", session.id)),
                    });
                }
            }
            sessions.push(session);
        }
        Self {
            sessions,
            questions,
        }
    }

    /// Number of messages over all sessions.
    pub fn message_count(&self) -> usize {
        self.sessions.iter().map(|s| s.turns.len()).sum()
    }
}

/// Free message slots of a session being laid out.
struct Slots {
    free: Vec<bool>,
}

impl Slots {
    /// A random free slot in `range`, taken; with `pair`, an assistant slot whose next (user)
    /// slot is free too, both taken.
    fn take(&mut self, range: std::ops::Range<usize>, pair: bool, rng: &mut Rng) -> Option<usize> {
        let candidates: Vec<usize> = range
            .filter(|&at| {
                let free = |i: usize| self.free.get(i).copied().unwrap_or(false);
                if pair {
                    // An assistant message with the call, then the user message with its result.
                    at % 2 == 1 && free(at) && free(at + 1)
                } else {
                    free(at)
                }
            })
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let at = *rng.pick(&candidates);
        self.free[at] = false;
        if pair {
            self.free[at + 1] = false;
        }
        Some(at)
    }
}

/// The text of each placed message, by slot.
type Placed = Vec<Option<(String, Option<String>, Option<String>)>>;

/// Per fact: the fact, the slot of its answering message and of the message it superseded.
type Asked<'a> = Vec<(&'a Fact, usize, Option<usize>)>;

/// The session of project `index` and, per fact, its answering message and superseded one.
fn build<'a>(index: usize, project: &'a Project, rng: &mut Rng) -> (Session, Asked<'a>) {
    let started = BASE_MS + 60 * DAY_MS + index as u64 * 2 * DAY_MS + rng.below(36_000_000) as u64;
    let id = session_id(started, rng);
    let mut slots = Slots {
        free: (0..MESSAGES).map(|at| at > 0).collect(),
    };
    let mut placed: Placed = vec![None; MESSAGES];
    let mut asked = Vec::new();
    // Pairs first: they need two neighbouring free slots.
    let mut order: Vec<&Fact> = project.facts.iter().collect();
    order.sort_by_key(|fact| !matches!(fact, Fact::Buried { .. }));
    for fact in order {
        let third = MESSAGES / 3;
        match fact {
            Fact::Buried {
                style,
                command,
                line,
                ..
            } => {
                let Some(at) = slots.take(1..MESSAGES - 1, true, rng) else {
                    continue;
                };
                let output = long_output::generate(
                    *style,
                    line,
                    &project.vocab,
                    started + at as u64 * 60_000,
                    rng,
                );
                placed[at] = Some((
                    format!("Let me look at the output of `{command}`."),
                    Some(command.clone()),
                    None,
                ));
                placed[at + 1] = Some((String::new(), None, Some(output)));
                asked.push((fact, at + 1, None));
            }
            Fact::Changed { early, later, .. } => {
                let (Some(first), Some(second)) = (
                    slots.take(1..third, false, rng),
                    slots.take(2 * third..MESSAGES, false, rng),
                ) else {
                    continue;
                };
                placed[first] = Some((early.clone(), None, None));
                placed[second] = Some((later.clone(), None, None));
                asked.push((fact, second, Some(first)));
            }
            Fact::Near {
                answer,
                distractors,
                ..
            } => {
                let Some(at) = slots.take(1..MESSAGES, false, rng) else {
                    continue;
                };
                placed[at] = Some((answer.clone(), None, None));
                for distractor in distractors {
                    if let Some(other) = slots.take(1..MESSAGES, false, rng) {
                        placed[other] = Some((distractor.clone(), None, None));
                    }
                }
                asked.push((fact, at, None));
            }
            Fact::Para { statement, .. } => {
                let Some(at) = slots.take(1..MESSAGES, false, rng) else {
                    continue;
                };
                placed[at] = Some((statement.clone(), None, None));
                asked.push((fact, at, None));
            }
        }
    }
    let mut at_ms = started;
    let mut turns = Vec::with_capacity(MESSAGES);
    for (position, slot) in placed.into_iter().enumerate() {
        let role = role_at(position);
        let (text, command, tool_output) = match slot {
            Some(filled) => filled,
            None if position == 0 => (intro(&project.vocab, rng), None, None),
            None => {
                // Its command is left out: the next slot may be taken, so no result could follow.
                let (text, _) = chatter(role, &project.vocab, rng);
                (text, None, None)
            }
        };
        turns.push(Turn {
            role,
            text,
            command,
            tool_output,
            at_ms,
        });
        at_ms += 20_000 + rng.below(100_000) as u64;
    }
    let session = Session {
        id,
        project: project.project.clone(),
        model: "claude-sonnet-4-5".into(),
        turns,
    };
    (session, asked)
}

fn fields<const N: usize>(value: &str, line: &str) -> [String; N] {
    let parts: Vec<String> = value.split(" | ").map(|s| s.trim().to_string()).collect();
    parts.try_into().unwrap_or_else(|parts: Vec<String>| {
        panic!("held_out: {N} fields wanted, {} in {line:?}", parts.len())
    })
}

/// Parses the data file. Malformed data is a bug in this crate, so it panics with the line.
fn parse(text: &str) -> Vec<Project> {
    let mut projects = Vec::new();
    let mut current: Option<Project> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            projects.extend(current.take());
            continue;
        }
        let (key, value) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("held_out: no `key: value` in {line:?}"));
        let project = current.get_or_insert_with(Project::default);
        let list = |value: &str| value.split(" | ").map(|s| s.trim().to_string()).collect();
        match key {
            "project" => {
                let [name, path, domain] = fields(value, line);
                project.vocab.name = name;
                project.project = path;
                project.vocab.domain = domain;
            }
            "files" => project.vocab.files = list(value),
            "funcs" => project.vocab.funcs = list(value),
            "cmds" => project.vocab.cmds = list(value),
            "libs" => project.vocab.libs = list(value),
            "buried" => {
                let [style, command, fact_line, evidence, q1, q2] = fields(value, line);
                let style = Style::parse(&style)
                    .unwrap_or_else(|| panic!("held_out: unknown style {style:?}"));
                project.facts.push(Fact::Buried {
                    style,
                    command,
                    line: fact_line,
                    evidence,
                    questions: [q1, q2],
                });
            }
            "changed" => {
                let [early, later, evidence, q1, q2] = fields(value, line);
                project.facts.push(Fact::Changed {
                    early,
                    later,
                    evidence,
                    questions: [q1, q2],
                });
            }
            "near" => {
                let [answer, a, b, evidence, q1, q2] = fields(value, line);
                project.facts.push(Fact::Near {
                    answer,
                    distractors: [a, b],
                    evidence,
                    questions: [q1, q2],
                });
            }
            "para" => {
                let [statement, evidence, q1, q2] = fields(value, line);
                project.facts.push(Fact::Para {
                    statement,
                    evidence,
                    questions: [q1, q2],
                });
            }
            other => panic!("held_out: unknown key {other:?}"),
        }
    }
    projects.extend(current);
    projects
}
