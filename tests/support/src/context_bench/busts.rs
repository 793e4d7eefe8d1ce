//! Why a request busted the prompt cache, read from the bytes the fake upstream received.
//!
//! A bust is a request that wrote more than half its prompt to the cache. Each one is compared
//! with the accepted request before it, block by block in the oracle's order (tools, system
//! blocks, message content blocks, `cache_control` ignored), and classified by the first block
//! that differs and what the gateway reported:
//!
//! 1. the session's first request;
//! 2. a layer change (the `x-lore-context-layer` header differs from the previous reply's);
//! 3. the cache expired (the gap since the previous request is at least the lifetime its
//!    conversation breakpoint asked for: 5 minutes, or 1 hour with `"ttl": "1h"`);
//! 4. the distilled prefix re-rendered (the first difference is in Lore's prefix pair), told
//!    apart by its log sections against the previous request's: all kept and newer ones
//!    appended after them; a consolidation (a new section before a kept one, or none kept:
//!    consolidations come first); or the oldest dropped for room (the kept ones first, any new
//!    ones after them). Whether the raw window was re-pinned at the same request is counted
//!    beside;
//! 5. the raw window moved with the prefix unchanged (the first raw message after the prefix
//!    is another one: Lore re-pinned its window, or the naive client dropped its oldest
//!    messages);
//! 6. other: anything else, with what changed (the system prompt or tools, a knowledge delta, a
//!    message inside the window, or a difference after everything cached before).

use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::client::Played;
use lore_test_support::cache_oracle::strip_cache_control;
use lore_test_support::{CacheObservation, CacheOracle, FakeUpstream};

/// The start of the user half of Lore's distilled prefix.
const PREFIX_NOTICE_START: &str = "[Lore: the earlier part of this conversation";
/// The heading of the assistant half of the prefix, as a JSON string.
const PREFIX_HEADING: &str = "\"## Session History\"";
/// The start of the user half of a long-term knowledge delta.
const DELTA_NOTICE_START: &str = "[Lore: an update of the long-term knowledge";

/// Why one request busted the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    FirstRequest,
    LayerChange,
    CacheExpired,
    /// The distilled prefix was re-rendered; `repinned`: the raw window moved too.
    Prefix {
        change: PrefixChange,
        repinned: bool,
    },
    WindowMoved,
    /// What changed, in a few words.
    Other(String),
}

/// How the distilled prefix's log sections changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixChange {
    /// Every section kept, newer ones appended.
    Appended,
    /// A new section before a kept one, or none kept.
    Consolidated,
    /// Some of the oldest sections gone, the rest kept first.
    Dropped,
}

impl PrefixChange {
    /// How the log sections `now` differ from `before` (`None`: they do not).
    fn of(before: &[String], now: &[String]) -> Option<Self> {
        if now == before {
            return None;
        }
        if now.starts_with(before) {
            return Some(PrefixChange::Appended);
        }
        let kept: Vec<bool> = now.iter().map(|s| before.contains(s)).collect();
        let last_kept = kept.iter().rposition(|k| *k);
        let fresh_before_kept = last_kept.is_some_and(|last| kept[..last].iter().any(|k| !*k));
        if last_kept.is_none() || fresh_before_kept {
            Some(PrefixChange::Consolidated)
        } else {
            Some(PrefixChange::Dropped)
        }
    }
}

/// A row of the cause table: its label and which causes it counts.
pub type Row = (&'static str, fn(&Cause) -> bool);

/// The causes in the order the table shows them, with their labels.
pub const ROWS: [Row; 8] = [
    ("first request", |c| *c == Cause::FirstRequest),
    ("layer change", |c| *c == Cause::LayerChange),
    ("distilled prefix re-rendered: newer logs appended", |c| {
        matches!(
            c,
            Cause::Prefix {
                change: PrefixChange::Appended,
                ..
            }
        )
    }),
    ("distilled prefix re-rendered: a consolidation", |c| {
        matches!(
            c,
            Cause::Prefix {
                change: PrefixChange::Consolidated,
                ..
            }
        )
    }),
    (
        "distilled prefix re-rendered: oldest logs dropped for room",
        |c| {
            matches!(
                c,
                Cause::Prefix {
                    change: PrefixChange::Dropped,
                    ..
                }
            )
        },
    ),
    (
        "raw window re-pinned / moved, prefix unchanged (newest that fit: oldest messages dropped)",
        |c| *c == Cause::WindowMoved,
    ),
    ("cache expired (gap ≥ the breakpoint's lifetime)", |c| {
        *c == Cause::CacheExpired
    }),
    ("other / unexplained", |c| matches!(c, Cause::Other(_))),
];

/// Where a block sits in the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Region {
    Head,
    Prefix,
    Delta,
    /// A client message; the number is its position among the raw messages sent.
    Raw(usize),
}

/// One prompt block: where it is and its canonical JSON.
#[derive(Debug, Clone)]
struct Block {
    region: Region,
    json: String,
}

/// One accepted conversation request, as the classifier needs it.
#[derive(Debug, Clone)]
pub struct Sent {
    blocks: Vec<Block>,
    /// The canonical JSON of the first raw message (empty when there is none).
    first_raw: String,
    /// The conversation breakpoint asked for the 1-hour lifetime.
    one_hour: bool,
    received_at: SystemTime,
    /// The layer the gateway reported for it, when it did.
    pub layer: Option<u8>,
}

fn canonical(value: &Value) -> String {
    let mut value = value.clone();
    strip_cache_control(&mut value);
    value.to_string()
}

fn first_text(message: &Value) -> &str {
    match &message["content"] {
        Value::String(text) => text,
        Value::Array(blocks) => blocks
            .first()
            .and_then(|b| b["text"].as_str())
            .unwrap_or(""),
        _ => "",
    }
}

impl Sent {
    /// Reads an Anthropic Messages body.
    pub fn parse(body: &[u8], received_at: SystemTime, layer: Option<u8>) -> Self {
        let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let mut blocks = Vec::new();
        let head = |json: String| Block {
            region: Region::Head,
            json,
        };
        for tool in body["tools"].as_array().into_iter().flatten() {
            blocks.push(head(canonical(tool)));
        }
        match &body["system"] {
            Value::Array(items) => blocks.extend(items.iter().map(|b| head(canonical(b)))),
            Value::Null => {}
            system => blocks.push(head(canonical(system))),
        }
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        let mut first_raw = String::new();
        let mut raw = 0;
        let mut previous = Region::Head;
        let mut one_hour = false;
        for message in &messages {
            let text = first_text(message);
            let region = if message["role"] == "user" && text.starts_with(PREFIX_NOTICE_START) {
                Region::Prefix
            } else if message["role"] == "user" && text.starts_with(DELTA_NOTICE_START) {
                Region::Delta
            } else if message["role"] == "assistant"
                && matches!(previous, Region::Prefix | Region::Delta)
            {
                // The assistant half of the pair.
                previous
            } else {
                raw += 1;
                if raw == 1 {
                    first_raw = canonical(message);
                }
                Region::Raw(raw)
            };
            previous = region;
            match &message["content"] {
                Value::Array(items) => {
                    for item in items {
                        if let Some(ttl) = item["cache_control"]["ttl"].as_str() {
                            one_hour = ttl == "1h";
                        } else if !item["cache_control"].is_null() {
                            one_hour = false;
                        }
                        blocks.push(Block {
                            region,
                            json: canonical(item),
                        });
                    }
                }
                content => blocks.push(Block {
                    region,
                    json: canonical(content),
                }),
            }
        }
        Self {
            blocks,
            first_raw,
            one_hour,
            received_at,
            layer,
        }
    }
}

/// The cause of a bust at `current`, `previous` being the accepted request before it.
pub fn classify(previous: Option<&Sent>, current: &Sent) -> Cause {
    let Some(previous) = previous else {
        return Cause::FirstRequest;
    };
    if let (Some(before), Some(now)) = (previous.layer, current.layer)
        && before != now
    {
        return Cause::LayerChange;
    }
    let lifetime = Duration::from_secs(if previous.one_hour { 3_600 } else { 300 });
    let gap = current
        .received_at
        .duration_since(previous.received_at)
        .unwrap_or_default();
    if gap >= lifetime {
        return Cause::CacheExpired;
    }
    let differs = previous
        .blocks
        .iter()
        .zip(&current.blocks)
        .position(|(a, b)| a.json != b.json || a.region != b.region);
    let Some(at) = differs else {
        return Cause::Other("nothing changed before the end of the shorter prompt".into());
    };
    let repinned = previous.first_raw != current.first_raw;
    match current.blocks[at].region {
        Region::Head => Cause::Other("the system prompt or the tools changed".into()),
        Region::Prefix => {
            // The log sections: not the notice, not the heading.
            let sections = |sent: &Sent| -> Vec<String> {
                sent.blocks
                    .iter()
                    .filter(|b| b.region == Region::Prefix)
                    .filter(|b| {
                        !b.json.contains(PREFIX_NOTICE_START) && !b.json.contains(PREFIX_HEADING)
                    })
                    .map(|b| b.json.clone())
                    .collect()
            };
            match PrefixChange::of(&sections(previous), &sections(current)) {
                Some(change) => Cause::Prefix { change, repinned },
                None => Cause::Other("the prefix's notice or heading changed".into()),
            }
        }
        Region::Delta => Cause::Other("a long-term knowledge delta was inserted".into()),
        Region::Raw(_) if repinned => Cause::WindowMoved,
        Region::Raw(_) => Cause::Other("a message inside the raw window changed".into()),
    }
}

/// Whether the oracle counts `o` as a bust: more than half its prompt written to the cache.
pub fn is_bust(o: &CacheObservation) -> bool {
    o.cache_creation * 2 > o.input_tokens + o.cache_read + o.cache_creation
}

/// The cause of every bust of a run, in order; `None` when the accepted requests cannot be
/// matched one to one with the oracle's observations.
pub fn causes(upstream: &FakeUpstream, played: &Played, window: u64) -> Option<Vec<Cause>> {
    let observations = upstream.cache_observations();
    let mut accepted = Vec::new();
    for request in upstream.requests() {
        let path = request.path.split('?').next().unwrap_or("");
        let worker = request
            .header("user-agent")
            .is_some_and(|ua| ua.starts_with("lore-worker"));
        if request.method != "POST" || path != "/v1/messages" || worker {
            continue;
        }
        // The fake refuses a prompt over the window before its oracle sees it.
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let key = (String::new(), String::new());
        if CacheOracle::new().anthropic(&key, &body, false).total > window {
            continue;
        }
        accepted.push(request);
    }
    if accepted.len() != observations.len() {
        return None;
    }
    let layers_known = played.accepted_layers.len() == accepted.len();
    let mut previous: Option<Sent> = None;
    let mut out = Vec::new();
    for (i, (request, observation)) in accepted.iter().zip(&observations).enumerate() {
        let layer = if layers_known {
            played.accepted_layers[i]
        } else {
            None
        };
        let sent = Sent::parse(&request.body, request.received_at, layer);
        if is_bust(observation) {
            out.push(classify(previous.as_ref(), &sent));
        }
        previous = Some(sent);
    }
    Some(out)
}

/// The table of causes, one column per strategy (`None`: not classified), and the details of
/// the busts counted as other.
pub fn report(columns: &[(&str, Option<&[Cause]>)]) -> String {
    let mut out = String::from("| bust cause |");
    for (name, _) in columns {
        out.push_str(&format!(" {name} |"));
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(columns.len()));
    out.push('\n');
    for (label, matches) in ROWS {
        out.push_str(&format!("| {label} |"));
        for (_, causes) in columns {
            match causes {
                Some(causes) => {
                    let n = causes.iter().filter(|c| matches(c)).count();
                    out.push_str(&format!(" {n} |"));
                }
                None => out.push_str(" not classified |"),
            }
        }
        out.push('\n');
    }
    out.push_str("| of the prefix re-renders: with the raw window re-pinned at the same request |");
    for (_, causes) in columns {
        match causes {
            Some(causes) => {
                let n = causes
                    .iter()
                    .filter(|c| matches!(c, Cause::Prefix { repinned: true, .. }))
                    .count();
                out.push_str(&format!(" {n} |"));
            }
            None => out.push_str(" — |"),
        }
    }
    out.push('\n');
    out.push_str("| **all busts** |");
    for (_, causes) in columns {
        match causes {
            Some(causes) => out.push_str(&format!(" **{}** |", causes.len())),
            None => out.push_str(" — |"),
        }
    }
    out.push('\n');
    for (name, causes) in columns {
        let mut details: Vec<(&str, usize)> = Vec::new();
        for cause in causes.iter().flat_map(|c| c.iter()) {
            if let Cause::Other(what) = cause {
                match details.iter_mut().find(|(w, _)| *w == what.as_str()) {
                    Some((_, n)) => *n += 1,
                    None => details.push((what, 1)),
                }
            }
        }
        if !details.is_empty() {
            let text: Vec<String> = details.iter().map(|(w, n)| format!("{w} ×{n}")).collect();
            out.push_str(&format!("\n{name}, other: {}.\n", text.join("; ")));
        }
    }
    out
}

#[cfg(test)]
mod tests;
