//! Scripted behaviours and their translation into a protocol-neutral reply plan.
//!
//! A [`Script`] says *what* the fake model does for one request (text, tool call,
//! error, pacing faults). [`plan`] turns it into an [`Action`]: either an error
//! response or a [`Reply`] (the content, already split into streaming deltas) plus a
//! [`Delivery`] (how the SSE frames are paced, stalled or aborted). The protocol
//! modules only ever see a `Reply`.

use std::time::Duration;

/// Configuration of a library-started fake upstream.
#[derive(Clone, Debug, Default)]
pub struct FakeConfig {
    /// Pause between SSE events (default 0: as fast as possible).
    pub event_interval: Duration,
    /// Reply text when the script queue is empty; `None` means `"ok: " + last user text`.
    pub default_text: Option<String>,
    /// Context windows by model-name prefix: a longer prompt gets the provider's "too long"
    /// error (tokens as the cache oracle counts them).
    pub context_limits: Vec<(String, u64)>,
    /// Unscripted curation calls get the extractive curator's answer (standing rules become
    /// preferences) instead of no operations.
    pub extractive_curator: bool,
}

/// One scripted behaviour, consumed by exactly one LLM request (FIFO).
#[derive(Clone, Debug)]
pub enum Script {
    /// Reply with this text (JSON or SSE per the request's `stream` flag, in the request's protocol).
    Text(String),
    /// Reply with a tool/function call, optionally preceded by text.
    ToolCall {
        /// Tool (function) name.
        name: String,
        /// Call id (`tool_use.id` / `tool_calls[].id` / `function_call.call_id`).
        id: String,
        /// Arguments object (streamed as JSON text split in at least two fragments).
        arguments: serde_json::Value,
        /// Optional text before the call.
        text: Option<String>,
    },
    /// Reply with several tool calls in one message (parallel calls), optionally after text.
    ToolCalls {
        /// `(name, id, arguments)` of each call, in order.
        calls: Vec<(String, String, serde_json::Value)>,
        /// Optional text before the calls.
        text: Option<String>,
    },
    /// Anthropic thinking block with signature, then text (OpenAI: reasoning item / text only).
    Thinking {
        /// Thinking text.
        thinking: String,
        /// Thinking signature (sent as `signature_delta`).
        signature: String,
        /// Visible text after the thinking block.
        text: String,
    },
    /// Error response with this status, JSON body and extra headers (e.g. 429 + retry-after).
    Error {
        /// HTTP status.
        status: u16,
        /// JSON body, sent verbatim.
        body: serde_json::Value,
        /// Extra response headers.
        headers: Vec<(String, String)>,
    },
    /// Text split into `chunks` deltas, each delta preceded by `interval`.
    SlowStream {
        /// Full text.
        text: String,
        /// Number of text deltas.
        chunks: usize,
        /// Pause before each text delta.
        interval: Duration,
    },
    /// Send `first_events` events, go silent for `stall`, then finish normally.
    Stall {
        /// Events sent before the stall.
        first_events: usize,
        /// Silence duration.
        stall: Duration,
        /// Full text.
        text: String,
    },
    /// Send `after_events` SSE events then abort the connection (no terminal event).
    BrokenStream {
        /// Full text.
        text: String,
        /// Events sent before the abort (clamped so the terminal event is never sent).
        after_events: usize,
    },
    /// Wait before sending response headers, then behave like the inner script.
    DelayHeaders(Duration, Box<Script>),
}

/// Internal settings shared by the library handle and the binary.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub event_interval: Duration,
    pub default_text: Option<String>,
    /// Exact number of text deltas for default (unscripted) streamed replies.
    pub stream_events: Option<usize>,
    /// Record requests and cache observations (the benchmark binary turns this off).
    pub record: bool,
    /// Context windows by model-name prefix.
    pub context_limits: Vec<(String, u64)>,
    /// Curation calls get the extractive curator's answer.
    pub extractive_curator: bool,
}

impl Settings {
    pub fn from_config(config: &FakeConfig) -> Settings {
        Settings {
            event_interval: config.event_interval,
            default_text: config.default_text.clone(),
            stream_events: None,
            record: true,
            context_limits: config.context_limits.clone(),
            extractive_curator: config.extractive_curator,
        }
    }
}

/// A thinking block of a reply.
#[derive(Clone, Debug)]
pub(crate) struct ThinkingPart {
    pub chunks: Vec<String>,
    pub signature: String,
}

impl ThinkingPart {
    pub fn text(&self) -> String {
        self.chunks.concat()
    }
}

/// A tool call of a reply.
#[derive(Clone, Debug)]
pub(crate) struct ToolPart {
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Value,
    /// `arguments` serialized compactly, split into >= 2 fragments (when >= 2 chars).
    pub fragments: Vec<String>,
}

impl ToolPart {
    pub fn arguments_json(&self) -> String {
        self.fragments.concat()
    }
}

/// What the fake model says, independent of protocol.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reply {
    pub thinking: Option<ThinkingPart>,
    /// Text deltas; `None` = no text block at all.
    pub text: Option<Vec<String>>,
    pub tools: Vec<ToolPart>,
}

impl Reply {
    pub fn full_text(&self) -> String {
        self.text.as_ref().map(|c| c.concat()).unwrap_or_default()
    }

    /// Fake output token count: ceil(chars / 4) of everything generated, at least 1.
    pub fn output_tokens(&self) -> u64 {
        let mut chars = self.full_text().chars().count();
        if let Some(t) = &self.thinking {
            chars += t.text().chars().count();
        }
        for t in &self.tools {
            chars += t.name.chars().count() + t.arguments_json().chars().count();
        }
        (chars as u64).div_ceil(4).max(1)
    }
}

/// How SSE frames are delivered.
#[derive(Clone, Debug, Default)]
pub(crate) struct Delivery {
    /// Wait before sending the response headers.
    pub header_delay: Duration,
    /// Pause before every event (except the first).
    pub event_interval: Duration,
    /// Pause before every text delta event (overrides `event_interval` for them).
    pub delta_interval: Option<Duration>,
    /// After this many events, pause for the duration.
    pub stall: Option<(usize, Duration)>,
    /// After this many events, abort the connection.
    pub abort_after: Option<usize>,
}

/// The outcome of planning one request.
#[derive(Clone, Debug)]
pub(crate) enum Action {
    Reply(Reply, Delivery),
    Error {
        header_delay: Duration,
        status: u16,
        body: serde_json::Value,
        headers: Vec<(String, String)>,
    },
}

/// Splits `text` into `n` nearly equal pieces on char boundaries (fewer if text is shorter).
pub(crate) fn split_chunks(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let n = n.clamp(1, chars.len());
    let base = chars.len() / n;
    let extra = chars.len() % n;
    let mut out = Vec::with_capacity(n);
    let mut pos = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        out.push(chars[pos..pos + len].iter().collect());
        pos += len;
    }
    out
}

/// Automatic delta count: roughly one delta per 8 chars, between 2 and 16.
fn auto_chunks(text: &str) -> usize {
    (text.chars().count() / 8).clamp(2, 16)
}

/// Text deltas for a default (unscripted) reply: exactly `n` non-empty deltas when
/// `stream_events` is set (the text is repeated if it is too short), else automatic.
fn default_chunks(text: &str, stream_events: Option<usize>) -> Vec<String> {
    match stream_events {
        Some(n) if n > 0 => {
            let mut t = text.to_string();
            if t.is_empty() {
                t.push_str("ok");
            }
            while t.chars().count() < n {
                t.push(' ');
                t.push_str(text);
            }
            split_chunks(&t, n)
        }
        _ => split_chunks(text, auto_chunks(text)),
    }
}

fn tool_part(id: String, name: String, arguments: serde_json::Value) -> ToolPart {
    let json = serde_json::to_string(&arguments).unwrap_or_else(|_| "{}".to_string());
    let fragments = split_chunks(&json, 3);
    ToolPart {
        id,
        name,
        arguments,
        fragments,
    }
}

fn text_reply(text: &str, chunks: usize) -> Reply {
    Reply {
        text: Some(split_chunks(text, chunks)),
        ..Reply::default()
    }
}

/// Plans the reply for one request.
pub(crate) fn plan(script: Option<Script>, default_text: &str, settings: &Settings) -> Action {
    let mut delivery = Delivery {
        event_interval: settings.event_interval,
        ..Delivery::default()
    };
    let mut script = script;
    // Unwrap (possibly nested) header delays.
    while let Some(Script::DelayHeaders(d, inner)) = script {
        delivery.header_delay += d;
        script = Some(*inner);
    }
    let reply = match script {
        None => Reply {
            text: Some(default_chunks(default_text, settings.stream_events)),
            ..Reply::default()
        },
        Some(Script::Text(t)) => text_reply(&t, auto_chunks(&t)),
        Some(Script::ToolCall {
            name,
            id,
            arguments,
            text,
        }) => Reply {
            text: text.map(|t| split_chunks(&t, auto_chunks(&t))),
            tools: vec![tool_part(id, name, arguments)],
            ..Reply::default()
        },
        Some(Script::ToolCalls { calls, text }) => Reply {
            text: text.map(|t| split_chunks(&t, auto_chunks(&t))),
            tools: calls
                .into_iter()
                .map(|(name, id, arguments)| tool_part(id, name, arguments))
                .collect(),
            ..Reply::default()
        },
        Some(Script::Thinking {
            thinking,
            signature,
            text,
        }) => Reply {
            thinking: Some(ThinkingPart {
                chunks: split_chunks(&thinking, auto_chunks(&thinking)),
                signature,
            }),
            text: Some(split_chunks(&text, auto_chunks(&text))),
            tools: Vec::new(),
        },
        Some(Script::Error {
            status,
            body,
            headers,
        }) => {
            return Action::Error {
                header_delay: delivery.header_delay,
                status,
                body,
                headers,
            };
        }
        Some(Script::SlowStream {
            text,
            chunks,
            interval,
        }) => {
            delivery.delta_interval = Some(interval);
            text_reply(&text, chunks.max(1))
        }
        Some(Script::Stall {
            first_events,
            stall,
            text,
        }) => {
            delivery.stall = Some((first_events, stall));
            text_reply(&text, auto_chunks(&text))
        }
        Some(Script::BrokenStream { text, after_events }) => {
            delivery.abort_after = Some(after_events);
            text_reply(&text, auto_chunks(&text))
        }
        Some(Script::DelayHeaders(..)) => Reply::default(), // unreachable: unwrapped above
    };
    Action::Reply(reply, delivery)
}

/// Per-request facts the protocol encoders need.
#[derive(Clone, Debug)]
pub(crate) struct Ctx {
    /// 1-based request number (ids and request-id headers).
    pub n: u64,
    /// Model name echoed from the request.
    pub model: String,
    /// Unix seconds.
    pub created: u64,
    /// Prompt-cache oracle verdict.
    pub usage: crate::cache_oracle::PromptUsage,
    /// The request body (for echoing fields such as `instructions`).
    pub request: serde_json::Value,
}

/// `"ok: " + first 200 chars of the last user text` (or the configured default text).
pub(crate) fn default_text(settings: &Settings, last_user_text: Option<String>) -> String {
    match &settings.default_text {
        Some(t) => t.clone(),
        None => {
            let user: String = last_user_text
                .unwrap_or_default()
                .chars()
                .take(200)
                .collect();
            format!("ok: {user}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_lossless_and_utf8_safe() {
        let t = "héllo wörld ✓✓✓";
        for n in 1..20 {
            let parts = split_chunks(t, n);
            assert_eq!(parts.concat(), t);
            assert!(parts.iter().all(|p| !p.is_empty()));
        }
        assert!(split_chunks("", 3).is_empty());
    }

    #[test]
    fn stream_events_gives_exact_delta_count() {
        let c = default_chunks("ok: hi", Some(64));
        assert_eq!(c.len(), 64);
        assert!(c.iter().all(|p| !p.is_empty()));
    }

    #[test]
    fn tool_arguments_have_two_or_more_fragments() {
        let t = tool_part("id".into(), "n".into(), serde_json::json!({}));
        assert_eq!(t.fragments.len(), 2);
        assert_eq!(t.arguments_json(), "{}");
    }
}
