//! The gateway forwards bytes unchanged, so a provider's prompt cache keeps hitting: proven with
//! the fake upstream's prompt-cache oracle over a growing conversation.

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

#[test]
fn a_growing_conversation_keeps_hitting_the_prompt_cache() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let headers = anthropic_headers("sk-cache");
    let mut history: Vec<Value> = Vec::new();
    let long_context =
        "Project notes: the parser lives in src/parse.rs and the tests in tests/. ".repeat(40);
    for turn in 0..10 {
        // Harness style: a breakpoint on the last block of the last message, moved every turn.
        for message in history.iter_mut() {
            if let Some(blocks) = message["content"].as_array_mut() {
                for block in blocks {
                    block.as_object_mut().unwrap().remove("cache_control");
                }
            }
        }
        history.push(json!({"role": "user", "content": [{"type": "text", "text": format!("{long_context} question {turn}"), "cache_control": {"type": "ephemeral"}}]}));
        upstream.push(Script::Text(format!("answer {turn}")));
        let mut body = anthropic_body(Value::Array(history.clone()), turn % 2 == 1);
        body["system"] = json!([{"type": "text", "text": "You are a careful engineer.", "cache_control": {"type": "ephemeral"}}]);
        let response = gateway.post("/v1/messages", &view(&headers), &body);
        assert_eq!(response.status, 200);
        history.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {turn}")}]}));
    }
    let observations = upstream.cache_observations();
    assert_eq!(observations.len(), 10);
    for (turn, pair) in observations.windows(2).enumerate() {
        let (before, after) = (&pair[0], &pair[1]);
        let written_before = before.cache_read + before.cache_creation;
        assert!(
            after.cache_read > 0,
            "turn {}: the cache missed: {after:?}",
            turn + 1
        );
        assert!(
            after.cache_read >= written_before,
            "turn {}: what the previous turn cached was not read back: {before:?} → {after:?}",
            turn + 1
        );
    }
}
