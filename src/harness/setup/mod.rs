//! `lore setup <harness>`: the harness's own config files, changed so it goes through the
//! gateway without `lore run`, and put back exactly by `lore setup --undo`.
//!
//! | harness | file (and the variable that moves it) | what is set |
//! |---|---|---|
//! | Claude Code | `~/.claude/settings.json` (`CLAUDE_CONFIG_DIR`) | `env.ANTHROPIC_BASE_URL`, `env._CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL`, `env.DISABLE_AUTO_COMPACT` |
//! | Codex | `~/.codex/config.toml` (`CODEX_HOME`) | `openai_base_url` (`/v1`, or `/v1/codex` with a ChatGPT login), `model_auto_compact_token_limit` |
//! | OpenCode | `~/.config/opencode/opencode.json` (`XDG_CONFIG_HOME`; an existing `opencode.jsonc` or `config.json` is used instead) | `provider.anthropic|openai.options.baseURL`, `compaction.auto = false` |
//! | Pi | `~/.pi/agent/models.json` and `settings.json` (`PI_CODING_AGENT_DIR`) | `providers.anthropic|openai|openai-codex.baseUrl`, `compaction.enabled = false` |
//! | Hermes | `~/.hermes/config.yaml` (`HERMES_HOME`) | `model.base_url` (Anthropic or OpenAI providers only), `compression.enabled = false` |
//!
//! The project is not written into these global files: each harness states its working
//! directory in its prompt, which the gateway reads (`gateway/identity.rs`).

pub mod backup;
pub mod edit;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::Harness;
use super::launch::{CODEX_NO_AUTO_COMPACT, codex_base_url, codex_home, codex_uses_chatgpt};
use edit::{EditError, TomlValue, json_merge, toml_set, yaml_set, yaml_string};

/// Where the harness configs live.
#[derive(Debug, Clone)]
pub struct Places<'a> {
    /// The user's home.
    pub home: &'a Path,
    /// The user's environment (for `CODEX_HOME`, `XDG_CONFIG_HOME`, …).
    pub env: &'a HashMap<String, String>,
}

impl Places<'_> {
    fn var(&self, name: &str) -> Option<PathBuf> {
        self.env
            .get(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    }
}

/// `$HERMES_HOME`, else `~/.hermes`.
pub fn hermes_home(env: &HashMap<String, String>, home: &Path) -> PathBuf {
    env.get("HERMES_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".hermes"))
}

/// The files a harness's setup touches (whether or not they exist yet).
pub fn files(harness: Harness, places: &Places<'_>) -> Vec<PathBuf> {
    match harness {
        Harness::ClaudeCode => vec![
            places
                .var("CLAUDE_CONFIG_DIR")
                .unwrap_or_else(|| places.home.join(".claude"))
                .join("settings.json"),
        ],
        Harness::Codex => vec![codex_home(places.env, places.home).join("config.toml")],
        Harness::OpenCode => {
            let dir = places
                .var("XDG_CONFIG_HOME")
                .unwrap_or_else(|| places.home.join(".config"))
                .join("opencode");
            let existing = ["opencode.jsonc", "opencode.json", "config.json"]
                .iter()
                .map(|name| dir.join(name))
                .find(|path| path.exists());
            vec![existing.unwrap_or_else(|| dir.join("opencode.json"))]
        }
        Harness::Pi => {
            let dir = places
                .var("PI_CODING_AGENT_DIR")
                .unwrap_or_else(|| places.home.join(".pi/agent"));
            vec![dir.join("models.json"), dir.join("settings.json")]
        }
        Harness::Hermes => vec![hermes_home(places.env, places.home).join("config.yaml")],
    }
}

fn read(path: &Path) -> Result<String, EditError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(err) => Err(EditError(format!("cannot read {}: {err}", path.display()))),
    }
}

/// The new content of each file of a harness's setup, pointing it at `base_url`.
pub fn plan(
    harness: Harness,
    base_url: &str,
    places: &Places<'_>,
) -> Result<Vec<(PathBuf, String)>, EditError> {
    let paths = files(harness, places);
    let mut out = Vec::new();
    for path in paths {
        let what = path.display().to_string();
        let text = read(&path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let new = match (harness, name.as_str()) {
            (Harness::ClaudeCode, _) => json_merge(
                &text,
                &json!({"env": {
                    "ANTHROPIC_BASE_URL": base_url,
                    "_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL": "1",
                    "DISABLE_AUTO_COMPACT": "1",
                }}),
                &what,
            )?,
            (Harness::Codex, _) => {
                let chatgpt = codex_uses_chatgpt(&codex_home(places.env, places.home));
                toml_set(
                    &text,
                    &[
                        (
                            "openai_base_url",
                            TomlValue::Str(codex_base_url(base_url, chatgpt)),
                        ),
                        (
                            "model_auto_compact_token_limit",
                            TomlValue::Int(CODEX_NO_AUTO_COMPACT as i64),
                        ),
                    ],
                    &what,
                )?
            }
            (Harness::OpenCode, _) => {
                let mut patch = super::launch::opencode_providers(base_url, None);
                patch["compaction"] = json!({"auto": false});
                if text.trim().is_empty() {
                    patch["$schema"] = json!("https://opencode.ai/config.json");
                }
                json_merge(&text, &patch, &what)?
            }
            (Harness::Pi, "models.json") => json_merge(
                &text,
                &json!({"providers": {
                    "anthropic": {"baseUrl": base_url},
                    "openai": {"baseUrl": format!("{base_url}/v1")},
                    "openai-codex": {"baseUrl": format!("{base_url}/v1")},
                }}),
                &what,
            )?,
            (Harness::Pi, _) => {
                json_merge(&text, &json!({"compaction": {"enabled": false}}), &what)?
            }
            (Harness::Hermes, _) => {
                let url = hermes_url(&text, base_url, &what)?;
                let routed = yaml_set(&text, "model", "base_url", &yaml_string(&url), &what)?;
                yaml_set(&routed, "compression", "enabled", "false", &what)?
            }
        };
        out.push((path, new));
    }
    Ok(out)
}

/// The `model.base_url` Hermes gets: the gateway for its Anthropic provider, `<gw>/v1` for
/// OpenAI; any other provider is refused (the gateway would send its traffic to OpenAI).
fn hermes_url(text: &str, base_url: &str, what: &str) -> Result<String, EditError> {
    if text.trim().is_empty() {
        return Err(EditError(format!(
            "{what} does not exist yet; run `hermes setup` once, then `lore setup hermes`"
        )));
    }
    let config: yaml_serde::Value = yaml_serde::from_str(text)
        .map_err(|err| EditError(format!("{what} is not valid YAML: {err}")))?;
    let model = &config["model"];
    let provider = model["provider"]
        .as_str()
        .unwrap_or("auto")
        .trim()
        .to_ascii_lowercase();
    let current = model["base_url"].as_str().unwrap_or("").trim();
    if current.starts_with(base_url) {
        return Ok(current.to_string());
    }
    let openai_url = current.contains("api.openai.com");
    match provider.as_str() {
        "anthropic" => Ok(base_url.to_string()),
        "openai" | "custom" if openai_url || current.is_empty() && provider == "openai" => {
            Ok(format!("{base_url}/v1"))
        }
        _ => Err(EditError(format!(
            "Hermes uses the provider `{provider}`{}; lore setup routes only its `anthropic` and `openai` providers (the gateway forwards Anthropic and OpenAI traffic). Point that provider's upstream at Lore with X-Lore-Provider, or switch Hermes with `hermes model`",
            if current.is_empty() {
                String::new()
            } else {
                format!(" at {current}")
            }
        ))),
    }
}

/// Whether a harness's files still say what setup wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileState {
    /// As setup wrote it.
    AsWritten,
    /// Edited since.
    Edited,
    /// Gone.
    Missing,
}

/// The state of each file setup wrote for a harness, or `None` when it was not set up.
pub fn status(
    data_dir: &Path,
    harness: Harness,
) -> anyhow::Result<Option<Vec<(PathBuf, FileState)>>> {
    let Some(manifest) = backup::load(data_dir, harness.name())? else {
        return Ok(None);
    };
    Ok(Some(
        manifest
            .files
            .iter()
            .map(|record| {
                let state = match std::fs::read(&record.path) {
                    Ok(bytes) if backup::sha256(&bytes) == record.written_sha256 => {
                        FileState::AsWritten
                    }
                    Ok(_) => FileState::Edited,
                    Err(_) => FileState::Missing,
                };
                (record.path.clone(), state)
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::Value;

    const GW: &str = "http://127.0.0.1:3207";

    fn planned(
        harness: Harness,
        home: &Path,
        env: &HashMap<String, String>,
    ) -> Vec<(PathBuf, String)> {
        plan(harness, GW, &Places { home, env }).unwrap()
    }

    #[test]
    fn claude_code_settings_get_an_env_block() {
        let home = tempfile::tempdir().unwrap();
        let env = HashMap::new();
        let files = planned(Harness::ClaudeCode, home.path(), &env);
        assert_eq!(files[0].0, home.path().join(".claude/settings.json"));
        let value: Value = serde_json::from_str(&files[0].1).unwrap();
        assert_eq!(value["env"]["ANTHROPIC_BASE_URL"], GW);
        assert_eq!(value["env"]["DISABLE_AUTO_COMPACT"], "1");
    }

    #[test]
    fn opencode_gets_v1_and_no_auto_compaction() {
        let home = tempfile::tempdir().unwrap();
        let env = HashMap::new();
        let files = planned(Harness::OpenCode, home.path(), &env);
        assert_eq!(
            files[0].0,
            home.path().join(".config/opencode/opencode.json")
        );
        let value: Value = serde_json::from_str(&files[0].1).unwrap();
        assert_eq!(
            value["provider"]["anthropic"]["options"]["baseURL"],
            "http://127.0.0.1:3207/v1"
        );
        assert_eq!(value["compaction"]["auto"], false);
    }

    #[test]
    fn pi_gets_provider_overrides_and_settings() {
        let home = tempfile::tempdir().unwrap();
        let env = HashMap::new();
        let files = planned(Harness::Pi, home.path(), &env);
        let models: Value = serde_json::from_str(&files[0].1).unwrap();
        assert_eq!(models["providers"]["anthropic"]["baseUrl"], GW);
        assert_eq!(
            models["providers"]["openai-codex"]["baseUrl"],
            "http://127.0.0.1:3207/v1"
        );
        let settings: Value = serde_json::from_str(&files[1].1).unwrap();
        assert_eq!(settings["compaction"]["enabled"], false);
    }

    #[test]
    fn hermes_is_routed_only_for_providers_the_gateway_forwards() {
        let home = tempfile::tempdir().unwrap();
        let env = HashMap::new();
        let dir = home.path().join(".hermes");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.yaml"),
            "model:\n  default: claude-sonnet-4-5\n  provider: anthropic\n",
        )
        .unwrap();
        let files = planned(Harness::Hermes, home.path(), &env);
        assert_eq!(
            files[0].1,
            "model:\n  base_url: \"http://127.0.0.1:3207\"\n  default: claude-sonnet-4-5\n  provider: anthropic\n\ncompression:\n  enabled: false\n"
        );
        std::fs::write(
            dir.join("config.yaml"),
            "model:\n  provider: openrouter\n  base_url: https://openrouter.ai/api/v1\n",
        )
        .unwrap();
        let err = plan(
            Harness::Hermes,
            GW,
            &Places {
                home: home.path(),
                env: &env,
            },
        )
        .unwrap_err();
        assert!(err.0.contains("openrouter"), "{err}");
    }
}
