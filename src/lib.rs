//! The `lore` binary's library: start-up, the HTTP surface, the gateway and the CLI commands.
//!
//! - [`server`]: start-up and shutdown.
//! - [`config`]: settings from flags and the environment; [`context_config`] the context
//!   manager's settings and the model catalogue.
//! - [`http`]: the route table and error shapes.
//! - [`gateway`]: the LLM proxy path.
//! - [`api`]: the management API and `/health`; [`session_api`] one session and its context
//!   manager's state.
//! - [`api`]: the management API and `/health`; [`watchdog`]: the storage check (and its
//!   recovery after a full disk) and the actor heartbeats `/health` reports.
//! - [`recall`]: BM25 recall over the search index (API and shared query logic).
//! - [`memory`], [`memory_config`] and [`memory_api`]: the memory workers (distillation,
//!   curation), their settings, and what they made of a session.
//! - [`ltm_search`]: the knowledge search behind system[2] and the knowledge deltas.
//! - [`costs_api`] and [`costs_config`]: the cost tracker's API (`/api/v1/costs`, the budget,
//!   per-session costs) and its settings.
//! - [`knowledge`]: the knowledge API (list, show, forget, `.lore.md` export and import).
//! - [`dashboard`] (the pages' data and management writes), [`ui`] (the HTML dashboard at
//!   `/ui`) and [`ui_api`] (its JSON under `/api/v1`); [`recent_errors`], the latest logged
//!   warnings for the overview.
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
pub mod context_config;
pub mod costs_api;
pub mod costs_config;
pub mod dashboard;
pub mod embeddings;
pub mod gateway;
pub mod harness;
pub mod http;
pub mod import;
pub mod import_api;
pub mod knowledge;
pub mod ltm_search;
pub mod mcp;
pub mod memory;
pub mod memory_api;
pub mod memory_config;
pub mod recall;
pub mod recent_errors;
pub mod retention;
pub mod server;
pub mod session_api;
pub mod ui;
pub mod ui_api;
pub mod watchdog;
