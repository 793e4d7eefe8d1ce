//! OpenAI Chat Completions (`POST /v1/chat/completions`, `POST /chat/completions`).
//!
//! JSON `chat.completion`, or `chat.completion.chunk` SSE (`data:` lines only): a role
//! chunk, content deltas, tool_calls deltas (id + name first, then argument fragments),
//! a finish chunk, the usage chunk (`choices: []`) when `stream_options.include_usage`,
//! then `data: [DONE]`.

use crate::script::{Ctx, Reply};
use crate::sse::{self, Frame};
use serde_json::{Value, json};

/// Text of the last user message that has any text.
pub(crate) fn last_user_text(body: &Value) -> Option<String> {
    // Chat messages have the same shape as Anthropic's here: string content or text parts.
    crate::anthropic::last_user_text(body)
}

fn completion_id(ctx: &Ctx) -> String {
    format!("chatcmpl-fake{:06}", ctx.n)
}

fn finish_reason(reply: &Reply) -> &'static str {
    if !reply.tools.is_empty() {
        "tool_calls"
    } else {
        "stop"
    }
}

fn usage(reply: &Reply, ctx: &Ctx) -> Value {
    let completion = reply.output_tokens();
    json!({
        "prompt_tokens": ctx.usage.total,
        "completion_tokens": completion,
        "total_tokens": ctx.usage.total + completion,
        "prompt_tokens_details": {"cached_tokens": ctx.usage.cache_read, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    })
}

/// Non-streaming `chat.completion` object.
pub(crate) fn json(reply: &Reply, ctx: &Ctx) -> Value {
    let content = if reply.text.is_some() {
        Value::String(reply.full_text())
    } else {
        Value::Null
    };
    let mut message = json!({
        "role": "assistant",
        "content": content,
        "refusal": null,
        "annotations": [],
    });
    if !reply.tools.is_empty() {
        message["tool_calls"] = reply
            .tools
            .iter()
            .map(|t| {
                json!({
                    "id": t.id,
                    "type": "function",
                    "function": {"name": t.name, "arguments": t.arguments_json()},
                })
            })
            .collect();
    }
    json!({
        "id": completion_id(ctx),
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(reply),
        }],
        "usage": usage(reply, ctx),
        "service_tier": "default",
        "system_fingerprint": "fp_fake",
    })
}

fn include_usage(ctx: &Ctx) -> bool {
    ctx.request
        .pointer("/stream_options/include_usage")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn chunk(ctx: &Ctx, delta: Value, finish: Option<&str>, text_delta: bool) -> Frame {
    let mut v = json!({
        "id": completion_id(ctx),
        "object": "chat.completion.chunk",
        "created": ctx.created,
        "model": ctx.model,
        "service_tier": "default",
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    });
    if include_usage(ctx) {
        v["usage"] = Value::Null;
    }
    sse::data(&v, text_delta)
}

/// SSE frames of a streamed completion.
pub(crate) fn events(reply: &Reply, ctx: &Ctx) -> Vec<Frame> {
    let mut out = vec![chunk(
        ctx,
        json!({"role": "assistant", "content": "", "refusal": null}),
        None,
        false,
    )];
    if let Some(chunks) = &reply.text {
        out.extend(
            chunks
                .iter()
                .map(|c| chunk(ctx, json!({"content": c}), None, true)),
        );
    }
    for (index, t) in reply.tools.iter().enumerate() {
        out.push(chunk(
            ctx,
            json!({"tool_calls": [{
                "index": index,
                "id": t.id,
                "type": "function",
                "function": {"name": t.name, "arguments": ""},
            }]}),
            None,
            false,
        ));
        out.extend(t.fragments.iter().map(|f| {
            chunk(
                ctx,
                json!({"tool_calls": [{"index": index, "function": {"arguments": f}}]}),
                None,
                false,
            )
        }));
    }
    out.push(chunk(ctx, json!({}), Some(finish_reason(reply)), false));
    if include_usage(ctx) {
        out.push(sse::data(
            &json!({
                "id": completion_id(ctx),
                "object": "chat.completion.chunk",
                "created": ctx.created,
                "model": ctx.model,
                "service_tier": "default",
                "system_fingerprint": "fp_fake",
                "choices": [],
                "usage": usage(reply, ctx),
            }),
            false,
        ));
    }
    out.push(sse::done());
    out
}

/// `GET /v1/models` in OpenAI shape.
pub(crate) fn models() -> Value {
    let data = ["gpt-5", "gpt-5-codex", "gpt-4.1", "gpt-4o-mini"]
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 1_700_000_000, "owned_by": "openai"}))
        .collect::<Vec<_>>();
    json!({"object": "list", "data": data})
}
