//! `lore cards …`: the card book from the command line.

use std::process::ExitCode;

use crate::cli::{CardsCommand, VaultArg};

/// Runs a `lore cards` subcommand.
pub fn run(_command: CardsCommand, _vault: &VaultArg) -> anyhow::Result<ExitCode> {
    anyhow::bail!("lore cards is being built")
}
