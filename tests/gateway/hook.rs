//! `lore hook`, the Claude Code UserPromptSubmit hook: output shape, silence, the legacy field,
//! transcript turns, per-session dedupe and never blocking a prompt.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::cards_cli::example_vault;

/// Runs `lore hook --vault <vault> <args>` with `stdin`: (exit code, stdout, stderr).
fn hook(vault: &Path, stdin: &str, args: &[&str]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lore"))
        .arg("hook")
        .arg("--vault")
        .arg(vault)
        .args(args)
        .env_remove("LORE_CARDS_VAULT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run lore hook");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The injected block, or `None` when the hook printed nothing.
fn injected(vault: &Path, input: Value) -> Option<String> {
    let (code, out, err) = hook(vault, &input.to_string(), &[]);
    assert_eq!(code, 0, "{err}");
    if out.trim().is_empty() {
        return None;
    }
    let output: Value = serde_json::from_str(&out).unwrap();
    let specific = &output["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "UserPromptSubmit");
    Some(specific["additionalContext"].as_str().unwrap().to_string())
}

#[test]
fn prints_additional_context_when_a_card_fires_and_nothing_otherwise() {
    let dir = example_vault();
    let block = injected(
        dir.path(),
        json!({"prompt": "How did the Friday deploy go?", "session_id": "a", "hook_event_name": "UserPromptSubmit"}),
    )
    .unwrap();
    assert!(block.starts_with("<!-- lore:cards:hook -->"), "{block}");
    assert!(block.contains("### the Friday deploy [event]"), "{block}");
    assert!(block.contains("(see also: Priya"), "{block}");

    let (code, out, err) = hook(
        dir.path(),
        r#"{"prompt": "hello there", "session_id": "b"}"#,
        &[],
    );
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));

    // The legacy field is accepted; `prompt` wins when both are present.
    let legacy = injected(
        dir.path(),
        json!({"user_prompt": "Is Priya around?", "session_id": "c"}),
    );
    assert!(legacy.unwrap().contains("### Priya [people]"));
    let both = injected(
        dir.path(),
        json!({"prompt": "nothing here", "user_prompt": "Priya", "session_id": "d"}),
    );
    assert_eq!(both, None);
}

#[test]
fn transcript_turns_are_scanned() {
    let dir = example_vault();
    let transcript = dir.path().join("transcript.jsonl");
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": "I met Priya at the war room"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "the staging cluster"},
            {"type": "text", "text": "Nice, how was it?"}]}}),
        json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": "on-call rotation"}]}}),
        json!({"type": "user", "message": {"role": "user", "content": "what did she say?"}}),
    ];
    let mut text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    text.insert_str(0, "not json\n");
    std::fs::write(&transcript, text).unwrap();
    let input = |session: &str| {
        json!({"prompt": "what did she say?", "session_id": session,
               "transcript_path": transcript.to_str().unwrap()})
    };
    let block = injected(dir.path(), input("t1")).unwrap();
    assert!(block.contains("### Priya [people]"), "{block}");
    assert!(block.contains("### the war room [place]"), "{block}");
    assert!(
        !block.contains("[thing]"),
        "thinking text is not a turn: {block}"
    );
    assert!(
        !block.contains("on-call"),
        "tool results are not turns: {block}"
    );

    // Depth 0 scans the prompt alone.
    let (code, out, _) = hook(dir.path(), &input("t2").to_string(), &["--scan-depth", "0"]);
    assert_eq!((code, out.as_str()), (0, ""));

    // An unreadable transcript is a note, not a failure.
    let missing = json!({"prompt": "Priya?", "transcript_path": "/nonexistent/t.jsonl"});
    let (code, out, err) = hook(dir.path(), &missing.to_string(), &[]);
    assert_eq!(code, 0);
    assert!(out.contains("additionalContext"), "{out}");
    assert!(err.contains("transcript"), "{err}");
}

#[test]
fn a_card_is_not_injected_again_within_six_prompts_of_a_session() {
    let dir = example_vault();
    let ask = |session: &str, prompt: &str| {
        injected(dir.path(), json!({"prompt": prompt, "session_id": session}))
    };
    assert!(ask("s", "Priya said hi").is_some(), "prompt 1 injects");
    assert_eq!(ask("s", "Priya again"), None, "prompt 2 is deduped");
    assert!(
        ask("other", "Priya said hi").is_some(),
        "other sessions are separate"
    );
    // Every prompt counts, with or without hits: prompts 3 to 7 mention nothing.
    for _ in 3..=6 {
        assert_eq!(ask("s", "unrelated chatter"), None);
    }
    assert_eq!(
        ask("s", "Priya at prompt 7"),
        None,
        "still within six prompts"
    );
    let block = ask("s", "Priya at prompt 8").unwrap();
    assert!(block.contains("### Priya [people]"));

    // A deduped card leaves room for the others: the Friday deploy still fires next to it.
    let block = ask("s", "Priya and the Friday deploy").unwrap();
    assert!(block.contains("the Friday deploy [event]") && !block.contains("[people]"));

    let ledger = std::fs::read_to_string(dir.path().join(".lore/hook-ledger.json")).unwrap();
    assert!(
        !ledger.contains("chatter") && !ledger.contains("prompt 8"),
        "{ledger}"
    );
    assert!(
        ledger.contains("\"s\"") && ledger.contains("Priya"),
        "{ledger}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join(".lore"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn never_blocks_a_prompt() {
    let dir = example_vault();
    for stdin in [
        "",
        "not json",
        "[1, 2]",
        r#"{"prompt": 42}"#,
        r#"{"prompt": "   "}"#,
    ] {
        let (code, out, _) = hook(dir.path(), stdin, &[]);
        assert_eq!((code, out.as_str()), (0, ""), "{stdin:?}");
    }
    let (_, _, err) = hook(dir.path(), "not json", &[]);
    assert!(
        err.starts_with("lore hook:") && err.lines().count() == 1,
        "{err}"
    );

    let missing = dir.path().join("no-such-vault");
    let (code, out, err) = hook(&missing, r#"{"prompt": "Priya"}"#, &[]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(err.contains("no card vault"), "{err}");
    assert!(!missing.exists(), "the hook must not create a vault");

    // A corrupt ledger starts over.
    std::fs::create_dir_all(dir.path().join(".lore")).unwrap();
    std::fs::write(dir.path().join(".lore/hook-ledger.json"), "{corrupt").unwrap();
    assert!(injected(dir.path(), json!({"prompt": "Priya", "session_id": "x"})).is_some());
}
