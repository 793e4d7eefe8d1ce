//! `lore mcp`: the MCP server for writing and reading lore cards.
//!
//! * [`tools`]: the server handler and its three tools (`write_card`, `read_card`, `list_cards`).
//! * `args`: the tool arguments, their input schemas and the strict parsing that names unknown
//!   fields.
//! * `book`, `write` and `recent`: the card operations over the vault.
//! * [`http`]: streamable HTTP on loopback, behind a bearer token.
//!
//! Stdio is the default transport: newline-delimited JSON-RPC on stdin and stdout, logs on
//! stderr only.

mod args;
mod book;
pub mod http;
mod recent;
pub mod tools;
mod write;

use std::path::Path;
use std::sync::Arc;

use rmcp::ServiceExt;

pub use book::Book;
pub use tools::CardServer;

/// Serves the card tools over stdin/stdout until the client closes the stream.
pub async fn serve_stdio(vault: &Path) -> anyhow::Result<()> {
    let server = CardServer::new(Arc::new(Book::new(vault)));
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|err| anyhow::anyhow!("MCP session failed to start: {err}"))?;
    running
        .waiting()
        .await
        .map_err(|err| anyhow::anyhow!("MCP session ended with an error: {err}"))?;
    Ok(())
}
