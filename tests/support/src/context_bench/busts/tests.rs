//! The bust classifier on small hand-made prompts.

use super::*;
use serde_json::json;

fn sent(messages: Value, layer: Option<u8>, at: u64) -> Sent {
    let body = json!({"system": [{"type": "text", "text": "sys"}], "messages": messages});
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(at);
    Sent::parse(body.to_string().as_bytes(), when, layer)
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}]})
}

fn assistant(sections: &[&str]) -> Value {
    let blocks: Vec<Value> = sections
        .iter()
        .map(|s| json!({"type": "text", "text": s}))
        .collect();
    json!({"role": "assistant", "content": blocks})
}

#[test]
fn causes_in_order() {
    let notice = format!("{PREFIX_NOTICE_START} …]");
    let a = sent(
        json!([
            user(&notice),
            assistant(&["## Session History", "log 1"]),
            user("q1"),
            assistant(&["a1"])
        ]),
        Some(1),
        0,
    );
    assert_eq!(classify(None, &a), Cause::FirstRequest);
    let layer = sent(json!([user("q1")]), Some(2), 1);
    assert_eq!(classify(Some(&a), &layer), Cause::LayerChange);
    let late = sent(json!([user("q1")]), Some(1), 301);
    assert_eq!(classify(Some(&a), &late), Cause::CacheExpired);
    let more_logs = sent(
        json!([
            user(&notice),
            assistant(&["## Session History", "log 1", "log 2"]),
            user("q1"),
            assistant(&["a1"])
        ]),
        Some(1),
        2,
    );
    assert_eq!(
        classify(Some(&a), &more_logs),
        Cause::Prefix {
            change: PrefixChange::Appended,
            repinned: false
        }
    );
    let consolidated = sent(
        json!([
            user(&notice),
            assistant(&["## Session History", "consolidation"]),
            user("q2")
        ]),
        Some(1),
        2,
    );
    assert_eq!(
        classify(Some(&a), &consolidated),
        Cause::Prefix {
            change: PrefixChange::Consolidated,
            repinned: true
        }
    );
    let dropped = sent(
        json!([
            user(&notice),
            assistant(&["## Session History", "log 2"]),
            user("q1"),
            assistant(&["a1"])
        ]),
        Some(1),
        2,
    );
    let two = sent(
        json!([
            user(&notice),
            assistant(&["## Session History", "log 1", "log 2"]),
            user("q1")
        ]),
        Some(1),
        1,
    );
    assert_eq!(
        classify(Some(&two), &dropped),
        Cause::Prefix {
            change: PrefixChange::Dropped,
            repinned: false
        }
    );
    let moved = sent(
        json!([
            user(&notice),
            assistant(&["## Session History", "log 1"]),
            user("q2")
        ]),
        Some(1),
        2,
    );
    assert_eq!(classify(Some(&a), &moved), Cause::WindowMoved);
    let inside = sent(
        json!([
            user(&notice),
            assistant(&["## Session History", "log 1"]),
            user("q1"),
            assistant(&["a1 edited"])
        ]),
        Some(1),
        2,
    );
    assert!(matches!(classify(Some(&a), &inside), Cause::Other(_)));
}

#[test]
fn one_hour_breakpoint_keeps_the_cache_an_hour() {
    let marked = json!([{"role": "user", "content": [{"type": "text", "text": "q", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]);
    let a = sent(marked.clone(), None, 0);
    let b = sent(json!([user("q"), user("r")]), None, 600);
    assert!(matches!(classify(Some(&a), &b), Cause::Other(_)));
    let c = sent(json!([user("x")]), None, 3_600);
    assert_eq!(classify(Some(&a), &c), Cause::CacheExpired);
}
