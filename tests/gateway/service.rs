//! A quiet long-running service: the default log level, `lore logs`, and the user-service files
//! `lore service` writes (checked with `systemd-analyze verify` where it exists).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lore_test_support::http_client;
use serde_json::Value;

use crate::helpers::*;

/// Starts `lore start` with the default log filter (no `LORE_LOG`), embeddings and the memory
/// workers on, as a user would have it; the log goes to `<dir>/lore.log`. Returns the child and
/// its port.
fn start_default_logging(dir: &Path) -> (std::process::Child, u16) {
    let log = std::fs::File::create(dir.join("lore.log")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(["start", "--port", "0", "--data-dir"])
        .arg(dir)
        .env_remove("LORE_LOG")
        .env_remove("LORE_DATA_DIR")
        .env("LORE_UPSTREAM_ANTHROPIC", "http://127.0.0.1:9")
        .env("LORE_UPSTREAM_OPENAI", "http://127.0.0.1:9")
        .stdin(Stdio::null())
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let port = eventually("the gateway listens", || {
        let port: u16 = std::fs::read_to_string(dir.join("gateway.port"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        http_client::request(
            &format!("http://127.0.0.1:{port}"),
            "GET",
            "/health",
            &[],
            b"",
        )
        .ok()
        .filter(|r| r.status == 200)
        .map(|_| port)
    });
    (child, port)
}

#[test]
fn an_idle_gateway_writes_nothing_periodic_and_third_party_logs_stay_at_warn() {
    let data = tempfile::tempdir().unwrap();
    let (mut child, port) = start_default_logging(data.path());
    let base = format!("http://127.0.0.1:{port}");
    if std::env::var_os("ORT_DYLIB_PATH").is_some() {
        // The model loads in the background; ONNX Runtime logs ~300 INFO lines while it does.
        eventually("the embedding model is ready", || {
            let health: Value = http_client::request(&base, "GET", "/health", &[], b"")
                .ok()?
                .json();
            (health["embeddings"]["state"] == "ready").then_some(())
        });
    }
    // The card library re-reads the (missing) vault every 2 s: three rounds at least.
    let quiet_since = Instant::now();
    let mut before = String::new();
    while quiet_since.elapsed() < Duration::from_secs(7) {
        std::thread::sleep(Duration::from_millis(500));
        before = std::fs::read_to_string(data.path().join("lore.log")).unwrap();
    }
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let _ = child.wait();
    assert_eq!(
        before.matches("card book loaded").count(),
        1,
        "the card book is logged once, not on every reload:\n{before}"
    );
    assert!(
        !before.contains("ort::"),
        "ONNX Runtime lines leaked:\n{before}"
    );
    assert!(
        !before.contains('\u{1b}'),
        "colour codes in a log file:\n{before}"
    );
    assert!(
        before.lines().count() <= 12,
        "an idle gateway should say little:\n{before}"
    );
}

#[test]
fn lore_logs_prints_the_last_lines() {
    let data = tempfile::tempdir().unwrap();
    let lines: String = (1..=80).map(|n| format!("line {n}\n")).collect();
    std::fs::write(data.path().join("lore.log"), lines).unwrap();
    let (code, out, err) = lore(&["logs", "-n", "3"], data.path(), &[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "line 78\nline 79\nline 80\n");
    let (_, out, _) = lore(&["logs"], data.path(), &[]);
    assert_eq!(out.lines().count(), 50);
    assert!(out.starts_with("line 31\n"), "{out}");
}

#[test]
fn lore_logs_follow_prints_what_is_appended() {
    let data = tempfile::tempdir().unwrap();
    let log = data.path().join("lore.log");
    std::fs::write(&log, "old line\n").unwrap();
    let out_path = data.path().join("followed.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args(["logs", "--data-dir"])
        .arg(data.path())
        .args(["-f", "-n", "1"])
        .stdout(std::fs::File::create(&out_path).unwrap())
        .spawn()
        .unwrap();
    eventually("the last line is printed", || {
        std::fs::read_to_string(&out_path)
            .ok()
            .filter(|out| out.contains("old line"))
    });
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .and_then(|mut file| std::io::Write::write_all(&mut file, b"new line\n"))
        .unwrap();
    let out = eventually("the appended line is printed", || {
        std::fs::read_to_string(&out_path)
            .ok()
            .filter(|out| out.contains("new line"))
    });
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(out, "old line\nnew line\n");
}

#[test]
fn service_install_writes_a_valid_systemd_unit_and_uninstall_removes_it() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let env = [
        ("HOME", home.path().to_str().unwrap()),
        ("XDG_CONFIG_HOME", ""),
        ("LORE_LISTEN_PORT", "3999"),
        ("LORE_WORKER_API_KEY", "sk-never-written"),
    ];
    let (code, out, err) = lore(
        &["service", "install", "--manager", "systemd", "--no-start"],
        data.path(),
        &env,
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("LORE_WORKER_API_KEY"),
        "the user is told: {out}"
    );
    let unit_path = home.path().join(".config/systemd/user/lore.service");
    let unit = std::fs::read_to_string(&unit_path).unwrap();
    assert!(unit.contains(&format!(
        "ExecStart=\"{}\" start --data-dir \"{}\"",
        env!("CARGO_BIN_EXE_lore"),
        data.path().display()
    )));
    assert!(unit.contains("Environment=\"LORE_LISTEN_PORT=3999\""));
    assert!(!unit.contains("sk-never-written"), "{unit}");
    assert!(unit.contains(&format!(
        "StandardOutput=append:{}",
        data.path().join("lore.log").display()
    )));
    match Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit_path)
        .output()
    {
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            // In a container without a running systemd the tool still parses the unit; only
            // complaints about this unit count.
            let complaints: Vec<&str> = stderr
                .lines()
                .filter(|line| line.contains("lore.service"))
                .collect();
            assert!(
                complaints.is_empty(),
                "systemd-analyze verify: {stderr}\n{unit}"
            );
        }
        Err(_) => eprintln!("systemd-analyze is not installed; unit syntax not verified"),
    }
    let (code, out, _) = lore(
        &["service", "status", "--manager", "systemd"],
        data.path(),
        &env,
    );
    assert_eq!(code, 0);
    assert!(out.contains("installed:"), "{out}");
    let (code, _, err) = lore(
        &["service", "uninstall", "--manager", "systemd", "--no-stop"],
        data.path(),
        &env,
    );
    assert_eq!(code, 0, "{err}");
    assert!(!unit_path.exists());
}

#[test]
fn service_install_writes_a_launchd_agent() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    // `--data-dir` after the nested subcommand, as a user types it.
    let output = Command::new(env!("CARGO_BIN_EXE_lore"))
        .args([
            "service",
            "install",
            "--manager",
            "launchd",
            "--no-start",
            "--data-dir",
        ])
        .arg(data.path())
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let path = home
        .path()
        .join("Library/LaunchAgents/dev.lore.gateway.plist");
    let plist = std::fs::read_to_string(&path).unwrap();
    assert!(plist.contains(&format!("<string>{}</string>", env!("CARGO_BIN_EXE_lore"))));
    assert!(plist.contains("<key>RunAtLoad</key><true/>"));
    assert!(plist.contains(&format!("<string>{}</string>", data.path().display())));
    match Command::new("plutil").arg("-lint").arg(&path).output() {
        Ok(output) => assert!(output.status.success(), "{plist}"),
        Err(_) => eprintln!("plutil is not installed (not macOS); plist syntax not linted"),
    }
}
