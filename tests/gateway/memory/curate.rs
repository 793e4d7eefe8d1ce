//! The curator turns observations into knowledge and updates a changed preference.

use lore_test_support::{FakeUpstream, WorkerScript};
use serde_json::{Value, json};

use super::*;

#[test]
fn the_curator_updates_a_changed_preference_instead_of_adding_a_second() {
    let upstream = FakeUpstream::start();
    let gateway = memory_gateway(&upstream, &[]);
    let mut chat = Conversation::new(&gateway, "memory-curator");
    upstream.push_worker(observer(
        "user prefers pytest for the Python tests [stated-preference]",
    ));
    upstream.push_worker(WorkerScript::Text(
        json!({"ops": [{"op": "create", "category": "preference", "title": "Test runner for the Python tests",
            "content": "Use pytest.", "scope": "project", "crossProject": false, "confidence": 0.9}],
            "entities": [{"type": "tool", "canonical_name": "pytest", "aliases": [{"type": "name", "value": "py.test"}]}],
            "relations": []})
        .to_string(),
    ));
    for text in [
        "I prefer pytest for the python tests of this repository, please remember that",
        "and run them with the verbose flag so failures are easy to read",
        "thanks, that is all for the test setup today",
    ] {
        chat.turn(text);
    }
    let project = chat.project;
    let entries = slowly("the preference", || {
        let list: Value = gateway
            .get(&format!("/api/v1/knowledge?project={project}"))
            .json();
        list.as_array().filter(|l| !l.is_empty()).cloned()
    });
    assert_eq!(entries.len(), 1);
    let id = entries[0]["id"].as_str().unwrap().to_string();
    assert_eq!(entries[0]["content"], "Use pytest.");

    // The preference changes: the curator proposes the same title again.
    upstream.push_worker(observer(
        "user switched the test runner from pytest to nextest [corrected-style]",
    ));
    upstream.push_worker(WorkerScript::Text(
        json!([{"op": "create", "category": "preference", "title": "Test runner for the python tests",
            "content": "Use nextest; pytest is no longer used.", "confidence": 1.0}])
        .to_string(),
    ));
    for text in [
        "From now on we use nextest instead of pytest for every test run",
        "it is much faster on this machine and the output is clearer",
        "update whatever notes you keep about the test runner",
    ] {
        chat.turn(text);
    }
    let entry = slowly("the update", || {
        let entry: Value = gateway.get(&format!("/api/v1/knowledge/{id}")).json();
        (entry["version"] == 2).then_some(entry)
    });
    assert_eq!(entry["content"], "Use nextest; pytest is no longer used.");
    let history = entry["history"].as_array().unwrap();
    assert_eq!(history[0]["content"], "Use pytest.");
    let list: Value = gateway
        .get(&format!("/api/v1/knowledge?project={project}"))
        .json();
    assert_eq!(
        list.as_array().unwrap().len(),
        1,
        "updated, not duplicated: {list}"
    );
    let counters = actors(&gateway);
    assert_eq!(counters["curator"]["created"], 1);
    assert_eq!(counters["curator"]["updated"], 1);
    assert!(counters["curator"]["entities"].as_u64().unwrap() >= 1);
    let usage = counters["worker_usage"].as_array().unwrap();
    let curation = usage
        .iter()
        .find(|row| row["bucket"] == "curation")
        .unwrap();
    assert_eq!(curation["calls"], 2);
    assert!(curation["input_tokens"].as_u64().unwrap() > 0);
    assert!(curation["cost_usd"].as_f64().unwrap() > 0.0);
}
