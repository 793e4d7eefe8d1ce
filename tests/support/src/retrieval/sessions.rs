//! Builds the conversations: the deterministic random source, the [`Session`] and [`Turn`]
//! shapes, the chatter that surrounds the facts (shared with the filler), and the labelled
//! sessions themselves (one per topic, the facts placed at random positions).

use lore_proto::Role;
use serde::Serialize;

use super::questions::{capitalise, render};
use super::topics::Topic;

/// 2026-01-01T00:00:00Z, the first labelled session's day.
pub const BASE_MS: u64 = 1_767_225_600_000;
const DAY_MS: u64 = 86_400_000;

/// SplitMix64: small, fast, and the same on every platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Fisher-Yates in place.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// One message of a generated conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Turn {
    /// User or assistant (they alternate, user first).
    pub role: Role,
    /// The text.
    pub text: String,
    /// A shell command the assistant ran with it, stored as a `bash` tool call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The output of the command the previous (assistant) message ran, stored as the tool
    /// result answering its call; the message then carries no text of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_output: Option<String>,
    /// When it was said (ms since the epoch); left out of the JSON dump to keep it small.
    #[serde(skip)]
    pub at_ms: u64,
}

/// One generated conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Session {
    /// Session id (UUIDv7-shaped hex, deterministic).
    pub id: String,
    /// Project directory.
    pub project: String,
    /// Model of the replies.
    pub model: String,
    /// The messages; the stored `seq` of `turns[i]` is `i`.
    pub turns: Vec<Turn>,
}

/// What the chatter may talk about.
#[derive(Debug, Clone, Default)]
pub struct Vocab {
    /// Project name.
    pub name: String,
    /// What the project is.
    pub domain: String,
    /// File paths.
    pub files: Vec<String>,
    /// Function names.
    pub funcs: Vec<String>,
    /// Shell commands.
    pub cmds: Vec<String>,
    /// Libraries.
    pub libs: Vec<String>,
    /// Things worth mentioning without saying anything decisive about them.
    pub entities: Vec<String>,
}

const USER_CHATTER: &[&str] = &[
    "Can you look at `{func}` in {file}? It behaves oddly when {entity} is involved.",
    "Next: {file}. I want `{func}` to stop doing two things at once.",
    "Run `{cmd}` and tell me what breaks.",
    "What do you think about {entity}? Should we leave it alone for this PR?",
    "Let's add a test for `{func}` before touching {file}.",
    "ok, looks fine. What's left for {entity}?",
    "Please write a short doc comment for `{func}` and mention that it goes through {lib}.",
    "Is {lib} still used anywhere besides {file}?",
    "CI is red again on `{cmd}`, can you check?",
    "Rename `{func}` to something clearer, it is used in {file} and {file2}.",
    "Quick question: does `{func}` get called on the hot path, or only at startup?",
    "I pushed a change to {file}; please review it, especially around {entity}.",
    "Can we make `{func}` return an error instead of logging and carrying on?",
    "Before lunch: summarise what we changed in {file} today.",
];

const ASSISTANT_CHATTER: &[&str] = &[
    "I read {file}. `{func}` holds onto a lock while it calls into {lib}; that explains the stalls. I'll split it.",
    "Ran `{cmd}`: {n} passed, 0 failed, {m} ignored.",
    "Added a regression test for `{func}` in {file}; it fails on the old code and passes now.",
    "{^entity} is untouched in this change; only {file} changed.",
    "I'd leave {entity} as it is for now and open a follow-up issue.",
    "`{func}` is called from three places; I updated all of them and `{cmd}` is green.",
    "The diff for {file} is ready: {n} lines added, {m} removed. Want me to commit?",
    "{^lib} already exposes what we need; I used it in `{func}` instead of hand-rolling the parsing.",
    "Renamed `{func}` and fixed the imports in {file2}; nothing else referenced it.",
    "Committed as {hash}: tidy {file} and document `{func}`.",
    "`{func}` only runs at startup, so it is not worth optimising. The hot path is in {file2}.",
    "Reviewed your change to {file}. One nit: `{func}` now swallows the error from {lib}; I'd propagate it.",
    "Running `{cmd}` again after the rebase; {n} tests, all green.",
    "Summary of today: {file} split in two, `{func}` documented, {entity} left for tomorrow.",
];

/// One chatter message for `role`; the command is set when the text says a command was run.
pub fn chatter(role: Role, vocab: &Vocab, rng: &mut Rng) -> (String, Option<String>) {
    let templates = if role == Role::User {
        USER_CHATTER
    } else {
        ASSISTANT_CHATTER
    };
    let template = *rng.pick(templates);
    let cmd = rng.pick(&vocab.cmds).clone();
    let entity = if vocab.entities.is_empty() {
        rng.pick(&vocab.libs).clone()
    } else {
        rng.pick(&vocab.entities).clone()
    };
    let text = template
        .replace("{file2}", rng.pick(&vocab.files).as_str())
        .replace("{file}", rng.pick(&vocab.files).as_str())
        .replace("{func}", rng.pick(&vocab.funcs).as_str())
        .replace("{cmd}", &cmd)
        .replace("{^lib}", &capitalise(rng.pick(&vocab.libs).as_str()))
        .replace("{lib}", rng.pick(&vocab.libs).as_str())
        .replace("{^entity}", &capitalise(&entity))
        .replace("{entity}", &entity)
        .replace("{n}", &(3 + rng.below(400)).to_string())
        .replace("{m}", &rng.below(12).to_string())
        .replace("{hash}", &format!("{:07x}", rng.next_u64() & 0xfff_ffff));
    let ran = role == Role::Assistant && template.contains("Ran");
    (text, ran.then_some(cmd))
}

/// A deterministic UUIDv7-shaped session id for a session started at `started_ms`.
pub fn session_id(started_ms: u64, rng: &mut Rng) -> String {
    format!(
        "{:012x}7{:03x}{:016x}",
        started_ms & 0xffff_ffff_ffff,
        rng.next_u64() & 0xfff,
        (rng.next_u64() & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000
    )
}

/// The role of the message at `index` (user first, then alternating).
pub fn role_at(index: usize) -> Role {
    if index.is_multiple_of(2) {
        Role::User
    } else {
        Role::Assistant
    }
}

/// The vocabulary of a topic: its lists plus the fact entities the chatter may mention.
fn topic_vocab(topic: &Topic) -> Vocab {
    Vocab {
        name: topic.name.clone(),
        domain: topic.domain.clone(),
        files: topic.files.clone(),
        funcs: topic.funcs.clone(),
        cmds: topic.cmds.clone(),
        libs: topic.libs.clone(),
        entities: topic
            .facts
            .iter()
            .filter_map(|fact| fact.kind.entity.and_then(|name| fact.fields.get(name)))
            .cloned()
            .collect(),
    }
}

/// The opening user message of a session.
pub fn intro(vocab: &Vocab, rng: &mut Rng) -> String {
    format!(
        "We're working on {}, a {}. Today: clean up {} and look into {}.",
        vocab.name,
        vocab.domain,
        rng.pick(&vocab.files),
        rng.pick(if vocab.entities.is_empty() {
            &vocab.libs
        } else {
            &vocab.entities
        })
    )
}

/// The labelled session of topic `index`, and where each fact landed: `positions[f]` is the
/// message index of `topic.facts[f]`.
pub fn labelled(index: usize, topic: &Topic, rng: &mut Rng) -> (Session, Vec<usize>) {
    let vocab = topic_vocab(topic);
    let count = 20 + rng.below(21);
    let mut slots: Vec<usize> = (1..count).collect();
    rng.shuffle(&mut slots);
    let positions: Vec<usize> = slots[..topic.facts.len()].to_vec();
    let started = BASE_MS + index as u64 * 2 * DAY_MS + rng.below(36_000_000) as u64;
    let id = session_id(started, rng);
    let mut at_ms = started;
    let mut turns = Vec::with_capacity(count);
    for position in 0..count {
        let role = role_at(position);
        let (text, command) = if position == 0 {
            (intro(&vocab, rng), None)
        } else if let Some(f) = positions.iter().position(|&p| p == position) {
            let fact = &topic.facts[f];
            let statement = fact.kind.statements[rng.below(2)];
            (render(statement, &fact.fields), None)
        } else {
            chatter(role, &vocab, rng)
        };
        turns.push(Turn {
            role,
            text,
            command,
            tool_output: None,
            at_ms,
        });
        at_ms += 20_000 + rng.below(100_000) as u64;
    }
    let session = Session {
        id,
        project: topic.project.clone(),
        model: "claude-sonnet-4-5".into(),
        turns,
    };
    (session, positions)
}
