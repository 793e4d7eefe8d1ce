//! `lore mcp`: the MCP server for cards, over stdio (default) or streamable HTTP on loopback.

use std::process::ExitCode;

use anyhow::Context;

use crate::cli::VaultArg;

/// Runs the MCP server until the client goes away (stdio) or the process is stopped (HTTP).
pub fn run(http: bool, port: u16, vault: &VaultArg) -> anyhow::Result<ExitCode> {
    let root = super::vault_dir(vault);
    std::fs::create_dir_all(&root)
        .with_context(|| format!("cannot create the card vault {}", root.display()))?;
    if http {
        crate::mcp::http::serve(&root, port)?;
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(crate::mcp::serve_stdio(&root))?;
    Ok(ExitCode::SUCCESS)
}
