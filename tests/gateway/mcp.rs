//! `lore mcp` as a real MCP client sees it: newline-delimited JSON-RPC over the binary's stdin
//! and stdout (initialize, initialized, tools/list, tools/call), and streamable HTTP behind a
//! bearer token.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

mod http;

/// A `lore mcp` child process and the client side of its stdio session.
struct McpClient {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
    _vault: tempfile::TempDir,
}

impl McpClient {
    fn start() -> McpClient {
        let vault = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_lore"))
            .args(["mcp", "--vault"])
            .arg(vault.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        McpClient {
            child,
            stdin,
            lines,
            next_id: 1,
            _vault: vault,
        }
    }

    fn vault(&self) -> &std::path::Path {
        self._vault.path()
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and returns its `result` (panics on a JSON-RPC error).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .expect("lore mcp answered in time");
            let message: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{line}");
                return message["result"].clone();
            }
        }
    }

    /// Calls a tool; returns the parsed JSON text answer and the `isError` flag.
    fn call(&mut self, name: &str, arguments: Value) -> (Value, bool) {
        let result = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        let answer: Value = serde_json::from_str(&text).unwrap();
        let is_error = result["isError"].as_bool().unwrap_or(false);
        assert_eq!(answer["ok"], !is_error, "{answer}");
        (answer, is_error)
    }

    fn initialize(&mut self) -> Value {
        let result = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "lore-test", "version": "1.0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        result
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn error_of(answer: &Value) -> String {
    answer["error"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn stdio_session_lists_exactly_three_tools_with_schemas() {
    let mut client = McpClient::start();
    let init = client.initialize();
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "lore");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    let instructions = init["instructions"].as_str().unwrap();
    assert!(instructions.contains("write_card") && instructions.contains("keywords"));
    assert!(instructions.contains("no recall tool"), "{instructions}");

    let tools = client.request("tools/list", json!({}));
    let mut names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["list_cards", "read_card", "write_card"]);
    for tool in tools["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(!tool["description"].as_str().unwrap().is_empty());
    }
    let write = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "write_card")
        .unwrap();
    let required = &write["inputSchema"]["required"];
    assert!(
        required.as_array().unwrap().contains(&json!("mode")),
        "{write}"
    );
    assert!(write["inputSchema"]["properties"]["expected_mtime"].is_object());
    assert_eq!(write["inputSchema"]["additionalProperties"], false);
}

#[test]
fn stdio_session_creates_reads_lists_and_refuses_what_it_must() {
    let mut client = McpClient::start();
    client.initialize();
    let alice = json!({
        "mode": "create", "kind": "people", "key": "Alice",
        "keywords": ["Alice", "payments team"], "aliases": ["Al"],
        "sections": {"who": "Leads the payments team.", "correspondence": "private note"}
    });
    let (created, is_error) = client.call("write_card", alice.clone());
    assert!(!is_error, "{created}");
    assert_eq!(created["path"], "people/Alice.md");
    assert!(client.vault().join("people/Alice.md").is_file());

    let (listing, _) = client.call("list_cards", json!({}));
    assert_eq!(listing["cards"][0]["key"], "Alice");
    assert_eq!(
        listing["cards"][0]["keywords"],
        json!(["Alice", "payments team"])
    );
    assert_eq!(listing["cards"][0]["inject"], true);
    let (only_places, _) = client.call("list_cards", json!({"kind": "place"}));
    assert_eq!(only_places["cards"], json!([]));

    let (read, _) = client.call("read_card", json!({"key": "Alice"}));
    assert_eq!(read["kind"], "people");
    assert_eq!(read["aliases"], json!(["Al"]));
    let body = read["body"].as_str().unwrap();
    assert!(body.contains("Leads the payments team."), "{body}");
    assert!(
        !body.contains("private note"),
        "private section leaked: {body}"
    );
    assert!(read["sections"].get("correspondence").is_none(), "{read}");
    assert!(read["mtime"].as_str().unwrap().parse::<u128>().is_ok());

    let (again, is_error) = client.call("write_card", alice);
    assert!(is_error);
    assert!(error_of(&again).contains("update_recent"), "{again}");

    let (bare, _) = client.call(
        "write_card",
        json!({"mode": "create", "kind": "people", "key": "Bob", "keywords": [],
               "sections": {"who": "someone"}}),
    );
    assert!(error_of(&bare).contains("never fire"), "{bare}");
    let (missing, _) = client.call(
        "write_card",
        json!({"mode": "create", "kind": "people", "key": "Bob", "sections": {"who": "x"}}),
    );
    assert!(error_of(&missing).contains("keywords"), "{missing}");

    let (unknown, _) = client.call(
        "write_card",
        json!({"mode": "create", "kind": "people", "key": "Bob", "keywords": ["Bob"],
               "colour": "blue", "sections": {"who": "x"}}),
    );
    assert!(error_of(&unknown).contains("`colour`"), "{unknown}");
    let (section, _) = client.call(
        "write_card",
        json!({"mode": "create", "kind": "people", "key": "Bob", "keywords": ["Bob"],
               "sections": {"hobbies": "x"}}),
    );
    assert!(error_of(&section).contains("who, stance"), "{section}");
    let (traversal, _) = client.call(
        "write_card",
        json!({"mode": "create", "kind": "entry", "key": "../escape", "keywords": ["x"], "body": "x"}),
    );
    assert!(error_of(&traversal).contains("key"), "{traversal}");
    let (kind, _) = client.call("list_cards", json!({"kind": "planet"}));
    assert!(error_of(&kind).contains("people, event"), "{kind}");
    let (absent, _) = client.call("read_card", json!({"key": "alice"}));
    assert!(error_of(&absent).contains("Alice"), "{absent}");
    assert!(!client.vault().join("people/Bob.md").exists());
}

#[test]
fn update_recent_appends_dated_lines_and_checks_the_mtime() {
    let mut client = McpClient::start();
    client.initialize();
    let (created, _) = client.call(
        "write_card",
        json!({"mode": "create", "kind": "people", "key": "Alice", "keywords": ["Alice"],
               "sections": {"who": "Leads payments."}}),
    );
    let first_mtime = created["mtime"].as_str().unwrap().to_owned();
    let (read, _) = client.call("read_card", json!({"key": "Alice"}));
    assert_eq!(read["mtime"], first_mtime.as_str());

    let (updated, is_error) = client.call(
        "write_card",
        json!({"mode": "update_recent", "key": "Alice", "recent": "moved to Berlin",
               "expected_mtime": first_mtime}),
    );
    assert!(!is_error, "{updated}");
    assert_eq!(updated["section"], "recent");
    let text = updated["text"].as_str().unwrap();
    assert!(
        text.ends_with(": moved to Berlin") && text.starts_with("20"),
        "{text}"
    );
    let file = std::fs::read_to_string(client.vault().join("people/Alice.md")).unwrap();
    assert!(
        file.contains("## recent\n") && file.contains("moved to Berlin"),
        "{file}"
    );
    assert!(file.contains("Leads payments."), "{file}");

    // The first mtime is stale now: nothing is written.
    let (stale, is_error) = client.call(
        "write_card",
        json!({"mode": "update_recent", "key": "Alice", "recent": "second",
               "expected_mtime": first_mtime}),
    );
    assert!(is_error);
    assert!(error_of(&stale).contains("read_card again"), "{stale}");
    let unchanged = std::fs::read_to_string(client.vault().join("people/Alice.md")).unwrap();
    assert_eq!(unchanged, file);

    for i in 0..8 {
        let (answer, is_error) = client.call(
            "write_card",
            json!({"mode": "update_recent", "key": "Alice",
                   "recent": format!("news {i} {}", "x".repeat(150))}),
        );
        assert!(!is_error, "{answer}");
    }
    let (read, _) = client.call("read_card", json!({"key": "Alice"}));
    let recent = read["sections"]["recent"].as_str().unwrap();
    assert!(recent.chars().count() <= 600, "{recent}");
    assert!(
        recent.contains("news 7") && !recent.contains("news 0"),
        "{recent}"
    );
    assert!(!recent.contains("moved to Berlin"), "{recent}");

    let (other, _) = client.call(
        "write_card",
        json!({"mode": "update_recent", "key": "Alice", "recent": "x", "keywords": ["y"]}),
    );
    assert!(error_of(&other).contains("`keywords`"), "{other}");
    client.call(
        "write_card",
        json!({"mode": "create", "kind": "slang", "key": "yolo", "keywords": ["yolo"],
               "sections": {"meaning": "you only live once"}}),
    );
    let (slang, _) = client.call(
        "write_card",
        json!({"mode": "update_recent", "key": "yolo", "recent": "said again"}),
    );
    assert!(error_of(&slang).contains("people (recent)"), "{slang}");
    let (nobody, _) = client.call(
        "write_card",
        json!({"mode": "update_recent", "key": "Nobody", "recent": "x"}),
    );
    assert!(error_of(&nobody).contains("create"), "{nobody}");
}
