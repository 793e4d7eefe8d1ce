//! Calling the upstream: one pooled awc client per worker thread, `TCP_NODELAY` on every
//! connection, no timeout on the response body, and retries of failures that happened before
//! any byte reached the client.
//!
//! Retried: connection failures, a missing response within the attempt timeout, and 502/503/504
//! (honouring `retry-after` up to the backoff cap). Not retried: every other status (a 429 or a
//! 500 goes back to the client with its headers, so the client's own backoff applies), and
//! anything after the response started streaming to the client.

use std::time::Duration;

use actix_service::Service;
use actix_tls::connect::{ConnectError, ConnectInfo, Connection, Connector as TcpConnector};
use actix_web::http::{Method, StatusCode, Uri};
use awc::ClientResponse;
use awc::error::SendRequestError;
use bytes::Bytes;
use tracing::{debug, warn};

use crate::config::RetryPolicy;
use crate::gateway::headers::forward_request_header;

/// The per-worker upstream client.
pub struct UpstreamClient {
    client: awc::Client,
}

impl UpstreamClient {
    /// A WebSocket handshake to `url` (`ws://` or `wss://`) on the same connector.
    pub fn ws(&self, url: &str) -> awc::ws::WebsocketsRequest {
        self.client.ws(url)
    }

    /// A client with pooled keep-alive connections and `TCP_NODELAY`.
    pub fn new() -> Self {
        let tcp = TcpConnector::default().service();
        let nodelay = actix_service::fn_service(move |info: ConnectInfo<Uri>| {
            let connecting = tcp.call(info);
            async move {
                let connection: Connection<Uri, actix_rt::net::TcpStream> = connecting.await?;
                // Nagle's algorithm would hold small SSE events back for up to 40 ms.
                if let Err(err) = connection.io_ref().set_nodelay(true) {
                    debug!(error = %err, "could not set TCP_NODELAY");
                }
                Ok::<_, ConnectError>(connection)
            }
        });
        let connector = awc::Connector::new()
            .connector(nodelay)
            .timeout(Duration::from_secs(10))
            .conn_keep_alive(Duration::from_secs(60))
            .limit(256);
        let client = awc::Client::builder()
            .connector(connector)
            .disable_timeout()
            .no_default_headers()
            .max_redirects(0)
            .finish();
        Self { client }
    }
}

impl Default for UpstreamClient {
    fn default() -> Self {
        Self::new()
    }
}

/// What to send upstream.
pub struct Outbound<'a> {
    /// HTTP method.
    pub method: Method,
    /// Full upstream URL.
    pub url: &'a str,
    /// The client's request headers (filtered here).
    pub client_headers: &'a actix_web::http::header::HeaderMap,
    /// `LORE_UPSTREAM_EXTRA_HEADERS`, applied last.
    pub extra_headers: &'a [(String, String)],
    /// Body bytes (actix-web has already decoded any `content-encoding`).
    pub body: Bytes,
}

/// Why the upstream could not be reached.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    /// Every attempt failed before a response arrived.
    #[error("{0}")]
    Unreachable(String),
}

/// Sends the request, retrying as the module documentation describes.
pub async fn send(
    upstream: &UpstreamClient,
    outbound: &Outbound<'_>,
    policy: &RetryPolicy,
) -> Result<ClientResponse, ForwardError> {
    let mut attempt = 1;
    loop {
        let result = build(upstream, outbound, policy.attempt_timeout)
            .send_body(outbound.body.clone())
            .await;
        let last = attempt >= policy.max_attempts;
        match result {
            Ok(response) if is_retryable_status(response.status()) && !last => {
                let delay = retry_after(&response)
                    .map(|wanted| wanted.min(policy.max_delay))
                    .unwrap_or_else(|| policy.backoff(attempt));
                warn!(status = %response.status(), attempt, delay_ms = delay.as_millis() as u64, "upstream unavailable; retrying");
                drop(response);
                actix_rt::time::sleep(delay).await;
            }
            Ok(response) => return Ok(response),
            Err(err) if !last && is_retryable_error(&err) => {
                let delay = policy.backoff(attempt);
                warn!(error = %err, attempt, delay_ms = delay.as_millis() as u64, "upstream unreachable; retrying");
                actix_rt::time::sleep(delay).await;
            }
            Err(err) => {
                return Err(ForwardError::Unreachable(format!(
                    "could not reach the upstream at {} after {attempt} attempt(s): {err}. Check LORE_UPSTREAM_ANTHROPIC / LORE_UPSTREAM_OPENAI or the X-Lore-Upstream-URL header, and that the provider is reachable",
                    origin(outbound.url)
                )));
            }
        }
        attempt += 1;
    }
}

fn build(
    upstream: &UpstreamClient,
    outbound: &Outbound<'_>,
    timeout: Duration,
) -> awc::ClientRequest {
    let mut request = upstream
        .client
        .request(outbound.method.clone(), outbound.url)
        .timeout(timeout);
    for (name, value) in outbound.client_headers.iter() {
        let overridden = outbound
            .extra_headers
            .iter()
            .any(|(extra, _)| name.as_str() == extra);
        if forward_request_header(name.as_str()) && !overridden {
            request = request.append_header((name.clone(), value.clone()));
        }
    }
    for (name, value) in outbound.extra_headers {
        request = request.insert_header((name.as_str(), value.as_str()));
    }
    // Ask for an uncompressed reply: the gateway reads the stream it relays.
    request.insert_header(("accept-encoding", "identity"))
}

fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 502..=504)
}

fn is_retryable_error(err: &SendRequestError) -> bool {
    matches!(
        err,
        SendRequestError::Connect(_) | SendRequestError::Timeout | SendRequestError::Send(_)
    )
}

fn retry_after(response: &ClientResponse) -> Option<Duration> {
    let raw = response.headers().get("retry-after")?.to_str().ok()?;
    raw.trim()
        .parse::<f64>()
        .ok()
        .filter(|secs| secs.is_finite() && *secs >= 0.0)
        .map(Duration::from_secs_f64)
}

/// `scheme://host[:port]` of a URL, for messages (never the path or query).
pub fn origin(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            format!("{scheme}://{}", rest.split(['/', '?']).next().unwrap_or(""))
        }
        None => url.to_string(),
    }
}
