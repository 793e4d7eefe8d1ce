//! `lore status`, `lore sessions` and `lore log`: read through the running gateway's API, or
//! straight from storage when no gateway runs.

use std::process::ExitCode;

use anyhow::{Context, bail};
use lore_storage::Store;
use serde_json::{Value, json};

use crate::api::{session_detail, session_summary};
use crate::cli::DataDirArg;
use crate::client;
use crate::commands::{data_dir, live_port};

/// Prints whether the gateway runs and what it holds.
pub fn status(as_json: bool, data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    let port = live_port(&dir);
    let health: Value = match port {
        Some(port) => serde_json::from_str(&client::get(port, "/health")?.1).unwrap_or(Value::Null),
        None => Value::Null,
    };
    let actors: Value = match port {
        Some(port) => client::get(port, "/api/v1/actors")
            .ok()
            .and_then(|(_, body)| serde_json::from_str(&body).ok())
            .unwrap_or(Value::Null),
        None => Value::Null,
    };
    let costs: Value = match port {
        Some(port) => client::get(port, "/api/v1/costs?days=1")
            .ok()
            .and_then(|(_, body)| serde_json::from_str(&body).ok())
            .unwrap_or(Value::Null),
        None => Value::Null,
    };
    let sessions = sessions_json(&dir, port).ok();
    let count = sessions
        .as_ref()
        .and_then(|s| s["sessions"].as_array().map(Vec::len));
    let report = json!({
        "running": port.is_some(),
        "url": port.map(|port| format!("http://127.0.0.1:{port}")),
        "pid": crate::server::running_gateway(&dir).filter(|_| port.is_some()).map(|(pid, _)| pid),
        "data_dir": dir.display().to_string(),
        "health": health,
        "sessions": count,
        "memory": {
            "distiller": actors["distiller"],
            "curator": actors["curator"],
            "worker_usage": actors["worker_usage"],
        },
        "budget": costs["budget"],
    });
    if as_json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if let Some(port) = port {
        println!("lore gateway running on http://127.0.0.1:{port}");
        println!("data: {}", dir.display());
        if let Some(count) = count {
            println!("sessions: {count}");
        }
        if let Some(sessions) = &sessions {
            print_contexts(sessions);
        }
        print_memory(&actors);
        print_budget(&costs["budget"]);
    } else {
        println!(
            "lore gateway is not running (data: {}); start it with `lore start --daemon`",
            dir.display()
        );
        if let Some(count) = count {
            println!("sessions stored: {count}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What the context manager does in the most recent sessions.
fn print_contexts(sessions: &Value) {
    let Some(list) = sessions["sessions"].as_array() else {
        return;
    };
    let recent: Vec<&Value> = list
        .iter()
        .filter(|s| s["context"]["turns_planned"].as_u64().unwrap_or(0) > 0)
        .take(5)
        .collect();
    if recent.is_empty() {
        return;
    }
    println!("context (most recent sessions):");
    for session in recent {
        let c = &session["context"];
        let id: String = session["id"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(8)
            .collect();
        println!(
            "  {id}  layer {} (floor {}), cap {}, overhead {}, last estimate {} vs actual {}, cache reads {:.0}%, busts {}{}",
            c["layer"],
            c["floor"],
            c["layer0_cap_tokens"],
            c["overhead_tokens"],
            c["last_estimate_tokens"],
            c["last_actual_input_tokens"],
            c["cache_read_share"].as_f64().unwrap_or(0.0) * 100.0,
            c["busts"],
            match c["provider_managed"].as_str() {
                Some(why) => format!(" — the provider manages it ({why})"),
                None => String::new(),
            }
        );
        if let Some(reason) = c["reason"].as_str().filter(|r| !r.is_empty()) {
            println!("            {reason}");
        }
    }
}

/// The memory workers' queue, work done, spend and last error.
fn print_memory(actors: &Value) {
    let distiller = &actors["distiller"];
    if distiller.is_null() {
        println!("memory workers: off");
        return;
    }
    let curator = &actors["curator"];
    let running = distiller["running"].as_str().unwrap_or("none");
    println!(
        "memory: {} queued, running: {running}; {} distillations, {} consolidations; knowledge +{} ~{} -{}",
        distiller["queued"],
        distiller["distillations"],
        distiller["consolidations"],
        curator["created"],
        curator["updated"],
        curator["deleted"],
    );
    let (mut tokens, mut cost) = (0u64, 0f64);
    for row in actors["worker_usage"].as_array().into_iter().flatten() {
        tokens +=
            row["input_tokens"].as_u64().unwrap_or(0) + row["output_tokens"].as_u64().unwrap_or(0);
        cost += row["cost_usd"].as_f64().unwrap_or(0.0);
    }
    println!("worker calls: {tokens} tokens, ${cost:.4} (all days)");
    let last_error = distiller["last_error"]
        .as_str()
        .or_else(|| curator["last_error"].as_str());
    match last_error {
        Some(error) => println!("last memory error: {error}"),
        None => println!("last memory error: none"),
    }
}

/// Today's spend against the budget (details in `lore costs`).
fn print_budget(budget: &Value) {
    let Some(spent) = budget["spent_today_usd"].as_f64() else {
        return;
    };
    match budget["daily_usd"].as_f64() {
        Some(daily) => println!(
            "spent today: ${spent:.4} of ${daily:.2}; {} requests held today (see `lore costs`)",
            budget["throttle"]["events"]
        ),
        None => println!("spent today: ${spent:.4}, no daily budget (see `lore costs`)"),
    }
}

/// Lists sessions.
pub fn sessions(as_json: bool, data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    let listing = sessions_json(&dir, live_port(&dir))?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&listing)?);
        return Ok(ExitCode::SUCCESS);
    }
    let empty = Vec::new();
    let sessions = listing["sessions"].as_array().unwrap_or(&empty);
    if sessions.is_empty() {
        println!("no sessions captured yet; point a harness at the gateway (see `lore run`)");
    }
    for session in sessions {
        let project = session["project"].as_str().unwrap_or("-");
        let provisional = if session["project_provisional"].as_bool() == Some(true) {
            " (provisional)"
        } else {
            ""
        };
        println!(
            "{}  {:>4} msgs  {:>3} forks  {}  {}{}",
            session["id"].as_str().unwrap_or(""),
            session["messages"],
            session["forks"],
            session["model"].as_str().unwrap_or("-"),
            project,
            provisional
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Shows one session's conversation.
pub fn log(session: &str, as_json: bool, data: &DataDirArg) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    let port = live_port(&dir);
    let listing = sessions_json(&dir, port)?;
    let matches: Vec<&str> = listing["sessions"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|s| s["id"].as_str())
                .filter(|id| id.starts_with(session))
                .collect()
        })
        .unwrap_or_default();
    let id = match matches.as_slice() {
        [id] => id.to_string(),
        [] => bail!("no session starts with `{session}`; list them with `lore sessions`"),
        _ => bail!(
            "`{session}` matches {} sessions; give more characters of the id",
            matches.len()
        ),
    };
    let detail = match port {
        Some(port) => {
            let (status, body) = client::get(port, &format!("/api/v1/sessions/{id}/messages"))?;
            if status != 200 {
                bail!("the gateway answered {status}: {body}");
            }
            serde_json::from_str(&body).context("the gateway sent malformed JSON")?
        }
        None => {
            let store = open_store(&dir)?;
            let record = store.load_session(&id)?.context("session vanished")?;
            let forks = store.session_forks(&record)?;
            session_detail(&record, &forks, &store.session_messages(&record)?)
        }
    };
    if as_json {
        println!("{}", serde_json::to_string_pretty(&detail)?);
        return Ok(ExitCode::SUCCESS);
    }
    let empty = Vec::new();
    for message in detail["messages"].as_array().unwrap_or(&empty) {
        let role = message["role"].as_str().unwrap_or("?");
        let marker = if message["partial"].as_bool() == Some(true) {
            " (partial)"
        } else {
            ""
        };
        println!("[{}] {role}{marker}", message["position"]);
        let text = message["text"].as_str().unwrap_or("");
        for part in message["parts"].as_array().unwrap_or(&empty) {
            match part["type"].as_str() {
                Some("tool_call") => println!(
                    "  → {}({})",
                    part["name"].as_str().unwrap_or(""),
                    part["arguments"].as_str().unwrap_or("")
                ),
                Some("tool_result") => {
                    println!("  ← {}", first_line(part["content"].as_str().unwrap_or("")))
                }
                _ => {}
            }
        }
        if !text.is_empty() {
            println!("{text}");
        }
        println!();
    }
    for fork in detail["forks"].as_array().unwrap_or(&empty) {
        println!(
            "fork: history rewritten at position {}",
            fork["at_position"]
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn open_store(dir: &std::path::Path) -> anyhow::Result<Store> {
    Store::open(&dir.join("db")).map_err(|err| anyhow::anyhow!("{err}"))
}

fn sessions_json(dir: &std::path::Path, port: Option<u16>) -> anyhow::Result<Value> {
    match port {
        Some(port) => {
            let (status, body) = client::get(port, "/api/v1/sessions")?;
            if status != 200 {
                bail!("the gateway answered {status}: {body}");
            }
            serde_json::from_str(&body).context("the gateway sent malformed JSON")
        }
        None => {
            if !dir.join("db").exists() {
                return Ok(json!({"sessions": []}));
            }
            let store = open_store(dir)?;
            let sessions = store.list_sessions()?;
            Ok(json!({"sessions": sessions.iter().map(session_summary).collect::<Vec<_>>()}))
        }
    }
}
