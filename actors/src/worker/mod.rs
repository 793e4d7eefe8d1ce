//! The worker LLM client: the gateway's own calls to a model (distillation, curation, query
//! expansion), never a client's request.
//!
//! A [`WorkerRoute`] says where a call goes and with which credential. It is built from a
//! session's own request (same upstream, same credential headers), or from
//! `LORE_WORKER_UPSTREAM` / `LORE_WORKER_API_KEY` / `LORE_WORKER_MODEL`; a credential is never
//! borrowed across providers. Routes live in memory only: their headers are private, never
//! printed (`Debug` redacts them) and never serialized.
//!
//! - [`client`]: `WorkerClient::call`, over awc, with retries of 429 and 5xx (capped
//!   exponential backoff, `retry-after` honoured) and 401/403 reported as a stale credential.
//! - [`wire`]: request bodies and reply parsing for Anthropic Messages, OpenAI Chat and OpenAI
//!   Responses (OpenRouter gets `provider: {sort: "price"}`).
//! - prices come from [`crate::catalogue`], the one model catalogue.
//! - [`activity`]: the `ActivityBoard`, which knows which sessions have a request in flight and
//!   when each was last active, so background work never overlaps a session's request.

pub mod activity;
pub mod client;
pub mod wire;

use std::fmt;

use lore_storage::memory::{UsageTotals, WorkerBucket};

pub use activity::{ActivityBoard, ContextReport};
pub use client::{WorkerClient, WorkerSettings};

/// The wire protocol of a worker call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkerProtocol {
    /// `POST …/v1/messages`.
    Anthropic,
    /// `POST …/v1/chat/completions`.
    OpenAiChat,
    /// `POST …/v1/responses`.
    OpenAiResponses,
}

/// Where worker calls go, with which credential and model. In memory only.
#[derive(Clone, PartialEq, Eq)]
pub struct WorkerRoute {
    /// Wire protocol.
    pub protocol: WorkerProtocol,
    /// Full endpoint URL (e.g. `https://api.anthropic.com/v1/messages`).
    pub url: String,
    /// Model the worker asks for.
    pub model: String,
    /// Credential and protocol headers (`authorization`, `x-api-key`, `anthropic-version`, …).
    headers: Vec<(String, String)>,
}

impl WorkerRoute {
    /// A route; `headers` carry the credential and are never printed.
    pub fn new(
        protocol: WorkerProtocol,
        url: impl Into<String>,
        model: impl Into<String>,
        headers: Vec<(String, String)>,
    ) -> Self {
        Self {
            protocol,
            url: url.into(),
            model: model.into(),
            headers,
        }
    }

    /// The headers to send.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }

    /// `scheme://host[:port]` of the URL, for logs.
    pub fn origin(&self) -> &str {
        let after_scheme = self.url.find("://").map_or(0, |i| i + 3);
        let end = self.url[after_scheme..]
            .find('/')
            .map_or(self.url.len(), |i| after_scheme + i);
        &self.url[..end]
    }
}

impl fmt::Debug for WorkerRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerRoute")
            .field("protocol", &self.protocol)
            .field("origin", &self.origin())
            .field("model", &self.model)
            .field("headers", &format!("<{} redacted>", self.headers.len()))
            .finish()
    }
}

/// One worker call.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerCall {
    /// What it is for (the usage ledger's bucket, and the `User-Agent` suffix).
    pub bucket: WorkerBucket,
    /// System prompt.
    pub system: String,
    /// The one user message.
    pub user: String,
    /// Output limit.
    pub max_tokens: u32,
}

/// What a worker call returned.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerReply {
    /// The text of the reply (text blocks joined).
    pub text: String,
    /// Model that answered (as the provider reports it, else the route's).
    pub model: String,
    /// Usage of this call, `calls = 1`, with its cost.
    pub usage: UsageTotals,
}
