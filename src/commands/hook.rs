//! `lore hook`: the Claude Code UserPromptSubmit hook.
//!
//! Reads the hook JSON on stdin (`prompt`, falling back to `user_prompt`; `transcript_path`;
//! `session_id`), takes the recent turns from the transcript, consults the card book and, when
//! cards fire, prints `{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
//! "additionalContext": "<block>"}}`. Nothing fires: no output. It never blocks a prompt: every
//! failure (missing vault, bad stdin, unreadable transcript, locked ledger) is a one-line note on
//! stderr and exit 0.
//!
//! Dedupe per session goes through the vault's ledger ([`Ledger`]): a card injected into a
//! session is held back for the next prompts of that session, and held-back cards are removed
//! before the budget is packed, so they do not take the room of cards that can still fire.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::ExitCode;

use lore_actors::cards::{BpeTokenCounter, MatchOptions, Turn, TurnRole, consult, render_block};
use serde_json::{Value, json};

use super::cards::ledger::Ledger;
use crate::cli::VaultArg;

/// Transcript lines read, from the end.
const TRANSCRIPT_LINES: usize = 200;
/// Bytes read from the end of the transcript at most (a line can be long, 200 of them rarely
/// this long).
const TRANSCRIPT_TAIL_BYTES: u64 = 8 * 1024 * 1024;
/// Conversation id used when the hook input has no `session_id`.
const DEFAULT_SESSION: &str = "hook";

/// Runs the hook. Always exits 0.
pub fn run(budget: usize, scan_depth: u8, vault: &VaultArg) -> anyhow::Result<ExitCode> {
    let root = super::vault_dir(vault);
    let mut input = String::new();
    let outcome = std::io::stdin()
        .read_to_string(&mut input)
        .map_err(anyhow::Error::from)
        .and_then(|_| hook(&input, &root, budget, scan_depth));
    match outcome {
        Ok(Some(output)) => println!("{output}"),
        Ok(None) => {}
        Err(err) => eprintln!("lore hook: {err:#}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The whole hook: the stdout line to print, if any.
fn hook(input: &str, root: &Path, budget: usize, scan_depth: u8) -> anyhow::Result<Option<String>> {
    if input.trim().is_empty() {
        return Ok(None);
    }
    let request: Value = serde_json::from_str(input)
        .map_err(|err| anyhow::anyhow!("stdin is not the hook JSON: {err}"))?;
    let text_field = |name: &str| {
        request
            .get(name)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    };
    let Some(prompt) = text_field("prompt").or_else(|| text_field("user_prompt")) else {
        return Ok(None);
    };
    if !root.is_dir() {
        anyhow::bail!(
            "no card vault at {}; create one with `lore cards init`",
            root.display()
        );
    }
    let book = super::cards::load_book(root);
    if book.is_idle() {
        return Ok(None);
    }
    let history = match text_field("transcript_path") {
        Some(path) => match read_transcript(Path::new(path)) {
            Ok(turns) => recent_turns(turns, prompt, scan_depth),
            Err(err) => {
                eprintln!("lore hook: cannot read the transcript {path}: {err}");
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    let session = text_field("session_id").unwrap_or(DEFAULT_SESSION);
    let ledger = match Ledger::begin(root, session) {
        Ok(ledger) => Some(ledger),
        Err(err) => {
            eprintln!("lore hook: dedupe is off for this prompt: {err:#}");
            None
        }
    };
    let mut options = MatchOptions::with_budget(budget);
    options.scan_depth = scan_depth;
    options.already_present = ledger.as_ref().map(Ledger::recent).unwrap_or_default();
    let result = consult(&book.cards, &history, prompt, &options, &BpeTokenCounter);
    let injected: Vec<String> = result.fired.iter().map(|c| c.key.clone()).collect();
    if let Some(ledger) = ledger
        && let Err(err) = ledger.commit(&injected)
    {
        eprintln!("lore hook: cannot update the dedupe ledger: {err:#}");
    }
    if result.fired.is_empty() {
        return Ok(None);
    }
    let block = render_block(&result.fired, "hook", &options.framing);
    let output = json!({
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": block,
        }
    });
    Ok(Some(output.to_string()))
}

/// The user and assistant text messages among the last [`TRANSCRIPT_LINES`] lines of a Claude
/// Code transcript (JSONL), oldest first. Lines that are not JSON objects are skipped.
fn read_transcript(path: &Path) -> std::io::Result<Vec<Turn>> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let start = len.saturating_sub(TRANSCRIPT_TAIL_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if start > 0 && !lines.is_empty() {
        // The first line was cut by the seek.
        lines.remove(0);
    }
    let from = lines.len().saturating_sub(TRANSCRIPT_LINES);
    Ok(lines[from..]
        .iter()
        .filter_map(|line| transcript_turn(line))
        .collect())
}

/// One transcript record as a turn: role from `message.role`, else the record's `type`;
/// text from the text blocks of `message.content` (or the record's own `content`).
fn transcript_turn(line: &str) -> Option<Turn> {
    let line = line.trim();
    if !line.starts_with('{') {
        return None;
    }
    let record: Value = serde_json::from_str(line).ok()?;
    let message = record.get("message");
    let role = message
        .and_then(|m| m.get("role"))
        .or_else(|| record.get("type"))
        .and_then(Value::as_str)?;
    let role = match role {
        "user" => TurnRole::User,
        "assistant" => TurnRole::Assistant,
        _ => return None,
    };
    let content = message
        .and_then(|m| m.get("content"))
        .or_else(|| record.get("content"))?;
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(Turn { role, text })
}

/// Drops the transcript's last user message when it is the prompt itself, then keeps the last
/// `max(scan_depth, 1) × 2` messages.
fn recent_turns(mut turns: Vec<Turn>, prompt: &str, scan_depth: u8) -> Vec<Turn> {
    if let Some(index) = turns.iter().rposition(|t| t.role == TurnRole::User)
        && turns[index].text.trim() == prompt.trim()
        && turns[index + 1..].is_empty()
    {
        turns.remove(index);
    }
    let keep = usize::from(scan_depth.max(1)) * 2;
    let from = turns.len().saturating_sub(keep);
    turns.split_off(from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_records_become_text_turns() {
        let user = r#"{"type":"user","message":{"role":"user","content":"hello Priya"}}"#;
        let tool = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"x"}]}}"#;
        let reply = r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"hi"}]}}"#;
        assert_eq!(transcript_turn(user), Some(Turn::user("hello Priya")));
        assert_eq!(transcript_turn(tool), None);
        assert_eq!(transcript_turn(reply), Some(Turn::assistant("hi")));
        assert_eq!(transcript_turn("not json"), None);
        assert_eq!(transcript_turn(r#"{"type":"summary","summary":"s"}"#), None);
    }

    #[test]
    fn the_duplicated_prompt_is_dropped_and_the_window_kept() {
        let turns = vec![
            Turn::user("one"),
            Turn::assistant("two"),
            Turn::user("three"),
            Turn::assistant("four"),
            Turn::user("now"),
        ];
        let kept = recent_turns(turns.clone(), "now", 1);
        assert_eq!(kept, vec![Turn::user("three"), Turn::assistant("four")]);
        let kept = recent_turns(turns, "something else", 1);
        assert_eq!(kept, vec![Turn::assistant("four"), Turn::user("now")]);
    }
}
