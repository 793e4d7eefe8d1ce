//! Tests of the Responses accumulator and non-streaming parser.

use super::*;
use crate::protocol::{Protocol, new_accumulator, parse_response};
use crate::wire::testgen::{arguments, decode_all_events, decode_chunked, split_text, text};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;

#[derive(Debug, Clone)]
enum Gen {
    Message(Vec<String>),
    Reasoning(Vec<String>, String),
    Call(String, String, String),
    Search(String),
}

fn gen_item() -> impl Strategy<Value = Gen> {
    let nonempty = || text().prop_filter("non-empty", |t| !t.is_empty());
    prop_oneof![
        prop::collection::vec(nonempty(), 1..3).prop_map(Gen::Message),
        (prop::collection::vec(nonempty(), 0..3), "[a-zA-Z0-9]{0,6}")
            .prop_map(|(s, e)| Gen::Reasoning(s, e)),
        ("call_[a-z0-9]{1,6}", "[a-z_]{1,8}", arguments()).prop_map(|(c, n, a)| Gen::Call(c, n, a)),
        "[a-z ]{1,8}".prop_map(Gen::Search),
    ]
}

fn full_item(g: &Gen, i: usize) -> Value {
    match g {
        Gen::Message(texts) => {
            json!({"type": "message", "id": format!("msg_{i}"), "status": "completed", "role": "assistant",
            "content": texts.iter().map(|t| json!({"type": "output_text", "text": t, "annotations": []})).collect::<Vec<_>>()})
        }
        Gen::Reasoning(summary, enc) => json!({"type": "reasoning", "id": format!("rs_{i}"),
            "summary": summary.iter().map(|t| json!({"type": "summary_text", "text": t})).collect::<Vec<_>>(), "encrypted_content": enc}),
        Gen::Call(call_id, name, args) => {
            json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": call_id, "name": name, "arguments": args, "status": "completed"})
        }
        Gen::Search(q) => {
            json!({"type": "web_search_call", "id": format!("ws_{i}"), "status": "completed", "action": {"query": q}})
        }
    }
}

fn sse(v: Value) -> String {
    let kind = v["type"].as_str().unwrap_or_default().to_owned();
    SseEvent::new(kind, v.to_string()).encode()
}

fn response(status: &str, output: Vec<Value>, usage: Option<Value>) -> Value {
    json!({"id": "resp_1", "object": "response", "status": status, "model": "gpt-t", "output": output, "usage": usage})
}

fn usage_json(u: (u64, u64, u64)) -> Value {
    json!({"input_tokens": u.0 + u.2, "input_tokens_details": {"cached_tokens": u.2}, "output_tokens": u.1,
        "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": u.0 + u.1 + u.2})
}

/// `full`: done events and a completed response carrying the output; otherwise only deltas.
fn stream_text(items: &[Gen], cuts: &[Index], usage: (u64, u64, u64), full: bool) -> String {
    let mut out = sse(
        json!({"type": "response.created", "sequence_number": 0, "response": response("in_progress", vec![], None)}),
    );
    out.push_str(&sse(
        json!({"type": "response.in_progress", "response": response("in_progress", vec![], None)}),
    ));
    for (i, g) in items.iter().enumerate() {
        let added = match g {
            Gen::Message(_) => {
                json!({"type": "message", "id": format!("msg_{i}"), "status": "in_progress", "role": "assistant", "content": []})
            }
            Gen::Reasoning(_, enc) => {
                json!({"type": "reasoning", "id": format!("rs_{i}"), "summary": [], "encrypted_content": enc})
            }
            Gen::Call(call_id, name, _) => {
                json!({"type": "function_call", "id": format!("fc_{i}"), "call_id": call_id, "name": name, "arguments": "", "status": "in_progress"})
            }
            Gen::Search(_) => full_item(g, i),
        };
        out.push_str(&sse(
            json!({"type": "response.output_item.added", "output_index": i, "item": added}),
        ));
        match g {
            Gen::Message(texts) => {
                for (c, t) in texts.iter().enumerate() {
                    out.push_str(&sse(json!({"type": "response.content_part.added", "output_index": i, "content_index": c, "part": {"type": "output_text", "text": "", "annotations": []}})));
                    for piece in split_text(t, cuts) {
                        out.push_str(&sse(json!({"type": "response.output_text.delta", "item_id": format!("msg_{i}"), "output_index": i, "content_index": c, "delta": piece})));
                    }
                    out.push_str(&sse(json!({"type": "response.output_text.done", "output_index": i, "content_index": c, "text": t})));
                }
            }
            Gen::Reasoning(summary, _) => {
                for (s, t) in summary.iter().enumerate() {
                    for piece in split_text(t, cuts) {
                        out.push_str(&sse(json!({"type": "response.reasoning_summary_text.delta", "output_index": i, "summary_index": s, "delta": piece})));
                    }
                }
            }
            Gen::Call(_, _, args) => {
                for piece in split_text(args, cuts) {
                    out.push_str(&sse(json!({"type": "response.function_call_arguments.delta", "output_index": i, "delta": piece})));
                }
                out.push_str(&sse(json!({"type": "response.function_call_arguments.done", "output_index": i, "arguments": args})));
            }
            Gen::Search(_) => {}
        }
        if full {
            out.push_str(&sse(json!({"type": "response.output_item.done", "output_index": i, "item": full_item(g, i)})));
        }
    }
    let output = if full {
        items
            .iter()
            .enumerate()
            .map(|(i, g)| full_item(g, i))
            .collect()
    } else {
        vec![]
    };
    out.push_str(&sse(json!({"type": "response.completed", "response": response("completed", output, Some(usage_json(usage)))})));
    out
}

proptest! {
    #[test]
    fn stream_equals_non_streaming(
        items in prop::collection::vec(gen_item(), 0..4),
        cuts in prop::collection::vec(any::<Index>(), 0..5),
        chunk_cuts in prop::collection::vec(any::<Index>(), 0..8),
        usage in (0u64..10_000, 0u64..10_000, 0u64..10_000),
        full in any::<bool>(),
    ) {
        let body = response("completed", items.iter().enumerate().map(|(i, g)| full_item(g, i)).collect(), Some(usage_json(usage)));
        let non_streaming = parse_response(Protocol::OpenAiResponses, body.to_string().as_bytes()).unwrap();
        let mut acc = new_accumulator(Protocol::OpenAiResponses);
        for event in decode_chunked(&stream_text(&items, &cuts, usage, full), &chunk_cuts) {
            acc.push(&event);
        }
        prop_assert_eq!(acc.reply(), non_streaming.clone());
        prop_assert_eq!(non_streaming.usage, Usage { input_tokens: usage.0, output_tokens: usage.1, cache_read_input_tokens: usage.2, cache_creation_input_tokens: 0 });
        let has_call = items.iter().any(|g| matches!(g, Gen::Call(..)));
        prop_assert_eq!(non_streaming.stopped_for_tool(), has_call);
    }
}

#[test]
fn partial_and_terminal_states() {
    let items = vec![
        Gen::Message(vec!["hello".into()]),
        Gen::Call("call_1".into(), "shell".into(), r#"{"cmd":"ls"}"#.into()),
    ];
    let text = stream_text(&items, &[], (1, 2, 3), true);
    let events = decode_all_events(&text);
    let mut acc = Accumulator::default();
    for e in &events[..6] {
        acc.push(e);
    }
    let partial = acc.reply();
    assert!(!partial.complete);
    assert_eq!(partial.id.as_deref(), Some("resp_1"));
    assert_eq!(
        partial.message.unwrap().parts,
        vec![Part::Text {
            text: "hello".into()
        }]
    );

    let reply = parse_response(Protocol::OpenAiResponses, text.as_bytes()).unwrap();
    assert!(reply.complete);
    assert_eq!(reply.stop_reason.as_deref(), Some("completed"));
    assert!(reply.stopped_for_tool());

    let mut acc = Accumulator::default();
    acc.push(&SseEvent::data(json!({"type": "response.incomplete", "response": {"id": "r", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": []}}).to_string()));
    let reply = acc.reply();
    assert!(reply.complete);
    assert_eq!(reply.stop_reason.as_deref(), Some("max_output_tokens"));

    let mut acc = Accumulator::default();
    acc.push(&SseEvent::data(json!({"type": "response.failed", "response": {"id": "r", "status": "failed", "error": {"code": "server_error"}}}).to_string()));
    assert_eq!(acc.reply().stop_reason.as_deref(), Some("failed"));
    assert!(acc.reply().complete);
}
