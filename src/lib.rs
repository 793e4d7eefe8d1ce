//! The `lore` binary's library: start-up, the HTTP surface, the gateway and the CLI commands.
//!
//! - [`server`]: start-up and shutdown.
//! - [`config`]: settings from flags and the environment.
//! - [`http`]: the route table and error shapes.
//! - [`gateway`]: the LLM proxy path.
//! - [`api`]: the management API and `/health`; [`watchdog`]: the storage check (and its
//!   recovery after a full disk) and the actor heartbeats `/health` reports.
//! - [`recall`]: BM25 recall over the search index (API and shared query logic).
//! - [`memory`], [`memory_config`] and [`memory_api`]: the memory workers (distillation,
//!   curation), their settings, and what they made of a session.
//! - [`knowledge`]: the knowledge API (list, show, forget, `.lore.md` export and import).
//! - [`retention`]: `LORE_RETENTION_DAYS`, `LORE_MAX_STORAGE_MB` and the pruner's start.
//! - [`cli`] and [`commands`]: the command line.
//! - [`client`]: a tiny HTTP client the CLI uses to talk to a running gateway.

pub mod api;
pub mod cli;
pub mod client;
pub mod commands;
pub mod config;
#[cfg(test)]
mod config_fuzz;
pub mod embeddings;
pub mod gateway;
pub mod http;
pub mod knowledge;
pub mod mcp;
pub mod memory;
pub mod memory_api;
pub mod memory_config;
pub mod recall;
pub mod retention;
pub mod server;
pub mod watchdog;
