//! `lore cards …` against a temporary vault: init, list, read, try, check, import and export.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

mod io;

/// Runs `lore cards <args> --vault <vault>`: (exit code, stdout, stderr).
pub fn cards(vault: &Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_lore"))
        .arg("cards")
        .args(args)
        .arg("--vault")
        .arg(vault)
        .env_remove("LORE_CARDS_VAULT")
        .env_remove("LORE_DATA_DIR")
        .output()
        .expect("run lore");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A vault created by `lore cards init`.
pub fn example_vault() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = cards(dir.path(), &["init"]);
    assert_eq!(code, 0, "{out}{err}");
    dir
}

pub fn json_of(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

#[test]
fn init_then_try_fires_the_person_and_init_is_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("cards");
    let (code, out, _) = cards(&vault, &["init"]);
    assert_eq!(code, 0);
    assert!(out.contains("6 example cards created") && out.contains("lore cards try"));
    for folder in ["people", "events", "places", "things", "slang"] {
        assert!(vault.join(folder).is_dir(), "{folder}");
    }
    let (code, out, _) = cards(&vault, &["try", "Did Priya review my pull request?"]);
    assert_eq!(code, 0);
    assert!(out.contains("+ Priya [people]"), "{out}");
    assert!(out.contains("<!-- lore:cards:try -->"), "{out}");
    assert!(!out.contains("Private working notes"), "{out}");

    let person = vault.join("people/Priya.md");
    std::fs::write(&person, "---\nkeywords: [Priya]\n---\nmy own edit\n").unwrap();
    let (code, out, _) = cards(&vault, &["init"]);
    assert_eq!(code, 0);
    assert!(out.contains("0 example cards created, 6 kept"), "{out}");
    assert!(out.contains("kept     people/Priya.md"), "{out}");
    let text = std::fs::read_to_string(&person).unwrap();
    assert!(
        text.contains("my own edit"),
        "init overwrote a card: {text}"
    );
}

#[test]
fn examples_pass_check_and_a_broken_card_fails_it() {
    let dir = example_vault();
    let vault = dir.path();
    let (code, out, _) = cards(vault, &["check"]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = cards(vault, &["check", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(json_of(&out)["problems"], json!([]));

    std::fs::write(vault.join("people/Broken.md"), "no frontmatter here\n").unwrap();
    std::fs::write(vault.join("things/binary.md"), [0xff, 0xfe, 0x00]).unwrap();
    std::fs::write(
        vault.join("places/Dead refs.md"),
        "---\nkeywords: [Dead refs, it]\nrefs: [Nobody]\n---\n## where\nsomewhere\n",
    )
    .unwrap();
    let (code, out, _) = cards(vault, &["check"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("people/Broken.md: no_fm:"), "{out}");
    assert!(out.contains("things/binary.md: unreadable:"), "{out}");
    assert!(out.contains("places/Dead refs.md: missing_ref:"), "{out}");
    assert!(out.contains("places/Dead refs.md: generic_kw:"), "{out}");
    let (code, out, _) = cards(vault, &["check", "--json"]);
    assert_eq!(code, 1);
    let problems = json_of(&out)["problems"].as_array().unwrap().clone();
    assert!(problems.iter().any(|p| p["code"] == "no_fm"), "{out}");

    // The broken files do not hide the others.
    let (code, out, _) = cards(vault, &["list"]);
    assert_eq!(code, 0);
    assert!(out.contains("Priya") && out.contains("[people]"), "{out}");
    assert!(!out.contains("Broken"), "{out}");
    let (code, out, _) = cards(vault, &["list", "--kind", "people", "--json"]);
    assert_eq!(code, 0);
    let rows = json_of(&out);
    assert_eq!(rows.as_array().unwrap().len(), 1, "{out}");
    assert_eq!(rows[0]["key"], "Priya");
    assert_eq!(rows[0]["kind"], "people");
    assert_eq!(rows[0]["path"], "people/Priya.md");
    assert_eq!(rows[0]["keywords"], json!(["Priya", "platform team"]));
    assert_eq!(rows[0]["aliases"], json!(["Priya R"]));
    let (code, _, err) = cards(vault, &["list", "--kind", "robots"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unknown kind") && err.contains("people, event"),
        "{err}"
    );
}

#[test]
fn list_marks_inject_false_and_disabled_cards() {
    let dir = example_vault();
    let vault = dir.path();
    std::fs::write(
        vault.join("Quiet.md"),
        "---\nkeywords: [quietword]\ninject: false\n---\nquiet body\n",
    )
    .unwrap();
    std::fs::write(
        vault.join("Off.md"),
        "---\nkeywords: [offword]\nenabled: false\n---\noff body\n",
    )
    .unwrap();
    let (_, out, _) = cards(vault, &["list", "--kind", "entry"]);
    assert!(
        out.contains("(inject: false)") && out.contains("(disabled)"),
        "{out}"
    );
}

#[test]
fn try_json_shape_turns_and_dropped_reasons() {
    let dir = example_vault();
    let vault = dir.path();
    std::fs::write(
        vault.join("Vetoed.md"),
        "---\nkeywords: [Priya]\nsecondary:\n  not: [review]\n---\nnever shown\n",
    )
    .unwrap();
    std::fs::write(
        vault.join("Sleeping.md"),
        "---\nkeywords: [Priya]\nenabled: false\n---\nasleep\n",
    )
    .unwrap();
    let turns =
        r#"[{"role":"user","text":"the war room is booked"},{"role":"assistant","text":"noted"}]"#;
    let (code, out, err) = cards(
        vault,
        &[
            "try",
            "Priya asked Oksana for a review",
            "--turns",
            turns,
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let result = json_of(&out);
    let fired: Vec<&str> = result["fired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert!(fired.contains(&"Priya"), "{out}");
    assert!(
        fired.contains(&"the war room"),
        "history turns are scanned: {out}"
    );
    let first = &result["fired"][0];
    for field in [
        "key",
        "title",
        "kind",
        "score",
        "hit_terms",
        "rendered",
        "tokens",
    ] {
        assert!(!first[field].is_null(), "{field} missing: {out}");
    }
    let reason = |key: &str| {
        result["dropped"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["key"] == key)
            .map(|d| d["reason"].clone())
    };
    assert_eq!(reason("Vetoed"), Some(json!("vetoed_by_not")), "{out}");
    assert_eq!(reason("Sleeping"), Some(json!("disabled")), "{out}");
    assert!(result["tokens_used"].as_u64().unwrap() > 0);
    assert!(
        result["block"]
            .as_str()
            .unwrap()
            .starts_with("<!-- lore:cards:try -->")
    );
    assert!(
        result["candidates"]
            .as_array()
            .unwrap()
            .contains(&json!("Oksana")),
        "{out}"
    );

    let (code, out, _) = cards(vault, &["try", "Priya again"]);
    assert_eq!(code, 0);
    assert!(out.contains("- Sleeping  dropped: disabled"), "{out}");

    let (code, out, _) = cards(vault, &["try", "nothing relevant", "--json"]);
    assert_eq!(code, 0);
    let result = json_of(&out);
    assert_eq!(result["fired"], json!([]));
    assert_eq!(result["block"], Value::Null);

    let (code, _, err) = cards(vault, &["try", "Priya", "--turns", "[not json"]);
    assert_eq!(code, 2);
    assert!(err.contains("--turns is not valid JSON"), "{err}");
    let (code, _, err) = cards(vault, &["try", "Priya", "--turns", r#"[{"role":"x"}]"#]);
    assert_eq!(code, 2);
    assert!(err.contains("role"), "{err}");
}

#[test]
fn read_prints_the_raw_file_and_a_missing_card_exits_1() {
    let dir = example_vault();
    let (code, out, _) = cards(dir.path(), &["read", "Priya"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        std::fs::read_to_string(dir.path().join("people/Priya.md")).unwrap()
    );
    assert!(
        out.contains("## correspondence"),
        "read shows the whole file"
    );
    let (code, out, err) = cards(dir.path(), &["read", "Nobody"]);
    assert_eq!(code, 1);
    assert!(
        out.is_empty() && err.contains("no card \"Nobody\""),
        "{err}"
    );
}

#[test]
fn the_vault_comes_from_the_flag_on_either_side_or_the_environment() {
    let dir = example_vault();
    let run = |args: &[&str], env: Option<&Path>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_lore"));
        command.args(args).env_remove("LORE_CARDS_VAULT");
        if let Some(vault) = env {
            command.env("LORE_CARDS_VAULT", vault);
        }
        let output = command.output().unwrap();
        assert!(output.status.success(), "{args:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let path = dir.path().to_str().unwrap();
    assert!(run(&["cards", "--vault", path, "list"], None).contains("Priya"));
    assert!(run(&["cards", "list"], Some(dir.path())).contains("Priya"));
}
