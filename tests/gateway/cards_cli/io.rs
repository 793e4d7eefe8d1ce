//! `lore cards import` and `export`: SillyTavern World Info with every selectiveLogic code,
//! the round trip, private sections kept out of the export, and malformed books.

use serde_json::{Value, json};

use super::{cards, example_vault, json_of};

fn st_book() -> Value {
    let entry = |uid: u64, name: &str, logic: u64, secondary: &[&str]| {
        json!({"uid": uid, "key": [name], "keysecondary": secondary, "selectiveLogic": logic,
               "comment": name, "content": format!("About {name}."), "order": 100 + uid,
               "constant": false, "disable": false, "scanDepth": 4, "position": 1,
               "probability": 100, "group": "team"})
    };
    json!({"entries": {
        "0": entry(0, "Anya", 0, &["coffee", "tea"]),
        "1": entry(1, "Boris", 1, &["staging", "prod"]),
        "2": entry(2, "Chen", 2, &["vacation"]),
        "3": entry(3, "Dana", 3, &["payments", "refunds"]),
        "4": {"uid": 4, "key": [], "comment": "", "content": "orphan"},
    }})
}

#[test]
fn import_export_round_trip_keeps_the_logic_codes_and_no_private_text() {
    let dir = example_vault();
    let vault = dir.path();
    let book = dir.path().join("book.json");
    std::fs::write(&book, st_book().to_string()).unwrap();
    let file = book.to_str().unwrap();
    let (code, out, err) = cards(vault, &["import", file, "--kind", "people"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("4 imported, 0 kept existing, 1 skipped"),
        "{out}"
    );
    let dana = std::fs::read_to_string(vault.join("people/Dana.md")).unwrap();
    assert!(dana.contains("all:") && dana.contains("payments"), "{dana}");
    let boris = std::fs::read_to_string(vault.join("people/Boris.md")).unwrap();
    assert!(boris.contains("not_all:"), "{boris}");
    let (_, out, _) = cards(vault, &["try", "Anya wants tea", "--json"]);
    assert_eq!(json_of(&out)["fired"][0]["key"], "Anya", "{out}");

    let (code, out, _) = cards(vault, &["import", file, "--kind", "people"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("0 imported, 4 kept existing") && out.contains("--force"),
        "{out}"
    );
    let (_, out, _) = cards(vault, &["import", file, "--kind", "people", "--force"]);
    assert!(out.contains("4 imported, 0 kept existing"), "{out}");

    let exported = dir.path().join("out/export.json");
    let (code, out, err) = cards(vault, &["export", exported.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("exported 10 entries"), "{out}");
    let text = std::fs::read_to_string(&exported).unwrap();
    assert!(
        !text.contains("Private working notes"),
        "private text leaked"
    );
    assert!(!text.contains("correspondence"), "private heading leaked");
    let first: Value = serde_json::from_str(&text).unwrap();
    let by_name = |book: &Value, name: &str| {
        book["entries"]
            .as_object()
            .unwrap()
            .values()
            .find(|e| e["comment"] == name)
            .cloned()
            .unwrap()
    };
    for (name, logic) in [("Anya", 0), ("Boris", 1), ("Chen", 2), ("Dana", 3)] {
        let original = by_name(&st_book(), name);
        let entry = by_name(&first, name);
        assert_eq!(entry["selectiveLogic"], json!(logic), "{name}");
        for field in [
            "keysecondary",
            "order",
            "scanDepth",
            "position",
            "group",
            "uid",
        ] {
            assert_eq!(entry[field], original[field], "{name} {field}");
        }
    }

    // Re-import the export into a fresh vault: the second export is identical.
    let second_vault = tempfile::tempdir().unwrap();
    let (code, out, err) = cards(second_vault.path(), &["import", exported.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("10 imported"), "{out}");
    assert!(second_vault.path().join("people/Dana.md").exists());
    assert!(
        second_vault
            .path()
            .join("events/the Friday deploy.md")
            .exists()
    );
    let again = second_vault.path().join("again.json");
    cards(second_vault.path(), &["export", again.to_str().unwrap()]);
    let second: Value = serde_json::from_str(&std::fs::read_to_string(&again).unwrap()).unwrap();
    assert_eq!(first, second);
}

#[test]
fn a_malformed_import_exits_1_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let vault = dir.path().join("vault");
    for (name, text) in [("bad.json", "{\"entries\": {"), ("number.json", "42")] {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let (code, out, err) = cards(&vault, &["import", file.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {out}");
        assert!(err.contains(name), "{err}");
        assert!(!vault.exists(), "{name} wrote into the vault");
    }
    let (code, _, err) = cards(&vault, &["import", "/nonexistent/book.json"]);
    assert_eq!(code, 1);
    assert!(err.contains("cannot read"), "{err}");
}
