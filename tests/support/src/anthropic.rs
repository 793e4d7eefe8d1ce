//! Anthropic Messages API (`POST /v1/messages`): JSON message and SSE event stream.
//!
//! Stream shape: `message_start` (usage with cache fields), then per content block
//! `content_block_start` / `content_block_delta`* / `content_block_stop` (a `ping` after
//! the first block start), `message_delta` (stop_reason + usage), `message_stop`.

use crate::script::{Ctx, Reply};
use crate::sse::{self, Frame};
use serde_json::{Value, json};

/// Text of the last user message that has any text (its last text block).
pub(crate) fn last_user_text(body: &Value) -> Option<String> {
    let messages = body.get("messages")?.as_array()?;
    messages
        .iter()
        .rev()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .find_map(|m| match m.get("content")? {
            Value::String(s) => Some(s.clone()),
            Value::Array(blocks) => blocks
                .iter()
                .rev()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .find_map(|b| b.get("text").and_then(Value::as_str).map(str::to_string)),
            _ => None,
        })
}

fn message_id(ctx: &Ctx) -> String {
    format!("msg_fake_{:06}", ctx.n)
}

fn stop_reason(reply: &Reply) -> &'static str {
    if !reply.tools.is_empty() {
        "tool_use"
    } else {
        "end_turn"
    }
}

fn usage(ctx: &Ctx, output_tokens: u64) -> Value {
    json!({
        "input_tokens": ctx.usage.input_tokens,
        "cache_creation_input_tokens": ctx.usage.cache_creation,
        "cache_read_input_tokens": ctx.usage.cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": ctx.usage.cache_creation - ctx.usage.cache_creation_1h,
            "ephemeral_1h_input_tokens": ctx.usage.cache_creation_1h,
        },
        "output_tokens": output_tokens,
        "service_tier": "standard",
    })
}

/// Content blocks of the complete message.
fn content(reply: &Reply) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(t) = &reply.thinking {
        out.push(json!({"type": "thinking", "thinking": t.text(), "signature": t.signature}));
    }
    if reply.text.is_some() {
        out.push(json!({"type": "text", "text": reply.full_text()}));
    }
    for t in &reply.tools {
        out.push(json!({"type": "tool_use", "id": t.id, "name": t.name, "input": t.arguments}));
    }
    out
}

/// Non-streaming `message` object.
pub(crate) fn json(reply: &Reply, ctx: &Ctx) -> Value {
    json!({
        "id": message_id(ctx),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content(reply),
        "stop_reason": stop_reason(reply),
        "stop_sequence": null,
        "usage": usage(ctx, reply.output_tokens()),
    })
}

fn delta(index: usize, delta: Value, text_delta: bool) -> Frame {
    sse::named(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
        text_delta,
    )
}

/// SSE events of a streamed message.
pub(crate) fn events(reply: &Reply, ctx: &Ctx) -> Vec<Frame> {
    let mut out = vec![sse::named(
        "message_start",
        &json!({
            "type": "message_start",
            "message": {
                "id": message_id(ctx),
                "type": "message",
                "role": "assistant",
                "model": ctx.model,
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": usage(ctx, 1),
            }
        }),
        false,
    )];
    // (start block, deltas) per content block.
    let mut blocks: Vec<(Value, Vec<Frame>)> = Vec::new();
    if let Some(t) = &reply.thinking {
        let i = blocks.len();
        let mut deltas: Vec<Frame> = t
            .chunks
            .iter()
            .map(|c| delta(i, json!({"type": "thinking_delta", "thinking": c}), false))
            .collect();
        deltas.push(delta(
            i,
            json!({"type": "signature_delta", "signature": t.signature}),
            false,
        ));
        blocks.push((
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        ));
    }
    if let Some(chunks) = &reply.text {
        let i = blocks.len();
        let deltas = chunks
            .iter()
            .map(|c| delta(i, json!({"type": "text_delta", "text": c}), true))
            .collect();
        blocks.push((json!({"type": "text", "text": ""}), deltas));
    }
    for t in &reply.tools {
        let i = blocks.len();
        let deltas = t
            .fragments
            .iter()
            .map(|f| {
                delta(
                    i,
                    json!({"type": "input_json_delta", "partial_json": f}),
                    false,
                )
            })
            .collect();
        blocks.push((
            json!({"type": "tool_use", "id": t.id, "name": t.name, "input": {}}),
            deltas,
        ));
    }
    if blocks.is_empty() {
        out.push(sse::named("ping", &json!({"type": "ping"}), false));
    }
    for (index, (start, deltas)) in blocks.into_iter().enumerate() {
        out.push(sse::named(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
            false,
        ));
        if index == 0 {
            out.push(sse::named("ping", &json!({"type": "ping"}), false));
        }
        out.extend(deltas);
        out.push(sse::named(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
            false,
        ));
    }
    out.push(sse::named(
        "message_delta",
        &json!({
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
            "usage": {
                "input_tokens": ctx.usage.input_tokens,
                "cache_creation_input_tokens": ctx.usage.cache_creation,
                "cache_read_input_tokens": ctx.usage.cache_read,
                "output_tokens": reply.output_tokens(),
            },
        }),
        false,
    ));
    out.push(sse::named(
        "message_stop",
        &json!({"type": "message_stop"}),
        false,
    ));
    out
}

/// `GET /v1/models` in Anthropic shape.
pub(crate) fn models() -> Value {
    let data = [
        ("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5"),
        ("claude-opus-4-1-20250805", "Claude Opus 4.1"),
        ("claude-haiku-4-5-20251001", "Claude Haiku 4.5"),
    ]
    .iter()
    .map(|(id, name)| {
        json!({"type": "model", "id": id, "display_name": name, "created_at": "2025-09-29T00:00:00Z"})
    })
    .collect::<Vec<_>>();
    json!({
        "data": data,
        "has_more": false,
        "first_id": "claude-sonnet-4-5-20250929",
        "last_id": "claude-haiku-4-5-20251001",
    })
}
