//! `lore cards import FILE` and `lore cards export FILE`: SillyTavern World Info and Character
//! Card V2/V3 books in, World Info out.
//!
//! Import reads and maps the whole book before writing anything, so a malformed file changes
//! nothing. Export writes the private-stripped bodies only (the lorebook module never exports
//! private sections) through an atomic write.

use std::path::Path;
use std::process::ExitCode;

use lore_proto::cards::Card;
use lore_proto::lorebook::{export_world_info, import_world_info_as};
use lore_storage::Vault;
use lore_storage::vault::write_atomic;
use serde_json::Value;

use super::{parse_kind, relative};

/// Imports `file` into the vault at `root`.
pub(crate) fn import(
    root: &Path,
    file: &Path,
    force: bool,
    kind: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let vault = Vault::new(root);
    let (config, _, _) = vault.config();
    let kind = kind.map(|name| parse_kind(name, &config)).transpose()?;
    let bytes = std::fs::read(file)
        .map_err(|err| anyhow::anyhow!("cannot read {}: {err}", file.display()))?;
    let json: Value = serde_json::from_slice(&bytes)
        .map_err(|err| anyhow::anyhow!("{} is not valid JSON: {err}", file.display()))?;
    let book = import_world_info_as(&json, kind, &config)
        .map_err(|err| anyhow::anyhow!("{}: {err}", file.display()))?;
    let (mut imported, mut kept) = (0usize, Vec::new());
    let mut skipped: Vec<(String, String)> = book
        .skipped
        .iter()
        .map(|s| (s.uid.clone(), s.reason.clone()))
        .collect();
    for entry in &book.cards {
        let card = &entry.card;
        let path = match vault.path_for(&card.key, card.kind, &config) {
            Ok(path) => path,
            Err(err) => {
                skipped.push((entry.uid.clone(), err.to_string()));
                continue;
            }
        };
        if path.exists() && !force {
            kept.push(relative(root, &path));
            continue;
        }
        match vault.write_card(card, &config, None) {
            Ok(path) => {
                println!("imported  {}", relative(root, &path));
                imported += 1;
            }
            Err(err) => skipped.push((entry.uid.clone(), err.to_string())),
        }
    }
    for path in &kept {
        println!("kept      {path}");
    }
    for (uid, reason) in &skipped {
        println!("skipped   entry {uid}: {reason}");
    }
    println!(
        "{imported} imported, {} kept existing, {} skipped",
        kept.len(),
        skipped.len()
    );
    if !kept.is_empty() {
        println!("existing cards were kept; use --force to overwrite them");
    }
    Ok(ExitCode::SUCCESS)
}

/// Exports every loadable card of the vault at `root` to `file`.
pub(crate) fn export(root: &Path, file: &Path) -> anyhow::Result<ExitCode> {
    let snapshot = Vault::new(root).load(None);
    let cards: Vec<Card> = snapshot.cards.iter().map(|c| c.card.clone()).collect();
    let book = export_world_info(&cards, &snapshot.config);
    let mut text = serde_json::to_string_pretty(&book)?;
    text.push('\n');
    write_atomic(file, text.as_bytes()).map_err(|err| anyhow::anyhow!("{err}"))?;
    println!("exported {} entries to {}", cards.len(), file.display());
    if !snapshot.problems.is_empty() {
        eprintln!(
            "{} card file(s) could not be loaded and were left out; run `lore cards check`",
            snapshot.problems.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}
