//! The context manager through the real binary, against the fake upstream with per-model
//! context windows and its prompt-cache oracle.
//!
//! - [`long`]: a tool-heavy Claude-Code-like session growing past 4× a 32K window.
//! - [`floors`]: a prompt-too-long answer retried inside the request, the floor kept across a
//!   restart; the cold-start and free-write branches; `previous_response_id` left alone.
//! - [`protocols`]: tool pairing and the usage a client is shown, at every layer, on the three
//!   protocols.

mod floors;
mod long;
mod protocols;

use lore_test_support::http_client::Response;
use lore_test_support::{FakeConfig, FakeUpstream, Script};
use serde_json::{Value, json};

use crate::helpers::*;

/// The fake model of these tests and its window.
pub const MODEL: &str = "claude-ctx-test";

/// A fake upstream whose models named `prefix…` have a `tokens` window.
pub fn upstream_with_window(prefix: &str, tokens: u64) -> FakeUpstream {
    FakeUpstream::start_with(FakeConfig {
        context_limits: vec![(prefix.to_string(), tokens)],
        ..FakeConfig::default()
    })
}

/// `LORE_MODEL_OVERRIDES` telling Lore that `model` has a `context` window and `output` limit.
pub fn window_override(model: &str, context: u64, output: u64) -> String {
    json!({ model: {"context": context, "output": output} }).to_string()
}

/// A realistic tool output of about `chars` characters: a file listing, source lines, a test
/// run with paths and, every seventh one, an error.
pub fn tool_output(n: usize, chars: usize) -> String {
    let mut out = String::with_capacity(chars + 200);
    let mut line = 0;
    while out.len() < chars {
        let text = match line % 6 {
            0 => format!(
                "src/module_{n}/handler_{line}.rs:{}: pub fn handle_{line}(req: &Request) -> Result<Response, Error> {{",
                10 + line
            ),
            1 => format!(
                "    let value = parse_field(&req.body, \"field_{line}\")?; // checked in tests/module_{n}_test.rs"
            ),
            2 => format!("test module_{n}::case_{line} ... ok ({} ms)", line * 3 + 1),
            3 => format!(
                "    cache.insert(key_{line}, value.clone()); total += value.len() as u64 * {line};"
            ),
            4 if n.is_multiple_of(7) && line == 4 => format!(
                "error[E0599]: no method named `flush_{n}` found for struct `Writer` in src/module_{n}/writer.rs"
            ),
            4 => format!(
                "   Compiling crate_{n}_{line} v0.{line}.0 (/work/project/crates/crate_{n})"
            ),
            _ => format!("}} // end of handle_{line}: {} bytes processed", line * 97),
        };
        out.push_str(&text);
        out.push('\n');
        line += 1;
    }
    out
}

/// A Claude-Code-like client: a fixed system prompt and tools with their own breakpoints, the
/// whole history resent every turn, a breakpoint on the last message, tool calls run locally.
pub struct Coder<'a> {
    pub gateway: &'a Gateway,
    pub upstream: &'a FakeUpstream,
    pub model: &'static str,
    pub session: &'static str,
    pub history: Vec<Value>,
    /// The context layer of each response (`x-lore-context-layer`).
    pub layers: Vec<u8>,
    /// The usage each response showed the client.
    pub shown_usage: Vec<Value>,
    /// Stream every other request.
    pub stream: bool,
    /// Tool calls made so far (their ids are numbered).
    pub calls: usize,
    sent: usize,
}

impl<'a> Coder<'a> {
    pub fn new(gateway: &'a Gateway, upstream: &'a FakeUpstream, session: &'static str) -> Self {
        Self {
            gateway,
            upstream,
            model: MODEL,
            session,
            history: Vec::new(),
            layers: Vec::new(),
            shown_usage: Vec::new(),
            stream: false,
            calls: 0,
            sent: 0,
        }
    }

    fn body(&self, stream: bool) -> Value {
        let mut history = self.history.clone();
        // The breakpoint moves to the last block of the last message, as Claude Code does.
        if let Some(Value::Array(blocks)) = history.last_mut().map(|m| &mut m["content"])
            && let Some(Value::Object(last)) = blocks.last_mut()
        {
            last.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        json!({
            "model": self.model,
            "max_tokens": 1024,
            "stream": stream,
            "system": [
                {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
                {"type": "text", "text": format!("You are an interactive agent that helps with software engineering. {}", "Follow the repository conventions. ".repeat(30)), "cache_control": {"type": "ephemeral"}}
            ],
            "tools": [
                {"name": "bash", "description": "Run a shell command", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
                {"name": "read", "description": "Read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}
            ],
            "messages": history,
        })
    }

    /// Sends the history; the response must succeed.
    pub fn request(&mut self) -> Response {
        let stream = self.stream && self.sent % 2 == 1;
        self.sent += 1;
        let headers = vec![
            ("x-api-key", "sk-ctx-test"),
            ("anthropic-version", "2023-06-01"),
            ("x-claude-code-session-id", self.session),
            ("x-lore-project", "/tmp/lore-context-test"),
        ];
        let response = self
            .gateway
            .post("/v1/messages", &headers, &self.body(stream));
        assert_eq!(
            response.status,
            200,
            "request {}: {}",
            self.sent,
            response.text()
        );
        let layer = response
            .header("x-lore-context-layer")
            .and_then(|layer| layer.parse().ok())
            .unwrap_or(0);
        self.layers.push(layer);
        response
    }

    /// The assistant message of a response (JSON or stream), appended to the history.
    fn take_reply(&mut self, response: &Response) -> Value {
        let message = if response
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            rebuild_stream(response)
        } else {
            response.json()
        };
        self.shown_usage.push(message["usage"].clone());
        self.history
            .push(json!({"role": "assistant", "content": message["content"].clone()}));
        message
    }

    /// One user turn: a question, a tool exchange per output, and a closing answer.
    pub fn turn(&mut self, question: &str, outputs: &[String]) {
        self.history
            .push(json!({"role": "user", "content": [{"type": "text", "text": question}]}));
        for output in outputs {
            self.calls += 1;
            let id = format!("toolu_{:04}", self.calls);
            self.upstream.push(Script::ToolCall {
                name: "bash".into(),
                id: id.clone(),
                arguments: json!({"command": format!("cargo test -p module_{}", self.calls)}),
                text: None,
            });
            let response = self.request();
            self.take_reply(&response);
            self.history.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": output}
            ]}));
        }
        self.upstream
            .push(Script::Text(format!("Done with: {question}")));
        let response = self.request();
        self.take_reply(&response);
    }
}

/// The assistant message a streamed Anthropic response adds up to (content and usage).
fn rebuild_stream(response: &Response) -> Value {
    let mut content: Vec<Value> = Vec::new();
    let mut usage = json!({});
    for event in response.sse() {
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            continue;
        };
        match data["type"].as_str() {
            Some("message_start") => usage = data["message"]["usage"].clone(),
            Some("content_block_start") => content.push(data["content_block"].clone()),
            Some("content_block_delta") => {
                let Some(block) = content.last_mut() else {
                    continue;
                };
                if let Some(text) = data["delta"]["text"].as_str() {
                    let joined = format!("{}{text}", block["text"].as_str().unwrap_or(""));
                    block["text"] = json!(joined);
                }
                if let Some(part) = data["delta"]["partial_json"].as_str() {
                    let joined = format!("{}{part}", block["partial"].as_str().unwrap_or(""));
                    block["partial"] = json!(joined);
                }
            }
            Some("content_block_stop") => {
                if let Some(block) = content.last_mut()
                    && let Some(partial) = block
                        .get("partial")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                {
                    block["input"] = serde_json::from_str(&partial).unwrap_or(json!({}));
                    block.as_object_mut().unwrap().remove("partial");
                }
            }
            Some("message_delta") => {
                if let Some(output) = data["usage"]["output_tokens"].as_u64() {
                    usage["output_tokens"] = json!(output);
                }
            }
            _ => {}
        }
    }
    json!({"content": content, "usage": usage})
}

/// The session's context state from `GET /api/v1/sessions/{id}`.
pub fn context_of(gateway: &Gateway, session: &str) -> Value {
    let response = gateway.get(&format!("/api/v1/sessions/{session}"));
    assert_eq!(response.status, 200, "{}", response.text());
    response.json()["context"].clone()
}

/// The only session's id.
pub fn only_session(gateway: &Gateway) -> String {
    eventually("one session", || {
        let sessions = gateway.sessions();
        (sessions.len() == 1).then(|| sessions[0]["id"].as_str().unwrap().to_string())
    })
}
