//! `lore cards list` (the loadable cards) and `lore cards read KEY` (one raw file).

use std::path::Path;
use std::process::ExitCode;

use lore_storage::Vault;
use serde_json::json;

use super::{parse_kind, relative};

/// Lists the cards that load, optionally of one kind.
pub(crate) fn list(root: &Path, kind: Option<&str>, as_json: bool) -> anyhow::Result<ExitCode> {
    let snapshot = Vault::new(root).load(None);
    let kind = kind
        .map(|name| parse_kind(name, &snapshot.config))
        .transpose()?;
    let cards: Vec<_> = snapshot
        .cards
        .iter()
        .filter(|entry| kind.is_none_or(|k| entry.card.kind == k))
        .collect();
    if as_json {
        let rows: Vec<_> = cards
            .iter()
            .map(|entry| {
                let card = &entry.card;
                json!({
                    "key": card.key,
                    "kind": card.kind.as_str(),
                    "title": card.title,
                    "keywords": card.keywords,
                    "aliases": card.aliases,
                    "enabled": card.enabled,
                    "inject": card.inject,
                    "path": relative(root, &entry.path),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    if cards.is_empty() {
        eprintln!("no cards in {}", root.display());
    }
    let width = cards
        .iter()
        .map(|entry| entry.card.key.chars().count())
        .max()
        .unwrap_or(0);
    for entry in &cards {
        let card = &entry.card;
        let mut line = format!(
            "{:<width$}  [{}]  {}",
            card.key,
            card.kind,
            card.keywords.join(", ")
        );
        if !card.inject {
            line.push_str("  (inject: false)");
        }
        if !card.enabled {
            line.push_str("  (disabled)");
        }
        println!("{}", line.trim_end());
    }
    if !snapshot.problems.is_empty() {
        eprintln!(
            "{} card file(s) could not be loaded; run `lore cards check`",
            snapshot.problems.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the raw file of the card `key` (a file stem, or a path under the vault without `.md`).
pub(crate) fn read(root: &Path, key: &str) -> anyhow::Result<ExitCode> {
    let vault = Vault::new(root);
    let wanted = key.trim().strip_suffix(".md").unwrap_or(key.trim());
    let matches: Vec<_> = vault
        .card_files()
        .into_iter()
        .filter(|path| {
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            let rel = relative(root, path);
            stem.as_deref() == Some(wanted) || rel.strip_suffix(".md") == Some(wanted)
        })
        .collect();
    let Some(path) = matches.first() else {
        eprintln!("lore: no card {key:?} in {}", root.display());
        return Ok(ExitCode::FAILURE);
    };
    if matches.len() > 1 {
        let all: Vec<String> = matches.iter().map(|p| relative(root, p)).collect();
        eprintln!(
            "several cards are named {key:?} ({}); showing the first, use the path to pick one",
            all.join(", ")
        );
    }
    match std::fs::read(path) {
        Ok(bytes) => {
            print!("{}", String::from_utf8_lossy(&bytes));
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("lore: cannot read {}: {err}", path.display());
            Ok(ExitCode::FAILURE)
        }
    }
}
