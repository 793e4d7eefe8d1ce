//! `lore run [agent] [args…]`: start or reuse the gateway, then replace this process with the
//! agent, pointed at the gateway with the setting each agent reads.
//!
//! | agent | how it is pointed at the gateway |
//! |---|---|
//! | claude (Claude Code) | `ANTHROPIC_BASE_URL`, `ANTHROPIC_CUSTOM_HEADERS: X-Lore-Project`, `_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL=1` |
//! | codex | `-c openai_base_url="<url>/v1"` (Codex does not read `OPENAI_BASE_URL`) |
//! | opencode | `ANTHROPIC_BASE_URL` and `OPENAI_BASE_URL=<url>/v1` |
//! | pi | `ANTHROPIC_BASE_URL` |
//! | hermes | `OPENAI_BASE_URL=<url>/v1` |

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;

use crate::cli::DataDirArg;
use crate::commands::start::spawn_daemon;
use crate::commands::{data_dir, live_port};
use crate::config::Overrides;

/// Agents `lore run` knows, in detection order.
pub const AGENTS: [&str; 5] = ["claude", "codex", "opencode", "pi", "hermes"];

/// How an agent is started so that it talks to the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentLaunch {
    /// Environment variables to set.
    pub env: Vec<(String, String)>,
    /// Arguments to put before the user's own.
    pub args: Vec<String>,
}

/// The environment and arguments that point `agent` at `base_url`.
pub fn agent_launch(agent: &str, base_url: &str, project: &Path) -> Option<AgentLaunch> {
    let openai_url = format!("{base_url}/v1");
    let env = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Vec<_>>()
    };
    let launch = match agent {
        "claude" => (
            env(&[
                ("ANTHROPIC_BASE_URL", base_url),
                ("_CLAUDE_CODE_ASSUME_FIRST_PARTY_BASE_URL", "1"),
                (
                    "ANTHROPIC_CUSTOM_HEADERS",
                    &format!("X-Lore-Project: {}", project.display()),
                ),
            ]),
            Vec::new(),
        ),
        "codex" => (
            Vec::new(),
            vec![
                "-c".to_string(),
                format!("openai_base_url=\"{openai_url}\""),
            ],
        ),
        "opencode" => (
            env(&[
                ("ANTHROPIC_BASE_URL", base_url),
                ("OPENAI_BASE_URL", &openai_url),
            ]),
            Vec::new(),
        ),
        "pi" => (env(&[("ANTHROPIC_BASE_URL", base_url)]), Vec::new()),
        "hermes" => (env(&[("OPENAI_BASE_URL", &openai_url)]), Vec::new()),
        _ => return None,
    };
    Some(AgentLaunch {
        env: launch.0,
        args: launch.1,
    })
}

/// Finds an executable on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Runs an agent through the gateway.
pub fn run(agent: Option<&str>, args: &[String], data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let agent = match agent {
        Some(agent) if AGENTS.contains(&agent) => agent.to_string(),
        Some(other) => bail!(
            "unknown agent `{other}`; lore run knows {}",
            AGENTS.join(", ")
        ),
        None => match AGENTS.iter().find(|agent| which(agent).is_some()) {
            Some(agent) => agent.to_string(),
            None => bail!(
                "none of {} is installed; install one or name it: `lore run claude`",
                AGENTS.join(", ")
            ),
        },
    };
    let Some(program) = which(&agent) else {
        bail!("`{agent}` is not on PATH; install it first (see `lore doctor`)");
    };
    let dir = data_dir(data);
    let port = match live_port(&dir) {
        Some(port) => port,
        None => spawn_daemon(
            &Overrides {
                data_dir: Some(dir.clone()),
                ..Default::default()
            },
            &dir,
        )?,
    };
    let base_url = format!("http://127.0.0.1:{port}");
    let project = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let Some(AgentLaunch {
        env,
        args: mut agent_args,
    }) = agent_launch(&agent, &base_url, &project)
    else {
        bail!("unknown agent `{agent}`");
    };
    agent_args.extend(args.iter().cloned());
    eprintln!("lore: running {agent} through the gateway at {base_url}");
    let err = std::process::Command::new(program)
        .args(&agent_args)
        .envs(env)
        .exec();
    bail!("cannot start {agent}: {err}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_gets_its_own_setting() {
        let project = Path::new("/p");
        let AgentLaunch { env, args } =
            agent_launch("claude", "http://127.0.0.1:3207", project).unwrap();
        assert!(env.contains(&("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:3207".into())));
        assert!(args.is_empty());
        let AgentLaunch { env, args } =
            agent_launch("codex", "http://127.0.0.1:3207", project).unwrap();
        assert!(env.is_empty());
        assert_eq!(
            args,
            vec![
                "-c".to_string(),
                "openai_base_url=\"http://127.0.0.1:3207/v1\"".to_string()
            ]
        );
        let AgentLaunch { env, .. } =
            agent_launch("hermes", "http://127.0.0.1:1", project).unwrap();
        assert_eq!(
            env,
            vec![(
                "OPENAI_BASE_URL".to_string(),
                "http://127.0.0.1:1/v1".to_string()
            )]
        );
        assert!(agent_launch("vim", "x", project).is_none());
    }
}
