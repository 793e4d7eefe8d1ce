//! What the `recall` tool is: its definition per protocol, its arguments, the record the gateway
//! keeps of each call, and the text marker that stands in for the call in what the client sees.
//!
//! A marker reads `📚 Searching all archives for "deploy steps"… [r:1a2b3c4d]`; the bracketed key
//! names the stored [`RecallRecord`], so a marker is found again in any later request without
//! knowing its session.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The tool's name.
pub const RECALL_TOOL_NAME: &str = "recall";

/// What the model is told the tool does.
pub const RECALL_TOOL_DESCRIPTION: &str = "Search your long-term memory of past conversations with this user: earlier messages of this and other sessions, distilled observations and saved knowledge. Use it when the user refers to something from before that is not in the current context, or when you need a past decision, command, file path or error. Returns ranked excerpts with ids (t:, d:, k:, e:); call again with `id` to read one in full.";

/// Marker prefix; every marker starts with it.
const MARKER_PREFIX: &str = "📚 ";
/// Key prefix inside the brackets at the end of a marker.
const KEY_OPEN: &str = "[r:";
/// Hex digits of a key.
const KEY_DIGITS: usize = 8;

/// The JSON schema of the tool's input.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for, in a few words or a question."},
            "scope": {
                "type": "string",
                "enum": ["all", "session", "project", "knowledge"],
                "description": "Where to look: all (default), this session, this project, or saved knowledge only."
            },
            "id": {"type": "string", "description": "An id from an earlier recall result (t:…, d:…, k:…, e:…) to read in full."}
        },
        "required": ["query"]
    })
}

/// The Anthropic Messages tool definition.
pub fn anthropic_definition() -> Value {
    json!({
        "name": RECALL_TOOL_NAME,
        "description": RECALL_TOOL_DESCRIPTION,
        "input_schema": input_schema(),
    })
}

/// The OpenAI Chat Completions tool definition.
pub fn chat_definition() -> Value {
    json!({
        "type": "function",
        "function": {
            "name": RECALL_TOOL_NAME,
            "description": RECALL_TOOL_DESCRIPTION,
            "parameters": input_schema(),
        }
    })
}

/// The OpenAI Responses tool definition.
pub fn responses_definition() -> Value {
    json!({
        "type": "function",
        "name": RECALL_TOOL_NAME,
        "description": RECALL_TOOL_DESCRIPTION,
        "parameters": input_schema(),
    })
}

/// The arguments of one recall call, read leniently (a model may send odd JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RecallArguments {
    /// What to look for.
    #[serde(default)]
    pub query: String,
    /// `all`, `session`, `project` or `knowledge`.
    #[serde(default)]
    pub scope: Option<String>,
    /// An id to read in full.
    #[serde(default)]
    pub id: Option<String>,
}

impl RecallArguments {
    /// Reads the arguments; anything unreadable becomes an empty query.
    pub fn parse(json: &str) -> Self {
        serde_json::from_str(json).unwrap_or_default()
    }
}

/// One recall call the gateway answered, kept so its marker can be expanded on later turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecallRecord {
    /// `r:` + 8 hex digits; the marker carries it.
    pub key: String,
    /// The model's call id (`tool_use.id`, `tool_calls[].id`).
    pub call_id: String,
    /// The call's arguments as compact JSON.
    pub input: String,
    /// What the tool answered.
    pub result: String,
    /// True when the gateway continued the response itself (the model saw the result at once,
    /// so the assistant message is split around the marker); false when the call came with other
    /// tool calls and the result reaches the model with the client's tool results.
    pub continued: bool,
    /// When the call was answered.
    pub created_at_ms: u64,
}

/// The marker for a call: what the client sees instead of the tool call.
pub fn marker_text(key: &str, arguments: &RecallArguments) -> String {
    if let Some(id) = arguments.id.as_deref().filter(|id| !id.is_empty()) {
        return format!("{MARKER_PREFIX}Fetching detail for {id}… [{key}]");
    }
    let label = match arguments.scope.as_deref().unwrap_or("all") {
        "session" => "session history",
        "project" => "project archives",
        "knowledge" => "knowledge base",
        _ => "all archives",
    };
    let query: String = arguments.query.chars().take(200).collect();
    let query = query.replace(['\n', '\r'], " ");
    format!("{MARKER_PREFIX}Searching {label} for \"{query}\"… [{key}]")
}

/// The marker as OpenAI Chat content: set apart by blank lines, since it joins the text.
pub fn chat_marker(marker: &str) -> String {
    format!("\n\n{marker}\n\n")
}

/// The key of a text that is exactly one marker (an Anthropic text block), if it is one.
pub fn marker_key(text: &str) -> Option<&str> {
    let text = text.trim();
    if !text.starts_with(MARKER_PREFIX) || !text.ends_with(']') {
        return None;
    }
    let open = text.rfind(KEY_OPEN)?;
    let key = &text[open + 1..text.len() - 1];
    is_key(key).then_some(key)
}

/// Every marker inside a longer text (OpenAI Chat content): the byte range to remove (with the
/// blank lines [`chat_marker`] adds, when present) and the key.
pub fn find_marker_keys(text: &str) -> Vec<(Range<usize>, String)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(offset) = text[from..].find(MARKER_PREFIX) {
        let start = from + offset;
        let line_end = text[start..]
            .find('\n')
            .map_or(text.len(), |end| start + end);
        from = start + MARKER_PREFIX.len();
        let line = &text[start..line_end];
        let Some(key) = marker_key(line) else {
            continue;
        };
        let mut range = start..line_end;
        if text[..range.start].ends_with("\n\n") && text[range.end..].starts_with("\n\n") {
            range = range.start - 2..range.end + 2;
        }
        found.push((range, key.to_string()));
        from = line_end;
    }
    found
}

/// A new key from a call id and the time: `r:` + 8 hex digits.
pub fn new_key(call_id: &str, now_ms: u64) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{call_id}\u{0}{now_ms}").as_bytes());
    format!("r:{}", hex::encode(&digest[..KEY_DIGITS / 2]))
}

fn is_key(key: &str) -> bool {
    key.len() == 2 + KEY_DIGITS
        && key.starts_with("r:")
        && key[2..].bytes().all(|b| b.is_ascii_hexdigit())
}
