//! The dashboard's JSON API over real HTTP: every page's data, and the writes (session delete
//! and move, knowledge edit and scope, entity merge), each reaching storage and the index.

use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

use crate::helpers::{anthropic_body, anthropic_headers, eventually, single_session_with};
use crate::ui_helpers::{json, seeded_gateway, write};

#[test]
fn stats_overview_projects_and_settings_are_json() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let stats = json(&gateway, "/api/v1/stats", 200);
    assert_eq!(
        (
            stats["sessions"].as_u64(),
            stats["messages"].as_u64(),
            stats["knowledge"].as_u64()
        ),
        (Some(6), Some(73), Some(8))
    );
    let overview = json(&gateway, "/api/v1/overview", 200);
    assert_eq!(overview["stats"], stats);
    assert!(overview["health"]["disk"]["bytes"].as_u64().unwrap() > 0);
    let projects = json(&gateway, "/api/v1/projects", 200);
    let rows = projects["projects"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let by_path = json(
        &gateway,
        &format!("/api/v1/projects/{}", rows[0]["id"].as_str().unwrap()),
        200,
    );
    assert_eq!(by_path["project"]["path"], rows[0]["path"]);
    assert_eq!(by_path["sessions"].as_array().unwrap().len(), 3);
    let page = json(
        &gateway,
        &format!(
            "/api/v1/projects/{}?limit=2",
            rows[0]["id"].as_str().unwrap()
        ),
        200,
    );
    assert_eq!(page["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(page["sessions_page"]["next_offset"], 2);
    let settings = json(&gateway, "/api/v1/settings", 200);
    let row = |name: &str| {
        settings["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(row("LORE_DATA_DIR")["source"], "flag --data-dir");
    assert_eq!(row("LORE_MEMORY")["source"], "environment");
    assert_eq!(row("LORE_IDLE_TIMEOUT")["source"], "default");
    assert_eq!(row("LORE_WORKER_API_KEY")["value"], "not set");
    let usage = json(&gateway, "/api/v1/worker-usage", 200);
    assert_eq!(usage["days"].as_array().unwrap().len(), 5);
    assert!(usage["total_cost_usd"].as_f64().unwrap() > 0.0);
    let _ = seeded;
}

#[test]
fn a_sessions_conversation_pages_and_its_turns() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let id = &seeded.sessions[0];
    let view = json(
        &gateway,
        &format!("/api/v1/sessions/{id}/conversation?limit=5&offset=5"),
        200,
    );
    assert_eq!(view["messages"].as_array().unwrap().len(), 5);
    assert_eq!(view["messages"][0]["position"], 5);
    assert_eq!(view["page"]["total"], 12);
    assert_eq!(view["forks"][0]["replaced_count"], 1);
    assert_eq!(view["distillations"].as_array().unwrap().len(), 2);
    let turns = json(&gateway, &format!("/api/v1/sessions/{id}/turns"), 200);
    assert_eq!(turns["turns"].as_array().unwrap().len(), 6);
    assert_eq!(
        turns["turns"][0]["prompt_tokens"].as_u64().unwrap(),
        turns["turns"][0]["input_tokens"].as_u64().unwrap()
            + turns["turns"][0]["cache_read_tokens"].as_u64().unwrap()
            + turns["turns"][0]["cache_write_tokens"].as_u64().unwrap()
    );
    let missing = json(&gateway, "/api/v1/sessions/nope/turns", 404);
    assert_eq!(missing["error"], "not_found");
    assert!(
        missing["detail"]
            .as_str()
            .unwrap()
            .contains("GET /api/v1/sessions")
    );
}

#[test]
fn a_session_is_deleted_with_its_logs_and_search_entries() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let id = seeded.sessions[1].clone();
    eventually("the seeded messages to be searchable", || {
        let hits = json(
            &gateway,
            &format!("/api/v1/search?q=invoice&scope=session&session={id}&mode=bm25"),
            200,
        );
        (!hits["hits"].as_array().unwrap().is_empty()).then_some(())
    });
    let unguarded = lore_test_support::http_client::request(
        &gateway.url(),
        "DELETE",
        &format!("/api/v1/sessions/{id}"),
        &[],
        b"",
    )
    .unwrap();
    assert_eq!(unguarded.status, 403);
    assert_eq!(unguarded.json()["error"], "forbidden");
    let deleted = write(&gateway, "DELETE", &format!("/api/v1/sessions/{id}"), None);
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    assert_eq!(deleted.json()["deleted_messages"], 12);
    assert_eq!(deleted.json()["deleted_distillations"], 2);
    json(
        &gateway,
        &format!("/api/v1/sessions/{id}/conversation"),
        404,
    );
    assert_eq!(json(&gateway, "/api/v1/stats", 200)["sessions"], 5);
    eventually("its messages to leave the index", || {
        let hits = json(
            &gateway,
            &format!("/api/v1/search?q=invoice&scope=session&session={id}&mode=bm25"),
            200,
        );
        hits["hits"].as_array().unwrap().is_empty().then_some(())
    });
    assert_eq!(
        write(&gateway, "DELETE", &format!("/api/v1/sessions/{id}"), None).status,
        404
    );
}

#[test]
fn a_session_moves_to_another_project_but_not_while_it_is_live() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let id = &seeded.sessions[2];
    let bad = write(
        &gateway,
        "POST",
        &format!("/api/v1/sessions/{id}/move"),
        Some(&json!({"project": "relative/path"})),
    );
    assert_eq!(bad.status, 400);
    assert!(
        bad.json()["detail"]
            .as_str()
            .unwrap()
            .contains("absolute path")
    );
    let moved = write(
        &gateway,
        "POST",
        &format!("/api/v1/sessions/{id}/move"),
        Some(&json!({"project": "/home/dev/elsewhere"})),
    );
    assert_eq!(moved.status, 200, "{}", moved.text());
    let projects = json(&gateway, "/api/v1/projects", 200);
    assert!(
        projects["projects"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["path"] == "/home/dev/elsewhere" && p["sessions"] == 1)
    );
    eventually(
        "the moved messages to be found in their new project",
        || {
            let hits = json(
                &gateway,
                "/api/v1/search?q=invoice&scope=project&project=/home/dev/elsewhere&mode=bm25",
                200,
            );
            hits["hits"]
                .as_array()
                .unwrap()
                .iter()
                .all(|h| h["session"] == id.as_str())
                .then_some(())
                .filter(|_| !hits["hits"].as_array().unwrap().is_empty())
        },
    );

    // A session with a request a moment ago may still be held by its actor: refused.
    upstream.push(Script::Text("hello".into()));
    let response = gateway.post(
        "/v1/messages",
        &anthropic_headers("sk-ant-live"),
        &anthropic_body(json!([{"role": "user", "content": "hi there"}]), false),
    );
    assert_eq!(response.status, 200);
    let live = single_session_with_project(&gateway);
    let refused = write(
        &gateway,
        "POST",
        &format!("/api/v1/sessions/{live}/move"),
        Some(&json!({"project": "/x"})),
    );
    assert_eq!(refused.status, 409, "{}", refused.text());
    assert_eq!(refused.json()["error"], "session_live");
    assert_eq!(
        write(
            &gateway,
            "DELETE",
            &format!("/api/v1/sessions/{live}"),
            None
        )
        .status,
        409
    );
}

/// The one session not seeded (ids of seeded sessions start with 0190000000000000).
fn single_session_with_project(gateway: &crate::helpers::Gateway) -> String {
    eventually("the live session", || {
        gateway
            .sessions()
            .iter()
            .find(|s| !s["id"].as_str().unwrap().starts_with("01900000000000"))
            .map(|s| s["id"].as_str().unwrap().to_string())
    })
}

#[test]
fn knowledge_is_browsed_edited_rescoped_and_forgotten_with_history() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let all = json(&gateway, "/api/v1/knowledge/browse?limit=3", 200);
    assert_eq!(all["entries"].as_array().unwrap().len(), 3);
    assert_eq!(all["page"]["total"], 8);
    let global = json(&gateway, "/api/v1/knowledge/browse?scope=global", 200);
    assert!(
        global["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["project"].is_null())
    );
    let bad = json(&gateway, "/api/v1/knowledge/browse?scope=sideways", 400);
    assert_eq!(bad["error"], "bad_request");

    let id = &seeded.knowledge[1];
    let edited = write(
        &gateway,
        "PATCH",
        &format!("/api/v1/knowledge/{id}"),
        Some(&json!({"content": "Cap first, then double.", "category": "gotcha"})),
    );
    assert_eq!(edited.status, 200, "{}", edited.text());
    assert_eq!(edited.json()["entry"]["version"], 2);
    assert_eq!(edited.json()["entry"]["category"], "gotcha");
    let unknown = write(
        &gateway,
        "PATCH",
        &format!("/api/v1/knowledge/{id}"),
        Some(&json!({"colour": "red"})),
    );
    assert_eq!(unknown.status, 400);
    assert_eq!(unknown.json()["error"], "bad_json");
    let scoped = write(
        &gateway,
        "POST",
        &format!("/api/v1/knowledge/{id}/scope"),
        Some(&json!({"project": null})),
    );
    assert_eq!(scoped.status, 200);
    assert!(scoped.json()["entry"]["project"].is_null());
    let history = json(&gateway, &format!("/api/v1/knowledge/{id}/history"), 200);
    assert_eq!(history["history"].as_array().unwrap().len(), 2);
    let diffs = history["diffs"].as_array().unwrap();
    assert!(
        diffs[0]["fields"][0]
            .as_str()
            .unwrap()
            .starts_with("scope: /home/dev/project-01 → every project"),
        "{diffs:?}"
    );
    assert!(
        diffs[1]["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["change"] == "added")
    );
    let forgotten = write(&gateway, "DELETE", &format!("/api/v1/knowledge/{id}"), None);
    assert_eq!(forgotten.status, 200);
    let listed = json(&gateway, "/api/v1/knowledge/browse?limit=100", 200);
    assert!(
        listed["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["id"] != id.as_str())
    );
    assert_eq!(
        write(
            &gateway,
            "PATCH",
            &format!("/api/v1/knowledge/{id}"),
            Some(&json!({"title": "x"}))
        )
        .status,
        404
    );
}

#[test]
fn entities_are_listed_shown_and_merged() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let list = json(&gateway, "/api/v1/entities?type=service", 200);
    assert_eq!(list["entities"].as_array().unwrap().len(), 1);
    let (from, into) = (&seeded.entities[2], &seeded.entities[1]);
    let shown = json(&gateway, &format!("/api/v1/entities/{into}"), 200);
    assert_eq!(shown["referenced_by"][0]["other"], from.as_str());
    let merged = write(
        &gateway,
        "POST",
        "/api/v1/entities/merge",
        Some(&json!({"from": from, "into": into})),
    );
    assert_eq!(merged.status, 200, "{}", merged.text());
    assert_eq!(
        merged.json()["repointed"],
        1,
        "entity-3 pointed at entity-2"
    );
    let survivor = json(&gateway, &format!("/api/v1/entities/{into}"), 200);
    let aliases: Vec<String> = survivor["entity"]["aliases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert!(
        aliases.contains(&"name: entity-2".to_string()),
        "{aliases:?}"
    );
    json(&gateway, &format!("/api/v1/entities/{from}"), 404);
    let third = json(
        &gateway,
        &format!("/api/v1/entities/{}", seeded.entities[3]),
        200,
    );
    assert_eq!(third["entity"]["relations"][0]["other"], into.as_str());
    let same = write(
        &gateway,
        "POST",
        "/api/v1/entities/merge",
        Some(&json!({"from": into, "into": into})),
    );
    assert_eq!(same.status, 400);
}

#[test]
fn a_session_captured_through_the_gateway_is_listed_everywhere() {
    let upstream = FakeUpstream::start();
    let gateway = crate::helpers::Gateway::start(&upstream);
    upstream.push(Script::Text("sure".into()));
    let mut headers = anthropic_headers("sk-ant-proj");
    headers.push(("x-lore-project", "/home/me/repo"));
    let response = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(
            json!([{"role": "user", "content": "set up the repo"}]),
            false,
        ),
    );
    assert_eq!(response.status, 200);
    let session = single_session_with(&gateway, 2);
    let stats = json(&gateway, "/api/v1/stats", 200);
    assert_eq!(
        (stats["sessions"].as_u64(), stats["live_sessions"].as_u64()),
        (Some(1), Some(1))
    );
    let projects = json(&gateway, "/api/v1/projects", 200);
    assert_eq!(projects["projects"][0]["sessions"], 1);
    let view = json(
        &gateway,
        &format!(
            "/api/v1/sessions/{}/conversation",
            session["id"].as_str().unwrap()
        ),
        200,
    );
    assert_eq!(view["messages"][1]["parts"][0]["text"], "sure");
}
