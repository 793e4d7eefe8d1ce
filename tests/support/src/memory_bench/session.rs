//! The synthetic coding session, generated deterministically from [`super::tasks::TASKS`]:
//! a list of turns, each one request of the harness (the messages it adds to the history) and
//! the assistant reply the fake upstream is scripted to give.
//!
//! A step of a task becomes `1 + tools` turns: the user's request, then one turn per tool
//! result the harness sends back, the last one answered with text. After a step the user pauses
//! (reads the answer) when at least six turns passed since the last pause, and always at the end
//! of a task.

use serde_json::{Value, json};

use super::facts::{self, FACTS, Fact};
use super::filler::Lcg;
use super::plan::{INTROS, tool};
use super::tasks::{TASKS, Task};

/// The seed of the filler.
pub const SEED: u64 = 0x4C4F_5245_4D45_4D31;
/// Fewest turns between two pauses.
const PAUSE_EVERY: usize = 6;

/// The assistant's reply to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A final text answer.
    Text(String),
    /// A tool call, after an optional sentence.
    ToolCall {
        /// Text before the call.
        text: Option<String>,
        /// Tool name.
        name: String,
        /// Call id.
        id: String,
        /// Arguments.
        input: Value,
    },
}

impl Reply {
    /// The reply as an Anthropic assistant message.
    pub fn message(&self) -> Value {
        match self {
            Reply::Text(text) => {
                json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
            }
            Reply::ToolCall {
                text,
                name,
                id,
                input,
            } => {
                let mut content = Vec::new();
                if let Some(text) = text {
                    content.push(json!({"type": "text", "text": text}));
                }
                content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
                json!({"role": "assistant", "content": content})
            }
        }
    }
}

/// One request of the harness.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Index of the task in [`TASKS`].
    pub task: usize,
    /// Messages added to the history before the request (a user text or a tool result).
    pub sent: Vec<Value>,
    /// What the model answers.
    pub reply: Reply,
    /// The user pauses after this turn (the gateway may go idle).
    pub pause_after: bool,
}

/// The generated session.
#[derive(Debug, Clone)]
pub struct Session {
    /// The turns, in order.
    pub turns: Vec<Turn>,
}

/// The searchable text of an Anthropic message: texts, tool calls (name and arguments) and tool
/// results, as the gateway indexes them.
pub fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|part| match part["type"].as_str() {
                Some("text") => part["text"].as_str().unwrap_or("").to_string(),
                Some("tool_use") => format!(
                    "[tool:{}] {}",
                    part["name"].as_str().unwrap_or(""),
                    part["input"]
                ),
                Some("tool_result") => part["content"].as_str().unwrap_or("").to_string(),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `text` with every `{fNN}` replaced by the statement of fact NN.
fn fill(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("{f") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        match after
            .find('}')
            .and_then(|end| Some((end, after[..end].parse::<usize>().ok()?)))
        {
            Some((end, id)) => {
                out.push_str(facts::by_id(id).map_or("", |f| f.statement));
                rest = &after[end + 1..];
            }
            None => {
                out.push_str("{f");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

const ANSWERS: &[&str] = &[
    "Done. I changed {file} and the tests pass ({n} passed).",
    "That's in place: {file} is updated and the build is clean.",
    "Finished. The edit touched {file}; nothing else needed to change, and the suite is green.",
    "All set, {n} tests pass after the change to {file}.",
    "Here is the summary: the change lives in {file}, the build and tests pass, and the public interface is unchanged.",
    "I went through {file}; it needed only the small change you saw. Everything else already matched.",
];

impl Session {
    /// The session, the same on every call.
    pub fn generate() -> Session {
        let mut rng = Lcg::new(SEED);
        let mut turns: Vec<Turn> = Vec::new();
        let mut since_pause = 0;
        let mut calls = 0;
        for (task_index, task) in TASKS.iter().enumerate() {
            for (step_index, step) in task.steps.iter().enumerate() {
                let first = turns.len();
                let mut sent = vec![json!({"role": "user", "content": fill(step.prompt)})];
                let mut touched = task.files.file(0);
                for token in step.plan.split_whitespace() {
                    let (name, input, output, is_error) = tool(token, &task.files, &mut rng);
                    if let Some(path) = input["path"]
                        .as_str()
                        .and_then(|p| task.files.files.iter().find(|f| **f == p))
                    {
                        touched = path;
                    }
                    calls += 1;
                    let id = format!("toolu_bench_{calls:04}");
                    let text =
                        (rng.below(3) == 0).then(|| rng.pick(INTROS).replace("{file}", touched));
                    turns.push(Turn {
                        task: task_index,
                        sent,
                        reply: Reply::ToolCall {
                            text,
                            name: name.to_string(),
                            id: id.clone(),
                            input,
                        },
                        pause_after: false,
                    });
                    let mut result =
                        json!({"type": "tool_result", "tool_use_id": id, "content": output});
                    if is_error {
                        result["is_error"] = json!(true);
                    }
                    sent = vec![json!({"role": "user", "content": [result]})];
                }
                let answer = if step.answer.is_empty() {
                    rng.pick(ANSWERS)
                        .replace("{file}", touched)
                        .replace("{n}", &rng.range(8, 60).to_string())
                } else {
                    fill(step.answer)
                };
                turns.push(Turn {
                    task: task_index,
                    sent,
                    reply: Reply::Text(answer),
                    pause_after: false,
                });
                since_pause += turns.len() - first;
                if since_pause >= PAUSE_EVERY || step_index + 1 == task.steps.len() {
                    if let Some(last) = turns.last_mut() {
                        last.pause_after = true;
                    }
                    since_pause = 0;
                }
            }
        }
        Session { turns }
    }

    /// Every message of the session in conversation order, with the index of its turn.
    pub fn messages(&self) -> Vec<(usize, Value)> {
        let mut out = Vec::new();
        for (i, turn) in self.turns.iter().enumerate() {
            for message in &turn.sent {
                out.push((i, message.clone()));
            }
            out.push((i, turn.reply.message()));
        }
        out
    }

    /// For each fact, the indices (into [`Session::messages`]) of the messages that hold its
    /// answer key (case-insensitive).
    pub fn locate(&self) -> Vec<(&'static Fact, Vec<usize>)> {
        let texts: Vec<String> = self
            .messages()
            .iter()
            .map(|(_, m)| message_text(m).to_lowercase())
            .collect();
        FACTS
            .iter()
            .map(|fact| {
                let key = fact.key.to_lowercase();
                (
                    fact,
                    texts
                        .iter()
                        .enumerate()
                        .filter(|(_, t)| t.contains(&key))
                        .map(|(i, _)| i)
                        .collect(),
                )
            })
            .collect()
    }

    /// Number of user requests (steps).
    pub fn user_requests(&self) -> usize {
        TASKS.iter().map(|task: &Task| task.steps.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::facts::Place;

    #[test]
    fn the_session_is_long_deterministic_and_states_each_fact_exactly_once() {
        let session = Session::generate();
        assert!(session.turns.len() >= 400, "{} turns", session.turns.len());
        let again = Session::generate();
        assert_eq!(format!("{:?}", session.turns), format!("{:?}", again.turns));
        let messages = session.messages();
        let located = session.locate();
        assert_eq!(located.len(), 30);
        let mut in_tools = 0;
        let mut in_long = 0;
        for (fact, at) in &located {
            assert_eq!(
                at.len(),
                1,
                "fact {} ({}) is in messages {at:?}",
                fact.id,
                fact.key
            );
            let (turn, message) = &messages[at[0]];
            let text = message_text(message);
            // The statement is there verbatim, in the turn the key is in.
            assert!(
                text.contains(fact.statement),
                "fact {} is not stated whole in turn {turn}",
                fact.id
            );
            assert!(
                !fact
                    .question
                    .to_lowercase()
                    .contains(&fact.key.to_lowercase()),
                "question {} gives the answer away",
                fact.id
            );
            let role = message["role"].as_str().unwrap();
            let is_tool_result = message["content"][0]["type"] == "tool_result";
            match fact.place {
                Place::User => assert!(role == "user" && !is_tool_result, "fact {}", fact.id),
                Place::Assistant => assert_eq!(role, "assistant", "fact {}", fact.id),
                Place::ToolOutput { long } => {
                    assert!(is_tool_result, "fact {}", fact.id);
                    in_tools += 1;
                    let chars = text.chars().count();
                    assert_eq!(chars > 4_000, long, "fact {}: {chars} chars", fact.id);
                    in_long += usize::from(long);
                }
            }
        }
        assert_eq!(in_tools, 10);
        assert!(in_long >= 3, "{in_long}");
        let long_outputs = messages
            .iter()
            .filter(|(_, m)| {
                m["content"][0]["type"] == "tool_result" && message_text(m).chars().count() > 4_000
            })
            .count();
        assert!(long_outputs >= 30, "{long_outputs} long tool outputs");
        assert!(session.turns.last().unwrap().pause_after);
        assert!(matches!(
            session.turns.last().unwrap().reply,
            Reply::Text(_)
        ));
    }
}
