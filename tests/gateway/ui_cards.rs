//! The card editor's API over real HTTP: create, read with the mtime string, update under the
//! lock (a conflicting edit refused with the card as it is), fields kept that the client did
//! not send, archive and restore, try a sentence, the health check, import and export, and the
//! cards recently surfaced in a conversation.

use lore_test_support::{FakeUpstream, Script};
use serde_json::json;

use crate::helpers::{anthropic_body, anthropic_headers, eventually};
use crate::ui_helpers::{json, page, seeded_gateway, write};

#[test]
fn a_card_is_created_edited_under_its_lock_and_archived() {
    let upstream = FakeUpstream::start();
    let (gateway, _) = seeded_gateway(&upstream);
    let kinds = json(&gateway, "/api/v1/cards/kinds", 200);
    let people = kinds["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "people")
        .unwrap()
        .clone();
    assert_eq!(
        people["sections"],
        json!(["who", "stance", "recent", "impression"])
    );
    assert_eq!(people["private_sections"], json!(["correspondence"]));

    let created = write(
        &gateway,
        "POST",
        "/api/v1/cards",
        Some(&json!({
            "kind": "people", "key": "Bob", "keywords": ["Bob", "ops on-call"],
            "fields": {"who": "Bob runs the on-call rotation.", "correspondence": "private note"}
        })),
    );
    assert_eq!(created.status, 201, "{}", created.text());
    let card = created.json();
    assert_eq!(card["path"], "people/Bob.md");
    let mtime = card["mtime"].as_str().unwrap().to_string();
    assert!(mtime.len() >= 18, "nanoseconds in a string: {mtime}");
    let file = std::fs::read_to_string(gateway.data_dir().join("cards/people/Bob.md")).unwrap();
    assert!(
        file.contains("## who\nBob runs the on-call rotation.")
            && file.contains("## correspondence\nprivate note")
    );
    let again = write(
        &gateway,
        "POST",
        "/api/v1/cards",
        Some(&json!({"kind": "people", "key": "Bob", "keywords": ["Bob"]})),
    );
    assert_eq!(again.status, 409);
    assert_eq!(again.json()["error"], "exists");
    let no_keywords = write(
        &gateway,
        "POST",
        "/api/v1/cards",
        Some(&json!({"kind": "people", "key": "Nobody"})),
    );
    assert_eq!(no_keywords.status, 400);
    assert_eq!(no_keywords.json()["error"], "bad_card");
    let bad_key = write(
        &gateway,
        "POST",
        "/api/v1/cards",
        Some(&json!({"kind": "people", "key": "../escape", "keywords": ["x"]})),
    );
    assert_eq!(bad_key.json()["error"], "bad_key");

    // An editor that read the card saves: fine. One that read it before that save: refused.
    let updated = write(
        &gateway,
        "PUT",
        "/api/v1/cards/people/Bob",
        Some(&json!({"mtime": mtime, "fields": {"stance": "Friendly."}})),
    );
    assert_eq!(updated.status, 200, "{}", updated.text());
    let after = updated.json();
    let fields: std::collections::HashMap<String, String> = after["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pair| {
            (
                pair[0].as_str().unwrap().to_string(),
                pair[1].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        fields["who"], "Bob runs the on-call rotation.",
        "an unsent section is kept"
    );
    assert_eq!(fields["stance"], "Friendly.");
    assert_eq!(after["keywords"], json!(["Bob", "ops on-call"]));
    let stale = write(
        &gateway,
        "PUT",
        "/api/v1/cards/people/Bob",
        Some(&json!({"mtime": mtime, "title": "Robert"})),
    );
    assert_eq!(stale.status, 409, "{}", stale.text());
    assert_eq!(stale.json()["error"], "conflict");
    assert_eq!(stale.json()["current"]["fields"], after["fields"]);
    assert!(
        !std::fs::read_to_string(gateway.data_dir().join("cards/people/Bob.md"))
            .unwrap()
            .contains("Robert")
    );

    // An edit on disk by another program also counts.
    let current = after["mtime"].as_str().unwrap().to_string();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let path = gateway.data_dir().join("cards/people/Bob.md");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("Friendly.", "Friendly, edited in vim.");
    std::fs::write(&path, text).unwrap();
    let raced = write(
        &gateway,
        "PUT",
        "/api/v1/cards/people/Bob",
        Some(&json!({"mtime": current, "title": "Robert"})),
    );
    assert_eq!(raced.status, 409);
    assert!(
        raced.json()["current"]["text"]
            .as_str()
            .unwrap()
            .contains("edited in vim")
    );

    let archived = write(&gateway, "DELETE", "/api/v1/cards/people/Bob", None);
    assert_eq!(archived.status, 200, "{}", archived.text());
    assert_eq!(archived.json()["path"], "_archive/people/Bob.md");
    json(&gateway, "/api/v1/cards/people/Bob", 404);
    let listed = json(&gateway, "/api/v1/cards?archived=1", 200);
    assert_eq!(listed["cards"][0]["key"], "Bob");
    let restored = write(&gateway, "POST", "/api/v1/cards/people/Bob/restore", None);
    assert_eq!(restored.status, 200);
    json(&gateway, "/api/v1/cards/people/Bob", 200);
}

#[test]
fn trying_a_sentence_says_what_fires_and_offers_new_names() {
    let upstream = FakeUpstream::start();
    let (gateway, _) = seeded_gateway(&upstream);
    let tried = eventually("the seeded cards to load", || {
        let tried = write(
            &gateway,
            "POST",
            "/api/v1/cards/try",
            Some(&json!({"text": "Ask Priya whether Marguerite reviewed the retry service"})),
        );
        (tried.status == 200
            && tried.json()["fired"]
                .as_array()
                .is_some_and(|f| f.len() == 2))
        .then(|| tried.json())
    });
    let fired: Vec<&str> = tried["fired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert!(
        fired.contains(&"Priya") && fired.contains(&"retry service"),
        "{fired:?}"
    );
    let priya = tried["fired"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == "Priya")
        .unwrap();
    assert_eq!(priya["hit_terms"], json!(["Priya"]));
    let block = tried["block"].as_str().unwrap();
    assert!(
        block.contains("Priya leads the billing team") && !block.contains("Draft reply"),
        "private sections never injected"
    );
    assert!(
        tried["candidates"]
            .as_array()
            .unwrap()
            .contains(&json!("Marguerite"))
    );
    let empty = write(
        &gateway,
        "POST",
        "/api/v1/cards/try",
        Some(&json!({"text": "  "})),
    );
    assert_eq!(empty.status, 400);
}

#[test]
fn the_health_check_import_and_export() {
    let upstream = FakeUpstream::start();
    let (gateway, _) = seeded_gateway(&upstream);
    std::fs::write(
        gateway.data_dir().join("cards/people/Empty.md"),
        "---\ntitle: Empty\n---\n## who\nno keywords\n",
    )
    .unwrap();
    let check = json(&gateway, "/api/v1/cards/check", 200);
    assert!(
        check["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["path"] == "people/Empty.md" && p["code"] == "no_kw"),
        "{check}"
    );

    let book = json!({"entries": {"0": {"uid": 0, "key": ["Zed"], "comment": "Zed", "content": "Zed maintains the deploy scripts.", "selectiveLogic": 0}}});
    let imported = write(
        &gateway,
        "POST",
        "/api/v1/cards/import",
        Some(&json!({"book": book, "kind": "people"})),
    );
    assert_eq!(imported.status, 200, "{}", imported.text());
    assert_eq!(imported.json()["written"], json!(["people/Zed.md"]));
    let again = write(
        &gateway,
        "POST",
        "/api/v1/cards/import",
        Some(&json!({"book": book, "kind": "people"})),
    );
    assert_eq!(again.json()["kept"], json!(["people/Zed.md"]));
    let not_a_book = write(
        &gateway,
        "POST",
        "/api/v1/cards/import",
        Some(&json!({"book": 7})),
    );
    assert_eq!(not_a_book.json()["error"], "no_book");

    let export = gateway.get("/api/v1/cards/export");
    assert_eq!(export.status, 200);
    assert!(
        export
            .header("content-disposition")
            .unwrap()
            .contains("attachment")
    );
    let text = export.text();
    assert!(text.contains("Zed maintains") && text.contains("Priya leads"));
    assert!(
        !text.contains("Draft reply"),
        "private sections stay out of exports"
    );
}

#[test]
fn cards_surfaced_in_a_conversation_are_listed_and_the_editor_renders() {
    let upstream = FakeUpstream::start();
    let (gateway, _) = seeded_gateway(&upstream);
    eventually("the cards to load", || {
        (json(&gateway, "/api/v1/cards", 200)["cards"]
            .as_array()
            .unwrap()
            .len()
            == 2)
            .then_some(())
    });
    eventually("a card injected into a conversation", || {
        upstream.push(Script::Text("ok".into()));
        let body = anthropic_body(
            json!([{"role": "user", "content": "what does Priya think about it?"}]),
            false,
        );
        let response = gateway.post("/v1/messages", &anthropic_headers("sk-ant-cards"), &body);
        assert_eq!(response.status, 200);
        let recent = json(&gateway, "/api/v1/cards/recent", 200);
        recent["recent"]
            .as_array()
            .unwrap()
            .first()
            .filter(|r| r["keys"] == json!(["Priya"]))
            .cloned()
    });
    let list = page(&gateway, "/ui/cards?kind=people");
    assert!(
        list.contains(r#"href="/ui/cards/people/Priya""#) && !list.contains("retry service <span"),
        "filtered by kind"
    );
    assert!(list.contains("Pick a card on the left"));
    let html = page(&gateway, "/ui/cards/people/Priya");
    assert!(
        html.contains("private: kept on the card, never injected"),
        "the private section is labelled"
    );
    assert!(
        html.contains(r#"data-field="correspondence""#) && html.contains(r#"data-field="who""#)
    );
    assert!(html.contains(r#"id="card-form" data-mode="edit""#));
    // The loop above may have sent the sentence more than once before the first injection
    // was listed: the page counts what the API lists, whatever that number is.
    eventually("the page to count the surfaced cards the API lists", || {
        let listed = json(&gateway, "/api/v1/cards/recent", 200)["recent"]
            .as_array()
            .map_or(0, Vec::len);
        let html = page(&gateway, "/ui/cards/people/Priya");
        (listed >= 1 && html.contains(&format!("recently surfaced ({listed})"))).then_some(())
    });
    let new = page(&gateway, "/ui/cards/new?kind=thing&keyword=Marguerite");
    assert!(new.contains(r#"data-mode="create""#) && new.contains(r#"value="Marguerite""#));
    assert!(
        new.contains(r#"data-field="usage""#),
        "the thing kind's sections"
    );
    assert_eq!(gateway.get("/ui/cards/people/Nobody").status, 404);
}
