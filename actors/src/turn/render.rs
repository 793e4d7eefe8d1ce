//! A plan turned into the bytes to send: the client's system items first, then the distilled
//! prefix, then the raw window — each client element verbatim unless an output in it is
//! replaced or (Anthropic) it carries the client's cache breakpoints, which the gateway then
//! places itself: at most four with the client's own in `system` and `tools`, on the system
//! prompt and the last tool (1 hour), the end of the prefix (1 hour) and the last message (the
//! conversation's lifetime); every lifetime is five minutes on hosts other than Anthropic's.

use std::collections::{HashMap, HashSet};

use lore_proto::rebuild::items::{
    Ttl, cache_control_count, mentions_cache_control, prefix_items, system_with_cache_control,
    tool_with_cache_control, with_cache_control, with_outputs_replaced, without_cache_control,
};
use lore_proto::rebuild::{BodyLayout, HeadEdits, Piece, render};
use lore_proto::{ProtoError, Protocol};

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
}

/// The breakpoints ours may add, given what the client put in `system` and `tools`.
struct Breakpoints {
    system: Option<Ttl>,
    tool: Option<Ttl>,
    prefix: Option<Ttl>,
    last: Option<Ttl>,
}

fn breakpoints(input: &RenderInput<'_>, layout: &BodyLayout, has_prefix: bool) -> Breakpoints {
    let none = Breakpoints {
        system: None,
        tool: None,
        prefix: None,
        last: None,
    };
    if input.protocol != Protocol::Anthropic {
        return none;
    }
    let slice = |range: &Option<std::ops::Range<usize>>| {
        range.clone().map_or(&[][..], |range| &input.body[range])
    };
    let system = slice(&layout.system);
    let tools = slice(&layout.tools);
    let client = cache_control_count(system) + cache_control_count(tools);
    // A client breakpoint of five minutes before ours forbids longer ones after it.
    let client_short = client
        > [system, tools]
            .iter()
            .map(|raw| String::from_utf8_lossy(raw).matches("\"1h\"").count())
            .sum::<usize>();
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
    let last = take(true).then_some(conversation);
    let prefix = take(has_prefix).then_some(long);
    let system_free = !system.is_empty() && cache_control_count(system) == 0;
    let system_bp = take(system_free).then_some(long);
    let tool_free = layout.last_tool.is_some() && cache_control_count(tools) == 0;
    let tool = take(tool_free).then_some(long);
    Breakpoints {
        system: system_bp,
        tool,
        prefix,
        last,
    }
}

/// The body to send for `input.plan` (layer 1 or more).
pub fn render_plan(input: &RenderInput<'_>) -> Result<Vec<u8>, ProtoError> {
    let body = input.body;
    let layout = BodyLayout::read(input.protocol, body)?;
    let plan = input.plan;
    let unit_items: HashSet<u32> = input.spans.iter().flatten().copied().collect();
    let first_kept = input
        .spans
        .get(plan.start)
        .and_then(|span| span.first().copied())
        .ok_or_else(|| ProtoError::InvalidShape("the raw window starts nowhere".into()))?
        as usize;
    let has_prefix = !plan.prefix.is_empty();
    let marks = breakpoints(input, &layout, has_prefix);
    let total = layout.items.len();
    let mut pieces = Vec::with_capacity(total - first_kept + 4);
    // The client's system and developer items stay first, in order.
    for index in 0..first_kept {
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
    let anthropic = input.protocol == Protocol::Anthropic;
    for index in first_kept..total {
        let raw = &body[layout.items[index].clone()];
        let is_last = index + 1 == total;
        let mut text: Option<String> = None;
        if unit_items.contains(&(index as u32)) && !input.annotations.is_empty() {
            text = with_outputs_replaced(input.protocol, raw, input.annotations)?;
        }
        if anthropic && mentions_cache_control(text.as_deref().map_or(raw, str::as_bytes)) {
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
    if let (Some(ttl), Some(range)) = (marks.system, &layout.system) {
        edits.system = system_with_cache_control(&body[range.clone()], ttl)?;
    }
    if let (Some(ttl), Some(range)) = (marks.tool, &layout.last_tool) {
        edits.last_tool = tool_with_cache_control(&body[range.clone()], ttl)?;
    }
    render(body, &layout, &pieces, &edits)
}
