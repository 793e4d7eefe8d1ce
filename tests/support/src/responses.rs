//! OpenAI Responses API (`POST /v1/responses`, `POST /backend-api/codex/responses`).
//!
//! JSON `response` object, or SSE events (`event: <type>` + `data:` whose `type` matches
//! and which carries a monotonically increasing `sequence_number`):
//! `response.created`, `response.in_progress`, then per output item
//! `response.output_item.added`, (`response.content_part.added`,
//! `response.output_text.delta`*, `response.output_text.done`, `response.content_part.done`
//! | `response.function_call_arguments.delta`*, `response.function_call_arguments.done`),
//! `response.output_item.done`, and finally `response.completed` with usage.

use crate::script::{Ctx, Reply};
use crate::sse::{self, Frame};
use serde_json::{Value, json};

/// Text of the last user input item (or the `input` string).
pub(crate) fn last_user_text(body: &Value) -> Option<String> {
    match body.get("input")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => items
            .iter()
            .rev()
            .filter(|i| i.get("role").and_then(Value::as_str) == Some("user"))
            .find_map(|i| match i.get("content")? {
                Value::String(s) => Some(s.clone()),
                Value::Array(parts) => parts
                    .iter()
                    .rev()
                    .filter(|p| {
                        matches!(
                            p.get("type").and_then(Value::as_str),
                            Some("input_text" | "text")
                        )
                    })
                    .find_map(|p| p.get("text").and_then(Value::as_str).map(str::to_string)),
                _ => None,
            }),
        _ => None,
    }
}

fn response_id(ctx: &Ctx) -> String {
    format!("resp_fake{:06}", ctx.n)
}

fn message_item_id(ctx: &Ctx) -> String {
    format!("msg_fake{:06}", ctx.n)
}

fn function_item_id(ctx: &Ctx, call: usize) -> String {
    if call == 0 {
        format!("fc_fake{:06}", ctx.n)
    } else {
        format!("fc_fake{:06}_{call}", ctx.n)
    }
}

fn reasoning_item_id(ctx: &Ctx) -> String {
    format!("rs_fake{:06}", ctx.n)
}

fn usage(reply: &Reply, ctx: &Ctx) -> Value {
    let output = reply.output_tokens();
    let reasoning = reply
        .thinking
        .as_ref()
        .map(|t| (t.text().chars().count() as u64).div_ceil(4))
        .unwrap_or(0);
    json!({
        "input_tokens": ctx.usage.total,
        "input_tokens_details": {"cached_tokens": ctx.usage.cache_read, "cache_write_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": ctx.usage.total + output,
    })
}

fn output_text_part(text: &str) -> Value {
    json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text})
}

/// The completed output items, in order.
fn output_items(reply: &Reply, ctx: &Ctx) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(t) = &reply.thinking {
        out.push(json!({
            "id": reasoning_item_id(ctx),
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": t.text()}],
            "encrypted_content": t.signature,
        }));
    }
    if reply.text.is_some() {
        out.push(json!({
            "id": message_item_id(ctx),
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [output_text_part(&reply.full_text())],
        }));
    }
    for (call, t) in reply.tools.iter().enumerate() {
        out.push(json!({
            "id": function_item_id(ctx, call),
            "type": "function_call",
            "status": "completed",
            "arguments": t.arguments_json(),
            "call_id": t.id,
            "name": t.name,
        }));
    }
    out
}

fn response_object(ctx: &Ctx, status: &str, output: Vec<Value>, usage: Value) -> Value {
    let req = &ctx.request;
    let field = |name: &str, default: Value| req.get(name).cloned().unwrap_or(default);
    json!({
        "id": response_id(ctx),
        "object": "response",
        "created_at": ctx.created,
        "status": status,
        "background": false,
        "error": null,
        "incomplete_details": null,
        "instructions": field("instructions", Value::Null),
        "max_output_tokens": field("max_output_tokens", Value::Null),
        "model": ctx.model,
        "output": output,
        "parallel_tool_calls": field("parallel_tool_calls", Value::Bool(true)),
        "previous_response_id": field("previous_response_id", Value::Null),
        "reasoning": {"effort": null, "summary": null},
        "store": field("store", Value::Bool(false)),
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": field("tool_choice", json!("auto")),
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": null,
        "metadata": {},
    })
}

/// Non-streaming `response` object.
pub(crate) fn json(reply: &Reply, ctx: &Ctx) -> Value {
    response_object(
        ctx,
        "completed",
        output_items(reply, ctx),
        usage(reply, ctx),
    )
}

/// Builds events with consecutive sequence numbers.
struct Seq {
    next: u64,
    frames: Vec<Frame>,
}

impl Seq {
    fn push(&mut self, kind: &str, mut data: Value, text_delta: bool) {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(self.next);
        self.next += 1;
        // Put `type` first for readability; field order does not matter to clients.
        let mut ordered = serde_json::Map::new();
        ordered.insert("type".into(), json!(kind));
        if let Value::Object(map) = data {
            for (k, v) in map {
                if k != "type" {
                    ordered.insert(k, v);
                }
            }
        }
        self.frames
            .push(sse::named(kind, &Value::Object(ordered), text_delta));
    }
}

/// SSE events of a streamed response.
pub(crate) fn events(reply: &Reply, ctx: &Ctx) -> Vec<Frame> {
    let mut s = Seq {
        next: 0,
        frames: Vec::new(),
    };
    let pending = response_object(ctx, "in_progress", Vec::new(), Value::Null);
    s.push("response.created", json!({"response": pending}), false);
    s.push("response.in_progress", json!({"response": pending}), false);
    let done_items = output_items(reply, ctx);
    let mut index = 0usize;
    if reply.thinking.is_some() {
        let added = json!({"id": reasoning_item_id(ctx), "type": "reasoning", "summary": []});
        s.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
            false,
        );
        s.push(
            "response.output_item.done",
            json!({"output_index": index, "item": done_items[index]}),
            false,
        );
        index += 1;
    }
    if let Some(chunks) = &reply.text {
        let item_id = message_item_id(ctx);
        let added = json!({
            "id": item_id, "type": "message", "status": "in_progress", "role": "assistant", "content": [],
        });
        s.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
            false,
        );
        let at = json!({"item_id": item_id, "output_index": index, "content_index": 0});
        let with = |extra: Value| {
            let mut v = at.clone();
            if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
                m.extend(e);
            }
            v
        };
        s.push(
            "response.content_part.added",
            with(json!({"part": output_text_part("")})),
            false,
        );
        for c in chunks {
            s.push(
                "response.output_text.delta",
                with(json!({"delta": c, "logprobs": []})),
                true,
            );
        }
        let text = reply.full_text();
        s.push(
            "response.output_text.done",
            with(json!({"text": text, "logprobs": []})),
            false,
        );
        s.push(
            "response.content_part.done",
            with(json!({"part": output_text_part(&text)})),
            false,
        );
        s.push(
            "response.output_item.done",
            json!({"output_index": index, "item": done_items[index]}),
            false,
        );
        index += 1;
    }
    for (call, t) in reply.tools.iter().enumerate() {
        let item_id = function_item_id(ctx, call);
        let added = json!({
            "id": item_id, "type": "function_call", "status": "in_progress",
            "arguments": "", "call_id": t.id, "name": t.name,
        });
        s.push(
            "response.output_item.added",
            json!({"output_index": index, "item": added}),
            false,
        );
        for f in &t.fragments {
            s.push(
                "response.function_call_arguments.delta",
                json!({"item_id": item_id, "output_index": index, "delta": f}),
                false,
            );
        }
        s.push(
            "response.function_call_arguments.done",
            json!({"item_id": item_id, "output_index": index, "name": t.name, "arguments": t.arguments_json()}),
            false,
        );
        s.push(
            "response.output_item.done",
            json!({"output_index": index, "item": done_items[index]}),
            false,
        );
        index += 1;
    }
    s.push(
        "response.completed",
        json!({"response": json(reply, ctx)}),
        false,
    );
    s.frames
}
