//! The dashboard's pages over real HTTP against the real binary and a seeded data directory:
//! each page renders what is stored, with the CSP, and links where it should.

use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

use crate::helpers::{anthropic_body, anthropic_headers, eventually};
use crate::ui_helpers::{json, page, seeded_gateway};

#[test]
fn the_overview_shows_the_seeded_numbers_and_the_root_redirects() {
    let upstream = FakeUpstream::start();
    let (gateway, _) = seeded_gateway(&upstream);
    let root = gateway.get("/");
    assert_eq!(root.status, 302);
    assert_eq!(root.header("location"), Some("/ui"));
    // The card book loads on its own thread after start.
    eventually("the seeded cards to load", || {
        (json(&gateway, "/api/v1/stats", 200)["cards"] == 2).then_some(())
    });
    let html = page(&gateway, "/ui");
    for (id, value) in [
        ("stat-projects", "2"),
        ("stat-sessions", "6"),
        ("stat-messages", "73"),
        ("stat-knowledge", "8"),
        ("stat-entities", "5"),
        ("stat-distillations", "12"),
        ("stat-cards", "2"),
    ] {
        assert!(
            html.contains(&format!(r#"id="{id}">{value}<"#)),
            "{id} = {value} in\n{html}"
        );
    }
    assert!(html.contains("/home/dev/project-00") && html.contains("/home/dev/project-01"));
    assert!(
        html.contains("embeddings are switched off"),
        "health shows the embedder"
    );
    assert!(html.contains(r#"href="/ui/assets/app.css""#) && !html.contains("<script>"));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no external resource"
    );
}

#[test]
fn projects_and_a_project_list_their_sessions_knowledge_and_logs() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let html = page(&gateway, "/ui/projects");
    let projects = json(&gateway, "/api/v1/projects", 200);
    let first = &projects["projects"][0];
    assert!(html.contains(first["path"].as_str().unwrap()));
    let id = first["id"].as_str().unwrap();
    let html = page(&gateway, &format!("/ui/projects/{id}"));
    assert!(html.contains("Retry backoff rule number"), "its knowledge");
    assert!(
        html.contains("user asked about invoice retries"),
        "its observation logs"
    );
    let mine = seeded
        .sessions
        .iter()
        .filter(|s| html.contains(&format!("/ui/sessions/{s}\"")))
        .count();
    assert_eq!(mine, 3, "three sessions per project");
    let missing = gateway.get("/ui/projects/nope");
    assert_eq!(missing.status, 404);
    assert!(missing.text().contains("no project has the id or path"));
}

#[test]
fn a_session_shows_its_conversation_tools_fork_logs_and_chart() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let html = page(&gateway, &format!("/ui/sessions/{}", seeded.sessions[0]));
    assert!(html.contains("Session 0 turn 0: please look at the payment retry logic"));
    assert!(
        html.contains("tool call <strong>read_file</strong>"),
        "tool calls folded"
    );
    assert!(html.contains("tool result"), "tool results folded");
    assert!(
        html.contains("An earlier answer the client regenerated"),
        "the fork is readable"
    );
    assert!(
        html.contains("user asked about invoice retries (part 1)"),
        "its logs"
    );
    assert_eq!(
        html.matches(r#"<g class="bar">"#).count(),
        12,
        "a token bar and a cost bar per reply"
    );
    assert!(html.contains("cache read"), "the chart's legend");
    assert!(
        html.contains(r#"<span class="muted small">not recorded</span>"#),
        "replies stored before layers were kept say so"
    );
    let missing = gateway.get("/ui/sessions/0000");
    assert_eq!(missing.status, 404);
}

#[test]
fn a_sessions_chart_comes_from_the_replies_the_gateway_captured() {
    let upstream = FakeUpstream::start();
    let gateway = crate::helpers::Gateway::start(&upstream);
    let headers = anthropic_headers("sk-ant-chart");
    let long_context =
        "Project notes: the parser lives in src/parse.rs and the tests in tests/. ".repeat(40);
    let mut history: Vec<serde_json::Value> = Vec::new();
    for turn in 0..3 {
        for message in history.iter_mut() {
            if let Some(blocks) = message["content"].as_array_mut() {
                for block in blocks {
                    block.as_object_mut().unwrap().remove("cache_control");
                }
            }
        }
        history.push(json!({"role": "user", "content": [{"type": "text", "text": format!("{long_context} question {turn}"), "cache_control": {"type": "ephemeral"}}]}));
        upstream.push(Script::Text(format!("answer {turn}")));
        let response = gateway.post(
            "/v1/messages",
            &headers,
            &anthropic_body(json!(history), false),
        );
        assert_eq!(response.status, 200, "{}", response.text());
        history.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("answer {turn}")}]}));
    }
    let id = eventually("the session with three replies", || {
        let sessions = gateway.sessions();
        (sessions.len() == 1 && sessions[0]["turns"].as_u64() == Some(3))
            .then(|| sessions[0]["id"].as_str().unwrap().to_string())
    });
    let turns = json(&gateway, &format!("/api/v1/sessions/{id}/turns"), 200);
    let turns = turns["turns"].as_array().unwrap().clone();
    assert_eq!(turns.len(), 3);
    assert!(
        turns[1]["cache_read_tokens"].as_u64().unwrap() > 0,
        "the oracle's cache reads: {turns:?}"
    );
    let html = page(&gateway, &format!("/ui/sessions/{id}"));
    assert_eq!(
        html.matches(r#"<g class="bar">"#).count(),
        6,
        "a token bar and a cost bar per reply"
    );
    assert!(
        html.contains(&format!("{} cache read", turns[1]["cache_read_tokens"])),
        "tooltip of turn 2"
    );
}

#[test]
fn knowledge_filters_paginates_and_shows_history_as_a_diff() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let html = page(&gateway, "/ui/knowledge");
    assert_eq!(html.matches(r#"<a href="/ui/knowledge/"#).count(), 8);
    let global = page(&gateway, "/ui/knowledge?scope=global");
    assert_eq!(
        global.matches(r#"<a href="/ui/knowledge/"#).count(),
        2,
        "rules 3 and 7 hold everywhere"
    );
    let decisions = page(&gateway, "/ui/knowledge?category=decision");
    assert!(
        decisions.contains("Retry backoff rule number 0") && !decisions.contains("rule number 1<")
    );
    let first = page(&gateway, "/ui/knowledge?limit=3");
    assert!(
        first.contains("1–3 of 8") && first.contains("offset=3"),
        "a pager"
    );
    let entry = page(&gateway, &format!("/ui/knowledge/{}", seeded.knowledge[0]));
    assert!(
        entry.contains(r#"<span class="added">and never wait more than 8 s; </span>"#)
            || entry.contains(r#"class="added""#),
        "{entry}"
    );
    assert!(entry.contains("version 2 by curator"));
    assert!(entry.contains(r#"data-api="PATCH""#) && entry.contains(r#"data-api="DELETE""#));
}

#[test]
fn entities_list_their_aliases_and_relations() {
    let upstream = FakeUpstream::start();
    let (gateway, seeded) = seeded_gateway(&upstream);
    let html = page(&gateway, "/ui/entities");
    assert!(html.contains("entity-3") && html.contains("nickname: e3"));
    assert!(
        html.contains("uses <a href=\"/ui/entities/"),
        "relations link"
    );
    let one = page(&gateway, &format!("/ui/entities/{}", seeded.entities[1]));
    assert!(one.contains("uses → <a"), "its relation");
    assert!(one.contains("entity-2</a> uses this"), "who points at it");
    assert!(one.contains(r#"id="entity-merge""#));
}

#[test]
fn search_hits_open_their_source() {
    let upstream = FakeUpstream::start();
    let (gateway, _) = seeded_gateway(&upstream);
    let results = eventually("the seeded sessions to be indexed", || {
        let results = json(
            &gateway,
            "/api/v1/search?q=invoice%20backoff&mode=bm25",
            200,
        );
        (!results["hits"].as_array().unwrap().is_empty()).then_some(results)
    });
    let url = results["hits"][0]["source_url"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(url.starts_with("/ui/"), "{url}");
    let html = page(&gateway, "/ui/search?q=invoice+backoff&mode=bm25");
    assert!(html.contains("open source →") && html.contains(&url.replace('&', "&amp;")));
    let source = page(&gateway, url.split('#').next().unwrap());
    assert!(source.contains("invoice"));
}

#[test]
fn costs_and_settings_say_what_is_there_and_what_is_not() {
    let upstream = FakeUpstream::start();
    let (gateway, _) = seeded_gateway(&upstream);
    let costs = page(&gateway, "/ui/costs");
    assert!(!costs.contains("not built yet"));
    assert_eq!(
        costs.matches(r#"<g class="bar">"#).count(),
        5,
        "five seeded days"
    );
    assert!(costs.contains("distillation") && costs.contains("curation"));
    let settings = page(&gateway, "/ui/settings");
    assert!(settings.contains("LORE_DATA_DIR") && settings.contains("flag --data-dir"));
    assert!(settings.contains("LORE_EMBEDDINGS") && settings.contains(">environment<"));
    assert!(settings.contains(r#"id="catalogue-table""#) && !settings.contains("not built yet"));
}

#[test]
fn assets_are_served_and_unknown_ones_are_not() {
    let upstream = FakeUpstream::start();
    let gateway = crate::helpers::Gateway::start(&upstream);
    for (name, kind) in [
        ("app.css", "text/css"),
        ("app.js", "text/javascript"),
        ("cards.js", "text/javascript"),
    ] {
        let response = gateway.get(&format!("/ui/assets/{name}"));
        assert_eq!(response.status, 200);
        assert!(response.header("content-type").unwrap().starts_with(kind));
    }
    assert_eq!(gateway.get("/ui/assets/evil.js").status, 404);
}
