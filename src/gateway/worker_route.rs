//! The worker route a request brings: where the gateway's own calls for that session go, with
//! which credential. The session's own upstream and credential headers by default; the
//! configured `LORE_WORKER_UPSTREAM` instead when set, with `LORE_WORKER_API_KEY`, or with the
//! session's credential only when the session talks to that same origin. A credential is never
//! sent to another provider, and the route lives in memory only.

use actix_web::http::header::HeaderMap;
use lore_actors::worker::{WorkerProtocol, WorkerRoute};
use lore_proto::Protocol;

use crate::memory_config::MemoryConfig;

/// Request headers that carry the credential or select the API version; copied to the route.
const CREDENTIAL_HEADERS: [&str; 8] = [
    "authorization",
    "x-api-key",
    "api-key",
    "anthropic-version",
    "anthropic-beta",
    "openai-organization",
    "openai-project",
    "x-goog-api-key",
];

/// Endpoint paths a base URL is followed by.
const ENDPOINTS: [&str; 6] = [
    "/v1/messages",
    "/messages",
    "/v1/chat/completions",
    "/chat/completions",
    "/v1/responses",
    "/responses",
];

/// The provider part of an endpoint URL: without its query and its endpoint path, so two
/// providers behind one host (`/anthropic/…`, `/openai/…`) stay apart.
fn provider_base(url: &str) -> &str {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let url = url.trim_end_matches('/');
    ENDPOINTS
        .iter()
        .find_map(|endpoint| url.strip_suffix(endpoint))
        .unwrap_or(url)
}

fn session_credentials(headers: &HeaderMap, extra: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = CREDENTIAL_HEADERS
        .iter()
        .filter_map(|name| {
            let value = headers.get(*name)?.to_str().ok()?;
            Some((name.to_string(), value.to_string()))
        })
        .collect();
    for (name, value) in extra {
        out.retain(|(existing, _)| !existing.eq_ignore_ascii_case(name));
        out.push((name.clone(), value.clone()));
    }
    out
}

/// The route of a request's session; `None` when the workers are off, the request names no
/// model, or no usable route exists (the Codex backend speaks only its own streaming dialect).
#[allow(clippy::too_many_arguments)]
pub fn worker_route(
    config: &MemoryConfig,
    protocol: Protocol,
    codex: bool,
    upstream_url: &str,
    headers: &HeaderMap,
    extra_headers: &[(String, String)],
    model: Option<&str>,
) -> Option<WorkerRoute> {
    if !config.enabled {
        return None;
    }
    let model = config.model.as_deref().or(model)?.to_string();
    if let Some(worker) = &config.upstream {
        let credentials = match &worker.api_key {
            Some(key) => match worker.protocol {
                WorkerProtocol::Anthropic => vec![
                    ("x-api-key".to_string(), key.clone()),
                    ("anthropic-version".to_string(), "2023-06-01".to_string()),
                ],
                _ => vec![("authorization".to_string(), format!("Bearer {key}"))],
            },
            None if provider_base(&worker.url) == provider_base(upstream_url) => {
                session_credentials(headers, extra_headers)
            }
            None => return None,
        };
        return Some(WorkerRoute::new(
            worker.protocol,
            worker.url.clone(),
            model,
            credentials,
        ));
    }
    if codex {
        return None;
    }
    let protocol = match protocol {
        Protocol::Anthropic => WorkerProtocol::Anthropic,
        Protocol::OpenAiChat => WorkerProtocol::OpenAiChat,
        Protocol::OpenAiResponses => WorkerProtocol::OpenAiResponses,
    };
    Some(WorkerRoute::new(
        protocol,
        upstream_url,
        model,
        session_credentials(headers, extra_headers),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};
    use std::collections::HashMap;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(
                HeaderName::from_static(name),
                HeaderValue::from_static(value),
            );
        }
        map
    }

    fn config(pairs: &[(&str, &str)]) -> MemoryConfig {
        let env: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        MemoryConfig::from_env(&env).unwrap()
    }

    #[test]
    fn a_session_route_reuses_its_own_upstream_and_credential_only() {
        let request = headers(&[
            ("x-api-key", "sk-ant"),
            ("anthropic-version", "2023-06-01"),
            ("cookie", "c"),
        ]);
        let route = worker_route(
            &config(&[]),
            Protocol::Anthropic,
            false,
            "https://api.anthropic.com/v1/messages",
            &request,
            &[],
            Some("claude-sonnet-4"),
        )
        .unwrap();
        assert_eq!(route.url, "https://api.anthropic.com/v1/messages");
        assert_eq!(route.model, "claude-sonnet-4");
        let names: Vec<&str> = route.headers().iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["x-api-key", "anthropic-version"]);
        assert!(!format!("{route:?}").contains("sk-ant"));
    }

    #[test]
    fn a_configured_worker_upstream_never_gets_another_providers_key() {
        let request = headers(&[("authorization", "Bearer sk-openai")]);
        let elsewhere = config(&[
            ("LORE_WORKER_UPSTREAM", "https://openrouter.ai/api/v1"),
            ("LORE_WORKER_MODEL", "openai/gpt-5-mini"),
        ]);
        assert!(
            worker_route(
                &elsewhere,
                Protocol::OpenAiChat,
                false,
                "https://api.openai.com/v1/chat/completions",
                &request,
                &[],
                Some("gpt-5")
            )
            .is_none()
        );
        let same = worker_route(
            &elsewhere,
            Protocol::OpenAiChat,
            false,
            "https://openrouter.ai/api/v1/chat/completions",
            &request,
            &[],
            Some("x"),
        )
        .unwrap();
        assert_eq!(same.model, "openai/gpt-5-mini");
        assert_eq!(same.headers()[0].1, "Bearer sk-openai");
        let keyed = config(&[
            ("LORE_WORKER_UPSTREAM", "https://openrouter.ai/api/v1"),
            ("LORE_WORKER_API_KEY", "sk-or"),
        ]);
        let route = worker_route(
            &keyed,
            Protocol::Anthropic,
            false,
            "https://api.anthropic.com/v1/messages",
            &request,
            &[],
            Some("m"),
        )
        .unwrap();
        assert_eq!(
            route.headers(),
            [("authorization".to_string(), "Bearer sk-or".to_string())]
        );
    }

    #[test]
    fn one_host_with_two_providers_is_two_providers() {
        let request = headers(&[("authorization", "Bearer sk-openai")]);
        let config = config(&[(
            "LORE_WORKER_UPSTREAM",
            "https://gateway.example/anthropic/v1/messages",
        )]);
        let other = "https://gateway.example/openai/v1/chat/completions";
        assert!(
            worker_route(
                &config,
                Protocol::OpenAiChat,
                false,
                other,
                &request,
                &[],
                Some("m")
            )
            .is_none()
        );
        let same = "https://gateway.example/anthropic/v1/messages?beta=true";
        assert!(
            worker_route(
                &config,
                Protocol::Anthropic,
                false,
                same,
                &request,
                &[],
                Some("m")
            )
            .is_some()
        );
    }

    #[test]
    fn no_model_or_workers_off_means_no_route() {
        let request = headers(&[]);
        assert!(
            worker_route(
                &config(&[]),
                Protocol::OpenAiChat,
                false,
                "http://x/v1/chat/completions",
                &request,
                &[],
                None
            )
            .is_none()
        );
        assert!(
            worker_route(
                &config(&[("LORE_MEMORY", "off")]),
                Protocol::OpenAiChat,
                false,
                "http://x/v1/chat/completions",
                &request,
                &[],
                Some("m")
            )
            .is_none()
        );
        assert!(
            worker_route(
                &config(&[]),
                Protocol::OpenAiResponses,
                true,
                "https://chatgpt.com/backend-api/codex/responses",
                &request,
                &[],
                Some("m")
            )
            .is_none()
        );
    }
}
