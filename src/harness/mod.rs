//! The five harnesses Lore knows and how each one reaches the gateway, checked against what
//! each really does (its npm package or source):
//!
//! | harness | base URL it is given | the path it posts to | project | anti-compaction |
//! |---|---|---|---|---|
//! | Claude Code | `<gw>` (`ANTHROPIC_BASE_URL`) | `/v1/messages` | `ANTHROPIC_CUSTOM_HEADERS: X-Lore-Project` (and its `Working directory:` line) | `DISABLE_AUTO_COMPACT=1` |
//! | Codex | `<gw>/v1` (`openai_base_url`), `<gw>/v1/codex` with a ChatGPT login | `/responses` | its `<cwd>` context | `model_auto_compact_token_limit` |
//! | OpenCode | `<gw>/v1` (`provider.<id>.options.baseURL`; the AI SDK posts to `<baseURL>/messages`) | `/v1/messages`, `/v1/responses` | `options.headers` | `compaction.auto = false` / `OPENCODE_DISABLE_AUTOCOMPACT` |
//! | Pi | `<gw>` for `anthropic`, `<gw>/v1` for `openai` and `openai-codex` (`models.json` or an extension) | `/v1/messages`, `/v1/responses`, `/v1/codex/responses` | extension headers (and its `Current working directory:` line) | `compaction.enabled = false` |
//! | Hermes | `<gw>` (Anthropic) or `<gw>/v1` in `model.base_url` of `config.yaml` | `/v1/messages`, `/v1/chat/completions` | — | `compression.enabled = false` |
//!
//! - [`launch`]: what `lore run` sets for each harness.
//! - [`setup`]: the harness's own config files that `lore setup` writes, with backups and undo.

pub mod launch;
pub mod setup;

use std::path::PathBuf;

/// A harness Lore can point at itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Harness {
    /// Anthropic's Claude Code (`claude`).
    ClaudeCode,
    /// OpenAI's Codex CLI (`codex`).
    Codex,
    /// OpenCode (`opencode`).
    OpenCode,
    /// Pi (`pi`, `@mariozechner/pi-coding-agent`).
    Pi,
    /// Nous Research's Hermes agent (`hermes`).
    Hermes,
}

/// Every harness, in detection order.
pub const ALL: [Harness; 5] = [
    Harness::ClaudeCode,
    Harness::Codex,
    Harness::OpenCode,
    Harness::Pi,
    Harness::Hermes,
];

impl Harness {
    /// The harness a name means (`claude`, `claude-code`, `codex`, `opencode`, `pi`, `hermes`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "claude" | "claude-code" | "claudecode" => Some(Self::ClaudeCode),
            "codex" => Some(Self::Codex),
            "opencode" => Some(Self::OpenCode),
            "pi" => Some(Self::Pi),
            "hermes" => Some(Self::Hermes),
            _ => None,
        }
    }

    /// The name used on the command line and in Lore's own files.
    pub fn name(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude",
            Self::Codex => "codex",
            Self::OpenCode => "opencode",
            Self::Pi => "pi",
            Self::Hermes => "hermes",
        }
    }

    /// The executable.
    pub fn program(self) -> &'static str {
        self.name()
    }

    /// The names `from_name` accepts, for error messages.
    pub fn known() -> String {
        ALL.iter().map(|h| h.name()).collect::<Vec<_>>().join(", ")
    }
}

/// Finds an executable on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// The gateway's base URL for harness configs: `http://<host>:<port>` from `LORE_LISTEN_HOST` /
/// `LORE_LISTEN_PORT`, else `http://127.0.0.1:3207`.
pub fn configured_base_url(env: &std::collections::HashMap<String, String>) -> String {
    let host = env
        .get("LORE_LISTEN_HOST")
        .map(|h| h.trim())
        .filter(|h| !h.is_empty() && *h != "0.0.0.0" && *h != "::")
        .unwrap_or("127.0.0.1");
    let port = env
        .get("LORE_LISTEN_PORT")
        .and_then(|p| p.trim().parse::<u16>().ok())
        .filter(|p| *p != 0)
        .unwrap_or(3207);
    format!("http://{host}:{port}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for harness in ALL {
            assert_eq!(Harness::from_name(harness.name()), Some(harness));
        }
        assert_eq!(Harness::from_name("Claude-Code"), Some(Harness::ClaudeCode));
        assert_eq!(Harness::from_name("vim"), None);
    }

    #[test]
    fn the_configured_url_follows_the_listen_settings() {
        let env = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(configured_base_url(&env(&[])), "http://127.0.0.1:3207");
        assert_eq!(
            configured_base_url(&env(&[("LORE_LISTEN_PORT", "3300")])),
            "http://127.0.0.1:3300"
        );
        assert_eq!(
            configured_base_url(&env(&[("LORE_LISTEN_HOST", "0.0.0.0")])),
            "http://127.0.0.1:3207"
        );
    }
}
