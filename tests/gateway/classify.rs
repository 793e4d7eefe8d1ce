//! Classification before the pipeline: Claude Code's side-channel calls and other harnesses'
//! meta requests proxied untouched and stored nowhere (never a fork), `/lore:` commands answered
//! by the gateway in the client's protocol, amnesia, and project attribution from the places
//! each harness really states its directory (shapes copied from Claude Code 2.1.332, Codex
//! 0.171.0, OpenCode 1.18 and Pi).

use lore_test_support::{FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

const CC_AGENT: &str = "claude-cli/2.1.332 (external, cli)";

fn claude_headers(session: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![
        ("x-api-key", "sk-ant-classify"),
        ("anthropic-version", "2023-06-01"),
        ("x-claude-code-session-id", session),
        ("user-agent", CC_AGENT),
    ]
}

/// Claude Code 2.1's main request: the billing header and the agent prompt in `system`, the
/// user's words after a reminder, then its `# Environment` as a system-role message.
fn claude_main(history: &[Value], directory: &str) -> Value {
    let mut messages: Vec<Value> = history.to_vec();
    messages.insert(
        1.min(messages.len()),
        json!({"role": "system", "content": [{"type": "text", "text": format!(
            "# Environment\nYou have been invoked in the following environment: \n - Primary working directory: {directory}\n - Is a git repository: false\n - Platform: linux")}]}),
    );
    json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 32000,
        "stream": false,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.332.262; cc_entrypoint=cli;"},
            {"type": "text", "text": "You are an agent working with the user toward their goals."}
        ],
        "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
        "messages": messages,
    })
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>\nAttribution notes\n</system-reminder>"},
        {"type": "text", "text": text}]})
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
}

fn conversation_requests(upstream: &FakeUpstream) -> usize {
    upstream
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/v1/"))
        .count()
}

#[test]
fn claude_code_side_channel_calls_go_untouched_and_never_fork_the_session() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let headers = claude_headers("cc-side-1");
    upstream.push(Script::Text("first answer".into()));
    let first = gateway.post(
        "/v1/messages",
        &headers,
        &claude_main(&[user("fix the login bug")], "/home/ada/app"),
    );
    assert_eq!(first.status, 200, "{}", first.text());
    let session = single_session_with(&gateway, 3);
    // The title call: the same session header, a title prompt, one message, no tools.
    let title = json!({
        "model": "claude-haiku-4-5",
        "max_tokens": 32000,
        "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.332.262; cc_entrypoint=cli;"},
            {"type": "text", "text": "Name this coding session. Return JSON with a single \"title\" field."}
        ],
        "messages": [{"role": "user", "content": "<session>\nfix the login bug\n</session>"}],
    });
    upstream.clear_requests();
    upstream.push(Script::Text("{\"title\": \"Fix login\"}".into()));
    let answered = gateway.post("/v1/messages", &headers, &title);
    assert_eq!(answered.status, 200, "{}", answered.text());
    assert_eq!(
        answered.header("x-lore-session-id"),
        None,
        "no session for a side channel"
    );
    let sent = upstream.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].json(),
        title,
        "the side-channel body reaches the upstream untouched"
    );
    // The next main turn extends the same session without a fork.
    upstream.push(Script::Text("second answer".into()));
    gateway.post(
        "/v1/messages",
        &headers,
        &claude_main(
            &[
                user("fix the login bug"),
                assistant("first answer"),
                user("and the logout"),
            ],
            "/home/ada/app",
        ),
    );
    let after = single_session_with(&gateway, 5);
    assert_eq!(after["id"], session["id"]);
    assert_eq!(after["forks"], 0, "{after}");
    assert_eq!(after["project"], "/home/ada/app");
    let log = gateway.log();
    assert!(
        log.contains("side-channel call"),
        "the decision is logged: {log}"
    );
}

#[test]
fn meta_requests_go_untouched_by_header_or_by_shape() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    // OpenCode 1.18's title agent (Chat Completions): its 2,000-character title prompt, the
    // instruction and the first user message, no tools, its session header.
    let prompt = format!(
        "You are a title generator. You output ONLY a thread title. Nothing else.\nGenerate a brief title that would help the user find this conversation later.\nFollow all rules in <rules>\n{}",
        "- Keep exact: technical terms, numbers, filenames, HTTP codes\n".repeat(30)
    );
    let title = json!({"model": "gpt-5-nano", "messages": [
        {"role": "system", "content": prompt},
        {"role": "user", "content": "Generate a title for this conversation:\n"},
        {"role": "user", "content": "fix the login bug"}]});
    let headers = vec![
        ("authorization", "Bearer sk-oc"),
        ("x-session-id", "ses_oc_title"),
    ];
    upstream.push(Script::Text("Fix login".into()));
    let answered = gateway.post("/v1/chat/completions", &headers, &title);
    assert_eq!(answered.status, 200, "{}", answered.text());
    let mut labelled = headers.clone();
    labelled.push(("x-lore-agent", "summarize"));
    upstream.push(Script::Text("a summary".into()));
    gateway.post(
        "/v1/chat/completions",
        &labelled,
        &chat_body(json!([{"role": "user", "content": "summarise our work, a long conversation"}, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "go"}]), false),
    );
    assert_eq!(
        conversation_requests(&upstream),
        2,
        "both reached the upstream"
    );
    // The coder agent with the very same shape is a turn.
    let mut coder = headers.clone();
    coder.push(("x-lore-agent", "coder"));
    upstream.push(Script::Text("a title".into()));
    let turn = gateway.post("/v1/chat/completions", &coder, &title);
    assert!(turn.header("x-lore-session-id").is_some());
    let sessions = eventually("one session", || {
        let sessions = gateway.sessions();
        (sessions.len() == 1 && sessions[0]["messages"] == 3).then_some(sessions)
    });
    assert_eq!(
        sessions.len(),
        1,
        "the meta requests made no session: {sessions:?}"
    );
    assert!(gateway.log().contains("meta request"));
}

#[test]
fn lore_commands_are_answered_in_the_clients_protocol_and_never_forwarded() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let headers = anthropic_headers("sk-command");
    let unknown = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(json!([{"role": "user", "content": "/lore:warp"}]), false),
    );
    assert_eq!(unknown.status, 200, "{}", unknown.text());
    let text = unknown.json()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("/lore:warp")
            && text.contains("/lore:curate")
            && text.contains("/lore:amnesia on"),
        "{text}"
    );
    // Streaming: the events of a reply, which the SDKs read as the provider's.
    let streamed = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(json!([{"role": "user", "content": "/lore:curate"}]), true),
    );
    let events: Vec<String> = streamed
        .sse()
        .iter()
        .filter_map(|e| e.event.clone())
        .collect();
    assert_eq!(
        events.first().map(String::as_str),
        Some("message_start"),
        "{events:?}"
    );
    assert_eq!(
        events.last().map(String::as_str),
        Some("message_stop"),
        "{events:?}"
    );
    assert!(
        streamed.text().contains("memory workers are off"),
        "{}",
        streamed.text()
    );
    // OpenAI clients get their own shapes.
    let chat = gateway.post(
        "/v1/chat/completions",
        &[("authorization", "Bearer sk-command")],
        &chat_body(json!([{"role": "user", "content": "/lore:nope"}]), false),
    );
    assert!(
        chat.json()["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .contains("/lore:curate")
    );
    let responses = gateway.post(
        "/v1/responses",
        &[("authorization", "Bearer sk-command")],
        &json!({"model": "gpt-5", "input": "/lore:nope", "stream": true}),
    );
    let last = responses.sse().last().unwrap().json();
    assert_eq!(last["type"], "response.completed", "{last}");
    assert_eq!(
        conversation_requests(&upstream),
        0,
        "no command reached the upstream"
    );
}

#[test]
fn amnesia_stores_nothing_until_it_is_off_and_survives_a_restart() {
    let upstream = FakeUpstream::start();
    let mut gateway = Gateway::start(&upstream);
    let mut headers = anthropic_headers("sk-amnesia");
    headers.push(("x-session-id", "amnesia-session-1"));
    let mut history = vec![json!({"role": "user", "content": "remember the plan"})];
    upstream.push(Script::Text("noted".into()));
    gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(Value::Array(history.clone()), false),
    );
    single_session_with(&gateway, 2);
    history.push(json!({"role": "assistant", "content": [{"type": "text", "text": "noted"}]}));
    history.push(json!({"role": "user", "content": "/lore:amnesia on"}));
    let on = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(Value::Array(history.clone()), false),
    );
    let answer = on.json()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(answer.contains("amnesia is on"), "{answer}");
    history.push(json!({"role": "assistant", "content": [{"type": "text", "text": answer}]}));
    // A crash right after the answer keeps the setting.
    gateway.restart();
    history.push(json!({"role": "user", "content": "my password is hunter2"}));
    upstream.clear_requests();
    upstream.push(Script::Text("I will not remember".into()));
    let secret = anthropic_body(Value::Array(history.clone()), false);
    let reply = gateway.post("/v1/messages", &headers, &secret);
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(
        upstream.requests()[0].json(),
        secret,
        "sent as the client sent it"
    );
    history.push(
        json!({"role": "assistant", "content": [{"type": "text", "text": "I will not remember"}]}),
    );
    history.push(json!({"role": "user", "content": "/lore:amnesia off"}));
    let off = gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(Value::Array(history.clone()), false),
    );
    let answer = off.json()["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(answer.contains("amnesia is off"), "{answer}");
    history.push(json!({"role": "assistant", "content": [{"type": "text", "text": answer}]}));
    history.push(json!({"role": "user", "content": "back to work"}));
    upstream.push(Script::Text("working".into()));
    gateway.post(
        "/v1/messages",
        &headers,
        &anthropic_body(Value::Array(history.clone()), false),
    );
    let session = single_session_with(&gateway, 4);
    let transcript = gateway.transcript(session["id"].as_str().unwrap());
    assert_eq!(
        transcript,
        vec![
            "user: remember the plan",
            "assistant: noted",
            "user: back to work",
            "assistant: working"
        ],
        "nothing said under amnesia was stored"
    );
    assert_eq!(session["forks"], 0);
}

#[test]
fn a_session_without_a_stated_directory_has_its_own_bucket_until_one_arrives() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    // Claude Code 2.1 without `lore run`: no X-Lore-Project, the directory in a system-role
    // message only.
    let headers = claude_headers("cc-attribution");
    gateway.post(
        "/v1/messages",
        &headers,
        &claude_main(&[user("hello")], "/home/ada/setup-only"),
    );
    let claude = single_session_with(&gateway, 3);
    assert_eq!(claude["project"], "/home/ada/setup-only");
    assert_eq!(claude["project_provisional"], false);
    // A client that states nothing: its own unattributed bucket, never the gateway's directory.
    let mut bare = anthropic_headers("sk-bare");
    bare.push(("x-session-id", "bare-session-1"));
    let mut history = vec![json!({"role": "user", "content": "hello there"})];
    upstream.push(Script::Text("hi".into()));
    let first = gateway.post(
        "/v1/messages",
        &bare,
        &anthropic_body(Value::Array(history.clone()), false),
    );
    let id = first.header("x-lore-session-id").unwrap().to_string();
    let bucket = eventually("the bare session", || {
        gateway
            .sessions()
            .into_iter()
            .find(|s| s["id"] == id.as_str() && s["messages"] == 2)
    });
    assert_eq!(bucket["project"], format!("/__lore_unattributed__/{id}"));
    assert_eq!(bucket["project_provisional"], true);
    // Later the harness names its project: the session moves there.
    history.push(json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}]}));
    history.push(json!({"role": "user", "content": "now in the repo"}));
    let mut named = bare.clone();
    named.push(("x-lore-project", "/home/ada/later"));
    gateway.post(
        "/v1/messages",
        &named,
        &anthropic_body(Value::Array(history), false),
    );
    let moved = eventually("the re-homed session", || {
        gateway
            .sessions()
            .into_iter()
            .find(|s| s["id"] == id.as_str() && s["messages"] == 4)
    });
    assert_eq!(moved["project"], "/home/ada/later");
    assert_eq!(moved["project_provisional"], false);
}

#[test]
fn lore_curate_distils_and_curates_the_session_now() {
    let upstream = FakeUpstream::start();
    // Idle is far away: only the command can start the job.
    let gateway = crate::memory::memory_gateway(&upstream, &[("LORE_IDLE_TIMEOUT", "600")]);
    let mut chat = crate::memory::Conversation::new(&gateway, "curate-now-1");
    for step in 0..3 {
        chat.turn(&format!(
            "zqcurate step {step}: we chose sqlite over postgres for the local cache because it needs no server"
        ));
    }
    let session = chat.session_id();
    let answer = chat.turn("/lore:curate");
    let text = answer["content"][0]["text"].as_str().unwrap().to_string();
    assert!(text.contains("distilling and curating"), "{text}");
    crate::memory::slowly("the asked-for observation log and curation", || {
        let logs = crate::memory::distillations(&gateway, &session);
        let curated = crate::memory::worker_calls(&upstream, "curation") > 0;
        (!logs.is_empty() && curated).then_some(())
    });
}

#[test]
fn lore_curate_asked_while_a_request_of_the_session_runs_waits_for_it_then_curates() {
    let upstream = FakeUpstream::start();
    let gateway = crate::memory::memory_gateway(&upstream, &[("LORE_IDLE_TIMEOUT", "600")]);
    let mut chat = crate::memory::Conversation::new(&gateway, "curate-busy-1");
    let first = "zqbusy step 0: we chose sqlite over postgres for the local cache because it needs no server";
    chat.turn(first);
    for step in 1..3 {
        chat.turn(&format!(
            "zqbusy step {step}: the cache keeps a week of entries and evicts the oldest first"
        ));
    }
    let session = chat.session_id();
    // The next request of the session is held at the upstream for three seconds.
    upstream.push(Script::DelayHeaders(
        std::time::Duration::from_secs(3),
        Box::new(Script::Text("Still thinking about eviction.".into())),
    ));
    std::thread::scope(|scope| {
        let held = scope.spawn(|| chat.turn("zqbusy: and how big may the cache grow?"));
        eventually("the held request at the upstream", || {
            (upstream.conversation_requests_in_flight() > 0).then_some(())
        });
        // The workers never call while a request of the session is in flight: the job waits.
        let headers = [
            ("x-api-key", "k-memory"),
            ("anthropic-version", "2023-06-01"),
            ("x-claude-code-session-id", "curate-busy-1"),
            ("x-lore-project", "/tmp/lore-memory-test"),
        ];
        let body = anthropic_body(
            json!([
                {"role": "user", "content": first},
                {"role": "assistant", "content": "Noted."},
                {"role": "user", "content": "/lore:curate"},
            ]),
            false,
        );
        let answer = gateway.post("/v1/messages", &headers, &body);
        assert_eq!(answer.status, 200, "{}", answer.text());
        assert!(
            answer.text().contains("distilling and curating"),
            "{}",
            answer.text()
        );
        held.join().expect("the held turn");
    });
    crate::memory::slowly("the asked-for job once the session was quiet", || {
        let logs = crate::memory::distillations(&gateway, &session);
        let curated = crate::memory::worker_calls(&upstream, "curation") > 0;
        (!logs.is_empty() && curated).then_some(())
    });
}
