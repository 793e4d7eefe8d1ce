//! Tests of upstream resolution.

use super::*;
use crate::gateway::upstream::sanitize::sanitize_base;

fn config(pairs: &[(&str, &str)]) -> UpstreamConfig {
    let env = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    UpstreamConfig::from_env(&env, false).unwrap()
}

fn url(
    cfg: &UpstreamConfig,
    protocol: Protocol,
    path: &str,
    over: Option<&str>,
    provider: Option<&str>,
    model: Option<&str>,
) -> String {
    resolve(
        cfg,
        Ingress::Llm {
            protocol,
            codex: false,
        },
        path,
        over,
        provider,
        model,
    )
    .unwrap()
    .url
}

#[test]
fn resolution_order_is_override_provider_model_default() {
    let cfg = config(&[
        ("LORE_UPSTREAM_ANTHROPIC", "http://corp.example/v1/"),
        ("LORE_UPSTREAM_OLLAMA", "http://10.0.0.5:11434"),
    ]);
    assert_eq!(
        url(
            &cfg,
            Protocol::Anthropic,
            "/v1/messages",
            None,
            None,
            Some("claude-sonnet-4")
        ),
        "http://corp.example/v1/messages"
    );
    assert_eq!(
        url(
            &cfg,
            Protocol::Anthropic,
            "/v1/messages",
            Some("https://x.example/v1"),
            Some("ollama"),
            None
        ),
        "https://x.example/v1/messages"
    );
    assert_eq!(
        url(
            &cfg,
            Protocol::OpenAiChat,
            "/v1/chat/completions",
            None,
            Some("ollama"),
            Some("gpt-4o")
        ),
        "http://10.0.0.5:11434/v1/chat/completions"
    );
    assert_eq!(
        url(
            &cfg,
            Protocol::OpenAiChat,
            "/v1/chat/completions",
            None,
            None,
            Some("deepseek-chat")
        ),
        "https://api.deepseek.com/v1/chat/completions"
    );
    assert_eq!(
        url(
            &cfg,
            Protocol::OpenAiChat,
            "/v1/chat/completions",
            None,
            None,
            Some("gemini-2.5-pro")
        ),
        "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"
    );
    assert_eq!(
        url(
            &cfg,
            Protocol::OpenAiChat,
            "/v1/chat/completions",
            None,
            None,
            Some("gpt-4o")
        ),
        "https://api.openai.com/v1/chat/completions"
    );
    // A Claude model on the OpenAI route stays on the OpenAI default: no translation.
    assert_eq!(
        url(
            &cfg,
            Protocol::OpenAiChat,
            "/v1/chat/completions?x=1",
            None,
            None,
            Some("claude-3")
        ),
        "https://api.openai.com/v1/chat/completions?x=1"
    );
}

#[test]
fn codex_goes_to_the_backend_path() {
    let cfg = config(&[]);
    let resolved = resolve(
        &cfg,
        Ingress::Llm {
            protocol: Protocol::OpenAiResponses,
            codex: true,
        },
        "/v1/codex/responses",
        None,
        None,
        Some("gpt-5"),
    )
    .unwrap();
    assert_eq!(
        resolved.url,
        "https://chatgpt.com/backend-api/codex/responses"
    );
}

#[test]
fn other_codex_backend_paths_go_to_the_backend_too() {
    let cfg = config(&[]);
    let resolved = resolve(
        &cfg,
        Ingress::Other {
            protocol: Protocol::OpenAiResponses,
        },
        "/v1/codex/models?client_version=0.171.0",
        None,
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        resolved.url,
        "https://chatgpt.com/backend-api/codex/models?client_version=0.171.0"
    );
    let other = resolve(
        &cfg,
        Ingress::Other {
            protocol: Protocol::OpenAiResponses,
        },
        "/v1/models",
        None,
        None,
        None,
    )
    .unwrap();
    assert_eq!(other.url, "https://api.openai.com/v1/models");
}

#[test]
fn bad_overrides_are_refused_with_a_reason() {
    assert!(sanitize_base("ftp://x").unwrap_err().contains("scheme"));
    assert!(
        sanitize_base("https://user:pw@x.example")
            .unwrap_err()
            .contains("credentials")
    );
    assert!(
        sanitize_base(&format!("https://{}", "a".repeat(2100)))
            .unwrap_err()
            .contains("2048")
    );
    assert_eq!(
        sanitize_base("https://x.example/\u{7}v1\n").unwrap(),
        "https://x.example"
    );
    assert_eq!(
        sanitize_base("HTTP://x.example:8000/api/v1").unwrap(),
        "http://x.example:8000/api"
    );
}

#[test]
fn unknown_provider_and_wrong_protocol_say_what_to_do() {
    let cfg = config(&[]);
    let err = resolve(
        &cfg,
        Ingress::Llm {
            protocol: Protocol::Anthropic,
            codex: false,
        },
        "/v1/messages",
        None,
        Some("nope"),
        None,
    )
    .unwrap_err();
    assert!(err.to_string().contains("known: "), "{err}");
    let err = resolve(
        &cfg,
        Ingress::Llm {
            protocol: Protocol::Anthropic,
            codex: false,
        },
        "/v1/messages",
        None,
        Some("groq"),
        None,
    )
    .unwrap_err();
    assert!(matches!(err, UpstreamError::WrongProtocol(..)));
}

#[test]
fn remote_gateways_only_allow_listed_origins() {
    let env: HashMap<String, String> = [(
        "LORE_CALLER_UPSTREAM_ALLOWLIST".to_string(),
        "https://llm.example.com:8443, https://b.example".to_string(),
    )]
    .into();
    let cfg = UpstreamConfig::from_env(&env, true).unwrap();
    let ingress = Ingress::Llm {
        protocol: Protocol::Anthropic,
        codex: false,
    };
    assert!(
        resolve(
            &cfg,
            ingress,
            "/v1/messages",
            Some("https://llm.example.com:8443/v1"),
            None,
            None
        )
        .is_ok()
    );
    assert!(
        resolve(
            &cfg,
            ingress,
            "/v1/messages",
            Some("https://b.example"),
            None,
            None
        )
        .is_ok()
    );
    assert!(
        resolve(
            &cfg,
            ingress,
            "/v1/messages",
            Some("https://llm.example.com"),
            None,
            None
        )
        .is_err()
    );
    let bad: HashMap<String, String> = [(
        "LORE_CALLER_UPSTREAM_ALLOWLIST".to_string(),
        "http://a.example".to_string(),
    )]
    .into();
    assert!(UpstreamConfig::from_env(&bad, true).is_err());
}
