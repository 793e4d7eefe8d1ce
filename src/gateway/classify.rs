//! What kind of request this is, decided before the conversation pipeline sees it.
//!
//! In order, the first rule that matches decides:
//! 1. a `/lore:` command in the last user text, answered by the gateway and never forwarded;
//! 2. a request that asks the model to summarise the conversation for the harness's own
//!    compaction ([`crate::gateway::compaction`]), answered from the observation logs;
//! 3. a Claude Code side-channel call (title, topic, the auto-mode classifier, the sub-agent
//!    namer): a Claude Code session header but no sign of the main coding prompt;
//! 4. a meta request of another harness (title, summary, label…): the `x-lore-agent` header when
//!    present, else a score of its shape;
//! 5. everything else is a conversation turn.
//!
//! Side-channel and meta requests are proxied untouched and stored nowhere: no session, no
//! cards, no recall tool, no context manager, so they never fork a conversation. Each decision
//! other than a plain turn is logged once, at info, with its reason.

use actix_web::http::header::HeaderMap;
use lore_proto::{CanonicalRequest, Part, Role};

use crate::gateway::compaction::{self, Summarise};
use crate::gateway::header_str;
use crate::gateway::identity::stated_directory;

/// A heuristic score at or above this marks a request as meta.
const META_SCORE: u32 = 8;
/// How much of a long system prompt's first line is read for a meta task.
const FIRST_LINE_CHARS: usize = 200;
/// A system prompt shorter than this counts as short.
const SHORT_SYSTEM_CHARS: usize = 500;
/// Words that name a meta task in a short system prompt.
const META_KEYWORDS: [&str; 6] = ["title", "summar", "categor", "classif", "label", "topic"];

/// What a request is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// A turn of the conversation: the whole pipeline.
    Turn,
    /// A `/lore:` command, answered by the gateway.
    Command(LoreCommand),
    /// The harness asks for a summary of the conversation to compact it.
    Compaction(Summarise),
    /// A Claude Code helper call beside the conversation.
    SideChannel(&'static str),
    /// A meta request of another harness (title, summary, label…).
    Meta(String),
}

/// A `/lore:` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoreCommand {
    /// `/lore:curate`: curate the session now.
    Curate,
    /// `/lore:amnesia on|off`.
    Amnesia(bool),
    /// Anything else after `/lore:`; answered with the list of commands.
    Unknown(String),
}

/// The commands, for the answer to an unknown one.
pub const COMMANDS: &str = "/lore:curate (distil and curate this session now), /lore:amnesia on (store nothing of this session and run no background work for it until /lore:amnesia off), /lore:amnesia off";

/// Classifies a parsed request.
pub fn classify(headers: &HeaderMap, max_tokens: Option<u64>, request: &CanonicalRequest) -> Class {
    if let Some(command) = lore_command(request) {
        return Class::Command(command);
    }
    if let Some(summarise) = compaction::detect(request) {
        return Class::Compaction(summarise);
    }
    if header_str(headers, "x-claude-code-session-id").is_some()
        && from_claude_code(headers, request)
        && !main_coding_prompt(request)
    {
        return Class::SideChannel(
            "a Claude Code call with its session header but without the main coding prompt (no working directory stated)",
        );
    }
    if let Some(agent) = header_str(headers, "x-lore-agent") {
        let agent = agent.trim().to_ascii_lowercase();
        return match agent.as_str() {
            "title" | "summary" | "summarize" | "categorize" | "label" | "classify" => {
                Class::Meta(format!("x-lore-agent: {agent}"))
            }
            _ => Class::Turn,
        };
    }
    let score = meta_score(max_tokens, request);
    // The shape alone also fits a plain API call; a helper call names its task in its prompt.
    if score >= META_SCORE && names_meta_task(request) {
        return Class::Meta(format!(
            "its shape scores {score} of {META_SCORE} needed (few tools and messages, a short system prompt, a small max_tokens)"
        ));
    }
    Class::Turn
}

/// The `/lore:` command the last user message starts with: the start of its last text part
/// (Claude Code sends reminders as text parts before the user's own words).
fn lore_command(request: &CanonicalRequest) -> Option<LoreCommand> {
    let last = request.messages.last().filter(|m| m.role == Role::User)?;
    let text = last.parts.iter().rev().find_map(|part| match part {
        Part::Text { text } if !text.trim().is_empty() => Some(text.as_str()),
        _ => None,
    })?;
    let line = text.trim_start().lines().next()?.trim();
    let rest = line.strip_prefix("/lore:")?;
    let mut words = rest.split(|c: char| c.is_whitespace() || c == ':');
    let name = words.next().unwrap_or("").to_ascii_lowercase();
    let argument = words.find(|w| !w.is_empty()).map(str::to_ascii_lowercase);
    Some(match (name.as_str(), argument.as_deref()) {
        ("curate", _) => LoreCommand::Curate,
        ("amnesia", Some("on")) => LoreCommand::Amnesia(true),
        ("amnesia", Some("off")) => LoreCommand::Amnesia(false),
        _ => LoreCommand::Unknown(line.to_string()),
    })
}

/// Whether Claude Code sent it: its user agent (`claude-cli/…`) or its billing header in the
/// system prompt.
fn from_claude_code(headers: &HeaderMap, request: &CanonicalRequest) -> bool {
    header_str(headers, "user-agent").is_some_and(|agent| agent.starts_with("claude-cli/"))
        || request
            .system
            .as_deref()
            .is_some_and(|system| system.contains("x-anthropic-billing-header"))
}

/// Whether the system prompt names a meta task (a title, a summary, a label…): anywhere in a
/// short one, in the first line of a long one (OpenCode's title agent opens its 2,000-character
/// prompt with "You are a title generator."). A prompt that states a working directory is a
/// coding agent's.
fn names_meta_task(request: &CanonicalRequest) -> bool {
    let system = request.system.as_deref().unwrap_or("");
    if stated_directory(system).is_some() {
        return false;
    }
    let scope = if system.chars().count() < SHORT_SYSTEM_CHARS {
        system
    } else {
        let first = system.trim_start().lines().next().unwrap_or("");
        &first[..first.floor_char_boundary(FIRST_LINE_CHARS)]
    };
    let lower = scope.to_lowercase();
    META_KEYWORDS.iter().any(|word| lower.contains(word))
}

/// Whether the request carries Claude Code's main coding prompt: a working directory stated in
/// its system prompt or in a system-role message (Claude Code 2.1 writes its `# Environment`
/// there). Title, topic, classifier and namer calls carry neither.
fn main_coding_prompt(request: &CanonicalRequest) -> bool {
    request
        .system
        .as_deref()
        .is_some_and(|system| stated_directory(system).is_some())
        || request
            .messages
            .iter()
            .filter(|m| m.role == Role::System)
            .any(|m| stated_directory(&m.text()).is_some())
}

/// The reference's score of a meta request's shape.
fn meta_score(max_tokens: Option<u64>, request: &CanonicalRequest) -> u32 {
    let system = request.system.as_deref().unwrap_or("");
    // A request without a system prompt is not a helper call with a short one.
    let short_system = !system.trim().is_empty() && system.chars().count() < SHORT_SYSTEM_CHARS;
    let mut score = 0;
    if request.tool_count <= 2 {
        score += 3;
    }
    if request.messages.len() <= 2 {
        score += 3;
    }
    if short_system {
        score += 2;
    }
    if max_tokens.is_some_and(|limit| limit <= 300) {
        score += 3;
    }
    if names_meta_task(request) {
        score += 2;
    }
    score
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::header::{HeaderName, HeaderValue};
    use lore_proto::Message;

    fn text(role: Role, text: &str) -> Message {
        Message::new(role, vec![Part::Text { text: text.into() }])
    }

    fn request(system: Option<&str>, messages: Vec<Message>, tools: usize) -> CanonicalRequest {
        CanonicalRequest {
            system: system.map(str::to_string),
            messages,
            tool_count: tools,
            tools_json: None,
            ..CanonicalRequest::default()
        }
    }

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

    #[test]
    fn lore_commands_are_read_from_the_last_user_text() {
        let ask = |t: &str| {
            classify(
                &HeaderMap::new(),
                None,
                &request(None, vec![text(Role::User, t)], 0),
            )
        };
        assert_eq!(ask("/lore:curate"), Class::Command(LoreCommand::Curate));
        assert_eq!(
            ask("  /lore:amnesia on"),
            Class::Command(LoreCommand::Amnesia(true))
        );
        assert_eq!(
            ask("/lore:amnesia:off"),
            Class::Command(LoreCommand::Amnesia(false))
        );
        assert_eq!(
            ask("/lore:warp"),
            Class::Command(LoreCommand::Unknown("/lore:warp".into()))
        );
        // A mention in the middle of a message is not a command.
        let long = request(
            Some(&"x".repeat(600)),
            vec![text(Role::User, "please explain /lore:curate to me"); 4],
            5,
        );
        assert_eq!(classify(&HeaderMap::new(), None, &long), Class::Turn);
        // Claude Code puts a reminder part before the user's words.
        let reminded = Message::new(
            Role::User,
            vec![
                Part::Text {
                    text: "<system-reminder>\nbe nice\n</system-reminder>".into(),
                },
                Part::Text {
                    text: "/lore:amnesia on".into(),
                },
            ],
        );
        assert_eq!(
            classify(&HeaderMap::new(), None, &request(None, vec![reminded], 0)),
            Class::Command(LoreCommand::Amnesia(true))
        );
    }

    #[test]
    fn claude_code_side_channels_lack_the_working_directory() {
        let cc = headers(&[
            ("x-claude-code-session-id", "cc-1"),
            ("user-agent", "claude-cli/2.1.332 (external, cli)"),
        ]);
        let title = request(
            Some(
                "x-anthropic-billing-header: cc_version=2.1; cc_entrypoint=cli;\nReturn JSON with a single \"title\" field.",
            ),
            vec![text(Role::User, "<session>\nfix the login bug\n</session>")],
            0,
        );
        assert!(matches!(
            classify(&cc, Some(32_000), &title),
            Class::SideChannel(_)
        ));
        // Claude Code 2.1's main prompt states its directory in a system-role message.
        let main = request(
            Some("x-anthropic-billing-header: cc_version=2.1;\nYou are an agent."),
            vec![
                text(Role::User, "fix the login bug"),
                text(
                    Role::System,
                    "# Environment\n - Primary working directory: /home/ada/app\n - Platform: linux",
                ),
            ],
            12,
        );
        assert_eq!(classify(&cc, Some(32_000), &main), Class::Turn);
        // Older versions state it in the system prompt.
        let older = request(
            Some("<env>\nWorking directory: /home/ada/app\n</env>"),
            vec![text(Role::User, "hi")],
            0,
        );
        assert_eq!(classify(&cc, Some(32_000), &older), Class::Turn);
        // Another client that borrows the header is not Claude Code.
        let borrowed = headers(&[("x-claude-code-session-id", "cc-1")]);
        let plain = request(None, vec![text(Role::User, "hi")], 0);
        assert_eq!(classify(&borrowed, Some(4096), &plain), Class::Turn);
        // Without the header, the same title call is scored as meta instead.
        assert!(matches!(
            classify(&HeaderMap::new(), Some(100), &title),
            Class::Meta(_)
        ));
    }

    #[test]
    fn meta_requests_by_header_then_by_score() {
        let plain = request(None, vec![text(Role::User, "hi")], 0);
        let title = headers(&[("x-lore-agent", "title")]);
        assert!(matches!(classify(&title, None, &plain), Class::Meta(_)));
        let coder = headers(&[("x-lore-agent", "coder")]);
        let titleish = request(Some("Generate a title"), vec![text(Role::User, "hi")], 0);
        assert_eq!(classify(&coder, Some(50), &titleish), Class::Turn);
        // OpenCode 1.18's title agent: a 2,000-character prompt that opens with its task, two
        // messages, no tools.
        let title_prompt = format!(
            "You are a title generator. You output ONLY a thread title. Nothing else.\nGenerate a brief title that would help the user find this conversation later.\n{}",
            "- Keep exact: technical terms, numbers, filenames, HTTP codes\n".repeat(30)
        );
        let opencode_title = request(
            Some(&title_prompt),
            vec![
                text(Role::User, "Generate a title for this conversation:"),
                text(Role::User, "fix the login bug"),
            ],
            0,
        );
        assert!(matches!(
            classify(&HeaderMap::new(), Some(32_000), &opencode_title),
            Class::Meta(_)
        ));
        // A long coding prompt that mentions titles further down is no title agent.
        let coder_prompt = format!(
            "You are opencode, an interactive CLI tool.\n{}Write a commit title.",
            "Be concise. ".repeat(80)
        );
        let opencode_turn = request(Some(&coder_prompt), vec![text(Role::User, "hi")], 0);
        assert_eq!(
            classify(&HeaderMap::new(), Some(32_000), &opencode_turn),
            Class::Turn
        );
        // A first coding turn: a long system prompt, many tools.
        let first_turn = request(
            Some(&"You are opencode. ".repeat(100)),
            vec![text(Role::User, "hi")],
            12,
        );
        assert_eq!(
            classify(&HeaderMap::new(), Some(32_000), &first_turn),
            Class::Turn
        );
        // A plain API call has the shape but names no meta task.
        let bare = request(None, vec![text(Role::User, "hi")], 0);
        assert_eq!(meta_score(Some(256), &bare), 9);
        assert_eq!(classify(&HeaderMap::new(), Some(256), &bare), Class::Turn);
        let helpful = request(Some("You are helpful."), vec![text(Role::User, "hi")], 0);
        assert_eq!(
            classify(&HeaderMap::new(), Some(256), &helpful),
            Class::Turn
        );
        let chat_many = request(
            Some("You are helpful."),
            vec![
                text(Role::User, "a"),
                text(Role::Assistant, "b"),
                text(Role::User, "c"),
            ],
            0,
        );
        assert_eq!(
            classify(&HeaderMap::new(), Some(4096), &chat_many),
            Class::Turn
        );
    }
}
