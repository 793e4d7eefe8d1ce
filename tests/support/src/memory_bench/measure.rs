//! What the run measures: token counts (tiktoken cl100k), the distillations of the session,
//! the worker calls (as the fake upstream received them and as the gateway recorded them) and
//! the 30 recall questions.

use std::collections::HashMap;

use anyhow::Context;
use lore_test_support::{FakeUpstream, default_worker_answer};
use serde_json::Value;
use tiktoken_rs::CoreBPE;

use super::drive::PROJECT;
use super::facts::{FACTS, Fact};
use super::gateway::{Gateway, encode};

/// cl100k token counts.
pub struct Tokens(CoreBPE);

impl Tokens {
    /// Loads the cl100k tables (compiled into tiktoken-rs).
    pub fn new() -> anyhow::Result<Self> {
        Ok(Tokens(
            tiktoken_rs::cl100k_base().context("load the cl100k tokenizer")?,
        ))
    }

    /// Tokens of `text`.
    pub fn count(&self, text: &str) -> u64 {
        self.0.encode_ordinary(text).len() as u64
    }
}

/// The gateway's token estimate: one per three characters.
pub fn estimate(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(3)
}

/// One distillation as the memory API returns it.
#[derive(Debug, Clone)]
pub struct Distilled {
    /// `d:<session>:<n>`.
    pub id: String,
    /// 0 for an observation log, 1+ for a consolidation.
    pub generation: u64,
    /// Folded into a consolidation.
    pub archived: bool,
    /// Gateway estimate of what it was made from.
    pub source_tokens: u64,
    /// Gateway estimate of its size.
    pub tokens: u64,
    /// Its text.
    pub text: String,
}

/// The distillations of a session.
pub fn distillations(gateway: &Gateway, session: &str) -> anyhow::Result<Vec<Distilled>> {
    let memory = gateway.get(&format!("/api/v1/sessions/{session}/memory"))?;
    let rows = memory["distillations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    Ok(rows
        .iter()
        .map(|d| Distilled {
            id: d["id"].as_str().unwrap_or("").to_string(),
            generation: d["generation"].as_u64().unwrap_or(0),
            archived: d["archived"].as_bool().unwrap_or(false),
            source_tokens: d["source_tokens"].as_u64().unwrap_or(0),
            tokens: d["tokens"].as_u64().unwrap_or(0),
            text: d["observations"].as_str().unwrap_or("").to_string(),
        })
        .collect())
}

/// Worker calls of one bucket.
#[derive(Debug, Default, Clone)]
pub struct Bucket {
    /// Calls received by the fake upstream.
    pub calls: u64,
    /// cl100k tokens of the system and user texts sent.
    pub input: u64,
    /// cl100k tokens of the replies.
    pub output: u64,
    /// The output ceiling the calls asked for (Σ `max_tokens`).
    pub ceiling: u64,
    /// The replies cut at each call's `max_tokens` (Σ min(reply, max_tokens)): what a model
    /// writing the fake's text could send back.
    pub capped: u64,
    /// As the gateway recorded them (`worker_usage`): calls, input, output tokens, cost.
    pub recorded: (u64, u64, u64, f64),
}

/// The worker calls of a run.
#[derive(Debug, Default)]
pub struct Workers {
    /// Per bucket, in order of the first call.
    pub buckets: Vec<(String, Bucket)>,
    /// The models the calls named.
    pub models: Vec<String>,
    /// Every message block the observer was given (`<messages>` of the distillation calls),
    /// to tell a fact the observer dropped from one that never reached it.
    pub observer_input: String,
    /// cl100k tokens of those message blocks, and Σ `max_tokens` of their calls.
    pub observer_tokens: (u64, u64),
}

/// The worker calls per bucket, the models they asked for, and what the observer read.
pub fn workers(
    upstream: &FakeUpstream,
    gateway: &Gateway,
    tokens: &Tokens,
) -> anyhow::Result<Workers> {
    let mut out = Workers::default();
    let (buckets, models) = (&mut out.buckets, &mut out.models);
    for call in upstream.worker_calls() {
        let system = call.body["system"].as_str().unwrap_or("");
        let user = call.body["messages"][0]["content"].as_str().unwrap_or("");
        let max_tokens = call.body["max_tokens"].as_u64().unwrap_or(0);
        if let Some(start) = user.find("<messages>") {
            out.observer_input.push_str(&user[start..]);
            out.observer_tokens.0 += tokens.count(&user[start..]);
            out.observer_tokens.1 += max_tokens;
        }
        let reply = default_worker_answer(&call.bucket, user);
        let reply_tokens = tokens.count(&reply);
        if let Some(model) = call.body["model"].as_str()
            && !models.iter().any(|m| m == model)
        {
            models.push(model.to_string());
        }
        let bucket = match buckets.iter().position(|(name, _)| *name == call.bucket) {
            Some(i) => &mut buckets[i].1,
            None => {
                buckets.push((call.bucket.clone(), Bucket::default()));
                &mut buckets.last_mut().context("just pushed")?.1
            }
        };
        bucket.calls += 1;
        bucket.input += tokens.count(system) + tokens.count(user);
        bucket.output += reply_tokens;
        bucket.ceiling += max_tokens;
        bucket.capped += reply_tokens.min(max_tokens);
    }
    let actors = gateway.get("/api/v1/actors")?;
    for row in actors["worker_usage"]
        .as_array()
        .cloned()
        .unwrap_or_default()
    {
        let name = row["bucket"].as_str().unwrap_or("?").to_string();
        let i = match buckets.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                buckets.push((name, Bucket::default()));
                buckets.len() - 1
            }
        };
        let r = &mut buckets[i].1.recorded;
        r.0 += row["calls"].as_u64().unwrap_or(0);
        r.1 += row["input_tokens"].as_u64().unwrap_or(0);
        r.2 += row["output_tokens"].as_u64().unwrap_or(0);
        r.3 += row["cost_usd"].as_f64().unwrap_or(0.0);
    }
    Ok(out)
}

/// Every string inside a JSON value, joined by newlines.
fn strings(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The full text of every document of the session: `t:<session>:<seq>` from the stored
/// messages, `d:<session>:<n>` from the distillations.
pub fn documents(
    gateway: &Gateway,
    session: &str,
    distilled: &[Distilled],
) -> anyhow::Result<HashMap<String, String>> {
    let detail = gateway.get(&format!("/api/v1/sessions/{session}/messages"))?;
    let mut out = HashMap::new();
    for message in detail["messages"].as_array().cloned().unwrap_or_default() {
        let mut text = String::new();
        strings(&message["parts"], &mut text);
        out.insert(
            format!("t:{session}:{}", message["seq"].as_u64().unwrap_or(0)),
            text,
        );
    }
    for d in distilled {
        out.insert(d.id.clone(), d.text.clone());
    }
    Ok(out)
}

/// Where one question's answer key turned up in one recall mode (1-based ranks, top 10).
#[derive(Debug, Default, Clone, Copy)]
pub struct Ranks {
    /// First result of any kind holding the key.
    pub any: Option<usize>,
    /// First distillation (`d:`) result holding the key, ranked among all results.
    pub distilled: Option<usize>,
    /// First distillation holding the key, ranked among the distillations alone.
    pub among_distilled: Option<usize>,
}

/// The recall queries asked for each question: label, scope, mode. Scope `session` searches
/// no vectors (by design of the recall engine), so its `hybrid` is BM25 with session
/// affinity; scope `project` (the session's only project) is where vectors take part.
pub const VARIANTS: [(&str, &str, &str); 3] = [
    (
        "scope session, hybrid (BM25: session scope searches no vectors)",
        "session",
        "hybrid",
    ),
    (
        "scope project, hybrid (BM25 + vectors)",
        "project",
        "hybrid",
    ),
    ("scope project, bm25", "project", "bm25"),
];

/// One question's outcome in one phase.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The fact.
    pub fact: &'static Fact,
    /// One entry per [`VARIANTS`] entry.
    pub ranks: Vec<Ranks>,
}

/// Whether `text` holds `key`, ignoring case.
pub fn holds(text: &str, key: &str) -> bool {
    text.to_lowercase().contains(&key.to_lowercase())
}

/// `GET /api/v1/recall`: the result ids, best first, and whether vectors took part (the query
/// was embedded and no note says the scope searched none).
fn recall(
    gateway: &Gateway,
    session: &str,
    (scope, mode): (&str, &str),
    query: &str,
    limit: usize,
) -> anyhow::Result<(Vec<String>, bool)> {
    let body = gateway.get(&format!(
        "/api/v1/recall?q={}&scope={scope}&session={session}&project={}&limit={limit}&mode={mode}",
        encode(query),
        encode(PROJECT)
    ))?;
    let ids = body["results"]
        .as_array()
        .context("no results array")?
        .iter()
        .filter_map(|hit| hit["id"].as_str().map(str::to_string))
        .collect();
    let unused = body["notes"].as_array().is_some_and(|notes| {
        notes
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains("no vectors")))
    });
    Ok((ids, body["vectors"].as_bool().unwrap_or(false) && !unused))
}

/// Ranks in `top` (a limit-10 answer) and among the distillations of `deep` (a limit-100 one).
fn ranks(top: &[String], deep: &[String], docs: &HashMap<String, String>, key: &str) -> Ranks {
    let found = |id: &String| docs.get(id).is_some_and(|text| holds(text, key));
    let distilled: Vec<&String> = deep
        .iter()
        .filter(|id| id.starts_with("d:"))
        .take(10)
        .collect();
    Ranks {
        any: top.iter().position(found).map(|i| i + 1),
        distilled: top
            .iter()
            .position(|id| id.starts_with("d:") && found(id))
            .map(|i| i + 1),
        among_distilled: distilled.iter().position(|id| found(id)).map(|i| i + 1),
    }
}

/// Asks the 30 questions in every variant; also says whether vectors took part in any.
pub fn ask_all(
    gateway: &Gateway,
    session: &str,
    docs: &HashMap<String, String>,
) -> anyhow::Result<(Vec<Asked>, bool)> {
    let mut out = Vec::new();
    let mut vectors = false;
    for fact in &FACTS {
        let mut asked = Asked {
            fact,
            ranks: Vec::new(),
        };
        for (_, scope, mode) in VARIANTS {
            let (top, embedded) = recall(gateway, session, (scope, mode), fact.question, 10)?;
            let (deep, _) = recall(gateway, session, (scope, mode), fact.question, 100)?;
            vectors |= embedded;
            asked.ranks.push(ranks(&top, &deep, docs, fact.key));
        }
        out.push(asked);
    }
    Ok((out, vectors))
}

/// Whether some distillation in `rows` holds `key`.
pub fn distilled_holds(rows: &[&Distilled], key: &str) -> bool {
    rows.iter().any(|d| holds(&d.text, key))
}
