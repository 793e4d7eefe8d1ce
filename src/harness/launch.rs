//! What `lore run <harness>` sets so that one launch of the harness goes through the gateway,
//! with the project header and the harness's own auto-compaction switched off, without touching
//! the harness's config files (that is `lore setup`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::Harness;

/// Codex's auto-compaction threshold when the gateway manages the context.
pub const CODEX_NO_AUTO_COMPACT: u64 = 999_999_999;

/// How a harness is started so that it talks to the gateway.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// Environment variables to set.
    pub env: Vec<(String, String)>,
    /// Arguments put before the user's own.
    pub args: Vec<String>,
    /// Files to write before the harness starts (Pi's extension).
    pub files: Vec<(PathBuf, String)>,
    /// Things the user should know, printed before the harness starts.
    pub notes: Vec<String>,
}

/// Where a harness reads its configuration and credentials from.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    /// The gateway's base URL, without a trailing slash or `/v1`.
    pub base_url: &'a str,
    /// The project directory (the current directory).
    pub project: &'a Path,
    /// The user's environment.
    pub env: &'a HashMap<String, String>,
    /// The user's home directory.
    pub home: &'a Path,
    /// Lore's data directory (for files `lore run` writes, such as Pi's extension).
    pub data_dir: &'a Path,
}

/// True when Codex is logged in with ChatGPT (its requests then go to the ChatGPT backend,
/// `/v1/codex/responses` on the gateway); false for an API key or no login. Only the login mode
/// is read from `auth.json`, never a credential.
pub fn codex_uses_chatgpt(codex_home: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(codex_home.join("auth.json")) else {
        return false;
    };
    let Ok(auth) = serde_json::from_str::<Value>(&text) else {
        return false;
    };
    match auth["auth_mode"].as_str() {
        Some(mode) => mode.to_ascii_lowercase().starts_with("chatgpt"),
        None => auth["tokens"].is_object() && auth["OPENAI_API_KEY"].as_str().is_none(),
    }
}

/// `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home(env: &HashMap<String, String>, home: &Path) -> PathBuf {
    env.get("CODEX_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".codex"))
}

/// The base URL Codex is given: `<gw>/v1/codex` with a ChatGPT login, else `<gw>/v1`.
pub fn codex_base_url(base_url: &str, chatgpt: bool) -> String {
    if chatgpt {
        format!("{base_url}/v1/codex")
    } else {
        format!("{base_url}/v1")
    }
}

/// The `X-Lore-Project` header line for a project.
fn project_header(project: &Path) -> String {
    format!("X-Lore-Project: {}", project.display())
}

/// Recursively merges `patch` into `target` (objects merge, anything else replaces).
pub fn merge_json(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                merge_json(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
        (target, patch) => *target = patch.clone(),
    }
}

/// The OpenCode configuration that routes its Anthropic and OpenAI providers through the gateway.
pub fn opencode_providers(base_url: &str, headers: Option<&Value>) -> Value {
    let mut options = json!({ "baseURL": format!("{base_url}/v1") });
    if let Some(headers) = headers {
        options["headers"] = headers.clone();
    }
    json!({
        "provider": {
            "anthropic": { "options": options.clone() },
            "openai": { "options": options },
        }
    })
}

/// The Pi extension that routes Pi's built-in providers through the gateway for one launch.
pub fn pi_extension(base_url: &str) -> String {
    let anthropic = serde_json::to_string(base_url).unwrap_or_default();
    let openai = serde_json::to_string(&format!("{base_url}/v1")).unwrap_or_default();
    format!(
        "// Written by `lore run pi`: routes pi's built-in providers through the Lore gateway.\n\
         export default function (pi: any) {{\n\
         \x20 const headers = {{ \"X-Lore-Project\": process.cwd() }};\n\
         \x20 pi.registerProvider(\"anthropic\", {{ baseUrl: {anthropic}, headers }});\n\
         \x20 pi.registerProvider(\"openai\", {{ baseUrl: {openai}, headers }});\n\
         \x20 pi.registerProvider(\"openai-codex\", {{ baseUrl: {openai}, headers }});\n\
         }}\n"
    )
}

/// What `lore run` sets for `harness`.
pub fn launch(harness: Harness, ctx: &Context<'_>) -> Launch {
    let base = ctx.base_url;
    let mut launch = Launch::default();
    let set = |launch: &mut Launch, name: &str, value: String| {
        launch.env.push((name.to_string(), value));
    };
    match harness {
        Harness::ClaudeCode => {
            set(&mut launch, "ANTHROPIC_BASE_URL", base.to_string());
            // Without it Claude Code ≥ 2.1.181 drops its billing signature for other base URLs.
            set(
                &mut launch,
                "_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL",
                "1".into(),
            );
            set(&mut launch, "DISABLE_AUTO_COMPACT", "1".into());
            let header = project_header(ctx.project);
            let headers = match ctx.env.get("ANTHROPIC_CUSTOM_HEADERS") {
                Some(existing) if existing.to_ascii_lowercase().contains("x-lore-project") => {
                    existing.clone()
                }
                Some(existing) if !existing.trim().is_empty() => {
                    format!("{}\n{header}", existing.trim_end())
                }
                _ => header,
            };
            set(&mut launch, "ANTHROPIC_CUSTOM_HEADERS", headers);
        }
        Harness::Codex => {
            let chatgpt = codex_uses_chatgpt(&codex_home(ctx.env, ctx.home));
            let url = codex_base_url(base, chatgpt);
            launch.args = vec![
                "-c".into(),
                format!("openai_base_url=\"{url}\""),
                "-c".into(),
                format!("model_auto_compact_token_limit={CODEX_NO_AUTO_COMPACT}"),
            ];
        }
        Harness::OpenCode => {
            let headers = json!({ "X-Lore-Project": ctx.project.display().to_string() });
            let ours = opencode_providers(base, Some(&headers));
            let mut config = ctx
                .env
                .get("OPENCODE_CONFIG_CONTENT")
                .and_then(|text| serde_json::from_str::<Value>(text).ok())
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({}));
            merge_json(&mut config, &ours);
            set(&mut launch, "OPENCODE_CONFIG_CONTENT", config.to_string());
            set(&mut launch, "OPENCODE_DISABLE_AUTOCOMPACT", "1".into());
        }
        Harness::Pi => {
            let path = ctx.data_dir.join("harness").join("pi-lore-extension.ts");
            launch.args = vec!["--extension".into(), path.display().to_string()];
            launch.files.push((path, pi_extension(base)));
            launch.notes.push(
                "pi has no per-launch switch for auto-compaction; `lore setup pi` turns it off in ~/.pi/agent/settings.json".into(),
            );
        }
        Harness::Hermes => {
            // Hermes before 0.10 read OPENAI_BASE_URL; later ones read only config.yaml.
            set(&mut launch, "OPENAI_BASE_URL", format!("{base}/v1"));
            let config = super::setup::hermes_home(ctx.env, ctx.home).join("config.yaml");
            let routed = std::fs::read_to_string(&config)
                .map(|text| text.contains(base))
                .unwrap_or(false);
            if !routed {
                launch.notes.push(format!(
                    "Hermes reads its endpoint from {}; run `lore setup hermes` once so it goes through Lore",
                    config.display()
                ));
            }
        }
    }
    launch
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn ctx<'a>(env: &'a HashMap<String, String>, home: &'a Path) -> Context<'a> {
        Context {
            base_url: "http://127.0.0.1:3207",
            project: Path::new("/work/app"),
            env,
            home,
            data_dir: Path::new("/data"),
        }
    }

    fn env_of(launch: &Launch, name: &str) -> Option<String> {
        launch
            .env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }

    #[test]
    fn claude_code_gets_the_base_url_the_project_and_no_auto_compaction() {
        let env = HashMap::new();
        let home = tempfile::tempdir().unwrap();
        let launch = launch(Harness::ClaudeCode, &ctx(&env, home.path()));
        assert_eq!(
            env_of(&launch, "ANTHROPIC_BASE_URL").unwrap(),
            "http://127.0.0.1:3207"
        );
        assert_eq!(env_of(&launch, "DISABLE_AUTO_COMPACT").unwrap(), "1");
        assert_eq!(
            env_of(&launch, "ANTHROPIC_CUSTOM_HEADERS").unwrap(),
            "X-Lore-Project: /work/app"
        );
        let env: HashMap<String, String> =
            [("ANTHROPIC_CUSTOM_HEADERS".into(), "X-Team: a".into())].into();
        let launch = super::launch(Harness::ClaudeCode, &ctx(&env, home.path()));
        assert_eq!(
            env_of(&launch, "ANTHROPIC_CUSTOM_HEADERS").unwrap(),
            "X-Team: a\nX-Lore-Project: /work/app",
            "the user's own headers are kept"
        );
    }

    #[test]
    fn codex_goes_to_v1_or_to_the_chatgpt_backend_by_its_login() {
        let env = HashMap::new();
        let home = tempfile::tempdir().unwrap();
        let launch = launch(Harness::Codex, &ctx(&env, home.path()));
        assert_eq!(
            launch.args,
            [
                "-c",
                "openai_base_url=\"http://127.0.0.1:3207/v1\"",
                "-c",
                "model_auto_compact_token_limit=999999999"
            ]
        );
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        std::fs::write(
            home.path().join(".codex/auth.json"),
            r#"{"auth_mode":"chatgpt","OPENAI_API_KEY":null,"tokens":{"access_token":"x"}}"#,
        )
        .unwrap();
        let launch = super::launch(Harness::Codex, &ctx(&env, home.path()));
        assert_eq!(
            launch.args[1],
            "openai_base_url=\"http://127.0.0.1:3207/v1/codex\""
        );
        std::fs::write(
            home.path().join(".codex/auth.json"),
            r#"{"auth_mode":"apikey","OPENAI_API_KEY":"sk-x"}"#,
        )
        .unwrap();
        assert!(!codex_uses_chatgpt(&home.path().join(".codex")));
    }

    #[test]
    fn opencode_gets_v1_base_urls_and_keeps_the_users_inline_config() {
        let env: HashMap<String, String> = [(
            "OPENCODE_CONFIG_CONTENT".into(),
            r#"{"model":"anthropic/claude-sonnet-4-5","provider":{"anthropic":{"options":{"timeout":5}}}}"#.into(),
        )]
        .into();
        let home = tempfile::tempdir().unwrap();
        let launch = launch(Harness::OpenCode, &ctx(&env, home.path()));
        let config: Value =
            serde_json::from_str(&env_of(&launch, "OPENCODE_CONFIG_CONTENT").unwrap()).unwrap();
        assert_eq!(
            config["provider"]["anthropic"]["options"]["baseURL"],
            "http://127.0.0.1:3207/v1"
        );
        assert_eq!(config["provider"]["anthropic"]["options"]["timeout"], 5);
        assert_eq!(
            config["provider"]["openai"]["options"]["headers"]["X-Lore-Project"],
            "/work/app"
        );
        assert_eq!(config["model"], "anthropic/claude-sonnet-4-5");
        assert_eq!(
            env_of(&launch, "OPENCODE_DISABLE_AUTOCOMPACT").unwrap(),
            "1"
        );
    }

    #[test]
    fn pi_gets_an_extension_and_hermes_an_openai_url() {
        let env = HashMap::new();
        let home = tempfile::tempdir().unwrap();
        let pi = launch(Harness::Pi, &ctx(&env, home.path()));
        assert_eq!(
            pi.args,
            ["--extension", "/data/harness/pi-lore-extension.ts"]
        );
        let (_, text) = &pi.files[0];
        assert!(text.contains(
            "pi.registerProvider(\"anthropic\", { baseUrl: \"http://127.0.0.1:3207\", headers });"
        ));
        assert!(text.contains("\"openai-codex\", { baseUrl: \"http://127.0.0.1:3207/v1\""));
        let hermes = launch(Harness::Hermes, &ctx(&env, home.path()));
        assert_eq!(
            env_of(&hermes, "OPENAI_BASE_URL").unwrap(),
            "http://127.0.0.1:3207/v1"
        );
        assert!(hermes.notes[0].contains("lore setup hermes"));
    }
}
