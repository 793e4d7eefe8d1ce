//! The `lore` binary's library: start-up, the HTTP surface, the gateway and the CLI commands.
//!
//! - [`server`]: start-up and shutdown.
//! - [`config`]: settings from flags and the environment.
//! - [`http`]: the route table and error shapes.
//! - [`gateway`]: the LLM proxy path.
//! - [`api`]: the management API and `/health`.
//! - [`recall`]: BM25 recall over the search index (API and shared query logic).
//! - [`memory`], [`memory_config`] and [`memory_api`]: the memory workers (distillation,
//!   curation), their settings, and what they made of a session.
//! - [`costs_api`] and [`costs_config`]: the cost tracker's API (`/api/v1/costs`, the budget,
//!   per-session costs) and its settings.
//! - [`knowledge`]: the knowledge API (list, show, forget, `.lore.md` export and import).
//! - [`cli`] and [`commands`]: the command line.
//! - [`client`]: a tiny HTTP client the CLI uses to talk to a running gateway.

pub mod api;
pub mod cli;
pub mod client;
pub mod commands;
pub mod config;
pub mod costs_api;
pub mod costs_config;
pub mod embeddings;
pub mod gateway;
pub mod http;
pub mod knowledge;
pub mod mcp;
pub mod memory;
pub mod memory_api;
pub mod memory_config;
pub mod recall;
pub mod server;
