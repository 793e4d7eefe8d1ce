//! `lore doctor`: what is installed, what is missing, and the command that fixes it.

use std::process::ExitCode;

use crate::cli::DataDirArg;
use crate::commands::{data_dir, environment, live_port};
use crate::config::{GatewayConfig, Overrides};
use crate::harness::{ALL, which};

/// Prints a checklist; exits 1 when something needed is broken.
pub fn doctor(data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    let mut broken = false;
    let env = environment();
    match GatewayConfig::build(
        &Overrides {
            data_dir: Some(dir.clone()),
            ..Default::default()
        },
        &env,
    ) {
        Ok(config) => {
            println!(
                "ok       configuration (listen {}:{}, Anthropic upstream {}, OpenAI upstream {})",
                config.host, config.port, config.upstream.anthropic, config.upstream.openai
            );
            if !config.extra_headers.is_empty() {
                println!(
                    "ok       LORE_UPSTREAM_EXTRA_HEADERS: {} header(s)",
                    config.extra_headers.len()
                );
            }
        }
        Err(err) => {
            broken = true;
            println!("BROKEN   configuration: {err}");
        }
    }
    let writable = std::fs::create_dir_all(&dir).is_ok() && tempfile_in(&dir);
    if writable {
        println!("ok       data directory {}", dir.display());
    } else {
        broken = true;
        println!(
            "BROKEN   data directory {} is not writable; pass --data-dir or set LORE_DATA_DIR",
            dir.display()
        );
    }
    let running = live_port(&dir);
    match running {
        Some(port) => println!("ok       gateway running on http://127.0.0.1:{port}"),
        None => println!(
            "missing  gateway is not running; start it with `lore start --daemon` (or `lore run <agent>`)"
        ),
    }
    if running.is_none() && !report_database(&dir) {
        broken = true;
    }
    let mut any_agent = false;
    for agent in ALL.iter().map(|harness| harness.program()) {
        match which(agent) {
            Some(path) => {
                any_agent = true;
                println!("ok       {agent} at {}", path.display());
            }
            None => println!("missing  {agent} (optional)"),
        }
    }
    if !any_agent {
        println!(
            "note     no agent found; any client that takes a base URL works: point it at http://127.0.0.1:3207"
        );
    }
    report_vault(&dir);
    report_embeddings();
    Ok(if broken {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Opens the database (only when no gateway holds it); false when it is damaged.
fn report_database(data_dir: &std::path::Path) -> bool {
    let db = data_dir.join("db");
    if !db.exists() {
        println!("ok       database (none yet; created on first start)");
        return true;
    }
    match lore_storage::Store::open(&db) {
        Ok(store) => {
            let sessions = store.list_sessions().map(|s| s.len());
            match sessions {
                Ok(count) => {
                    println!("ok       database {} ({count} sessions)", db.display());
                    true
                }
                Err(err) => {
                    println!(
                        "BROKEN   database {}: {err}; see \"Recovering a damaged database\" in the README",
                        db.display()
                    );
                    false
                }
            }
        }
        Err(err) if err.kind == lore_storage::StorageErrorKind::Locked => {
            println!(
                "ok       database {} (in use by a running lore)",
                db.display()
            );
            true
        }
        Err(err) => {
            let mut message = err.to_string();
            if !message.contains("Recovering a damaged database") {
                message.push_str("; see \"Recovering a damaged database\" in the README");
            }
            println!("BROKEN   database: {message}");
            false
        }
    }
}

fn tempfile_in(dir: &std::path::Path) -> bool {
    let probe = dir.join(".doctor-probe");
    let ok = std::fs::write(&probe, b"ok").is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// The card vault: where it is, how many cards load, how many files are skipped.
fn report_vault(data_dir: &std::path::Path) {
    let vault = match std::env::var("LORE_CARDS_VAULT") {
        Ok(path) if !path.trim().is_empty() => std::path::PathBuf::from(path),
        _ => data_dir.join("cards"),
    };
    let snapshot = lore_storage::Vault::new(&vault).load(None);
    if snapshot.cards.is_empty() && snapshot.problems.is_empty() {
        println!(
            "missing  card vault {} has no cards (optional); create one with `lore cards init`",
            vault.display()
        );
    } else if snapshot.problems.is_empty() {
        println!(
            "ok       card vault {}: {} cards",
            vault.display(),
            snapshot.cards.len()
        );
    } else {
        println!(
            "warning  card vault {}: {} cards, {} files skipped; `lore cards check` says why",
            vault.display(),
            snapshot.cards.len(),
            snapshot.problems.len()
        );
    }
}

/// Loads the embedding model as the gateway would, and says what is missing if it cannot.
fn report_embeddings() {
    let config = lore_actors::embedder::EmbedderConfig::from_env();
    match lore_actors::embedder::EmbeddingModel::load(&config) {
        Ok(_) => println!(
            "ok       embeddings: {} on ONNX Runtime {}",
            lore_actors::embedder::MODEL_NAME,
            config.runtime.display()
        ),
        Err(err) => println!("missing  embeddings: {err}; recall uses BM25 alone until then"),
    }
}
