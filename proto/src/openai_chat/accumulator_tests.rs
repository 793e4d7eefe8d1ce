//! Tests of the Chat Completions accumulator and non-streaming parser.

use super::*;
use crate::protocol::{Protocol, new_accumulator, parse_response};
use crate::wire::testgen::{arguments, decode_all_events, decode_chunked, split_text, text};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;

#[derive(Debug, Clone)]
struct Gen {
    reasoning: String,
    text: String,
    calls: Vec<(String, String, String)>,
    cuts: Vec<Index>,
    finish: &'static str,
    usage: (u64, u64, u64),
}

fn gen_reply() -> impl Strategy<Value = Gen> {
    (
        prop_oneof![Just(String::new()), text()],
        text(),
        prop::collection::vec(("call_[a-z0-9]{1,6}", "[a-z_]{1,8}", arguments()), 0..3),
        prop::collection::vec(any::<Index>(), 0..6),
        prop_oneof![Just("stop"), Just("tool_calls"), Just("length")],
        (0u64..100_000, 0u64..100_000, 0u64..100_000),
    )
        .prop_map(
            |(reasoning, text, calls, cuts, finish, (p, c, cached))| Gen {
                reasoning,
                text,
                calls,
                cuts,
                finish,
                usage: (p + cached, c, cached),
            },
        )
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let v = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-t",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]});
    SseEvent::data(v.to_string()).encode()
}

fn usage_json(g: &Gen) -> Value {
    json!({"prompt_tokens": g.usage.0, "completion_tokens": g.usage.1, "total_tokens": g.usage.0 + g.usage.1,
        "prompt_tokens_details": {"cached_tokens": g.usage.2}})
}

fn stream_text(g: &Gen) -> String {
    let mut out = chunk(json!({"role": "assistant", "content": ""}), None);
    for piece in split_text(&g.reasoning, &g.cuts) {
        out.push_str(&chunk(json!({"reasoning_content": piece}), None));
    }
    for piece in split_text(&g.text, &g.cuts) {
        out.push_str(&chunk(json!({"content": piece}), None));
    }
    for (i, (id, name, args)) in g.calls.iter().enumerate() {
        out.push_str(&chunk(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        for piece in split_text(args, &g.cuts) {
            out.push_str(&chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    out.push_str(&chunk(json!({}), Some(g.finish)));
    let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-t", "choices": [], "usage": usage_json(g)});
    out.push_str(&SseEvent::data(usage.to_string()).encode());
    out.push_str(&SseEvent::data("[DONE]").encode());
    out
}

fn body(g: &Gen) -> Value {
    let calls: Vec<Value> = g
        .calls
        .iter()
        .map(|(id, name, args)| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}}))
        .collect();
    let mut message = json!({"role": "assistant", "content": if g.text.is_empty() { Value::Null } else { json!(g.text) }});
    if !g.reasoning.is_empty() {
        message["reasoning_content"] = json!(g.reasoning);
    }
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-t",
        "choices": [{"index": 0, "message": message, "finish_reason": g.finish}], "usage": usage_json(g)})
}

proptest! {
    #[test]
    fn stream_equals_non_streaming(g in gen_reply(), chunk_cuts in prop::collection::vec(any::<Index>(), 0..8)) {
        let mut acc = new_accumulator(Protocol::OpenAiChat);
        for event in decode_chunked(&stream_text(&g), &chunk_cuts) {
            acc.push(&event);
        }
        let streamed = acc.reply();
        let non_streaming = parse_response(Protocol::OpenAiChat, body(&g).to_string().as_bytes()).unwrap();
        prop_assert_eq!(&streamed, &non_streaming);
        prop_assert_eq!(streamed.usage, Usage {
            input_tokens: g.usage.0 - g.usage.2,
            output_tokens: g.usage.1,
            cache_read_input_tokens: g.usage.2,
            cache_creation_input_tokens: 0,
        });
        let parts = streamed.message.map(|m| m.parts).unwrap_or_default();
        let calls: Vec<_> = parts.iter().filter(|p| matches!(p, Part::ToolCall { .. })).collect();
        prop_assert_eq!(calls.len(), g.calls.len());
        for (part, (id, name, args)) in calls.into_iter().zip(&g.calls) {
            prop_assert_eq!(part, &Part::ToolCall { id: id.clone(), name: name.clone(), arguments: args.clone() });
        }
    }
}

#[test]
fn partial_stream_and_mislabelled_body() {
    let g = Gen {
        reasoning: String::new(),
        text: "hello".into(),
        calls: vec![("call_1".into(), "read".into(), r#"{"a":1}"#.into())],
        cuts: vec![],
        finish: "tool_calls",
        usage: (10, 5, 0),
    };
    let text = stream_text(&g);
    let events = decode_all_events(&text);
    let mut acc = Accumulator::default();
    for e in &events[..3] {
        acc.push(e);
    }
    let partial = acc.reply();
    assert!(!partial.complete);
    assert_eq!(partial.message.unwrap().parts.len(), 2);

    let reply = parse_response(Protocol::OpenAiChat, text.as_bytes()).unwrap();
    assert!(reply.complete);
    assert!(reply.stopped_for_tool());
    assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
    assert_eq!(reply.id.as_deref(), Some("chatcmpl-1"));
}

#[test]
fn reasoning_alias_done_only_and_content_arrays() {
    let mut acc = Accumulator::default();
    acc.push(&SseEvent::data(
        json!({"choices": [{"index": 0, "delta": {"reasoning": "r"}}]}).to_string(),
    ));
    acc.push(&SseEvent::data("[DONE]"));
    let reply = acc.reply();
    assert!(reply.complete);
    assert_eq!(
        reply.message.unwrap().parts,
        vec![Part::Thinking {
            text: "r".into(),
            signature: None
        }]
    );

    let body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, "finish_reason": "stop"}]});
    let reply = parse_response(Protocol::OpenAiChat, body.to_string().as_bytes()).unwrap();
    assert!(!reply.stopped_for_tool());
    assert_eq!(
        reply.message.unwrap().parts,
        vec![Part::Text { text: "ab".into() }]
    );
}
