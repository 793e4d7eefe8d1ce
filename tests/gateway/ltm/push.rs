//! Cross-session push: what one session taught is in a fresh session's first prompt, for its
//! own project only.

use super::*;

#[test]
fn conventions_from_one_session_reach_the_next_sessions_first_prompt() {
    let upstream = curating_upstream();
    let gateway = memory_gateway(&upstream, &[]);
    teach_conventions(&gateway, &upstream, "/tmp/ltm-project-a");
    upstream.clear_requests();
    // A fresh session of the same project: its very first request carries all five.
    let mut fresh = Chat::new(&gateway, "ltm-fresh", "/tmp/ltm-project-a");
    fresh.turn(&upstream, "What should I look at first today?");
    let first = upstream.conversation_bodies().pop().unwrap();
    let system = first["system"].to_string();
    for (rule, token) in CONVENTIONS {
        assert!(
            system.contains(token),
            "{rule:?} is not in the first prompt: {system}"
        );
    }
    // The client's own system block comes first and is unchanged.
    assert_eq!(
        first["system"][0]["text"],
        "You are a coding agent working in this repository."
    );
    assert!(
        first["system"][1]["text"]
            .as_str()
            .unwrap()
            .starts_with("[Lore manages")
    );
    // A session of another project gets none of them.
    upstream.clear_requests();
    let mut other = Chat::new(&gateway, "ltm-other", "/tmp/ltm-project-b");
    other.turn(&upstream, "What should I look at first today?");
    let body = upstream.conversation_bodies().pop().unwrap();
    let system = body["system"].to_string();
    for (_, token) in CONVENTIONS {
        assert!(
            !system.contains(token),
            "{token} leaked into another project: {system}"
        );
    }
}
