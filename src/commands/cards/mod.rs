//! `lore cards …`: the card book from the command line.
//!
//! * [`init`]: a new vault with one example card per kind ([`examples`]).
//! * [`list`]: `list` and `read`.
//! * [`try_cmd`]: `try`, a dry run of the matching engine.
//! * [`check`]: the vault lint.
//! * [`io`]: SillyTavern World Info import and export.
//! * [`ledger`]: the per-session dedupe ledger of `lore hook`.

pub(crate) mod check;
mod examples;
mod init;
mod io;
pub(crate) mod ledger;
mod list;
mod try_cmd;

use std::path::Path;
use std::process::ExitCode;

use lore_actors::cards::book::CardBook;
use lore_proto::cards::{Kind, KindsConfig};
use lore_storage::Vault;

use crate::cli::{CardsCommand, VaultArg};

/// Runs a `lore cards` subcommand.
pub fn run(command: CardsCommand, vault: &VaultArg) -> anyhow::Result<ExitCode> {
    let root = super::vault_dir(vault);
    match command {
        CardsCommand::Init { dir } => init::run(dir.as_deref().unwrap_or(&root)),
        CardsCommand::List { kind, json } => list::list(&root, kind.as_deref(), json),
        CardsCommand::Read { key } => list::read(&root, &key),
        CardsCommand::Try {
            sentence,
            turns,
            json,
        } => try_cmd::run(&root, &sentence, turns.as_deref(), json),
        CardsCommand::Check { json } => check::run(&root, json),
        CardsCommand::Import { file, force, kind } => {
            io::import(&root, &file, force, kind.as_deref())
        }
        CardsCommand::Export { file } => io::export(&root, &file),
    }
}

/// Loads the vault into a card book ready for matching.
pub(crate) fn load_book(root: &Path) -> CardBook {
    CardBook::new(Vault::new(root).load(None))
}

/// Parses a `--kind` value: a kind name (`people`, `event`, …) or its folder name (`events`).
pub(crate) fn parse_kind(name: &str, config: &KindsConfig) -> anyhow::Result<Kind> {
    if let Some(kind) = Kind::parse(name) {
        return Ok(kind);
    }
    if let Some((kind, _)) = config.dirs.iter().find(|(_, dir)| dir.as_str() == name) {
        return Ok(*kind);
    }
    let names: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
    anyhow::bail!("unknown kind {name:?}; use one of {}", names.join(", "))
}

/// A path shown relative to the vault root.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}
