//! `lore hook`: the Claude Code UserPromptSubmit hook.

use std::process::ExitCode;

use crate::cli::VaultArg;

/// Runs the hook.
pub fn run(_budget: usize, _scan_depth: u8, _vault: &VaultArg) -> anyhow::Result<ExitCode> {
    Ok(ExitCode::SUCCESS)
}
