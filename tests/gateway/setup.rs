//! `lore setup` and `lore run` against a fake HOME: the files each harness reads, their exact
//! restoration by `--undo`, and what a launched harness is given.

use std::path::{Path, PathBuf};

use lore_test_support::FakeUpstream;
use serde_json::Value;

use crate::helpers::*;

struct Home {
    dir: tempfile::TempDir,
    data: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn lore(&self, args: &[&str]) -> (i32, String, String) {
        let home = self.dir.path().to_str().unwrap();
        lore(
            args,
            self.data.path(),
            &[
                ("HOME", home),
                ("XDG_CONFIG_HOME", ""),
                ("CODEX_HOME", ""),
                ("CLAUDE_CONFIG_DIR", ""),
                ("PI_CODING_AGENT_DIR", ""),
                ("HERMES_HOME", ""),
                ("LORE_LISTEN_PORT", "3311"),
            ],
        )
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn setup_writes_every_harness_config_and_undo_restores_the_exact_bytes() {
    let home = Home::new();
    let claude_original = "{\n  \"model\": \"opus\",\n  \"env\": {\"FOO\": \"bar\"}\n}   \n";
    let claude = home.write(".claude/settings.json", claude_original);
    let codex_original =
        "# my codex\nmodel = \"gpt-5-codex\"\n\n[profiles.fast]\nmodel = \"gpt-5-mini\"\n";
    let codex = home.write(".codex/config.toml", codex_original);
    let hermes_original = "# Hermes config\nmodel:\n  default: claude-sonnet-4-5\n  provider: anthropic\n  base_url: https://api.anthropic.com\n";
    let hermes = home.write(".hermes/config.yaml", hermes_original);

    for harness in ["claude", "codex", "opencode", "pi", "hermes"] {
        let (code, out, err) = home.lore(&["setup", harness]);
        assert_eq!(code, 0, "{harness}: {out}{err}");
    }
    let settings = json(&claude);
    assert_eq!(settings["model"], "opus");
    assert_eq!(settings["env"]["FOO"], "bar");
    assert_eq!(
        settings["env"]["ANTHROPIC_BASE_URL"],
        "http://127.0.0.1:3311"
    );
    assert_eq!(settings["env"]["DISABLE_AUTO_COMPACT"], "1");

    let toml = std::fs::read_to_string(&codex).unwrap();
    assert!(toml.starts_with("# my codex\n"), "{toml}");
    let first_table = toml.find("[profiles.fast]").unwrap();
    let base = toml
        .find("openai_base_url = \"http://127.0.0.1:3311/v1\"")
        .unwrap();
    assert!(
        base < first_table,
        "a top-level key, not in a table: {toml}"
    );
    assert!(toml.contains("model_auto_compact_token_limit = 999999999"));

    let opencode = json(&home.path(".config/opencode/opencode.json"));
    assert_eq!(
        opencode["provider"]["anthropic"]["options"]["baseURL"], "http://127.0.0.1:3311/v1",
        "OpenCode posts to <baseURL>/messages, so its Anthropic base needs /v1"
    );
    assert_eq!(opencode["compaction"]["auto"], false);

    let pi_models = json(&home.path(".pi/agent/models.json"));
    assert_eq!(
        pi_models["providers"]["anthropic"]["baseUrl"],
        "http://127.0.0.1:3311"
    );
    assert_eq!(
        json(&home.path(".pi/agent/settings.json"))["compaction"]["enabled"],
        false
    );

    let yaml = std::fs::read_to_string(&hermes).unwrap();
    assert!(
        yaml.contains("  base_url: \"http://127.0.0.1:3311\"\n"),
        "{yaml}"
    );
    assert!(yaml.starts_with("# Hermes config\n"), "{yaml}");

    let (code, out, _) = home.lore(&["setup", "--status"]);
    assert_eq!(code, 0);
    assert_eq!(out.matches(": set up: ").count(), 6, "{out}");

    // Setting up again keeps the first backup: undo still goes back to the user's file.
    let (code, _, err) = home.lore(&["setup", "claude", "--url", "http://127.0.0.1:4000"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        json(&claude)["env"]["ANTHROPIC_BASE_URL"],
        "http://127.0.0.1:4000"
    );

    let (code, out, err) = home.lore(&["setup", "--undo"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(std::fs::read_to_string(&claude).unwrap(), claude_original);
    assert_eq!(std::fs::read_to_string(&codex).unwrap(), codex_original);
    assert_eq!(std::fs::read_to_string(&hermes).unwrap(), hermes_original);
    assert!(!home.path(".config/opencode/opencode.json").exists());
    assert!(!home.path(".pi/agent/models.json").exists());
    let (_, out, _) = home.lore(&["setup", "--status"]);
    assert_eq!(out.matches("not set up").count(), 5, "{out}");
}

#[test]
fn setup_refuses_what_it_cannot_edit_safely_and_changes_nothing() {
    let home = Home::new();
    let jsonc = "{\n  // my providers\n  \"model\": \"anthropic/claude-sonnet-4-5\"\n}\n";
    let path = home.write(".config/opencode/opencode.jsonc", jsonc);
    let (code, _, err) = home.lore(&["setup", "opencode"]);
    assert_eq!(code, 1);
    assert!(err.contains("by hand") && err.contains("baseURL"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), jsonc);

    let hermes = home.write(
        ".hermes/config.yaml",
        "model:\n  provider: openrouter\n  base_url: https://openrouter.ai/api/v1\n",
    );
    let before = std::fs::read_to_string(&hermes).unwrap();
    let (code, _, err) = home.lore(&["setup", "hermes"]);
    assert_eq!(code, 1);
    assert!(err.contains("openrouter"), "{err}");
    assert_eq!(std::fs::read_to_string(&hermes).unwrap(), before);
    let (code, _, err) = home.lore(&["setup", "vim"]);
    assert_eq!(code, 1);
    assert!(err.contains("claude, codex, opencode, pi, hermes"), "{err}");
}

#[test]
fn setup_sends_a_chatgpt_login_of_codex_to_the_codex_backend_route() {
    let home = Home::new();
    home.write(
        ".codex/auth.json",
        r#"{"auth_mode":"chatgpt","OPENAI_API_KEY":null,"tokens":{"id_token":"x","access_token":"y","refresh_token":"z"}}"#,
    );
    let (code, _, err) = home.lore(&["setup", "codex"]);
    assert_eq!(code, 0, "{err}");
    let toml = std::fs::read_to_string(home.path(".codex/config.toml")).unwrap();
    assert!(
        toml.contains("openai_base_url = \"http://127.0.0.1:3311/v1/codex\""),
        "{toml}"
    );
}

/// A stand-in harness on PATH that records its arguments and the variables lore run set.
fn fake_harness(bin: &Path, name: &str, out: &Path) {
    let script = format!(
        "#!/bin/sh\n{{ echo \"ARGS=$*\"; env | grep -E '^(ANTHROPIC_|DISABLE_AUTO_COMPACT|_CLAUDE_CODE|OPENCODE_|OPENAI_BASE_URL)' ; true; }} > '{}'\n",
        out.display()
    );
    let path = bin.join(name);
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn lore_run_gives_each_harness_the_gateway_the_project_and_no_auto_compaction() {
    let upstream = FakeUpstream::start();
    let gateway = Gateway::start(&upstream);
    let home = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let out = bin.path().join("out.txt");
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // All written before any runs: a script still open for writing cannot be executed.
    for harness in ["claude", "codex", "opencode", "pi", "hermes"] {
        fake_harness(bin.path(), harness, &out);
    }
    let run = |harness: &str, args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_lore"))
            .args(["run", "--data-dir"])
            .arg(gateway.data_dir())
            .arg(harness)
            .args(args)
            .current_dir(project.path())
            .env("PATH", &path)
            .env("HOME", home.path())
            .env_remove("ANTHROPIC_CUSTOM_HEADERS")
            .env_remove("OPENCODE_CONFIG_CONTENT")
            .env_remove("CODEX_HOME")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{harness}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::read_to_string(&out).unwrap()
    };
    let base = format!("http://127.0.0.1:{}", gateway.port);
    let project_dir = project.path().canonicalize().unwrap();

    let claude = run("claude", &["-p", "hi"]);
    assert!(claude.contains("ARGS=-p hi\n"), "{claude}");
    assert!(
        claude.contains(&format!("ANTHROPIC_BASE_URL={base}\n")),
        "{claude}"
    );
    assert!(claude.contains("DISABLE_AUTO_COMPACT=1\n"), "{claude}");
    assert!(
        claude.contains(&format!(
            "ANTHROPIC_CUSTOM_HEADERS=X-Lore-Project: {}\n",
            project_dir.display()
        )),
        "{claude}"
    );

    let codex = run("codex", &["exec", "hi"]);
    assert!(
        codex.contains(&format!(
            "ARGS=-c openai_base_url=\"{base}/v1\" -c model_auto_compact_token_limit=999999999 exec hi\n"
        )),
        "{codex}"
    );

    let opencode = run("opencode", &["run", "hi"]);
    let line = opencode
        .lines()
        .find_map(|l| l.strip_prefix("OPENCODE_CONFIG_CONTENT="))
        .unwrap();
    let config: Value = serde_json::from_str(line).unwrap();
    assert_eq!(
        config["provider"]["anthropic"]["options"]["baseURL"],
        format!("{base}/v1")
    );
    assert!(
        opencode.contains("OPENCODE_DISABLE_AUTOCOMPACT=1"),
        "{opencode}"
    );

    let pi = run("pi", &["-p", "hi"]);
    let extension = gateway.data_dir().join("harness/pi-lore-extension.ts");
    assert!(
        pi.contains(&format!("ARGS=--extension {} -p hi", extension.display())),
        "{pi}"
    );
    let text = std::fs::read_to_string(extension).unwrap();
    assert!(text.contains(&format!("baseUrl: \"{base}\"")), "{text}");

    let hermes = run("hermes", &[]);
    assert!(
        hermes.contains(&format!("OPENAI_BASE_URL={base}/v1")),
        "{hermes}"
    );
}
