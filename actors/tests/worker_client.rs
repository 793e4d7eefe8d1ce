//! The worker client against the fake upstream: one call per protocol, retries of 5xx and
//! 429 (with `retry-after`), a refused credential, a provider error, an unreachable upstream.

#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use lore_actors::ActorError;
use lore_actors::worker::{WorkerCall, WorkerClient, WorkerProtocol, WorkerRoute, WorkerSettings};
use lore_storage::memory::WorkerBucket;
use lore_test_support::{FakeUpstream, Script, WorkerScript};
use serde_json::json;

fn fast() -> WorkerSettings {
    WorkerSettings {
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_secs(2),
        attempt_timeout: Duration::from_secs(10),
        ..WorkerSettings::default()
    }
}

fn route(up: &FakeUpstream, protocol: WorkerProtocol) -> WorkerRoute {
    let (path, model, headers) = match protocol {
        WorkerProtocol::Anthropic => (
            "/v1/messages",
            "claude-haiku-4-5",
            vec![
                ("x-api-key".to_string(), "sk-ant-worker".to_string()),
                ("anthropic-version".to_string(), "2023-06-01".to_string()),
            ],
        ),
        WorkerProtocol::OpenAiChat => (
            "/v1/chat/completions",
            "gpt-4o-mini",
            vec![("authorization".to_string(), "Bearer sk-worker".to_string())],
        ),
        WorkerProtocol::OpenAiResponses => (
            "/v1/responses",
            "gpt-5-mini",
            vec![("authorization".to_string(), "Bearer sk-worker".to_string())],
        ),
    };
    WorkerRoute::new(protocol, format!("{}{path}", up.url()), model, headers)
}

fn call(bucket: WorkerBucket) -> WorkerCall {
    WorkerCall {
        bucket,
        system: "You are terse.".into(),
        user: "Say something about the build.".into(),
        max_tokens: 256,
    }
}

#[actix_rt::test]
async fn one_call_per_protocol_returns_text_usage_and_cost() {
    let up = FakeUpstream::start();
    let client = WorkerClient::new(fast());
    for protocol in [
        WorkerProtocol::Anthropic,
        WorkerProtocol::OpenAiChat,
        WorkerProtocol::OpenAiResponses,
    ] {
        up.push_worker(WorkerScript::Text(format!("answer over {protocol:?}")));
        let route = route(&up, protocol);
        let reply = client
            .call(&route, &call(WorkerBucket::Curation))
            .await
            .unwrap();
        assert_eq!(reply.text, format!("answer over {protocol:?}"));
        assert_eq!(reply.model, route.model);
        assert_eq!(reply.usage.calls, 1);
        assert!(reply.usage.input_tokens > 0, "{protocol:?}");
        assert!(reply.usage.output_tokens > 0, "{protocol:?}");
        assert!(reply.usage.cost_usd > 0.0, "{protocol:?}");
    }
    let calls = up.worker_calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        calls.iter().map(|c| c.path.as_str()).collect::<Vec<_>>(),
        ["/v1/messages", "/v1/chat/completions", "/v1/responses"]
    );
    assert!(calls.iter().all(|c| c.bucket == "curation"));
    assert_eq!(calls[0].body["system"], "You are terse.");
    assert_eq!(calls[2].body["instructions"], "You are terse.");
}

#[actix_rt::test]
async fn the_user_agent_names_the_bucket_and_headers_reach_the_upstream() {
    let up = FakeUpstream::start();
    let client = WorkerClient::new(fast());
    client
        .call(
            &route(&up, WorkerProtocol::Anthropic),
            &call(WorkerBucket::QueryExpansion),
        )
        .await
        .unwrap();
    let sent = up.requests().pop().unwrap();
    let agent = sent.header("user-agent").unwrap();
    assert!(agent.starts_with("lore-worker/"), "{agent}");
    assert!(agent.ends_with("(query_expansion)"), "{agent}");
    assert_eq!(sent.header("x-api-key"), Some("sk-ant-worker"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(up.worker_calls()[0].bucket, "query_expansion");
}

#[actix_rt::test]
async fn a_server_error_is_retried() {
    let up = FakeUpstream::start();
    up.push_worker(WorkerScript::Error {
        status: 500,
        body: json!({"error": {"message": "internal"}}),
    });
    up.push_worker(WorkerScript::Text("second time lucky".into()));
    let client = WorkerClient::new(fast());
    let reply = client
        .call(
            &route(&up, WorkerProtocol::OpenAiChat),
            &call(WorkerBucket::Distillation),
        )
        .await
        .unwrap();
    assert_eq!(reply.text, "second time lucky");
    assert_eq!(up.worker_calls().len(), 2);
}

#[actix_rt::test]
async fn a_rate_limit_waits_for_retry_after() {
    let up = FakeUpstream::start();
    // A conversation script that the worker call must not consume.
    up.push(Script::Text("for the conversation".into()));
    up.push_worker(WorkerScript::Error {
        status: 429,
        body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
    });
    up.push_worker(WorkerScript::Text("after the pause".into()));
    let client = WorkerClient::new(fast());
    let started = Instant::now();
    let reply = client
        .call(
            &route(&up, WorkerProtocol::Anthropic),
            &call(WorkerBucket::Distillation),
        )
        .await
        .unwrap();
    let waited = started.elapsed();
    assert_eq!(reply.text, "after the pause");
    assert!(waited >= Duration::from_millis(900), "{waited:?}");
    assert!(waited < Duration::from_secs(5), "{waited:?}");
    assert_eq!(up.pending_scripts(), 1);
}

#[actix_rt::test]
async fn a_refused_credential_is_reported_at_once() {
    let up = FakeUpstream::start();
    up.push_worker(WorkerScript::Error {
        status: 401,
        body: json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
    });
    let client = WorkerClient::new(fast());
    let route = route(&up, WorkerProtocol::Anthropic);
    let err = client
        .call(&route, &call(WorkerBucket::Distillation))
        .await
        .unwrap_err();
    assert!(!err.to_string().contains("sk-ant-worker"), "{err}");
    assert!(!format!("{route:?}").contains("sk-ant-worker"));
    match err {
        ActorError::WorkerCredentialRefused { status, origin } => {
            assert_eq!(status, 401);
            assert_eq!(origin, up.url());
        }
        other => panic!("expected a refused credential, got {other}"),
    }
    assert_eq!(up.worker_calls().len(), 1);
}

#[actix_rt::test]
async fn a_client_error_carries_the_provider_message() {
    let up = FakeUpstream::start();
    up.push_worker(WorkerScript::Error {
        status: 400,
        body: json!({"error": {"message": "Unsupported parameter: 'temperature'", "type": "invalid_request_error"}}),
    });
    let client = WorkerClient::new(fast());
    let err = client
        .call(
            &route(&up, WorkerProtocol::OpenAiResponses),
            &call(WorkerBucket::Curation),
        )
        .await
        .unwrap_err();
    let ActorError::WorkerFailed(message) = &err else {
        panic!("expected WorkerFailed, got {err}");
    };
    assert!(message.contains("400"), "{message}");
    assert!(
        message.contains("Unsupported parameter: 'temperature'"),
        "{message}"
    );
    assert!(!message.contains("sk-worker"), "{message}");
    assert_eq!(up.worker_calls().len(), 1);
}

#[actix_rt::test]
async fn an_upstream_that_is_not_listening_fails_after_every_attempt() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let route = WorkerRoute::new(
        WorkerProtocol::Anthropic,
        format!("http://127.0.0.1:{port}/v1/messages"),
        "claude-haiku-4-5",
        vec![("x-api-key".into(), "sk-ant-worker".into())],
    );
    let client = WorkerClient::new(WorkerSettings {
        max_attempts: 3,
        ..fast()
    });
    let err = client
        .call(&route, &call(WorkerBucket::Distillation))
        .await
        .unwrap_err();
    let ActorError::WorkerFailed(message) = &err else {
        panic!("expected WorkerFailed, got {err}");
    };
    assert!(message.contains("3 attempt(s)"), "{message}");
    assert!(!message.contains("sk-ant-worker"), "{message}");
}

#[actix_rt::test]
async fn an_empty_reply_is_not_an_error_and_unreadable_json_is() {
    let up = FakeUpstream::start();
    up.push_worker(WorkerScript::Empty);
    let client = WorkerClient::new(fast());
    let reply = client
        .call(
            &route(&up, WorkerProtocol::OpenAiChat),
            &call(WorkerBucket::Curation),
        )
        .await
        .unwrap();
    assert_eq!(reply.text, "");

    // A 200 whose body has no `content`: the Anthropic reader cannot read a Chat reply.
    let mismatched = WorkerRoute::new(
        WorkerProtocol::Anthropic,
        format!("{}/v1/chat/completions", up.url()),
        "gpt-4o-mini",
        Vec::new(),
    );
    let err = client
        .call(&mismatched, &call(WorkerBucket::Curation))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("could not be read"), "{err}");
}

#[actix_rt::test]
async fn a_price_override_replaces_the_table() {
    let up = FakeUpstream::start();
    let client = WorkerClient::new(WorkerSettings {
        price_override: Some(lore_actors::catalogue::Price::parse("0,0").unwrap()),
        ..fast()
    });
    let reply = client
        .call(
            &route(&up, WorkerProtocol::Anthropic),
            &call(WorkerBucket::Curation),
        )
        .await
        .unwrap();
    assert_eq!(reply.usage.cost_usd, 0.0);
    assert!(reply.usage.input_tokens > 0);
}
