//! OpenCode sessions from its storage folder (`~/.local/share/opencode/storage/`, or
//! `$XDG_DATA_HOME/opencode/storage`), one JSON file per record:
//! `session/<project id>/<session id>.json` (the session: `id`, `directory`, `time.created`),
//! `message/<session id>/<message id>.json` (a message: `role`, `time.created`, `modelID`,
//! `providerID`, `path.cwd`) and `part/<message id>/<part id>.json` (its parts: `text`,
//! `reasoning`, `tool` with `callID`, `tool` and `state.{status,input,output,error}`, and
//! bookkeeping parts such as `step-start`, `step-finish`, `snapshot`, `patch`, which are not the
//! conversation). Ids sort by creation time. A tool part becomes the assistant's tool call and,
//! once it has run, a tool result in the message that follows, as the wire carries them.

use std::path::{Path, PathBuf};

use lore_proto::{Message, Part, Protocol, Role};
use lore_storage::{ImportMessage, ImportSession};
use serde_json::Value;

/// One message of a session as OpenCode stores it: the message record and its parts.
pub type StoredMessage = (Value, Vec<Value>);

/// Builds a session from its record and its messages (sorted here by id).
pub fn build(info: &Value, mut messages: Vec<StoredMessage>) -> Option<ImportSession> {
    let id = info["id"].as_str()?.to_string();
    messages.sort_by(|a, b| a.0["id"].as_str().cmp(&b.0["id"].as_str()));
    let mut project = info["directory"].as_str().map(str::to_string);
    let mut model = None;
    let mut provider = None;
    let mut out = Vec::new();
    for (message, mut parts) in messages {
        parts.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        let at = message["time"]["created"].as_u64().unwrap_or(0);
        if project.is_none() {
            project = message["path"]["cwd"].as_str().map(str::to_string);
        }
        match message["role"].as_str() {
            Some("user") => {
                let parts: Vec<Part> = parts
                    .iter()
                    .filter_map(|part| match part["type"].as_str() {
                        Some("text") => part["text"].as_str().map(|text| Part::Text {
                            text: text.to_string(),
                        }),
                        Some("file") => Some(Part::Other {
                            kind: "file".into(),
                            raw: part.clone(),
                        }),
                        _ => None,
                    })
                    .collect();
                if !parts.is_empty() {
                    out.push(ImportMessage {
                        message: Message {
                            role: Role::User,
                            parts,
                        },
                        created_at_ms: at,
                        model: None,
                    });
                }
            }
            Some("assistant") => {
                let this_model = message["modelID"].as_str().map(str::to_string);
                if this_model.is_some() {
                    model = this_model.clone();
                }
                if let Some(id) = message["providerID"].as_str() {
                    provider = Some(id.to_string());
                }
                // One OpenCode message spans several model steps: text after a tool ran
                // belongs to the next step, after the tool's result.
                let mut said = Vec::new();
                let mut results = Vec::new();
                let mut flush = |said: &mut Vec<Part>, results: &mut Vec<Part>| {
                    if !said.is_empty() {
                        out.push(ImportMessage {
                            message: Message {
                                role: Role::Assistant,
                                parts: std::mem::take(said),
                            },
                            created_at_ms: at,
                            model: this_model.clone(),
                        });
                    }
                    if !results.is_empty() {
                        out.push(ImportMessage {
                            message: Message {
                                role: Role::User,
                                parts: std::mem::take(results),
                            },
                            created_at_ms: at,
                            model: None,
                        });
                    }
                };
                for part in &parts {
                    let kind = part["type"].as_str();
                    if matches!(kind, Some("text" | "reasoning")) && !results.is_empty() {
                        flush(&mut said, &mut results);
                    }
                    match kind {
                        Some("text") => {
                            if let Some(text) = part["text"].as_str() {
                                said.push(Part::Text {
                                    text: text.to_string(),
                                });
                            }
                        }
                        Some("reasoning") => {
                            if let Some(text) = part["text"].as_str() {
                                said.push(Part::Thinking {
                                    text: text.to_string(),
                                    signature: None,
                                });
                            }
                        }
                        Some("tool") => {
                            let call_id = part["callID"].as_str().unwrap_or("").to_string();
                            let state = &part["state"];
                            said.push(Part::ToolCall {
                                id: call_id.clone(),
                                name: part["tool"].as_str().unwrap_or("tool").to_string(),
                                arguments: state["input"].to_string(),
                            });
                            match state["status"].as_str() {
                                Some("completed") => results.push(Part::ToolResult {
                                    call_id,
                                    content: state["output"].as_str().unwrap_or("").to_string(),
                                    is_error: false,
                                }),
                                Some("error") => results.push(Part::ToolResult {
                                    call_id,
                                    content: state["error"].as_str().unwrap_or("").to_string(),
                                    is_error: true,
                                }),
                                _ => {}
                            }
                        }
                        _ => {}
                    }
                }
                flush(&mut said, &mut results);
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return None;
    }
    let protocol = match provider.as_deref() {
        Some("anthropic") | None => Protocol::Anthropic,
        Some("openai") => Protocol::OpenAiResponses,
        Some(_) => Protocol::OpenAiChat,
    };
    Some(ImportSession {
        harness: "opencode".into(),
        external_id: id,
        project,
        model,
        protocol,
        messages: out,
    })
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    serde_json::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    files
}

/// The session files of a storage folder.
pub fn session_files(storage: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for project in std::fs::read_dir(storage.join("session"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if project.path().is_dir() {
            out.extend(json_files(&project.path()));
        }
    }
    out.sort();
    out
}

/// Reads one session (its record at `path`) with its messages and parts from `storage`.
pub fn read_session(storage: &Path, path: &Path) -> Result<Option<ImportSession>, String> {
    let info = read_json(path)?;
    let Some(id) = info["id"].as_str() else {
        return Err(format!("{}: no session id", path.display()));
    };
    let mut messages = Vec::new();
    for file in json_files(&storage.join("message").join(id)) {
        let message = read_json(&file)?;
        let parts = match message["id"].as_str() {
            Some(message_id) => json_files(&storage.join("part").join(message_id))
                .iter()
                .map(|part| read_json(part))
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        messages.push((message, parts));
    }
    Ok(build(&info, messages))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn tool_parts_become_a_call_and_a_result() {
        let info = json!({"id": "ses_1", "directory": "/home/ada/site", "time": {"created": 5}});
        let messages = vec![
            (
                json!({"id": "msg_2", "role": "assistant", "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "time": {"created": 7}}),
                vec![
                    json!({"id": "prt_3", "type": "step-start"}),
                    json!({"id": "prt_4", "type": "tool", "callID": "toolu_1", "tool": "bash", "state": {"status": "completed", "input": {"command": "ls"}, "output": "index.html"}}),
                    json!({"id": "prt_5", "type": "text", "text": "There is index.html."}),
                ],
            ),
            (
                json!({"id": "msg_1", "role": "user", "time": {"created": 6}}),
                vec![json!({"id": "prt_1", "type": "text", "text": "what is here?"})],
            ),
        ];
        let session = build(&info, messages).unwrap();
        assert_eq!(session.project.as_deref(), Some("/home/ada/site"));
        assert_eq!(session.protocol, Protocol::Anthropic);
        let roles: Vec<Role> = session.messages.iter().map(|m| m.message.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::Assistant, Role::User, Role::Assistant],
            "the text after the tool ran is the next step"
        );
        assert!(matches!(
            &session.messages[2].message.parts[0],
            Part::ToolResult { call_id, content, .. } if call_id == "toolu_1" && content == "index.html"
        ));
        assert_eq!(session.messages[1].created_at_ms, 7);
    }
}
