//! What a request says about who sent it: the session header, the conversation fingerprint and
//! the project it works in.
//!
//! Credentials are only ever hashed here; neither a key nor its hash prefix is logged.

use lore_actors::ProjectHint;
use lore_proto::{CanonicalRequest, Message, Role};
use sha2::{Digest, Sha256};

/// Session headers, strongest first: an explicit conversation id, Lore's plugins, Claude Code,
/// OpenCode ≥ 1.17, older OpenCode.
pub const SESSION_HEADERS: [&str; 5] = [
    "x-lore-conversation",
    "x-lore-session-id",
    "x-claude-code-session-id",
    "x-session-id",
    "x-session-affinity",
];

/// `<header>:<value>` of the first session header present, if its value is a plausible id.
pub fn session_header_key<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<String> {
    SESSION_HEADERS.iter().find_map(|name| {
        let value = get(name)?.trim();
        let plausible =
            !value.is_empty() && value.len() <= 256 && value.bytes().all(|b| b.is_ascii_graphic());
        plausible.then(|| format!("{name}:{value}"))
    })
}

/// A one-way fingerprint of the request's credential (`x-api-key`, `x-goog-api-key` or
/// `Authorization`), so two users sending the same first message stay apart.
pub fn credential_fingerprint<'a>(get: impl Fn(&str) -> Option<&'a str>) -> String {
    let credential = ["x-api-key", "x-goog-api-key", "authorization"]
        .iter()
        .find_map(|name| get(name).map(|value| format!("{name}|{}", value.trim())));
    match credential {
        Some(credential) => short_hash(credential.as_bytes()),
        None => "anonymous".to_string(),
    }
}

fn short_hash(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes)[..8])
}

/// Where the session's project is: a directory stated by the harness (a `Working directory:`
/// or ` - Primary working directory:` line, a `<cwd>` element or `"cwd"` field, or the path of a
/// `CLAUDE.md`/`AGENTS.md`/`.lore.md` it quotes) beats the `X-Lore-Project` header. `None` when
/// neither says: the session then goes to its own unattributed bucket (never the gateway's own
/// working directory) until a confident path arrives.
pub fn project_hint(texts: &[&str], header: Option<&str>) -> Option<ProjectHint> {
    if let Some(path) = texts.iter().find_map(|text| stated_directory(text)) {
        return Some(ProjectHint {
            path,
            confident: true,
        });
    }
    header
        .map(str::trim)
        .filter(|path| path.starts_with('/') && path.len() <= 4096)
        .map(|path| ProjectHint {
            path: path.trim_end_matches('/').to_string(),
            confident: true,
        })
}

/// The texts a request states its directory in, most telling first: the system prompt, the
/// system-role messages (Claude Code 2.1's `# Environment`), the first user message (Codex's
/// `<environment_context>`) and the latest one (a directory stated later in the conversation).
pub fn attribution_texts(request: &CanonicalRequest) -> Vec<String> {
    let mut texts: Vec<String> = request.system.iter().cloned().collect();
    texts.extend(
        request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .map(Message::text),
    );
    let mut users = request.messages.iter().filter(|m| m.role == Role::User);
    if let Some(first) = users.next() {
        texts.push(first.text());
    }
    if let Some(last) = users.next_back() {
        texts.push(last.text());
    }
    texts
}

/// The directory a harness states in `text`, if any.
pub fn stated_directory(text: &str) -> Option<String> {
    for line in text.lines() {
        let line = line.trim();
        // Claude Code ≥ 2.1 writes ` - Primary working directory:` (older ones `Working
        // directory:`), Pi `Current working directory:`.
        let line = line.trim_start_matches(['-', '*', ' ']);
        if let Some(rest) = [
            "Working directory:",
            "Primary working directory:",
            "Current working directory:",
        ]
        .iter()
        .find_map(|label| line.strip_prefix(label))
            && let Some(path) = clean_path(rest)
        {
            return Some(path);
        }
    }
    if let Some(start) = text.find("<cwd>") {
        let rest = &text[start + 5..];
        if let Some(path) = rest.split("</cwd>").next().and_then(clean_path) {
            return Some(path);
        }
    }
    if let Some(start) = text.find("\"cwd\"") {
        let rest = text[start + 5..]
            .trim_start()
            .strip_prefix(':')
            .map(str::trim_start);
        if let Some(path) = rest
            .and_then(|r| r.strip_prefix('"'))
            .and_then(|r| r.split('"').next())
            .and_then(clean_path)
        {
            return Some(path);
        }
    }
    for marker in ["/CLAUDE.md", "/AGENTS.md", "/.lore.md"] {
        if let Some(end) = text.find(marker) {
            let before = &text[..end];
            let start = before
                .rfind(|c: char| c.is_whitespace() || c == '(' || c == '"' || c == '\'')
                .map_or(0, |i| i + 1);
            if let Some(path) = clean_path(&before[start..]) {
                return Some(path);
            }
        }
    }
    None
}

fn clean_path(raw: &str) -> Option<String> {
    let path = raw.trim().trim_end_matches('/');
    let plausible = path.starts_with('/')
        && path.len() > 1
        && path.len() <= 4096
        && !path.contains(char::is_control);
    plausible.then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lore_actors::model::conversation_fingerprint;

    fn headers<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    #[test]
    fn the_strongest_session_header_wins() {
        let pairs = [
            ("x-session-affinity", "aff-1"),
            ("x-claude-code-session-id", "cc-123"),
        ];
        assert_eq!(
            session_header_key(headers(&pairs)).as_deref(),
            Some("x-claude-code-session-id:cc-123")
        );
        assert_eq!(session_header_key(headers(&[("x-session-id", " ")])), None);
    }

    #[test]
    fn different_keys_give_different_fingerprints() {
        let a = credential_fingerprint(headers(&[("x-api-key", "sk-a")]));
        let b = credential_fingerprint(headers(&[("x-api-key", "sk-b")]));
        let bearer = credential_fingerprint(headers(&[("authorization", "Bearer sk-a")]));
        assert_ne!(a, b);
        assert_ne!(a, bearer);
        assert!(!a.contains("sk-a"));
        assert_ne!(
            conversation_fingerprint("hi", &a),
            conversation_fingerprint("hi", &b)
        );
        assert_eq!(conversation_fingerprint("hi", &a).len(), 16);
    }

    #[test]
    fn projects_come_from_the_prompt_then_the_header_then_the_gateway() {
        let system = "You are Claude Code.\nWorking directory: /home/ada/proj/\nIs git repo: yes";
        assert_eq!(
            project_hint(&[system], Some("/other")),
            Some(ProjectHint {
                path: "/home/ada/proj".into(),
                confident: true
            })
        );
        let claude_2_1 = "Here is useful information about the environment you are running in:\n - Primary working directory: /tmp/e2e/proj\n - Is a git repository: false";
        assert_eq!(
            project_hint(&[claude_2_1], None).unwrap().path,
            "/tmp/e2e/proj"
        );
        let pi = "You are an expert coding assistant.\nCurrent date: 2026-12-01\nCurrent working directory: /home/ada/pi-app";
        assert_eq!(project_hint(&[pi], None).unwrap().path, "/home/ada/pi-app");
        let codex = "<environment_context>\n  <cwd>/work/app</cwd>\n</environment_context>";
        assert_eq!(project_hint(&["", codex], None).unwrap().path, "/work/app");
        let quoted = "Contents of /home/ada/lib/CLAUDE.md (project instructions)";
        assert_eq!(project_hint(&[quoted], None).unwrap().path, "/home/ada/lib");
        assert_eq!(
            project_hint(&["{\"cwd\": \"/x/y\"}"], None).unwrap().path,
            "/x/y"
        );
        assert_eq!(
            project_hint(&["no path"], Some("/from/header")),
            Some(ProjectHint {
                path: "/from/header".into(),
                confident: true
            })
        );
        assert_eq!(project_hint(&["no path"], None), None);
    }

    fn attributed(protocol: lore_proto::Protocol, body: serde_json::Value) -> Option<String> {
        let request = lore_proto::parse_request(protocol, body.to_string().as_bytes()).unwrap();
        let texts = attribution_texts(&request);
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        project_hint(&texts, None).map(|hint| hint.path)
    }

    #[test]
    fn each_harness_states_its_directory_where_it_really_does() {
        use lore_proto::Protocol;
        use serde_json::json;
        // Claude Code 2.1: the billing header and the agent prompt in `system`, the directory
        // in a system-role message after the first user message.
        let claude = json!({"model": "claude-x", "system": [
            {"type": "text", "text": "x-anthropic-billing-header: cc_version=2.1.0; cc_entrypoint=cli;"},
            {"type": "text", "text": "You are an agent working with the user."}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "<system-reminder>\nnotes\n</system-reminder>"}, {"type": "text", "text": "fix it"}]},
                {"role": "system", "content": [{"type": "text", "text": "# Environment\nYou have been invoked in the following environment: \n - Primary working directory: /home/ada/app\n - Is a git repository: false\n - Platform: linux"}]}]});
        assert_eq!(
            attributed(Protocol::Anthropic, claude).as_deref(),
            Some("/home/ada/app")
        );
        // Codex: developer items, then `<environment_context>` as the first user item.
        let codex = json!({"model": "gpt-5-codex", "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are a coding agent."}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n  <cwd>/home/ada/rs</cwd>\n  <shell>bash</shell>\n</environment_context>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "say hi"}]}]});
        assert_eq!(
            attributed(Protocol::OpenAiResponses, codex).as_deref(),
            Some("/home/ada/rs")
        );
        // OpenCode (Chat Completions): `<env>` with `Working directory:` in the system message.
        let opencode = json!({"model": "gpt-5", "messages": [
            {"role": "system", "content": "You are opencode.\n<env>\n  Working directory: /home/ada/web\n  Is directory a git repo: yes\n  Platform: linux\n</env>"},
            {"role": "user", "content": "hello"}]});
        assert_eq!(
            attributed(Protocol::OpenAiChat, opencode).as_deref(),
            Some("/home/ada/web")
        );
        // Pi: `Current working directory:` at the end of its system prompt.
        let pi = json!({"model": "claude-x", "system": "You are an expert coding assistant.\nCurrent date: 2026-12-01\nCurrent working directory: /home/ada/pi-app",
            "messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(
            attributed(Protocol::Anthropic, pi).as_deref(),
            Some("/home/ada/pi-app")
        );
        // A path mentioned in passing is not a statement.
        let vague = json!({"model": "x", "messages": [{"role": "user", "content": "look at /home/ada/notes.txt"}]});
        assert_eq!(attributed(Protocol::Anthropic, vague), None);
    }
}
