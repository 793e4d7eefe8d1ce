//! Long-term knowledge through the CLI and the API of the real binary: `.lore.md` import and
//! export, list and show, recall of imported entries, hand edits re-imported (history kept),
//! files with problems that change nothing, forgetting, and the same commands without a gateway.

use std::path::Path;

use lore_test_support::FakeUpstream;
use lore_test_support::http_client;
use serde_json::Value;

use crate::helpers::*;

const HAND_WRITTEN: &str = "# Project knowledge

## Decisions

### Use sled for the message log
We chose sled over SQLite because the log is append-only.

## Preferences

### Tests run with nextest
<!-- lore: confidence:0.70 -->
Run the suite with cargo nextest, never plain cargo test.

## Gotchas

### Refund ledger race
The refund ledger takes its lock late, so test_refunds flakes under load.
";

fn project_dir() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .canonicalize()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    (dir, path)
}

fn knowledge(data: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["knowledge"];
    all.extend_from_slice(args);
    lore(&all, data, &[])
}

/// `lore knowledge list --json` of a project, as (title, entry) pairs.
fn listed(data: &Path, project: &str) -> Vec<Value> {
    let (code, out, err) = knowledge(data, &["list", "--project", project, "--json"]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .cloned()
        .unwrap()
}

fn id_of(entries: &[Value], title: &str) -> String {
    entries
        .iter()
        .find(|e| e["title"] == title)
        .unwrap_or_else(|| panic!("no entry titled {title} in {entries:#?}"))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The ids of knowledge entries recall finds for `query`.
fn recalled(gateway: &Gateway, query: &str) -> Vec<String> {
    let response = gateway.get(&format!("/api/v1/recall?q={query}&scope=knowledge"));
    assert_eq!(response.status, 200, "{}", response.text());
    response.json()["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|hit| hit["id"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn knowledge_round_trips_through_lore_md_with_a_running_gateway() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    let data = gateway.data_dir().to_path_buf();
    let (dir, project) = project_dir();
    let file = dir.path().join(".lore.md");
    std::fs::write(&file, HAND_WRITTEN).unwrap();

    // Import the hand-written file.
    let (code, out, err) = knowledge(&data, &["import", "--project", &project]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("3 created, 0 updated, 0 forgotten, 0 unchanged"),
        "{out}"
    );
    let entries = listed(&data, &project);
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["title"], "Use sled for the message log");
    assert_eq!(entries[1]["confidence"], 0.7);
    assert_eq!(entries[2]["category"], "gotcha");
    assert_eq!(entries[0]["updated_by"], "import");
    let sled = id_of(&entries, "Use sled for the message log");
    let refunds = id_of(&entries, "Refund ledger race");

    // The API shows the same, with a history.
    let api = gateway.get(&format!(
        "/api/v1/knowledge?project={project}&include_global=false"
    ));
    assert_eq!(api.status, 200);
    assert_eq!(api.json().as_array().unwrap().len(), 3);
    let gotchas = gateway.get(&format!(
        "/api/v1/knowledge?project={project}&category=gotchas"
    ));
    assert_eq!(gotchas.json().as_array().unwrap().len(), 1);
    assert_eq!(
        gateway.get("/api/v1/knowledge?category=recipes").status,
        400
    );
    let shown = gateway.get(&format!("/api/v1/knowledge/{sled}")).json();
    assert_eq!(shown["title"], "Use sled for the message log");
    assert_eq!(shown["version"], 1);
    assert_eq!(shown["history"], Value::Array(vec![]));
    let missing = gateway.get("/api/v1/knowledge/no-such-id");
    assert_eq!(missing.status, 404);
    assert!(
        missing.text().contains("lore knowledge list"),
        "{}",
        missing.text()
    );
    // Ids made in the same millisecond share a long prefix (UUIDv7 time and counter), so the
    // prefix given is the id without its last, random character.
    let (code, out, err) = knowledge(&data, &["show", &sled[..sled.len() - 1]]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("append-only") && out.contains(&sled), "{out}");
    let (code, out, _) = knowledge(&data, &["list", "--project", &project]);
    assert_eq!(code, 0);
    assert!(
        out.contains("gotcha") && out.contains("0.70  Tests run with nextest"),
        "{out}"
    );

    // Recall finds an imported entry by a word of its content.
    let found = eventually("the imported entry to be recalled", || {
        let ids = recalled(&gateway, "flakes");
        ids.contains(&format!("k:{refunds}")).then_some(ids)
    });
    assert_eq!(found.len(), 1);
    let (code, out, err) = lore(
        &["recall", "append-only", "--scope", "knowledge"],
        &data,
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Use sled for the message log"), "{out}");

    // Export twice: the same bytes; --stdout prints them.
    let (code, out, err) = knowledge(&data, &["export", "--project", &project]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(".lore.md (3 entries)"), "{out}");
    let first = std::fs::read(&file).unwrap();
    let (code, _, _) = knowledge(&data, &["export", "--project", &project]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(&file).unwrap(), first);
    let (_, printed, _) = knowledge(&data, &["export", "--project", &project, "--stdout"]);
    assert_eq!(printed.as_bytes(), first.as_slice());
    let exported = String::from_utf8(first).unwrap();
    assert!(
        exported.contains(&format!("<!-- lore:{sled} confidence:0.90 -->")),
        "{exported}"
    );

    // A file with a broken section changes nothing.
    let before = listed(&data, &project);
    let broken = exported.replace("## Gotchas", "## Gotchaz");
    let broken_line = broken.lines().position(|l| l == "## Gotchaz").unwrap() + 1;
    std::fs::write(&file, &broken).unwrap();
    let (code, out, err) = knowledge(&data, &["import", "--project", &project]);
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains(&format!(".lore.md:{broken_line}: `## Gotchaz`")),
        "{err}"
    );
    assert!(err.contains("nothing was imported"), "{err}");
    assert_eq!(listed(&data, &project), before);
    let api_problems = http_client::request(
        &gateway.url(),
        "POST",
        &format!("/api/v1/knowledge/import?project={project}"),
        &[("x-lore-request", "1"), ("content-type", "text/markdown")],
        broken.as_bytes(),
    )
    .unwrap();
    assert_eq!(api_problems.status, 400);
    assert_eq!(
        api_problems.json()["error"]["problems"][0]["line"],
        broken_line
    );

    // A hand edit: one text changed, one entry deleted, one added without a marker.
    let edited = exported
        .replace(
            "because the log is append-only.",
            "because the log is append-only and sled is embedded.",
        )
        .replace(
            &format!(
                "### Refund ledger race\n<!-- lore:{refunds} confidence:0.90 -->\nThe refund ledger takes its lock late, so test_refunds flakes under load.\n"
            ),
            "### Commit messages\nWrite commit messages in the imperative mood.\n",
        );
    assert_ne!(edited, exported);
    std::fs::write(&file, &edited).unwrap();
    let (code, out, err) = knowledge(&data, &["import", "--project", &project]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("1 created, 1 updated, 1 forgotten, 1 unchanged"),
        "{out}"
    );
    let history = gateway.get(&format!("/api/v1/knowledge/{sled}")).json();
    assert_eq!(history["version"], 2);
    assert!(
        history["content"]
            .as_str()
            .unwrap()
            .contains("sled is embedded")
    );
    assert_eq!(history["history"][0]["version"], 1);
    assert_eq!(
        history["history"][0]["content"],
        "We chose sled over SQLite because the log is append-only."
    );
    let gone = gateway.get(&format!("/api/v1/knowledge/{refunds}")).json();
    assert_eq!(gone["deleted"], true);
    eventually("the forgotten entry to leave recall", || {
        recalled(&gateway, "flakes").is_empty().then_some(())
    });
    let entries = listed(&data, &project);
    let commits = id_of(&entries, "Commit messages");
    eventually("the added entry to be recalled", || {
        recalled(&gateway, "imperative")
            .contains(&format!("k:{commits}"))
            .then_some(())
    });

    // Forget through the CLI and through the API.
    let (code, out, err) = knowledge(&data, &["forget", &commits]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("forgot"), "{out}");
    assert!(
        listed(&data, &project)
            .iter()
            .all(|e| e["id"] != commits.as_str())
    );
    eventually("the forgotten entry to leave recall", || {
        recalled(&gateway, "imperative").is_empty().then_some(())
    });
    let (code, _, err) = knowledge(&data, &["forget", &commits]);
    assert_ne!(code, 0);
    assert!(err.contains("or it was forgotten"), "{err}");
    let nextest = id_of(&listed(&data, &project), "Tests run with nextest");
    let unguarded = http_client::request(
        &gateway.url(),
        "DELETE",
        &format!("/api/v1/knowledge/{nextest}"),
        &[],
        b"",
    )
    .unwrap();
    assert_eq!(unguarded.status, 403);
    let deleted = http_client::request(
        &gateway.url(),
        "DELETE",
        &format!("/api/v1/knowledge/{nextest}"),
        &[("x-lore-request", "1")],
        b"",
    )
    .unwrap();
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    assert_eq!(deleted.json()["deleted"], true);
    assert_eq!(listed(&data, &project).len(), 1);

    // Without the gateway the same data directory is read and written directly.
    gateway.stop();
    let (code, out, err) = knowledge(&data, &["list", "--project", &project]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Use sled for the message log") && out.contains("1 entry"),
        "{out}"
    );
    let (code, out, err) = knowledge(&data, &["show", &sled]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("history") && out.contains("v1 by import"),
        "{out}"
    );
}

#[test]
fn knowledge_commands_work_on_the_files_without_a_gateway() {
    let data = tempfile::tempdir().unwrap();
    let data = data.path();
    let (dir, project) = project_dir();
    let file = dir.path().join("notes.md");
    std::fs::write(&file, HAND_WRITTEN).unwrap();

    let (code, out, err) = knowledge(
        data,
        &["import", "--project", &project, file.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("3 created"), "{out}");
    assert_eq!(listed(data, &project).len(), 3);
    // The index was updated too: recall on the files finds the entry.
    let (code, out, err) = lore(&["recall", "flakes", "--scope", "knowledge"], data, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Refund ledger race"), "{out}");

    let (code, out, err) = knowledge(data, &["export", "--project", &project]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("(3 entries)"), "{out}");
    let exported = std::fs::read_to_string(dir.path().join(".lore.md")).unwrap();
    assert!(exported.starts_with("# Project knowledge\n\n<!-- Written by lore."));
    assert_eq!(exported.matches("<!-- lore:").count(), 3);
    let (code, out, err) = knowledge(data, &["import", "--project", &project]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("0 created, 0 updated, 0 forgotten, 3 unchanged"),
        "{out}"
    );

    // Forgetting offline removes the entry from recall on the files.
    let refunds = id_of(&listed(data, &project), "Refund ledger race");
    let (code, _, err) = knowledge(data, &["forget", &refunds]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = lore(&["recall", "flakes", "--scope", "knowledge"], data, &[]);
    assert_eq!(code, 0);
    assert!(!out.contains("Refund ledger race"), "{out}");

    // A missing file says how to make one.
    let (code, _, err) = knowledge(
        data,
        &["import", "--project", &project, "/nonexistent/.lore.md"],
    );
    assert_ne!(code, 0);
    assert!(err.contains("lore knowledge export"), "{err}");
}
