//! Property test of shaping at the wire level: random tool-heavy histories in each protocol's
//! own JSON, planned at every layer, and the bytes sent checked with the providers' pairing rules
//! (the fake upstream's validator), the client's system items kept first and the body valid JSON.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::catalogue::parse_overrides;
use lore_proto::parse_request;

/// One turn: a question, tool exchanges (each with one or two parallel calls) and maybe an answer.
#[derive(Debug, Clone)]
struct TurnShape {
    size: usize,
    exchanges: Vec<usize>,
    answer: bool,
}

fn turns() -> impl Strategy<Value = Vec<TurnShape>> {
    prop::collection::vec(
        (
            50usize..6_000,
            prop::collection::vec(1usize..3, 0..4),
            any::<bool>(),
        )
            .prop_map(|(size, exchanges, answer)| TurnShape {
                size,
                exchanges,
                answer,
            }),
        1..14,
    )
}

fn filler(n: usize, chars: usize) -> String {
    let mut out = String::new();
    while out.len() < chars {
        out.push_str(&format!("line {n}: src/file_{n}.rs compiled ok; "));
    }
    out
}

/// The request body of `turns` in `protocol`.
fn body(protocol: Protocol, turns: &[TurnShape]) -> Value {
    let mut items: Vec<Value> = Vec::new();
    match protocol {
        Protocol::OpenAiChat => items.push(json!({"role": "system", "content": "be careful"})),
        Protocol::OpenAiResponses => {
            items.push(json!({"type": "message", "role": "developer", "content": "be careful"}))
        }
        Protocol::Anthropic => {}
    }
    let mut call = 0;
    for (t, turn) in turns.iter().enumerate() {
        let question = format!("question {t}: {}", filler(t, turn.size / 10));
        items.push(match protocol {
            Protocol::OpenAiResponses => json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": question}]}),
            _ => json!({"role": "user", "content": question}),
        });
        for calls in &turn.exchanges {
            let ids: Vec<String> = (0..*calls)
                .map(|k| {
                    call += 1;
                    format!("call_{call}_{k}")
                })
                .collect();
            let output = filler(call, turn.size);
            match protocol {
                Protocol::Anthropic => {
                    let uses: Vec<Value> = ids.iter().map(|id| json!({"type": "tool_use", "id": id, "name": "bash", "input": {"cmd": "ls"}})).collect();
                    items.push(json!({"role": "assistant", "content": uses}));
                    let results: Vec<Value> = ids.iter().map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": output})).collect();
                    items.push(json!({"role": "user", "content": results}));
                }
                Protocol::OpenAiChat => {
                    let calls: Vec<Value> = ids.iter().map(|id| json!({"id": id, "type": "function", "function": {"name": "bash", "arguments": "{}"}})).collect();
                    items.push(json!({"role": "assistant", "content": null, "tool_calls": calls}));
                    for id in &ids {
                        items.push(json!({"role": "tool", "tool_call_id": id, "content": output}));
                    }
                }
                Protocol::OpenAiResponses => {
                    for id in &ids {
                        items.push(json!({"type": "function_call", "call_id": id, "name": "bash", "arguments": "{}"}));
                    }
                    for id in &ids {
                        items.push(json!({"type": "function_call_output", "call_id": id, "output": output}));
                    }
                }
            }
        }
        if turn.answer {
            items.push(match protocol {
                Protocol::OpenAiResponses => json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": format!("answer {t}")}]}),
                Protocol::Anthropic => json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {t}"), "cache_control": {"type": "ephemeral"}}]}),
                Protocol::OpenAiChat => json!({"role": "assistant", "content": format!("answer {t}")}),
            });
        }
    }
    let key = if protocol == Protocol::OpenAiResponses {
        "input"
    } else {
        "messages"
    };
    let mut out = json!({"model": "wire-test", key: items, "tools": [{"name": "bash"}]});
    if protocol == Protocol::Anthropic {
        out["system"] = json!("be careful");
    }
    out
}

fn path(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Anthropic => "/v1/messages",
        Protocol::OpenAiChat => "/v1/chat/completions",
        Protocol::OpenAiResponses => "/v1/responses",
    }
}

fn logs() -> Vec<LogView> {
    (0..6)
        .map(|n| LogView {
            n,
            generation: u32::from(n == 0),
            tokens: 200,
            text: format!("observations {n}"),
            id: format!("d:s:{n}"),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_layer_of_every_protocol_keeps_tool_pairing(turns in turns(), floor in 1u8..5, which in 0usize..3, with_knowledge in any::<bool>(), delta_at in 0usize..24) {
        let protocol = [Protocol::Anthropic, Protocol::OpenAiChat, Protocol::OpenAiResponses][which];
        let sent = body(protocol, &turns);
        let bytes = serde_json::to_vec(&sent).unwrap();
        let mut request = parse_request(protocol, &bytes).unwrap();
        let spans = if protocol == Protocol::OpenAiResponses {
            request.merge_adjacent_assistant()
        } else {
            request.spans()
        };
        let identities: Vec<[u8; 16]> = request.messages.iter().map(lore_proto::Message::identity).collect();
        let services = ContextServices {
            catalogue: Arc::new(Catalogue::with_overrides(
                parse_overrides(r#"{"wire-test":{"context":16000,"output":2000}}"#).unwrap(),
            )),
            settings: ContextSettings::default(),
            ltm: true,
            ltm_each_turn: false,
            finder: None,
        };
        let logs = logs();
        let knowledge = if with_knowledge {
            Knowledge {
                stable: Some("Project conventions: tabs, never unwrap.".into()),
                pinned: Some("Relevant now: the relay retries twice.".into()),
                deltas: Vec::new(),
            }
        } else {
            Knowledge::default()
        };
        // The ledger: a delta, and a card block in the first user's text.
        let mut ledger = Vec::new();
        if with_knowledge && !identities.is_empty() {
            let at = delta_at.min(identities.len() - 1);
            ledger.push(crate::ledger::Insertion {
                kind: crate::ledger::InsertionKind::Delta,
                position: at as u32,
                anchor: identities[at],
                text: "New knowledge: the port is 3207.".into(),
                keys: Vec::new(),
                created_at_ms: 0,
            });
            let last = request.messages.len() - 1;
            if let Some(first) = request.messages.iter().position(lore_proto::inject::is_user_text).filter(|f| *f < last) {
                ledger.push(crate::ledger::Insertion {
                    kind: crate::ledger::InsertionKind::Card,
                    position: first as u32,
                    anchor: identities[first],
                    text: "<!-- lore:cards:abc -->\nMira runs payments.\n<!-- /lore:cards -->".into(),
                    keys: vec!["mira".into()],
                    created_at_ms: 0,
                });
            }
        }
        let args = ShapeArgs {
            services: &services,
            input: &ContextInput { native_anthropic: true, fixed_tokens: 500, ..ContextInput::default() },
            protocol,
            request: &request,
            identities: &identities,
            spans: &spans,
            body: &bytes,
            path: &[],
            session_model: None,
            logs: &logs,
            distilled_through: 0,
            now_ms: 1_000_000,
            retry_floor: floor,
            knowledge: &knowledge,
            ledger: &ledger,
            cards_in_messages: true,
        };
        let mut state = ContextRecord::default();
        let shaped = shape(&args, &mut state, &mut Vec::new());
        let out: Value = match &shaped.body {
            Some(body) => serde_json::from_slice(body).unwrap(),
            None => sent.clone(),
        };
        prop_assert!(shaped.plan.layer >= floor.min(4) || shaped.body.is_none(), "{}", shaped.plan.reason);
        if let Some(problem) = lore_test_support::pairing_problem(path(protocol), &out) {
            prop_assert!(false, "layer {} on {protocol:?}: {problem}", shaped.plan.layer);
        }
        // Everything outside the message array is as the client sent it (Anthropic adds its
        // breakpoints to system and the last tool only).
        prop_assert_eq!(&out["model"], &sent["model"]);
        let array = if protocol == Protocol::OpenAiResponses { "input" } else { "messages" };
        let items = out[array].as_array().unwrap();
        // The client's system and developer items come first.
        if protocol != Protocol::Anthropic {
            prop_assert_eq!(&items[0], &sent[array][0]);
        }
        // The last message is the client's (its breakpoint aside), and the conversation never
        // ends on a prefill of ours.
        let plain = |mut message: Value| {
            if let Some(blocks) = message["content"].as_array_mut() {
                for block in blocks.iter_mut() {
                    block.as_object_mut().unwrap().remove("cache_control");
                }
                if blocks.len() == 1 && blocks[0]["type"] == "text" && blocks[0].as_object().unwrap().len() == 2 {
                    let text = blocks[0]["text"].clone();
                    message["content"] = text;
                }
            }
            message
        };
        let client_last = sent[array].as_array().unwrap().last().unwrap().clone();
        prop_assert_eq!(plain(items.last().unwrap().clone()), plain(client_last));
        // Anthropic: at most four breakpoints in all.
        if protocol == Protocol::Anthropic {
            let count = serde_json::to_string(&out).unwrap().matches("\"cache_control\"").count();
            prop_assert!(count <= 4, "{count} breakpoints");
        }
    }
}
