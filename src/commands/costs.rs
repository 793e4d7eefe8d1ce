//! `lore costs [--days N] [--json] [--set-budget USD|off]`: where the money went (a daily table
//! by bucket), today's budget, quota pressure, what was saved and how, and the dearest
//! sessions. Asks the running gateway; without one, reads the ledger from storage.

use std::process::ExitCode;

use anyhow::{Context, bail};
use lore_actors::costs::CostsReport;
use lore_storage::Store;

use crate::cli::DataDirArg;
use crate::client;
use crate::commands::{data_dir, environment, live_port};
use crate::costs_config::CostsConfig;

/// Prints the report, after setting the budget when asked.
pub fn costs(
    days: u32,
    as_json: bool,
    set_budget: Option<&str>,
    data: &DataDirArg,
) -> anyhow::Result<ExitCode> {
    let dir = data_dir(data);
    let port = live_port(&dir);
    if let Some(value) = set_budget {
        let Some(port) = port else {
            bail!(
                "the budget is set through the running gateway; start it with `lore start --daemon`, or set LORE_DAILY_BUDGET"
            );
        };
        let daily: serde_json::Value =
            match value.trim().trim_start_matches('$') {
                "off" | "none" | "0" => serde_json::Value::Null,
                number => {
                    serde_json::json!(number.parse::<f64>().ok().filter(|v| *v > 0.0).with_context(
                || format!("--set-budget `{value}` is not a positive number of US dollars or `off`")
            )?)
                }
            };
        let body = serde_json::json!({ "daily_usd": daily }).to_string();
        let (status, answer) = client::post_body(
            port,
            "/api/v1/costs/budget",
            body.as_bytes(),
            "application/json",
        )?;
        if status != 200 {
            bail!("the gateway answered {status}: {answer}");
        }
        let answer: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
        if let Some(note) = answer["note"].as_str() {
            eprintln!("note: {note}");
        }
    }
    let report: CostsReport = match port {
        Some(port) => {
            let (status, body) = client::get(port, &format!("/api/v1/costs?days={days}"))?;
            if status != 200 {
                bail!("the gateway answered {status}: {body}");
            }
            serde_json::from_str(&body).context("the gateway sent malformed JSON")?
        }
        None => {
            let config = CostsConfig::from_env(&environment()).map_err(anyhow::Error::msg)?;
            if !dir.join("db").exists() {
                bail!(
                    "nothing recorded yet in {}; point a harness at the gateway (see `lore run`)",
                    dir.display()
                );
            }
            let store = Store::open(&dir.join("db")).map_err(|err| anyhow::anyhow!("{err}"))?;
            crate::costs_api::offline_report(&store, &config, days)?
        }
    };
    if as_json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
    }
    Ok(ExitCode::SUCCESS)
}

fn usd(value: f64) -> String {
    format!("${value:.4}")
}

/// The report as text.
pub fn render(report: &CostsReport) -> String {
    let mut out = String::new();
    let budget = &report.budget;
    let mut line = format!(
        "today {} (UTC): {} spent",
        report.today,
        usd(budget.spent_today_usd)
    );
    match (budget.daily_usd, budget.fraction) {
        (Some(daily), Some(fraction)) => line.push_str(&format!(
            " of ${daily:.2} ({:.0}%, from {}), rate ${:.4}/h against ${:.4}/h affordable",
            fraction * 100.0,
            budget.source.as_deref().unwrap_or("?"),
            budget.rate_usd_per_hour,
            budget.target_rate_usd_per_hour.unwrap_or(0.0),
        )),
        _ => line
            .push_str(" (no daily budget; set LORE_DAILY_BUDGET or `lore costs --set-budget 20`)"),
    }
    out.push_str(&line);
    out.push('\n');
    out.push_str(&format!(
        "throttle today: {} requests delayed, {:.1} s in all\n",
        budget.throttle.events,
        budget.throttle.total_delay_ms as f64 / 1000.0
    ));
    if report.quota.background_paused {
        out.push_str("background work: paused (OAuth quota at 95% or more)\n");
    }
    for account in &report.quota.accounts {
        out.push_str(&format!(
            "quota {}: 5-hour {}, 7-day {}, pressure {:.2}\n",
            account.account,
            account
                .five_hour_percent
                .map_or("-".into(), |p| format!("{p:.0}%")),
            account
                .seven_day_percent
                .map_or("-".into(), |p| format!("{p:.0}%")),
            account.pressure
        ));
    }
    let mut buckets: Vec<&str> = Vec::new();
    for day in &report.days {
        for bucket in &day.buckets {
            if !buckets.contains(&bucket.bucket.as_str()) {
                buckets.push(&bucket.bucket);
            }
        }
    }
    out.push('\n');
    let mut header = format!("{:<12}", "day");
    for bucket in &buckets {
        header.push_str(&format!(" {bucket:>15}"));
    }
    header.push_str(&format!(" {:>12}", "total"));
    out.push_str(&header);
    out.push('\n');
    if report.days.is_empty() {
        out.push_str("(nothing spent in these days)\n");
    }
    for day in &report.days {
        let mut row = format!("{:<12}", day.day);
        for bucket in &buckets {
            let cost = day
                .buckets
                .iter()
                .find(|b| b.bucket == *bucket)
                .map_or(0.0, |b| b.totals.cost_usd);
            row.push_str(&format!(" {:>15}", usd(cost)));
        }
        row.push_str(&format!(" {:>12}", usd(day.total_usd)));
        out.push_str(&row);
        out.push('\n');
    }
    let savings = &report.savings;
    out.push_str("\nsaved in these days:\n");
    out.push_str(&format!(
        "  by the provider's cache: {} ({})\n",
        usd(savings.cache.usd),
        savings.cache.how
    ));
    out.push_str(&format!(
        "  by the gradient against passthrough: {} ({})\n",
        usd(savings.gradient.usd),
        savings.gradient.how
    ));
    out.push_str(&format!(
        "  Lore's own costs: {} worker calls + {} layer-change cache writes ({})\n",
        usd(savings.lore_costs.worker_usd),
        usd(savings.lore_costs.layer_change_writes_usd),
        savings.lore_costs.how
    ));
    out.push_str(&format!(
        "  net saved by Lore: {} (gradient minus Lore's own costs)\n",
        usd(savings.net_usd)
    ));
    if !report.top_sessions.is_empty() {
        out.push_str("\ntop sessions:\n");
    }
    for session in &report.top_sessions {
        out.push_str(&format!(
            "  {}  {:>10}  {:>4} turns  {}  {}\n",
            session.session_id,
            usd(session.cost_usd),
            session.turns,
            session.model.as_deref().unwrap_or("-"),
            session.project.as_deref().unwrap_or("-"),
        ));
    }
    out
}
