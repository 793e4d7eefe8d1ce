//! Tests of the worker wire formats: request bodies per protocol and provider, reply parsing.

#![allow(clippy::unwrap_used)]

use super::*;
use lore_storage::memory::WorkerBucket;

fn route(protocol: WorkerProtocol, url: &str, model: &str) -> WorkerRoute {
    WorkerRoute::new(protocol, url, model, Vec::new())
}

fn call() -> WorkerCall {
    WorkerCall {
        bucket: WorkerBucket::Distillation,
        system: "be brief".into(),
        user: "hello".into(),
        max_tokens: 512,
    }
}

#[test]
fn anthropic_body() {
    let body = request_body(
        &route(
            WorkerProtocol::Anthropic,
            "https://api.anthropic.com/v1/messages",
            "claude-haiku-4-5",
        ),
        &call(),
    );
    assert_eq!(
        body,
        json!({
            "model": "claude-haiku-4-5",
            "max_tokens": 512,
            "temperature": 0,
            "system": "be brief",
            "messages": [{"role": "user", "content": "hello"}],
        })
    );
}

#[test]
fn chat_body_names_its_limit_by_host() {
    let openai = request_body(
        &route(
            WorkerProtocol::OpenAiChat,
            "https://api.openai.com/v1/chat/completions",
            "gpt-4.1-mini",
        ),
        &call(),
    );
    assert_eq!(openai["max_completion_tokens"], 512);
    assert!(openai.get("max_tokens").is_none());
    assert_eq!(openai["temperature"], 0);
    assert_eq!(
        openai["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(
        openai["messages"][1],
        json!({"role": "user", "content": "hello"})
    );
    assert!(openai.get("provider").is_none());

    let local = request_body(
        &route(
            WorkerProtocol::OpenAiChat,
            "http://127.0.0.1:8080/v1/chat/completions",
            "llama",
        ),
        &call(),
    );
    assert_eq!(local["max_tokens"], 512);
    assert!(local.get("max_completion_tokens").is_none());
}

#[test]
fn reasoning_models_get_no_temperature() {
    for model in [
        "gpt-5-mini",
        "openai/gpt-5-nano",
        "o3-mini",
        "o4-mini",
        "o1",
    ] {
        for protocol in [WorkerProtocol::OpenAiChat, WorkerProtocol::OpenAiResponses] {
            let body = request_body(
                &route(protocol, "https://api.openai.com/v1/x", model),
                &call(),
            );
            assert!(body.get("temperature").is_none(), "{model}");
        }
    }
    let body = request_body(
        &route(
            WorkerProtocol::OpenAiResponses,
            "https://api.openai.com/v1/responses",
            "gpt-4o-mini",
        ),
        &call(),
    );
    assert_eq!(body["temperature"], 0);
}

#[test]
fn responses_body() {
    let body = request_body(
        &route(
            WorkerProtocol::OpenAiResponses,
            "https://api.openai.com/v1/responses",
            "gpt-5-mini",
        ),
        &call(),
    );
    assert_eq!(
        body,
        json!({
            "model": "gpt-5-mini",
            "instructions": "be brief",
            "input": [{"role": "user", "content": "hello"}],
            "max_output_tokens": 512 + 2_048,
            "store": false,
            "reasoning": {"effort": "low"},
        })
    );
}

#[test]
fn openrouter_is_asked_to_sort_by_price() {
    for url in [
        "https://openrouter.ai/api/v1/chat/completions",
        "https://eu.openrouter.ai/api/v1/chat/completions",
        "https://user@OpenRouter.ai:443/api/v1/chat/completions",
    ] {
        let body = request_body(
            &route(WorkerProtocol::OpenAiChat, url, "openai/gpt-4o-mini"),
            &call(),
        );
        assert_eq!(body["provider"], json!({"sort": "price"}), "{url}");
    }
    let body = request_body(
        &route(
            WorkerProtocol::OpenAiChat,
            "https://notopenrouter.ai/v1/chat/completions",
            "m",
        ),
        &call(),
    );
    assert!(body.get("provider").is_none());
}

#[test]
fn hosts() {
    assert_eq!(host("https://api.openai.com/v1/x"), "api.openai.com");
    assert_eq!(host("http://127.0.0.1:9/v1"), "127.0.0.1");
    assert_eq!(host("http://[::1]:9/v1"), "::1");
    assert_eq!(host("api.openai.com"), "api.openai.com");
}

#[test]
fn anthropic_reply() {
    let body = json!({
        "model": "claude-haiku-4-5-20251001",
        "content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "one "},
            {"type": "text", "text": "two"},
        ],
        "usage": {"input_tokens": 10, "output_tokens": 5,
                  "cache_read_input_tokens": 7, "cache_creation_input_tokens": 3},
    });
    let (text, model, usage) =
        parse_reply(WorkerProtocol::Anthropic, body.to_string().as_bytes()).unwrap();
    assert_eq!(text, "one two");
    assert_eq!(model.as_deref(), Some("claude-haiku-4-5-20251001"));
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens
        ),
        (10, 5, 7, 3)
    );
}

#[test]
fn chat_reply() {
    let body = json!({
        "model": "gpt-4o-mini",
        "choices": [{"message": {"role": "assistant", "content": "hi"}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 4,
                  "prompt_tokens_details": {"cached_tokens": 60}},
    });
    let (text, _, usage) =
        parse_reply(WorkerProtocol::OpenAiChat, body.to_string().as_bytes()).unwrap();
    assert_eq!(text, "hi");
    assert_eq!(
        (
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.output_tokens
        ),
        (40, 60, 4)
    );
    let null = json!({"choices": [{"message": {"content": null}}]});
    let (text, model, usage) =
        parse_reply(WorkerProtocol::OpenAiChat, null.to_string().as_bytes()).unwrap();
    assert_eq!(text, "");
    assert_eq!(model, None);
    assert_eq!(usage, UsageTotals::default());
}

#[test]
fn responses_reply() {
    let body = json!({
        "model": "gpt-5-mini",
        "output": [
            {"type": "reasoning", "summary": []},
            {"type": "message", "content": [
                {"type": "output_text", "text": "a"},
                {"type": "refusal", "refusal": "no"},
                {"type": "output_text", "text": "b"},
            ]},
        ],
        "usage": {"input_tokens": 50, "output_tokens": 9,
                  "input_tokens_details": {"cached_tokens": 20}},
    });
    let (text, _, usage) =
        parse_reply(WorkerProtocol::OpenAiResponses, body.to_string().as_bytes()).unwrap();
    assert_eq!(text, "ab");
    assert_eq!(
        (
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.output_tokens
        ),
        (30, 20, 9)
    );
}

#[test]
fn unreadable_replies_are_errors() {
    assert!(parse_reply(WorkerProtocol::Anthropic, b"not json").is_err());
    assert!(parse_reply(WorkerProtocol::Anthropic, b"[1]").is_err());
    assert!(parse_reply(WorkerProtocol::Anthropic, b"{\"type\":\"error\"}").is_err());
    assert!(parse_reply(WorkerProtocol::OpenAiChat, b"{\"choices\":[]}").is_err());
    assert!(parse_reply(WorkerProtocol::OpenAiResponses, b"{}").is_err());
}
