//! `WorkerClient`: one worker call over awc, with its retries, its error reporting and the
//! usage and cost of the reply.
//!
//! Retried: network errors, attempts that time out, and 429, 500, 502, 503, 504 and 529, up
//! to `max_attempts` attempts, after `min(max_delay, base_delay × 2^(attempt-1))` or the
//! `retry-after` seconds (capped at `max_delay`). 401 and 403 mean the credential was
//! refused and are reported at once. Errors carry the origin, the status and the provider's
//! message, never a request header.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use awc::error::SendRequestError;
use bytes::Bytes;
use lore_storage::memory::UsageTotals;
use serde_json::Value;

use super::{WorkerCall, WorkerReply, WorkerRoute, wire};
use crate::catalogue::{self, Catalogue, Price};
use crate::error::ActorError;

/// Largest reply body read (a worker reply is a few KB).
const BODY_LIMIT: usize = 8 * 1024 * 1024;

/// Characters of a provider's error message kept in an error.
const MESSAGE_CHARS: usize = 300;

/// Settings of the worker client.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerSettings {
    /// Attempts per call, the first included.
    pub max_attempts: u32,
    /// Backoff before the second attempt; doubled for every further one.
    pub base_delay: Duration,
    /// Longest pause between attempts (also caps `retry-after`).
    pub max_delay: Duration,
    /// Deadline of one attempt, reply body included.
    pub attempt_timeout: Duration,
    /// `LORE_WORKER_PRICE`: a price that replaces the catalogue's.
    pub price_override: Option<Price>,
    /// The model catalogue (with `LORE_MODEL_OVERRIDES`) the calls are priced from.
    pub catalogue: Arc<Catalogue>,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            attempt_timeout: Duration::from_secs(120),
            price_override: None,
            catalogue: Catalogue::builtin(),
        }
    }
}

impl WorkerSettings {
    /// The pause after failed attempt number `attempt` (1-based).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(20);
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }
}

/// The worker client: pooled awc connections (rustls, webpki roots). Used on one arbiter.
#[derive(Clone)]
pub struct WorkerClient {
    client: awc::Client,
    settings: WorkerSettings,
}

impl fmt::Debug for WorkerClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkerClient")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// How one attempt ended.
enum Attempt {
    /// Worth another attempt after the pause (`retry-after` when the provider sent one).
    Retry {
        why: String,
        retry_after: Option<Duration>,
    },
    /// Final.
    Done(Result<WorkerReply, ActorError>),
}

impl WorkerClient {
    /// A client with a 10 s connect timeout and keep-alive connections.
    pub fn new(settings: WorkerSettings) -> Self {
        // awc's rustls connector needs a process-wide crypto provider; the gateway installs
        // the same one at start-up, and a second install is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let connector = awc::Connector::new()
            .timeout(Duration::from_secs(10))
            .conn_keep_alive(Duration::from_secs(60))
            .limit(16);
        let client = awc::Client::builder()
            .connector(connector)
            .disable_timeout()
            .no_default_headers()
            .max_redirects(0)
            .finish();
        Self { client, settings }
    }

    /// The settings it was made with.
    pub fn settings(&self) -> &WorkerSettings {
        &self.settings
    }

    /// Makes one worker call, retrying as the module documentation says. Empty text is not
    /// an error here; the caller decides.
    pub async fn call(
        &self,
        route: &WorkerRoute,
        call: &WorkerCall,
    ) -> Result<WorkerReply, ActorError> {
        self.call_when(route, call, &|| true).await
    }

    /// [`WorkerClient::call`], asking `may_start` before every attempt (the first and each
    /// retry); when it says no, the call stops with [`ActorError::WorkerYielded`].
    pub async fn call_when(
        &self,
        route: &WorkerRoute,
        call: &WorkerCall,
        may_start: &dyn Fn() -> bool,
    ) -> Result<WorkerReply, ActorError> {
        let body = match serde_json::to_vec(&wire::request_body(route, call)) {
            Ok(body) => Bytes::from(body),
            Err(err) => {
                return Err(ActorError::WorkerFailed(format!(
                    "the request to {} could not be written: {err}",
                    route.origin()
                )));
            }
        };
        let user_agent = format!(
            "lore-worker/{} ({})",
            env!("CARGO_PKG_VERSION"),
            call.bucket.as_str()
        );
        let max_attempts = self.settings.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            if !may_start() {
                return Err(ActorError::WorkerYielded);
            }
            let outcome = match actix::clock::timeout(
                self.settings.attempt_timeout,
                self.attempt(route, &user_agent, body.clone()),
            )
            .await
            {
                Ok(outcome) => outcome,
                Err(_) => Attempt::Retry {
                    why: format!(
                        "no complete reply within {} s",
                        self.settings.attempt_timeout.as_secs_f64()
                    ),
                    retry_after: None,
                },
            };
            match outcome {
                Attempt::Done(result) => return result,
                Attempt::Retry { why, .. } if attempt >= max_attempts => {
                    return Err(ActorError::WorkerFailed(format!(
                        "{} failed after {attempt} attempt(s): {why}",
                        route.origin()
                    )));
                }
                Attempt::Retry { why, retry_after } => {
                    let delay = retry_after
                        .map(|wanted| wanted.min(self.settings.max_delay))
                        .unwrap_or_else(|| self.settings.backoff(attempt));
                    tracing::debug!(
                        origin = route.origin(),
                        attempt,
                        delay_ms = delay.as_millis() as u64,
                        why = why.as_str(),
                        "worker call failed; retrying"
                    );
                    actix::clock::sleep(delay).await;
                }
            }
            attempt += 1;
        }
    }

    async fn attempt(&self, route: &WorkerRoute, user_agent: &str, body: Bytes) -> Attempt {
        let mut request = self.client.post(&route.url);
        for (name, value) in route.headers() {
            request = request.insert_header((name.as_str(), value.as_str()));
        }
        let request = request
            .insert_header(("content-type", "application/json"))
            .insert_header(("user-agent", user_agent));
        let mut response = match request.send_body(body).await {
            Ok(response) => response,
            Err(err) if is_retryable_error(&err) => {
                return Attempt::Retry {
                    why: err.to_string(),
                    retry_after: None,
                };
            }
            Err(err) => {
                return Attempt::Done(Err(ActorError::WorkerFailed(format!(
                    "the request to {} could not be sent: {err}",
                    route.origin()
                ))));
            }
        };
        let status = response.status().as_u16();
        if matches!(status, 401 | 403) {
            return Attempt::Done(Err(ActorError::WorkerCredentialRefused {
                status,
                origin: route.origin().to_string(),
            }));
        }
        let retry_after = retry_after(response.headers());
        let bytes = match response.body().limit(BODY_LIMIT).await {
            Ok(bytes) => bytes,
            Err(err) => {
                return Attempt::Retry {
                    why: format!("the reply ({status}) broke off: {err}"),
                    retry_after: None,
                };
            }
        };
        if is_retryable_status(status) {
            return Attempt::Retry {
                why: format!("{status}: {}", provider_message(&bytes)),
                retry_after,
            };
        }
        if !(200..300).contains(&status) {
            return Attempt::Done(Err(ActorError::WorkerFailed(format!(
                "{} answered {status}: {}",
                route.origin(),
                provider_message(&bytes)
            ))));
        }
        Attempt::Done(self.reply(route, &bytes))
    }

    fn reply(&self, route: &WorkerRoute, bytes: &[u8]) -> Result<WorkerReply, ActorError> {
        let (text, model, usage) = wire::parse_reply(route.protocol, bytes).map_err(|err| {
            ActorError::WorkerFailed(format!(
                "the reply of {} could not be read: {err}",
                route.origin()
            ))
        })?;
        let model = model.unwrap_or_else(|| route.model.clone());
        let price = self
            .settings
            .price_override
            .unwrap_or_else(|| self.settings.catalogue.lookup(&model).price);
        let usage = UsageTotals {
            calls: 1,
            cost_usd: catalogue::cost(&usage, price),
            ..usage
        };
        Ok(WorkerReply { text, model, usage })
    }
}

/// Longest `retry-after` read from a reply (the settings' `max_delay` caps it further).
const RETRY_AFTER_CAP_SECS: f64 = 3_600.0;

fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504 | 529)
}

fn is_retryable_error(err: &SendRequestError) -> bool {
    matches!(
        err,
        SendRequestError::Connect(_) | SendRequestError::Timeout | SendRequestError::Send(_)
    )
}

fn retry_after(headers: &awc::http::header::HeaderMap) -> Option<Duration> {
    let raw = headers.get("retry-after")?.to_str().ok()?;
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|secs| secs.is_finite() && *secs >= 0.0)
        // Capped before converting: a huge value must not overflow a `Duration`.
        .map(|secs| Duration::from_secs_f64(secs.min(RETRY_AFTER_CAP_SECS)))
}

/// The provider's error message: JSON `error.message` (or a string `error`, or `message`),
/// else the body itself, cut to [`MESSAGE_CHARS`] characters.
pub fn provider_message(body: &[u8]) -> String {
    let from_json = serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| {
            [
                value.pointer("/error/message"),
                value.get("error"),
                value.get("message"),
            ]
            .into_iter()
            .flatten()
            .find_map(Value::as_str)
            .map(str::to_string)
        });
    let message = from_json.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    let message = message.trim();
    if message.is_empty() {
        return "(empty body)".into();
    }
    let mut chars = message.chars();
    let cut: String = chars.by_ref().take(MESSAGE_CHARS).collect();
    if chars.next().is_some() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_retry_after_is_capped_not_a_panic() {
        let mut headers = awc::http::header::HeaderMap::new();
        headers.insert(
            awc::http::header::HeaderName::from_static("retry-after"),
            awc::http::header::HeaderValue::from_static("1e20"),
        );
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3_600)));
    }

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let settings = WorkerSettings::default();
        assert_eq!(settings.backoff(1), Duration::from_secs(1));
        assert_eq!(settings.backoff(2), Duration::from_secs(2));
        assert_eq!(settings.backoff(3), Duration::from_secs(4));
        assert_eq!(settings.backoff(10), Duration::from_secs(30));
        assert_eq!(settings.backoff(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn provider_messages_are_found_and_cut() {
        let anthropic = br#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}"#;
        assert_eq!(provider_message(anthropic), "max_tokens: too big");
        assert_eq!(provider_message(br#"{"error":"nope"}"#), "nope");
        assert_eq!(provider_message(b"plain failure"), "plain failure");
        assert_eq!(provider_message(b""), "(empty body)");
        let long = "é".repeat(500);
        assert_eq!(
            provider_message(long.as_bytes()).chars().count(),
            MESSAGE_CHARS + 1
        );
    }
}
