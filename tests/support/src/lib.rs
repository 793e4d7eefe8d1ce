//! Fake LLM upstream for Lore's tests and benchmarks.
//!
//! [`FakeUpstream`] serves the Anthropic Messages, OpenAI Chat Completions and OpenAI
//! Responses APIs (JSON and SSE) on `127.0.0.1:<ephemeral>`, replays queued
//! [`Script`]s (text, tool calls, thinking, errors, slow/stalled/broken streams),
//! records every request byte for byte, and runs a prompt-cache oracle
//! ([`cache_oracle`]) whose numbers are reported in every response's usage and in
//! [`FakeUpstream::cache_observations`].
//!
//! `GET /api/oauth/usage` is the OAuth quota endpoint of Claude Code subscriptions
//! ([`FakeUpstream::set_quota`], [`FakeUpstream::quota_calls`]).
//!
//! Worker calls (the gateway's own requests, `User-Agent: lore-worker/… (bucket)`) are told
//! apart: they consume only [`WorkerScript`]s, are listed by [`FakeUpstream::worker_calls`]
//! with the number of conversation requests in flight when they arrived, stay out of the cache
//! oracle, and, unscripted, get deterministic observer, consolidation, curation and
//! query-expansion answers (so the `lore-fake-upstream` binary serves a whole gateway).
//!
//! The fake upstream deliberately uses no other workspace crate: it is an independent oracle of
//! the providers' wire formats. Only [`retrieval`] (the labelled recall set and its loader, for
//! `lore-recall-eval`) and [`ui_seed`] (the dashboard's seeded data directory, `lore-ui-seed`)
//! use `lore-proto` and `lore-storage`, to write data directories through the real storage API.

mod anthropic;
pub mod cache_oracle;
mod context_limit;
mod directives;
mod extractive_curator;
pub mod http_client;
mod inflight;
pub mod lore_process;
mod openai;
mod pairing;
mod quota;
mod recording;
mod responses;
pub mod retrieval;
mod script;
mod server;
mod sse;
pub mod ui_seed;
mod websocket;
mod worker;
mod worker_answers;

pub use cache_oracle::{CacheObservation, CacheOracle, PromptUsage};
pub use quota::{QUOTA_PATH, QuotaCall};
pub use recording::RecordedRequest;
pub use script::{FakeConfig, Script};
pub use server::ServeOptions;
pub use worker::{WorkerCallRecord, WorkerScript};

use script::Settings;
use server::{Shared, lock};
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The fake's default (unscripted) answer to a worker call of `bucket` (`distillation`,
/// `curation`, `query_expansion`) whose user message is `user`: what it sends back, so a
/// benchmark can count the output tokens of the worker calls it recorded.
pub fn default_worker_answer(bucket: &str, user: &str) -> String {
    worker_answers::answer(bucket, user)
}

/// A running fake upstream; dropping it stops the server.
pub struct FakeUpstream {
    shared: actix_web::web::Data<Shared>,
    addr: SocketAddr,
    system: actix_rt::System,
    server: actix_web::dev::ServerHandle,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for FakeUpstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeUpstream")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

type Started = (SocketAddr, actix_web::dev::ServerHandle, actix_rt::System);

impl FakeUpstream {
    /// Starts on 127.0.0.1:0 in its own thread with its own actix System; returns once listening.
    pub fn start() -> FakeUpstream {
        FakeUpstream::start_with(FakeConfig::default())
    }

    /// Like [`FakeUpstream::start`] with a configuration.
    pub fn start_with(config: FakeConfig) -> FakeUpstream {
        FakeUpstream::start_full(Settings::from_config(&config), ServeOptions::default())
    }

    fn start_full(settings: Settings, opts: ServeOptions) -> FakeUpstream {
        let shared = actix_web::web::Data::from(Arc::new(Shared::new(settings)));
        let (tx, rx) = std::sync::mpsc::channel::<std::io::Result<Started>>();
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("fake-upstream".into())
            .spawn(move || {
                let sys = actix_rt::System::new();
                let started = sys.block_on(async move {
                    let (server, addr) = server::bind(thread_shared, &opts)?;
                    let handle = server.handle();
                    actix_rt::spawn(server);
                    Ok((addr, handle, actix_rt::System::current()))
                });
                let ok = started.is_ok();
                // The receiver only disappears if the starting thread panicked.
                let _ = tx.send(started);
                if ok {
                    let _ = sys.run();
                }
            })
            .expect("spawn fake upstream thread");
        let (addr, server, system) = rx
            .recv()
            .expect("fake upstream thread died while starting")
            .expect("fake upstream failed to bind 127.0.0.1:0");
        FakeUpstream {
            shared,
            addr,
            system,
            server,
            thread: Some(thread),
        }
    }

    /// Offers (or stops offering) the Responses API over WebSocket on `/v1/responses`.
    pub fn offer_websocket(&self, on: bool) {
        self.shared
            .websocket
            .store(on, std::sync::atomic::Ordering::SeqCst);
    }

    /// `http://127.0.0.1:PORT` (no trailing slash, no `/v1`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Queues a scripted behaviour; each conversation LLM request consumes the next one
    /// (FIFO). Worker calls never do.
    pub fn push(&self, script: Script) {
        lock(&self.shared.scripts).push_back(script);
    }

    /// Number of scripts not yet consumed.
    pub fn pending_scripts(&self) -> usize {
        lock(&self.shared.scripts).len()
    }

    /// Every request received so far, in order, any path.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// The JSON bodies of the conversation requests received so far (`POST /v1/...`), in
    /// order; the memory workers' calls (user agent `lore-worker…`) are left out.
    pub fn conversation_bodies(&self) -> Vec<serde_json::Value> {
        lock(&self.shared.requests)
            .iter()
            .filter(|r| r.method == "POST" && r.path.starts_with("/v1/"))
            .filter(|r| {
                !r.header("user-agent")
                    .is_some_and(|ua| ua.starts_with("lore-worker"))
            })
            .filter_map(|r| serde_json::from_slice(&r.body).ok())
            .collect()
    }

    /// Forgets recorded requests (not cache state or observations).
    pub fn clear_requests(&self) {
        lock(&self.shared.requests).clear();
    }

    /// One observation per LLM request, in order (worker calls have none).
    pub fn cache_observations(&self) -> Vec<CacheObservation> {
        lock(&self.shared.observations).clone()
    }

    /// Prompts the fake refused as too long for their model: (model, tokens, limit).
    pub fn overflows(&self) -> Vec<(String, u64, u64)> {
        lock(&self.shared.overflows).clone()
    }

    /// Queues a scripted worker reply; only worker calls (`User-Agent: lore-worker/…`)
    /// consume these, in order, and they never consume [`FakeUpstream::push`]'s scripts.
    pub fn push_worker(&self, script: WorkerScript) {
        lock(&self.shared.worker_scripts).push_back(script);
    }

    /// Number of worker scripts not yet consumed.
    pub fn pending_worker_scripts(&self) -> usize {
        lock(&self.shared.worker_scripts).len()
    }

    /// Every worker call received so far, in order. They are in [`FakeUpstream::requests`]
    /// too.
    pub fn worker_calls(&self) -> Vec<WorkerCallRecord> {
        lock(&self.shared.worker_calls).clone()
    }

    /// Conversation (non-worker) requests whose response has not been completely sent.
    pub fn conversation_requests_in_flight(&self) -> usize {
        self.shared.in_flight.count()
    }

    /// Sets what the OAuth usage endpoint (`GET /api/oauth/usage`) answers: the utilisation
    /// in percent of the 5-hour and 7-day windows.
    pub fn set_quota(&self, five_hour: f64, seven_day: f64) {
        self.shared.quota.set(five_hour, seven_day);
    }

    /// Makes the usage endpoint answer `status` (200 again for the utilisation).
    pub fn set_quota_status(&self, status: u16) {
        self.shared.quota.set_status(status);
    }

    /// Every call of the usage endpoint so far.
    pub fn quota_calls(&self) -> Vec<QuotaCall> {
        self.shared.quota.calls()
    }
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        let handle = self.server.clone();
        let system = self.system.clone();
        let spawned = self.system.arbiter().spawn(async move {
            handle.stop(false).await;
            system.stop();
        });
        if !spawned {
            self.system.stop();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Binary options beyond [`ServeOptions`].
#[derive(Clone, Debug, Default)]
pub struct BinaryOptions {
    /// Bind options.
    pub serve: ServeOptions,
    /// Pause between SSE events.
    pub event_interval: std::time::Duration,
    /// Exact number of text deltas in the default streamed reply.
    pub stream_events: Option<usize>,
    /// Fixed reply text.
    pub text: Option<String>,
    /// Context windows by model-name prefix (`--context-limit MODEL=TOKENS`).
    pub context_limits: Vec<(String, u64)>,
}

/// What a provider would say about the tool pairing of a request body sent to `path`
/// (`/v1/messages`, `/v1/chat/completions`, `/v1/responses`); `None` when it pairs.
pub fn pairing_problem(path: &str, body: &serde_json::Value) -> Option<String> {
    let protocol = match path {
        "/v1/messages" => server::Protocol::Anthropic,
        "/v1/chat/completions" => server::Protocol::Chat,
        _ => server::Protocol::Responses,
    };
    pairing::check(protocol, body).err()
}

/// Reads one `--context-limit MODEL=TOKENS` value.
pub fn parse_context_limit(text: &str) -> Result<(String, u64), String> {
    context_limit::parse_limit(text)
}

/// Runs a non-recording server on the current thread until the process is signalled.
/// `on_listening` is called once the socket is bound.
pub fn serve_forever(
    opts: BinaryOptions,
    on_listening: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let settings = Settings {
        event_interval: opts.event_interval,
        default_text: opts.text,
        stream_events: opts.stream_events,
        record: false,
        context_limits: opts.context_limits,
        extractive_curator: false,
    };
    let shared = actix_web::web::Data::from(Arc::new(Shared::new(settings)));
    actix_rt::System::new().block_on(async move {
        let (server, addr) = server::bind(shared, &opts.serve)?;
        on_listening(addr);
        server.await
    })
}
