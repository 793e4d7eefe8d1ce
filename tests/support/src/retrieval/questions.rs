//! The fact kinds of the labelled set: for each, the fields a topic fills in, two wordings of
//! the answering message, the evidence substring, and the three question templates (lexical,
//! paraphrase, mixed).
//!
//! Templates use `{field}`; `{^field}` capitalises the first letter. A lexical question repeats
//! the fact's rare identifier; a paraphrase question names it only through the topic's
//! `gloss`, which shares no content word with the message; a mixed question keeps one
//! identifier and rewords the rest.

use std::collections::BTreeMap;

use serde::Serialize;

/// How a question relates to the words of its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionType {
    /// Shares the rare identifier with the answer.
    Lexical,
    /// Few or no shared content words.
    Paraphrase,
    /// One identifier, reworded otherwise.
    Mixed,
}

impl QuestionType {
    /// All three, in report order.
    pub const ALL: [QuestionType; 3] = [
        QuestionType::Lexical,
        QuestionType::Paraphrase,
        QuestionType::Mixed,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            QuestionType::Lexical => "lexical",
            QuestionType::Paraphrase => "paraphrase",
            QuestionType::Mixed => "mixed",
        }
    }
}

/// One kind of fact a coding session records.
#[derive(Debug)]
pub struct FactKind {
    /// The key in the topics files.
    pub name: &'static str,
    /// Field names, in the order the topics files give them.
    pub fields: &'static [&'static str],
    /// Two wordings of the answering message; both contain `evidence`.
    pub statements: [&'static str; 2],
    /// The substring that must appear in the answer and in no other message.
    pub evidence: &'static str,
    /// Question templates: lexical, paraphrase, mixed.
    pub questions: [&'static str; 3],
    /// The field the chatter may mention without giving the answer away (a distractor).
    pub entity: Option<&'static str>,
}

/// Every fact kind; each topic fills in all of them.
pub static KINDS: [FactKind; 10] = [
    FactKind {
        name: "port",
        fields: &["svc", "gloss", "old", "new", "why"],
        statements: [
            "Done. The {svc} now listens on {new} instead of {old}: {why}. I updated the compose file and the scrape config.",
            "Switched it over: the {svc} listens on {new} from now on, {old} is free again, because {why}.",
        ],
        evidence: "listens on {new}",
        questions: [
            "What port does the {svc} listen on now?",
            "Which number did we settle on for the {gloss}?",
            "The {svc} used to be on {old}; where did it move?",
        ],
        entity: Some("svc"),
    },
    FactKind {
        name: "swap",
        fields: &["old", "new", "gloss", "why"],
        statements: [
            "We replaced {old} with {new} because {why}. Nobody wants to go back.",
            "Decision recorded in DECISIONS.md: replaced {old} with {new}, since {why}.",
        ],
        evidence: "replaced {old} with {new}",
        questions: [
            "Why did we replace {old} with {new}?",
            "What made us abandon {gloss}?",
            "What was the problem with {old} that made us switch?",
        ],
        entity: Some("new"),
    },
    FactKind {
        name: "reject",
        fields: &["for", "pick", "alt", "gloss", "why"],
        statements: [
            "For {for} let's go with {pick}. I looked at {alt}, but {why}, so that one is out.",
            "I'd pick {pick} for {for}. The other candidate was {alt}; rejected because {why}.",
        ],
        evidence: "{alt}",
        questions: [
            "Did we consider {alt} for {for}?",
            "Which option for {gloss} did we turn down, and why?",
            "What alternative did we reject for {for}?",
        ],
        entity: Some("for"),
    },
    FactKind {
        name: "error",
        fields: &["key", "text", "gloss", "cause", "fix"],
        statements: [
            "That `{text}` comes from {cause}. Fix: {fix}. Build is green again.",
            "Got it: {cause}, which is what produces `{text}`. The fix is to {fix}.",
        ],
        evidence: "{text}",
        questions: [
            "How did we fix {key}?",
            "How did we get past {gloss}?",
            "What was causing the {key} failure?",
        ],
        entity: Some("key"),
    },
    FactKind {
        name: "pin",
        fields: &["lib", "ver", "gloss", "why"],
        statements: [
            "Heads-up: {lib} pinned to {ver} in the manifest and the lockfile; {why}.",
            "I left {lib} pinned to {ver}: {why}. Revisit when upstream ships a fix.",
        ],
        evidence: "{lib} pinned to {ver}",
        questions: [
            "Which {lib} version are we pinned to?",
            "Why are we stuck on an older {gloss}?",
            "Why can't we upgrade {lib}?",
        ],
        entity: Some("lib"),
    },
    FactKind {
        name: "config",
        fields: &["key", "val", "file", "gloss", "why"],
        statements: [
            "Set {key} = {val} in {file}: {why}.",
            "In {file} I changed it to {key} = {val}, because {why}.",
        ],
        evidence: "{key} = {val}",
        questions: [
            "What is {key} set to in {file}?",
            "Remind me what we decided about {gloss}.",
            "What value did we give {key}, and why?",
        ],
        entity: Some("key"),
    },
    FactKind {
        name: "command",
        fields: &["for", "cmd", "key", "gloss"],
        statements: [
            "To regenerate {for}, run `{cmd}` from the repo root; never edit those files by hand.",
            "Note for later, {for}: `{cmd}`. CI fails if the checked-in copy drifts from its output.",
        ],
        evidence: "{cmd}",
        questions: [
            "What's the exact {key} invocation for {for}?",
            "How do I rebuild {gloss}?",
            "Which command regenerates {for}?",
        ],
        entity: Some("for"),
    },
    FactKind {
        name: "move",
        fields: &["what", "from", "to", "gloss"],
        statements: [
            "Moved {what} out of {from} into {to}; the old code is deleted and the imports are fixed.",
            "{^what} now live in {to}. They used to sit in {from}, which was getting too long.",
        ],
        evidence: "{to}",
        questions: [
            "Where did the code from {from} go?",
            "Where would I find {gloss} these days?",
            "Where are {what} now?",
        ],
        entity: Some("what"),
    },
    FactKind {
        name: "flaky",
        fields: &["test", "short", "gloss", "cause", "fix"],
        statements: [
            "Found why {test} flakes: {cause}. The fix: {fix}. 200 runs in a loop, no failure.",
            "Root cause for {test} being flaky: {cause}. I'll {fix}.",
        ],
        evidence: "{test}",
        questions: [
            "Why was {test} flaky?",
            "What was behind {gloss}?",
            "What made {short} fail at random?",
        ],
        entity: None,
    },
    FactKind {
        name: "perf",
        fields: &["what", "before", "after", "change", "gloss"],
        statements: [
            "{^what} went from {before} to {after} after {change}.",
            "Measured again: {what} moved from {before} to {after}, all of it from {change}.",
        ],
        evidence: "from {before} to {after}",
        questions: [
            "How much did {what} improve?",
            "How much quicker is {gloss} after the optimisation?",
            "What are the before and after numbers for {what}?",
        ],
        entity: Some("what"),
    },
];

/// Fills `{field}` and `{^field}` placeholders.
pub fn render(template: &str, fields: &BTreeMap<&'static str, String>) -> String {
    let mut out = template.to_string();
    for (name, value) in fields {
        out = out.replace(&format!("{{^{name}}}"), &capitalise(value));
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

/// The text with its first letter upper-cased.
pub fn capitalise(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
