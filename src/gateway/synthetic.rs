//! Replies the gateway writes itself (a `/lore:` command's answer, a compaction summary), in the
//! client's protocol: a JSON body, or the events of a stream with the same content, so the
//! client's SDK reads them as it reads the provider's.

use bytes::Bytes;
use lore_proto::Protocol;
use serde_json::{Value, json};

/// The JSON body of a complete reply carrying `text`.
pub fn json_body(protocol: Protocol, model: &str, text: &str) -> Value {
    let id = reply_id();
    match protocol {
        Protocol::Anthropic => json!({
            "id": format!("msg_lore_{id}"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": null,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }),
        Protocol::OpenAiChat => json!({
            "id": format!("chatcmpl-lore-{id}"),
            "object": "chat.completion",
            "created": now_s(),
            "model": model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }),
        Protocol::OpenAiResponses => responses_object(&id, model, text, "completed"),
    }
}

/// The stream events of a complete reply carrying `text`, each one SSE event.
pub fn stream_events(protocol: Protocol, model: &str, text: &str) -> Vec<Bytes> {
    let id = reply_id();
    match protocol {
        Protocol::Anthropic => {
            let message_id = format!("msg_lore_{id}");
            vec![
                event(
                    "message_start",
                    &json!({"type": "message_start", "message": {
                    "id": message_id, "type": "message", "role": "assistant", "model": model,
                    "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 0, "output_tokens": 0}}}),
                ),
                event(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "text", "text": ""}}),
                ),
                event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": text}}),
                ),
                event(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": 0}),
                ),
                event(
                    "message_delta",
                    &json!({"type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                    "usage": {"output_tokens": 0}}),
                ),
                event("message_stop", &json!({"type": "message_stop"})),
            ]
        }
        Protocol::OpenAiChat => {
            let chunk = |delta: Value, finish: Value| {
                json!({"id": format!("chatcmpl-lore-{id}"), "object": "chat.completion.chunk",
                    "created": now_s(), "model": model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            };
            vec![
                data(&chunk(
                    json!({"role": "assistant", "content": text}),
                    Value::Null,
                )),
                data(&chunk(json!({}), json!("stop"))),
                Bytes::from_static(b"data: [DONE]\n\n"),
            ]
        }
        Protocol::OpenAiResponses => {
            let created = responses_object(&id, model, "", "in_progress");
            let done = responses_object(&id, model, text, "completed");
            let item = done["output"][0].clone();
            let item_id = item["id"].clone();
            let mut started = item.clone();
            started["status"] = json!("in_progress");
            started["content"] = json!([]);
            vec![
                event(
                    "response.created",
                    &json!({"type": "response.created", "sequence_number": 0, "response": created}),
                ),
                event(
                    "response.output_item.added",
                    &json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0, "item": started}),
                ),
                event(
                    "response.content_part.added",
                    &json!({"type": "response.content_part.added", "sequence_number": 2, "item_id": item_id, "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
                ),
                event(
                    "response.output_text.delta",
                    &json!({"type": "response.output_text.delta", "sequence_number": 3, "item_id": item_id, "output_index": 0, "content_index": 0, "delta": text}),
                ),
                event(
                    "response.output_text.done",
                    &json!({"type": "response.output_text.done", "sequence_number": 4, "item_id": item_id, "output_index": 0, "content_index": 0, "text": text}),
                ),
                event(
                    "response.content_part.done",
                    &json!({"type": "response.content_part.done", "sequence_number": 5, "item_id": item_id, "output_index": 0, "content_index": 0, "part": {"type": "output_text", "text": text, "annotations": []}}),
                ),
                event(
                    "response.output_item.done",
                    &json!({"type": "response.output_item.done", "sequence_number": 6, "output_index": 0, "item": item}),
                ),
                event(
                    "response.completed",
                    &json!({"type": "response.completed", "sequence_number": 7, "response": done}),
                ),
            ]
        }
    }
}

/// A keepalive between events: Anthropic's `ping` event, an SSE comment for OpenAI clients.
pub fn ping(protocol: Protocol) -> Bytes {
    match protocol {
        Protocol::Anthropic => event("ping", &json!({"type": "ping"})),
        Protocol::OpenAiChat | Protocol::OpenAiResponses => Bytes::from_static(b": ping\n\n"),
    }
}

/// A Responses `response` object with one assistant message (empty `output` without text).
pub fn responses_object(id: &str, model: &str, text: &str, status: &str) -> Value {
    let output = if text.is_empty() && status != "completed" {
        json!([])
    } else {
        json!([{
            "type": "message",
            "id": format!("msg_lore_{id}"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }])
    };
    json!({
        "id": format!("resp_lore_{id}"),
        "object": "response",
        "created_at": now_s(),
        "status": status,
        "model": model,
        "output": output,
        "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0}},
    })
}

fn event(name: &str, value: &Value) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {value}\n\n"))
}

fn data(value: &Value) -> Bytes {
    Bytes::from(format!("data: {value}\n\n"))
}

fn reply_id() -> String {
    lore_storage::store::new_session_id()
}

fn now_s() -> u64 {
    lore_storage::now_ms() / 1000
}

#[cfg(test)]
mod tests {
    use super::*;
    use lore_proto::parse_response;

    #[test]
    fn every_protocol_reads_its_own_synthetic_reply() {
        for protocol in [
            Protocol::Anthropic,
            Protocol::OpenAiChat,
            Protocol::OpenAiResponses,
        ] {
            let body = json_body(protocol, "m", "hello from lore").to_string();
            let reply = parse_response(protocol, body.as_bytes()).unwrap();
            assert_eq!(
                reply.message.unwrap().text(),
                "hello from lore",
                "{protocol:?}"
            );
            let stream: Vec<u8> = stream_events(protocol, "m", "hello from lore").concat();
            let reply = parse_response(protocol, &stream).unwrap();
            assert_eq!(
                reply.message.unwrap().text(),
                "hello from lore",
                "{protocol:?} stream"
            );
        }
    }
}
