//! Integration tests of the whole `lore` binary over real HTTP, against the fake upstream of
//! `tests/support`. One binary, one module per concern.

// A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
#![allow(clippy::unwrap_used)]

mod helpers;

mod caching;
mod capture;
mod cards_cli;
mod cards_injection;
mod classify;
mod cli;
mod compaction;
mod compression;
mod context;
mod costs;
mod crash;
mod embeddings;
mod errors;
mod faults;
mod headers;
mod hook;
mod hosted;
mod imports;
mod knowledge;
mod ledger;
mod ltm;
mod mcp;
mod memory;
mod prompts;
mod recall;
mod recall_snippets;
mod recall_tool;
mod retention;
mod routes;
mod secrets_load;
mod service;
mod sessions;
mod setup;
mod streaming;
mod ui_api;
mod ui_cards;
mod ui_costs;
mod ui_guard;
mod ui_helpers;
mod ui_pages;
mod ui_session_context;
mod ui_settings;
mod websocket;
