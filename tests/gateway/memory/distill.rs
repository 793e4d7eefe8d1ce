//! Distillation thresholds, consolidation, archived logs in recall, and the in-flight rule.

use std::time::{Duration, Instant};

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use super::*;
use crate::helpers::*;

#[test]
fn sixty_turns_distil_at_the_thresholds_and_consolidation_keeps_the_five_newest() {
    let upstream = FakeUpstream::start();
    // Without context management a consolidation need not wait for the prompt cache to expire.
    let gateway = memory_gateway(&upstream, &[("LORE_CONTEXT", "off")]);
    let mut chat = Conversation::new(&gateway, "memory-sixty");
    let say = |burst: usize, turn: usize| {
        format!(
            "zq{burst}marker: in burst {burst} turn {turn} we moved the parser into src/parser_{burst}.rs and kept nom for the tokens"
        )
    };
    // Two turns: four messages, plenty of tokens, but fewer than five messages.
    chat.turn(&say(0, 0));
    chat.turn(&say(0, 1));
    let session = chat.session_id();
    std::thread::sleep(Duration::from_millis(1_200));
    assert_eq!(
        worker_calls(&upstream, "distillation"),
        0,
        "four messages are below the threshold"
    );
    assert!(distillations(&gateway, &session).is_empty());
    // A short session: six messages, but fewer than 64 tokens.
    let mut small = Conversation::new(&gateway, "memory-small");
    for text in ["hi", "yo", "ok"] {
        small.turn(text);
    }
    // The third turn makes six messages: the first observation log.
    chat.turn(&say(0, 2));
    let first = slowly("the first observation log", || {
        let rows = distillations(&gateway, &session);
        (rows.len() == 1).then(|| rows[0].clone())
    });
    assert_eq!(first["generation"], 0);
    assert_eq!(first["source_messages"], 6);
    assert!(
        first["observations"]
            .as_str()
            .unwrap()
            .contains("zq0marker"),
        "{first}"
    );
    assert_eq!(memory(&gateway, &session)["distilled_through_seq"], 6);
    let small_id = small.session_id();
    assert!(
        distillations(&gateway, &small_id).is_empty(),
        "under 64 tokens nothing is distilled"
    );

    // Nineteen more bursts of three turns: sixty turns in all, twenty observation logs.
    for burst in 1..20 {
        for turn in 0..3 {
            chat.turn(&say(burst, turn));
        }
        slowly(&format!("observation log {burst}"), || {
            let rows = distillations(&gateway, &session);
            let gen0 = rows.iter().filter(|d| d["generation"] == 0).count();
            (gen0 == burst + 1).then_some(())
        });
    }
    let rows = slowly("the consolidation", || {
        let rows = distillations(&gateway, &session);
        rows.iter().any(|d| d["generation"] == 1).then_some(rows)
    });
    let gen0: Vec<&Value> = rows.iter().filter(|d| d["generation"] == 0).collect();
    assert_eq!(gen0.len(), 20);
    let live: Vec<u64> = gen0
        .iter()
        .filter(|d| d["archived"] == false)
        .map(|d| d["n"].as_u64().unwrap())
        .collect();
    assert_eq!(
        live,
        [15, 16, 17, 18, 19],
        "exactly the five newest stay in context"
    );
    let meta = rows.iter().find(|d| d["generation"] == 1).unwrap();
    assert_eq!(meta["archived"], false);
    assert_eq!(meta["consumed"].as_array().unwrap().len(), 15);
    assert_eq!(
        worker_calls(&upstream, "distillation"),
        21,
        "twenty logs and one consolidation"
    );

    // An archived log is still found by recall.
    let (code, out, err) = lore(
        &["recall", "zq0marker", "--json", "--limit", "20"],
        gateway.data_dir(),
        &[],
    );
    assert_eq!(code, 0, "{err}");
    let archived_id = format!("d:{session}:0");
    assert!(
        out.contains(&archived_id),
        "recall should find the archived log {archived_id}: {out}"
    );
    let counters = actors(&gateway);
    assert_eq!(counters["distiller"]["distillations"], 20);
    assert_eq!(counters["distiller"]["consolidations"], 1);
}

#[test]
fn no_worker_call_starts_while_a_request_of_the_session_is_in_flight() {
    let upstream = FakeUpstream::start();
    let gateway = memory_gateway(&upstream, &[]);
    let mut chat = Conversation::new(&gateway, "memory-busy");
    chat.turn("we are porting the scheduler from src/sched.c to src/sched.rs this week");
    chat.turn("keep the public function names so the callers do not change");
    // A reply that stops for a tool call is not idle: the harness is about to send the result.
    upstream.push(Script::ToolCall {
        name: "bash".into(),
        id: "toolu_busy".into(),
        arguments: json!({"cmd": "cargo test -p sched"}),
        text: None,
    });
    let reply = chat.turn("run the scheduler tests now");
    assert_eq!(reply["stop_reason"], "tool_use");
    std::thread::sleep(Duration::from_millis(1_000));
    assert_eq!(
        upstream.worker_calls().len(),
        0,
        "no distillation while a tool runs"
    );
    // The tool result goes up; its reply streams slowly, far past the idle timeout.
    upstream.push(Script::SlowStream {
        text: "All 42 scheduler tests pass after the port; the old C file can go.".into(),
        chunks: 10,
        interval: Duration::from_millis(200),
    });
    chat.send(
        json!([{"type": "tool_result", "tool_use_id": "toolu_busy", "content": "test result: ok. 42 passed"}]),
        true,
    );
    let streamed_until = Instant::now();
    let session = chat.session_id();
    slowly("the log", || {
        (distillations(&gateway, &session).len() == 1).then_some(())
    });
    let calls = upstream.worker_calls();
    assert!(!calls.is_empty());
    for call in &calls {
        assert_eq!(
            call.conversation_in_flight, 0,
            "a worker call overlapped a request: {call:?}"
        );
        assert!(
            call.received_at + Duration::from_millis(100) >= streamed_until,
            "a worker call came during the slow reply"
        );
    }
}
