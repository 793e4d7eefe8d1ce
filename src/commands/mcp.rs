//! `lore mcp`: the MCP server for cards.

use std::process::ExitCode;

use crate::cli::VaultArg;

/// Runs the MCP server.
pub fn run(_http: bool, _port: u16, _vault: &VaultArg) -> anyhow::Result<ExitCode> {
    anyhow::bail!("lore mcp is being built")
}
