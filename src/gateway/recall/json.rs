//! A JSON (non-streaming) reply with the recall tool: recall calls become markers, and when the
//! model called only recall the gateway asks again and merges the replies into one (content
//! joined, usage summed, the last stop reason), marked with `x-lore-recall-invoked: true`.

use actix_web::HttpResponse;
use actix_web::HttpResponseBuilder;
use awc::ClientResponse;
use bytes::Bytes;
use lore_actors::TurnCompleted;
use lore_proto::recall_tool::{
    RECALL_TOOL_NAME, RecallArguments, chat_marker, marker_key, marker_text, new_key,
};
use lore_proto::{Protocol, parse_response};
use lore_storage::now_ms;
use serde_json::{Map, Value, json};
use tracing::warn;

use super::{LegCall, MAX_RECALL_DEPTH, Prefix, RecallRun, add_usage};
use crate::gateway::turn::Turn;

/// Largest reply read into memory.
const MAX_REPLY_BYTES: usize = 256 * 1024 * 1024;

/// Answers the client with the merged reply.
pub(crate) async fn respond(
    mut run: RecallRun,
    mut upstream: ClientResponse,
    turn: Option<Turn>,
    mut response: HttpResponseBuilder,
    usage_cap: Option<u64>,
) -> HttpResponse {
    let protocol = run.protocol;
    let mut completion = turn.map(|turn| turn.completion);
    let mut last = completion.clone();
    let mut merged: Option<Value> = None;
    let mut invoked = false;
    let mut depth = 0;
    loop {
        let body = match upstream.body().limit(MAX_REPLY_BYTES).await {
            Ok(body) => body,
            Err(err) => {
                warn!(error = %err, "recall leg could not be read");
                break;
            }
        };
        if let Some(completion) = completion.take()
            && let Ok(reply) = parse_response(protocol, &body)
        {
            completion.session.do_send(TurnCompleted {
                turn: completion.turn,
                reply,
                plan_used: true,
            });
        }
        let Ok(mut reply) = serde_json::from_slice::<Value>(&body) else {
            if merged.is_none() {
                return response.body(body);
            }
            break;
        };
        let leg = read_leg(protocol, &mut reply);
        let merged_reply = match merged.take() {
            None => reply,
            Some(before) => merge(protocol, before, reply),
        };
        merged = Some(merged_reply);
        if leg.calls.is_empty() {
            break;
        }
        invoked = true;
        let continuing = leg.recall_only && depth < MAX_RECALL_DEPTH;
        let records = run.answer(&leg.calls, continuing).await;
        if !continuing {
            break;
        }
        match run.follow_up(leg.prefix, &records, last.as_ref()).await {
            Ok((next, turn)) => {
                upstream = next;
                completion = turn;
                last = completion.clone();
                depth += 1;
            }
            Err(err) => {
                warn!(error = %err, "recall follow-up failed; answering with the marker");
                break;
            }
        }
    }
    let Some(mut merged) = merged else {
        return response.finish();
    };
    settle_stop(protocol, &mut merged);
    if invoked {
        response.insert_header(("x-lore-recall-invoked", "true"));
    }
    response.insert_header(("content-type", "application/json"));
    let body = merged.to_string().into_bytes();
    let body = match usage_cap {
        Some(cap) => lore_proto::rebuild::usage::scaled_reply(protocol, &body, cap).unwrap_or(body),
        None => body,
    };
    response.body(Bytes::from(body))
}

/// What one reply held: its recall calls (already swapped for markers) and the follow-up prefix.
struct JsonLeg {
    calls: Vec<LegCall>,
    recall_only: bool,
    prefix: Prefix,
}

fn read_leg(protocol: Protocol, reply: &mut Value) -> JsonLeg {
    let now = now_ms();
    let mut calls = Vec::new();
    let mut other_tools = false;
    let mut make_call = |call_id: &str, input: &Value| {
        let input = match input {
            Value::String(text) => {
                serde_json::from_str::<Value>(text).unwrap_or_else(|_| json!({}))
            }
            other => other.clone(),
        }
        .to_string();
        let key = new_key(call_id, now);
        let marker = marker_text(&key, &RecallArguments::parse(&input));
        let call = LegCall {
            key,
            call_id: call_id.to_string(),
            input,
            marker: marker.clone(),
        };
        calls.push(call);
        marker
    };
    match protocol {
        Protocol::Anthropic => {
            let stop = reply.get("stop_reason").and_then(Value::as_str) == Some("tool_use");
            let mut prefix = Vec::new();
            if let Some(blocks) = reply.get_mut("content").and_then(Value::as_array_mut) {
                for block in blocks.iter_mut() {
                    match block.get("type").and_then(Value::as_str) {
                        Some("tool_use")
                            if block.get("name").and_then(Value::as_str)
                                == Some(RECALL_TOOL_NAME) =>
                        {
                            let id = block
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string();
                            let input = block.get("input").cloned().unwrap_or(Value::Null);
                            let marker = make_call(&id, &input);
                            *block = json!({"type": "text", "text": marker});
                        }
                        Some("tool_use" | "server_tool_use") => other_tools = true,
                        _ => prefix.push(block.clone()),
                    }
                }
            }
            JsonLeg {
                recall_only: stop && !other_tools && !calls.is_empty(),
                calls,
                prefix: Prefix::Blocks(prefix),
            }
        }
        Protocol::OpenAiResponses => {
            let completed = reply.get("status").and_then(Value::as_str) == Some("completed");
            let mut prefix = Vec::new();
            if let Some(items) = reply.get_mut("output").and_then(Value::as_array_mut) {
                for item in items.iter_mut() {
                    let is_call = item.get("type").and_then(Value::as_str) == Some("function_call");
                    if is_call && item.get("name").and_then(Value::as_str) == Some(RECALL_TOOL_NAME)
                    {
                        let id = item
                            .get("call_id")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        let input = item.get("arguments").cloned().unwrap_or(Value::Null);
                        let marker = make_call(&id, &input);
                        let key = marker_key(&marker)
                            .unwrap_or("r:0")
                            .trim_start_matches("r:")
                            .to_string();
                        *item = json!({
                            "id": format!("msg_lore_{key}"),
                            "type": "message",
                            "status": "completed",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": marker, "annotations": []}],
                        });
                    } else if is_call {
                        other_tools = true;
                    } else {
                        prefix.push(item.clone());
                    }
                }
            }
            JsonLeg {
                recall_only: completed && !other_tools && !calls.is_empty(),
                calls,
                prefix: Prefix::Items(prefix),
            }
        }
        Protocol::OpenAiChat => {
            let finish = reply
                .pointer("/choices/0/finish_reason")
                .and_then(Value::as_str)
                == Some("tool_calls");
            let Some(message) = reply
                .pointer_mut("/choices/0/message")
                .and_then(Value::as_object_mut)
            else {
                return JsonLeg {
                    calls,
                    recall_only: false,
                    prefix: Prefix::Text(String::new()),
                };
            };
            let prefix = message
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let mut markers = String::new();
            if let Some(Value::Array(tool_calls)) = message.remove("tool_calls") {
                let mut kept = Vec::new();
                for call in tool_calls {
                    if call.pointer("/function/name").and_then(Value::as_str)
                        == Some(RECALL_TOOL_NAME)
                    {
                        let id = call.get("id").and_then(Value::as_str).unwrap_or("");
                        let input = call
                            .pointer("/function/arguments")
                            .cloned()
                            .unwrap_or(Value::Null);
                        markers.push_str(&chat_marker(&make_call(id, &input)));
                    } else {
                        kept.push(call);
                    }
                }
                other_tools = !kept.is_empty();
                if other_tools {
                    message.insert("tool_calls".into(), Value::Array(kept));
                }
            }
            if !markers.is_empty() {
                message.insert(
                    "content".into(),
                    Value::String(format!("{prefix}{markers}")),
                );
            }
            JsonLeg {
                recall_only: finish && !other_tools && !calls.is_empty(),
                calls,
                prefix: Prefix::Text(prefix),
            }
        }
    }
}

/// `before` continued by `after`: content joined, usage summed, the rest from `after`.
fn merge(protocol: Protocol, mut before: Value, after: Value) -> Value {
    let usage = sum_usage(before.get("usage"), after.get("usage"));
    match protocol {
        Protocol::Anthropic => {
            let more = after
                .get("content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(blocks) = before.get_mut("content").and_then(Value::as_array_mut) {
                blocks.extend(more);
            }
            for key in ["stop_reason", "stop_sequence"] {
                if let Some(value) = after.get(key) {
                    before[key] = value.clone();
                }
            }
        }
        Protocol::OpenAiResponses => {
            let more = after
                .get("output")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(items) = before.get_mut("output").and_then(Value::as_array_mut) {
                items.extend(more);
            }
            for key in ["status", "incomplete_details", "error"] {
                if let Some(value) = after.get(key) {
                    before[key] = value.clone();
                }
            }
        }
        Protocol::OpenAiChat => {
            let text = after
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let calls = after.pointer("/choices/0/message/tool_calls").cloned();
            let finish = after.pointer("/choices/0/finish_reason").cloned();
            if let Some(message) = before
                .pointer_mut("/choices/0/message")
                .and_then(Value::as_object_mut)
            {
                let joined = format!(
                    "{}{text}",
                    message.get("content").and_then(Value::as_str).unwrap_or("")
                );
                message.insert("content".into(), Value::String(joined));
                match calls {
                    Some(calls) => message.insert("tool_calls".into(), calls),
                    None => message.remove("tool_calls"),
                };
            }
            if let (Some(finish), Some(slot)) =
                (finish, before.pointer_mut("/choices/0/finish_reason"))
            {
                *slot = finish;
            }
        }
    }
    if let Some(usage) = usage {
        before["usage"] = Value::Object(usage);
    }
    before
}

fn sum_usage(before: Option<&Value>, after: Option<&Value>) -> Option<Map<String, Value>> {
    let mut total = before?.as_object()?.clone();
    add_usage(&mut total, after?.as_object()?);
    Some(total)
}

/// A tool stop with no tool left for the client becomes an ordinary stop.
fn settle_stop(protocol: Protocol, reply: &mut Value) {
    match protocol {
        Protocol::Anthropic => {
            let has_tools = reply
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(|blocks| {
                    blocks
                        .iter()
                        .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                });
            if !has_tools && reply.get("stop_reason").and_then(Value::as_str) == Some("tool_use") {
                reply["stop_reason"] = json!("end_turn");
            }
        }
        Protocol::OpenAiResponses => {}
        Protocol::OpenAiChat => {
            let has_tools = reply.pointer("/choices/0/message/tool_calls").is_some();
            if let Some(finish) = reply.pointer_mut("/choices/0/finish_reason")
                && finish == "tool_calls"
                && !has_tools
            {
                *finish = json!("stop");
            }
        }
    }
}
