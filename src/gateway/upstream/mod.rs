//! Where a request goes: the upstream resolution order of the seeds.
//!
//! 1. `X-Lore-Upstream-URL`, sanitised (control characters stripped, at most 2,048 characters,
//!    http or https only, no credentials in the URL, a trailing `/v1` removed).
//! 2. `X-Lore-Provider` → the provider table (local servers read `LORE_UPSTREAM_<PROVIDER>`).
//! 3. The model name's prefix (`claude-` → Anthropic, `gpt-`/`o1-`/`o3-`/`o4-` → OpenAI, …).
//! 4. The protocol defaults `LORE_UPSTREAM_ANTHROPIC` / `LORE_UPSTREAM_OPENAI`.
//!
//! The gateway does not translate between protocols: a provider or model route is taken only
//! when that provider speaks the protocol the client used; otherwise resolution falls through
//! to the protocol default. Upstream URLs are server roots; the client's path is appended.

use std::collections::HashMap;

use lore_proto::Protocol;

mod sanitize;
#[cfg(test)]
mod tests;

pub use sanitize::sanitize_base;
use sanitize::{origin_of, parse_allowlist};

/// Which wire protocols a provider accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaks {
    /// Anthropic Messages only.
    Anthropic,
    /// OpenAI Chat Completions and Responses.
    OpenAi,
}

impl Speaks {
    fn accepts(self, protocol: Protocol) -> bool {
        match self {
            Speaks::Anthropic => protocol == Protocol::Anthropic,
            Speaks::OpenAi => protocol != Protocol::Anthropic,
        }
    }
}

/// One row of the provider table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRoute {
    /// Server root, without `/v1`.
    pub base: String,
    /// Protocols the provider accepts.
    pub speaks: Speaks,
    /// True when `base` already carries the API version, so the client's leading `/v1` is dropped.
    pub strip_v1: bool,
}

/// Built-in providers: id, default base, protocol, strip `/v1`, environment override.
#[rustfmt::skip]
const PROVIDERS: &[(&str, &str, Speaks, bool, Option<&str>)] = &[
    ("anthropic", "https://api.anthropic.com", Speaks::Anthropic, false, None),
    ("openai", "https://api.openai.com", Speaks::OpenAi, false, None),
    ("deepseek", "https://api.deepseek.com", Speaks::OpenAi, false, None),
    ("xai", "https://api.x.ai", Speaks::OpenAi, false, None),
    ("groq", "https://api.groq.com/openai", Speaks::OpenAi, false, None),
    ("cerebras", "https://api.cerebras.ai", Speaks::OpenAi, false, None),
    ("openrouter", "https://openrouter.ai/api", Speaks::OpenAi, false, None),
    ("mistral", "https://api.mistral.ai", Speaks::OpenAi, false, None),
    ("fireworks", "https://api.fireworks.ai/inference", Speaks::OpenAi, false, None),
    ("together", "https://api.together.xyz", Speaks::OpenAi, false, None),
    ("huggingface", "https://router.huggingface.co", Speaks::OpenAi, false, None),
    ("nvidia", "https://integrate.api.nvidia.com", Speaks::OpenAi, false, None),
    ("google", "https://generativelanguage.googleapis.com/v1beta/openai", Speaks::OpenAi, true, None),
    ("github-copilot", "https://api.githubcopilot.com", Speaks::OpenAi, true, None),
    ("github-models", "https://models.github.ai/inference", Speaks::OpenAi, true, None),
    ("minimax", "https://api.minimax.io/anthropic", Speaks::Anthropic, false, None),
    ("kimi-coding", "https://api.kimi.com/coding", Speaks::Anthropic, false, None),
    ("zai", "https://api.z.ai/api/anthropic", Speaks::Anthropic, false, Some("LORE_UPSTREAM_ZAI")),
    ("vllm", "http://127.0.0.1:8000", Speaks::OpenAi, false, Some("LORE_UPSTREAM_VLLM")),
    ("llamacpp", "http://127.0.0.1:8080", Speaks::OpenAi, false, Some("LORE_UPSTREAM_LLAMACPP")),
    ("ollama", "http://127.0.0.1:11434", Speaks::OpenAi, false, Some("LORE_UPSTREAM_OLLAMA")),
    ("lmstudio", "http://127.0.0.1:1234", Speaks::OpenAi, false, Some("LORE_UPSTREAM_LMSTUDIO")),
    ("tgi", "http://127.0.0.1:8080", Speaks::OpenAi, false, Some("LORE_UPSTREAM_TGI")),
    ("litellm", "http://127.0.0.1:4000", Speaks::OpenAi, false, Some("LORE_UPSTREAM_LITELLM")),
];

/// Model-name prefixes and the provider they route to.
#[rustfmt::skip]
const MODEL_PREFIXES: &[(&str, &str)] = &[
    ("claude-", "anthropic"),
    ("gpt-", "openai"),
    ("chatgpt-", "openai"),
    ("o1-", "openai"),
    ("o3-", "openai"),
    ("o4-", "openai"),
    ("deepseek-", "deepseek"),
    ("grok-", "xai"),
    ("mistral-", "mistral"),
    ("codestral-", "mistral"),
    ("gemini-", "google"),
    ("nvidia/", "nvidia"),
    ("meta/", "nvidia"),
    ("mistralai/", "nvidia"),
    ("google/", "nvidia"),
    ("qwen/", "nvidia"),
    ("deepseek/", "nvidia"),
];

/// Upstream settings, read once at start.
#[derive(Debug, Clone)]
pub struct UpstreamConfig {
    /// `LORE_UPSTREAM_ANTHROPIC`.
    pub anthropic: String,
    /// `LORE_UPSTREAM_OPENAI`.
    pub openai: String,
    /// Base of the ChatGPT/Codex backend (`LORE_UPSTREAM_CODEX`).
    pub codex: String,
    /// The provider table with environment overrides applied.
    pub providers: HashMap<String, ProviderRoute>,
    /// Origins a remote gateway lets callers choose (`LORE_CALLER_UPSTREAM_ALLOWLIST`); `None` on a local gateway.
    pub caller_allowlist: Option<Vec<String>>,
}

impl UpstreamConfig {
    /// Reads the settings from an environment map.
    pub fn from_env(env: &HashMap<String, String>, remote: bool) -> Result<Self, String> {
        let get = |name: &str, default: &str| -> Result<String, String> {
            match env
                .get(name)
                .map(|value| value.trim())
                .filter(|value| !value.is_empty())
            {
                Some(value) => sanitize_base(value).map_err(|why| format!("{name}: {why}")),
                None => Ok(default.to_string()),
            }
        };
        let anthropic = get("LORE_UPSTREAM_ANTHROPIC", "https://api.anthropic.com")?;
        let openai = get("LORE_UPSTREAM_OPENAI", "https://api.openai.com")?;
        let codex = get("LORE_UPSTREAM_CODEX", "https://chatgpt.com")?;
        let mut providers = HashMap::new();
        for (id, base, speaks, strip_v1, variable) in PROVIDERS {
            let base = match (id, variable) {
                (&"anthropic", _) => anthropic.clone(),
                (&"openai", _) => openai.clone(),
                (_, Some(variable)) => get(variable, base)?,
                _ => base.to_string(),
            };
            providers.insert(
                id.to_string(),
                ProviderRoute {
                    base,
                    speaks: *speaks,
                    strip_v1: *strip_v1,
                },
            );
        }
        let caller_allowlist = if remote {
            Some(parse_allowlist(
                env.get("LORE_CALLER_UPSTREAM_ALLOWLIST")
                    .map(String::as_str)
                    .unwrap_or(""),
            )?)
        } else {
            None
        };
        Ok(Self {
            anthropic,
            openai,
            codex,
            providers,
            caller_allowlist,
        })
    }

    /// The default base for a protocol.
    pub fn default_base(&self, protocol: Protocol) -> &str {
        match protocol {
            Protocol::Anthropic => &self.anthropic,
            _ => &self.openai,
        }
    }
}

/// Which request is being routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ingress {
    /// One of the LLM routes.
    Llm { protocol: Protocol, codex: bool },
    /// Any other path; `protocol` is a guess from the headers.
    Other { protocol: Protocol },
}

/// Where the request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Full URL: base + path + query.
    pub url: String,
    /// Which rule chose it, for logs.
    pub rule: &'static str,
}

/// Why the request cannot be routed; the text tells the client how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpstreamError {
    /// `X-Lore-Upstream-URL` is not acceptable.
    #[error("X-Lore-Upstream-URL is not usable: {0}")]
    BadOverride(String),
    /// `X-Lore-Provider` names no known provider.
    #[error("X-Lore-Provider `{0}` is not a known provider; known: {1}")]
    UnknownProvider(String, String),
    /// The provider does not speak the client's protocol.
    #[error(
        "provider `{0}` does not accept {1} requests; send them to its own route or set X-Lore-Upstream-URL"
    )]
    WrongProtocol(String, &'static str),
}

/// Resolves the upstream URL of a request.
pub fn resolve(
    config: &UpstreamConfig,
    ingress: Ingress,
    path_and_query: &str,
    override_url: Option<&str>,
    provider: Option<&str>,
    model: Option<&str>,
) -> Result<Resolved, UpstreamError> {
    let (protocol, codex) = match ingress {
        Ingress::Llm { protocol, codex } => (protocol, codex),
        // Codex logged in with ChatGPT is given `<gw>/v1/codex` as its base URL (`lore run`,
        // `lore setup`) and fetches its model list (`/v1/codex/models`) there too.
        Ingress::Other { protocol } => (protocol, path_and_query.starts_with("/v1/codex/")),
    };
    let path = if codex {
        path_and_query.replacen("/v1/codex/", "/backend-api/codex/", 1)
    } else {
        path_and_query.to_string()
    };
    if let Some(raw) = override_url {
        let base = sanitize_base(raw).map_err(UpstreamError::BadOverride)?;
        if let Some(allowed) = &config.caller_allowlist {
            let origin = origin_of(&base);
            if !allowed.iter().any(|entry| entry == &origin) {
                return Err(UpstreamError::BadOverride(format!(
                    "this gateway is remote and `{origin}` is not in LORE_CALLER_UPSTREAM_ALLOWLIST; ask its administrator to add it"
                )));
            }
        }
        return Ok(Resolved {
            url: format!("{base}{path}"),
            rule: "x-lore-upstream-url",
        });
    }
    if let Some(id) = provider
        .map(|p| p.trim().to_ascii_lowercase())
        .filter(|p| !p.is_empty())
    {
        let route = match config.providers.get(&id) {
            Some(route) => route,
            None if id == "openai-codex" => {
                return Ok(Resolved {
                    url: format!("{}{path}", config.codex),
                    rule: "x-lore-provider",
                });
            }
            None => {
                let mut known: Vec<&str> = config.providers.keys().map(String::as_str).collect();
                known.sort_unstable();
                return Err(UpstreamError::UnknownProvider(id, known.join(", ")));
            }
        };
        if !route.speaks.accepts(protocol) {
            return Err(UpstreamError::WrongProtocol(id, protocol_name(protocol)));
        }
        return Ok(Resolved {
            url: join(route, &path),
            rule: "x-lore-provider",
        });
    }
    if codex {
        return Ok(Resolved {
            url: format!("{}{path}", config.codex),
            rule: "codex default",
        });
    }
    if let Some(model) = model {
        let lowered = model.to_ascii_lowercase();
        let routed = MODEL_PREFIXES
            .iter()
            .find(|(prefix, _)| lowered.starts_with(prefix))
            .and_then(|(_, id)| config.providers.get(*id).map(|route| (*id, route)));
        if let Some((id, route)) = routed
            && route.speaks.accepts(protocol)
            && id != "anthropic"
            && id != "openai"
        {
            return Ok(Resolved {
                url: join(route, &path),
                rule: "model prefix",
            });
        }
    }
    Ok(Resolved {
        url: format!("{}{path}", config.default_base(protocol)),
        rule: "protocol default",
    })
}

fn join(route: &ProviderRoute, path: &str) -> String {
    let path = if route.strip_v1 {
        path.strip_prefix("/v1")
            .filter(|rest| rest.starts_with('/'))
            .unwrap_or(path)
    } else {
        path
    };
    format!("{}{path}", route.base)
}

fn protocol_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Anthropic => "Anthropic Messages",
        Protocol::OpenAiChat => "OpenAI Chat Completions",
        Protocol::OpenAiResponses => "OpenAI Responses",
    }
}
