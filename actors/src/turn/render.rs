//! A plan turned into the bytes to send: the client's system items first, the long-term
//! knowledge blocks (Anthropic: after the client's system blocks; OpenAI: system/developer
//! messages after the client's), then the distilled prefix, then the raw window with the
//! knowledge deltas before their anchors — each client element verbatim unless an output in it
//! is replaced or (Anthropic, layer 1 and up) it carries the client's cache breakpoints, which
//! the gateway then places itself: at most four with the client's own, on system[1] (or the
//! system prompt) and the last tool (1 hour), the end of the prefix (1 hour) and the last
//! message (the conversation's lifetime); every lifetime is five minutes on hosts other than
//! Anthropic's or after a client breakpoint of five minutes. At layer 0 the client's
//! breakpoints stay where they are and only system[1] may get one more.

use std::collections::{HashMap, HashSet};

use lore_proto::rebuild::items::{
    Ttl, cache_control_count, mentions_cache_control, prefix_items, system_with_cache_control,
    tool_with_cache_control, with_cache_control, with_outputs_replaced, without_cache_control,
};
use lore_proto::rebuild::{BodyLayout, HeadEdits, Piece, render};
use lore_proto::{ProtoError, Protocol};
use serde_json::{Value, json};

use crate::gradient::prefix::{PREFIX_NOTICE, render_prefix};
use crate::gradient::{LogView, Plan};

/// Most breakpoints a request may carry (Anthropic).
const MAX_BREAKPOINTS: usize = 4;

/// Where a request goes, for its breakpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachePolicy {
    /// The upstream is Anthropic's own API (1-hour lifetimes are honoured).
    pub native_anthropic: bool,
}

/// A pair the ledger places in this turn's conversation (a knowledge delta, or a card whose
/// message is not sent; see [`crate::ledger`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedDelta {
    /// The planner unit it goes before (moved to the raw window's start when the unit is not
    /// sent).
    pub before_unit: usize,
    /// The user half's fixed notice.
    pub notice: &'static str,
    /// The assistant half's text.
    pub text: String,
}

/// The long-term knowledge of the turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Knowledge {
    /// system[1] (the stable baseline), when there is one.
    pub stable: Option<String>,
    /// system[2] (the pinned entries), when there is one.
    pub pinned: Option<String>,
    /// The deltas, in order.
    pub deltas: Vec<PlacedDelta>,
}

impl Knowledge {
    /// True when there is nothing to add.
    pub fn is_empty(&self) -> bool {
        self.stable.is_none() && self.pinned.is_none() && self.deltas.is_empty()
    }

    fn blocks(&self) -> Vec<&str> {
        [self.stable.as_deref(), self.pinned.as_deref()]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// Everything the rendering reads.
pub struct RenderInput<'a> {
    /// Wire protocol.
    pub protocol: Protocol,
    /// The body as it would be forwarded (cards injected, recall tool added).
    pub body: &'a [u8],
    /// For each planner unit, the wire elements it was read from.
    pub spans: &'a [Vec<u32>],
    /// The plan.
    pub plan: &'a Plan,
    /// The session's live logs (the prefix's source).
    pub logs: &'a [LogView],
    /// Annotation of each replaced output, by call id.
    pub annotations: &'a HashMap<String, String>,
    /// Breakpoint policy.
    pub cache: CachePolicy,
    /// Long-term knowledge to add.
    pub knowledge: &'a Knowledge,
}

/// Where ours go.
struct Breakpoints {
    /// On the client's system prompt (no system[1]).
    system: Option<Ttl>,
    /// On system[1].
    stable: Option<Ttl>,
    tool: Option<Ttl>,
    prefix: Option<Ttl>,
    last: Option<Ttl>,
}

fn breakpoints(input: &RenderInput<'_>, layout: &BodyLayout, has_prefix: bool) -> Breakpoints {
    let mut marks = Breakpoints {
        system: None,
        stable: None,
        tool: None,
        prefix: None,
        last: None,
    };
    if input.protocol != Protocol::Anthropic {
        return marks;
    }
    let managed = input.plan.layer > 0;
    let slice = |range: &Option<std::ops::Range<usize>>| {
        range.clone().map_or(&[][..], |range| &input.body[range])
    };
    let system = slice(&layout.system);
    let tools = slice(&layout.tools);
    // At layer 0 the client's message breakpoints stay and count; above, they are replaced.
    let counted: Vec<&[u8]> = if managed {
        vec![system, tools]
    } else {
        vec![input.body]
    };
    let client: usize = counted.iter().map(|raw| cache_control_count(raw)).sum();
    let client_long: usize = counted
        .iter()
        .map(|raw| String::from_utf8_lossy(raw).matches("\"1h\"").count())
        .sum();
    // A client breakpoint of five minutes before ours forbids longer ones after it.
    let client_short = client > client_long;
    let long = if input.cache.native_anthropic && !client_short {
        Ttl::OneHour
    } else {
        Ttl::FiveMinutes
    };
    let conversation = if input.cache.native_anthropic && input.plan.ttl_1h && !client_short {
        Ttl::OneHour
    } else {
        Ttl::FiveMinutes
    };
    let mut free = MAX_BREAKPOINTS.saturating_sub(client);
    let mut take = |wanted: bool| {
        if wanted && free > 0 {
            free -= 1;
            true
        } else {
            false
        }
    };
    let has_stable = input.knowledge.stable.is_some();
    if !managed {
        marks.stable = take(has_stable).then_some(long);
        return marks;
    }
    marks.last = take(true).then_some(conversation);
    marks.prefix = take(has_prefix).then_some(long);
    marks.stable = take(has_stable).then_some(long);
    let system_free = !has_stable && !system.is_empty() && cache_control_count(system) == 0;
    marks.system = take(system_free).then_some(long);
    let tool_free = layout.last_tool.is_some() && cache_control_count(tools) == 0;
    marks.tool = take(tool_free).then_some(long);
    marks
}

fn ttl_marker(ttl: Ttl) -> Value {
    match ttl {
        Ttl::FiveMinutes => json!({"type": "ephemeral"}),
        Ttl::OneHour => json!({"type": "ephemeral", "ttl": "1h"}),
    }
}

/// The Anthropic `system` value with the knowledge blocks after the client's (a string becomes
/// one text block), system[1] with its breakpoint.
fn anthropic_system(
    client: Option<&[u8]>,
    knowledge: &Knowledge,
    stable_mark: Option<Ttl>,
) -> Result<String, ProtoError> {
    let mut blocks: Vec<Value> = match client.map(serde_json::from_slice::<Value>).transpose()? {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) if text.is_empty() => Vec::new(),
        Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
        Some(Value::Array(blocks)) => blocks,
        Some(_) => {
            return Err(ProtoError::InvalidShape(
                "`system` is neither text nor a list".into(),
            ));
        }
    };
    if let Some(stable) = &knowledge.stable {
        let mut block = json!({"type": "text", "text": stable});
        if let Some(ttl) = stable_mark {
            block["cache_control"] = ttl_marker(ttl);
        }
        blocks.push(block);
    }
    if let Some(pinned) = &knowledge.pinned {
        blocks.push(json!({"type": "text", "text": pinned}));
    }
    Ok(serde_json::to_string(&blocks)?)
}

/// The knowledge blocks as system or developer messages of an OpenAI protocol.
fn openai_system_items(
    protocol: Protocol,
    knowledge: &Knowledge,
) -> Result<Vec<String>, ProtoError> {
    knowledge
        .blocks()
        .into_iter()
        .map(|text| {
            let item = match protocol {
                Protocol::OpenAiResponses => json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": text}]}),
                _ => json!({"role": "system", "content": text}),
            };
            Ok(serde_json::to_string(&item)?)
        })
        .collect()
}

/// The body to send for `input.plan` and the turn's knowledge.
pub fn render_plan(input: &RenderInput<'_>) -> Result<Vec<u8>, ProtoError> {
    let body = input.body;
    let layout = BodyLayout::read(input.protocol, body)?;
    let plan = input.plan;
    let managed = plan.layer > 0;
    let unit_items: HashSet<u32> = input.spans.iter().flatten().copied().collect();
    let first_kept = if managed {
        input
            .spans
            .get(plan.start)
            .and_then(|span| span.first().copied())
            .ok_or_else(|| ProtoError::InvalidShape("the raw window starts nowhere".into()))?
            as usize
    } else {
        0
    };
    let has_prefix = managed && !plan.prefix.is_empty();
    let marks = breakpoints(input, &layout, has_prefix);
    let total = layout.items.len();
    let anthropic = input.protocol == Protocol::Anthropic;
    let mut pieces = Vec::with_capacity(total + 8);
    // The first wire element of each planner unit, for the deltas' places.
    let item_of_unit: Vec<usize> = input
        .spans
        .iter()
        .map(|span| span.first().map_or(usize::MAX, |i| *i as usize))
        .collect();
    let first_unit_item = item_of_unit
        .iter()
        .copied()
        .min()
        .unwrap_or(total)
        .min(total);
    let first_kept = if managed { first_kept } else { first_unit_item };
    // The client's leading system and developer items stay first, in order; the knowledge
    // follows them (OpenAI protocols); system items among the dropped messages stay too.
    for index in 0..first_unit_item {
        pieces.push(Piece::Item(index));
    }
    if !anthropic {
        for item in openai_system_items(input.protocol, input.knowledge)? {
            pieces.push(Piece::Json(item));
        }
    }
    for index in first_unit_item..first_kept {
        if !unit_items.contains(&(index as u32)) {
            pieces.push(Piece::Item(index));
        }
    }
    if has_prefix {
        let sections = render_prefix(input.logs, &plan.prefix);
        let [user, assistant] =
            prefix_items(input.protocol, PREFIX_NOTICE, &sections, marks.prefix)?;
        pieces.push(Piece::Json(user));
        pieces.push(Piece::Json(assistant));
    }
    // Deltas whose message is not sent go at the start of what is.
    let mut deltas: Vec<(usize, &PlacedDelta)> = input
        .knowledge
        .deltas
        .iter()
        .map(|delta| {
            let item = item_of_unit
                .get(delta.before_unit)
                .copied()
                .unwrap_or(total);
            (item.max(first_kept).min(total), delta)
        })
        .collect();
    deltas.sort_by_key(|(item, _)| *item);
    let mut next_delta = deltas.iter().peekable();
    for index in first_kept..total {
        while let Some((_, delta)) = next_delta.next_if(|(at, _)| *at <= index) {
            let [user, assistant] = prefix_items(
                input.protocol,
                delta.notice,
                std::slice::from_ref(&delta.text),
                None,
            )?;
            pieces.push(Piece::Json(user));
            pieces.push(Piece::Json(assistant));
        }
        let raw = &body[layout.items[index].clone()];
        let is_last = index + 1 == total;
        let mut text: Option<String> = None;
        if managed && unit_items.contains(&(index as u32)) && !input.annotations.is_empty() {
            text = with_outputs_replaced(input.protocol, raw, input.annotations)?;
        }
        if managed
            && anthropic
            && mentions_cache_control(text.as_deref().map_or(raw, str::as_bytes))
        {
            let current = text
                .clone()
                .map_or_else(|| raw.to_vec(), String::into_bytes);
            if let Some(clean) = without_cache_control(&current)? {
                text = Some(clean);
            }
        }
        if is_last && let Some(ttl) = marks.last {
            let current = text
                .clone()
                .map_or_else(|| raw.to_vec(), String::into_bytes);
            if let Some(marked) = with_cache_control(&current, ttl)? {
                text = Some(marked);
            }
        }
        pieces.push(match text {
            Some(text) => Piece::Json(text),
            None => Piece::Item(index),
        });
    }
    let mut edits = HeadEdits::default();
    if anthropic {
        let client_system = layout.system.clone().map(|range| &body[range]);
        if input.knowledge.stable.is_some() || input.knowledge.pinned.is_some() {
            edits.system = Some(anthropic_system(
                client_system,
                input.knowledge,
                marks.stable,
            )?);
        } else if let (Some(ttl), Some(raw)) = (marks.system, client_system) {
            edits.system = system_with_cache_control(raw, ttl)?;
        }
    }
    if let (Some(ttl), Some(range)) = (marks.tool, &layout.last_tool) {
        edits.last_tool = tool_with_cache_control(&body[range.clone()], ttl)?;
    }
    render(body, &layout, &pieces, &edits)
}
