//! Tests of the Anthropic accumulator and non-streaming parser.

use super::*;
use crate::protocol::{Protocol, new_accumulator, parse_response};
use crate::wire::testgen::{arguments, decode_all_events, decode_chunked, split_text, text};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;

#[derive(Debug, Clone)]
enum Gen {
    Text(String, Vec<Index>),
    Thinking(String, String, Vec<Index>),
    Tool(String, String, String, Vec<Index>),
    Redacted(String),
}

fn gen_part() -> impl Strategy<Value = Gen> {
    let cuts = || prop::collection::vec(any::<Index>(), 0..5);
    prop_oneof![
        (text(), cuts()).prop_map(|(t, c)| Gen::Text(t, c)),
        (text(), "[a-zA-Z0-9]{0,6}", cuts()).prop_map(|(t, s, c)| Gen::Thinking(t, s, c)),
        ("toolu_[a-z0-9]{1,6}", "[a-z_]{1,8}", arguments(), cuts())
            .prop_map(|(i, n, a, c)| Gen::Tool(i, n, a, c)),
        "[a-zA-Z0-9]{1,8}".prop_map(Gen::Redacted),
    ]
}

fn sse(kind: &str, data: Value) -> String {
    SseEvent::new(kind, data.to_string()).encode()
}

fn stream_text(parts: &[Gen], stop: &str, usage: [u64; 4]) -> String {
    let mut out = sse(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-t", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage[0], "output_tokens": 1, "cache_read_input_tokens": usage[2], "cache_creation_input_tokens": usage[3]}}}),
    );
    out.push_str(&sse("ping", json!({"type": "ping"})));
    for (index, part) in parts.iter().enumerate() {
        let (start, deltas): (Value, Vec<Value>) = match part {
            Gen::Text(t, cuts) => (
                json!({"type": "text", "text": ""}),
                split_text(t, cuts)
                    .into_iter()
                    .map(|p| json!({"type": "text_delta", "text": p}))
                    .collect(),
            ),
            Gen::Thinking(t, sig, cuts) => {
                let mut d: Vec<Value> = split_text(t, cuts)
                    .into_iter()
                    .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                    .collect();
                d.push(json!({"type": "signature_delta", "signature": sig}));
                (json!({"type": "thinking", "thinking": ""}), d)
            }
            Gen::Tool(id, name, args, cuts) => (
                json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                split_text(args, cuts)
                    .into_iter()
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                    .collect(),
            ),
            Gen::Redacted(data) => (json!({"type": "redacted_thinking", "data": data}), vec![]),
        };
        out.push_str(&sse(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            out.push_str(&sse(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        out.push_str(&sse(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    out.push_str(&sse(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": usage[1]}}),
    ));
    out.push_str(&sse("message_stop", json!({"type": "message_stop"})));
    out
}

fn body(parts: &[Gen], stop: &str, usage: [u64; 4]) -> Value {
    let content: Vec<Value> = parts
        .iter()
        .map(|p| match p {
            Gen::Text(t, _) => json!({"type": "text", "text": t}),
            Gen::Thinking(t, s, _) => json!({"type": "thinking", "thinking": t, "signature": s}),
            Gen::Tool(id, name, args, _) => {
                json!({"type": "tool_use", "id": id, "name": name, "input": serde_json::from_str::<Value>(args).unwrap()})
            }
            Gen::Redacted(d) => json!({"type": "redacted_thinking", "data": d}),
        })
        .collect();
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-t", "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1], "cache_read_input_tokens": usage[2], "cache_creation_input_tokens": usage[3]}})
}

fn expected(parts: &[Gen], stop: &str, usage: [u64; 4]) -> Reply {
    let parts: Vec<Part> = parts
        .iter()
        .map(|p| match p {
            Gen::Text(t, _) => Part::Text { text: t.clone() },
            Gen::Thinking(t, s, _) => Part::Thinking {
                text: t.clone(),
                signature: (!s.is_empty()).then(|| s.clone()),
            },
            Gen::Tool(id, name, args, _) => Part::ToolCall {
                id: id.clone(),
                name: name.clone(),
                arguments: args.clone(),
            },
            Gen::Redacted(d) => Part::Other {
                kind: "redacted_thinking".into(),
                raw: json!({"type": "redacted_thinking", "data": d}),
            },
        })
        .collect();
    Reply {
        message: message_of(parts),
        usage: Usage {
            input_tokens: usage[0],
            output_tokens: usage[1],
            cache_read_input_tokens: usage[2],
            cache_creation_input_tokens: usage[3],
        },
        stop_reason: Some(stop.to_owned()),
        model: Some("claude-t".into()),
        id: Some("msg_1".into()),
        complete: true,
    }
}

proptest! {
    #[test]
    fn stream_equals_non_streaming(
        parts in prop::collection::vec(gen_part(), 0..5),
        stop in prop_oneof![Just("end_turn"), Just("tool_use"), Just("max_tokens")],
        usage in any::<[u32; 4]>(),
        chunk_cuts in prop::collection::vec(any::<Index>(), 0..8),
    ) {
        let usage = usage.map(u64::from);
        let mut acc = new_accumulator(Protocol::Anthropic);
        for event in decode_chunked(&stream_text(&parts, stop, usage), &chunk_cuts) {
            acc.push(&event);
        }
        let non_streaming = parse_response(Protocol::Anthropic, body(&parts, stop, usage).to_string().as_bytes()).unwrap();
        prop_assert_eq!(&acc.reply(), &non_streaming);
        prop_assert_eq!(non_streaming, expected(&parts, stop, usage));
    }
}

#[test]
fn partial_stream_and_mislabelled_body() {
    let parts = vec![
        Gen::Text("hello world".into(), vec![]),
        Gen::Tool(
            "toolu_1".into(),
            "read".into(),
            r#"{"path":"/x"}"#.into(),
            vec![],
        ),
    ];
    let text = stream_text(&parts, "tool_use", [5, 7, 0, 0]);
    let events = decode_all_events(&text);
    let mut acc = Accumulator::default();
    for e in &events[..4] {
        acc.push(e);
    }
    let partial = acc.reply();
    assert!(!partial.complete);
    assert_eq!(
        partial.message.unwrap().parts,
        vec![Part::Text {
            text: "hello world".into()
        }]
    );
    assert_eq!(partial.usage.input_tokens, 5);

    let reply = parse_response(Protocol::Anthropic, text.as_bytes()).unwrap();
    assert!(reply.complete);
    assert!(reply.stopped_for_tool());
    assert_eq!(reply, expected(&parts, "tool_use", [5, 7, 0, 0]));
}

#[test]
fn server_tools_unknown_blocks_and_errors() {
    let events = [
        json!({"type": "message_start", "message": {"id": "m", "model": "c", "usage": {"input_tokens": 3}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "\"rust\"}"}}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "mystery", "x": 1}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "mystery_delta", "y": 2}}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": "", "citations": []}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "citations_delta", "citation": {}}}),
        json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "ok"}}),
        json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "t", "name": "n", "input": {}}}),
        json!({"type": "something_new"}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9, "input_tokens": 4}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "overloaded"}}),
    ];
    let mut acc = Accumulator::default();
    for e in &events {
        acc.push(&SseEvent::data(e.to_string()));
    }
    acc.push(&SseEvent::data("not json"));
    let reply = acc.reply();
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert!(!reply.complete);
    assert_eq!(
        reply.usage,
        Usage {
            input_tokens: 4,
            output_tokens: 9,
            ..Usage::default()
        }
    );
    assert_eq!(
        reply.message.unwrap().parts,
        vec![
            Part::Other {
                kind: "server_tool_use".into(),
                raw: json!({"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "rust"}})
            },
            Part::Other {
                kind: "mystery".into(),
                raw: json!({"type": "mystery", "x": 1})
            },
            Part::Text { text: "ok".into() },
            Part::ToolCall {
                id: "t".into(),
                name: "n".into(),
                arguments: "{}".into()
            },
        ]
    );
}

#[test]
fn non_streaming_error_body() {
    let reply = parse_response(
        Protocol::Anthropic,
        br#"{"type":"error","error":{"type":"overloaded_error"}}"#,
    )
    .unwrap();
    assert_eq!(reply.stop_reason.as_deref(), Some("error"));
    assert_eq!(reply.message, None);
}
