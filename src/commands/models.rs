//! `lore models`: the model catalogue in force — context window, output limit, list prices and
//! quality knee of every entry — with `LORE_MODEL_OVERRIDES` applied (a malformed override is
//! an error that names the entry).

use std::collections::HashMap;
use std::process::ExitCode;

use serde_json::json;

/// Prints the effective catalogue.
pub fn models(as_json: bool) -> anyhow::Result<ExitCode> {
    let env: HashMap<String, String> = std::env::vars().collect();
    let services = crate::context_config::from_env(&env).map_err(anyhow::Error::msg)?;
    let rows = services.catalogue.table();
    if as_json {
        // The same rows the dashboard's settings page shows.
        let rows = crate::dashboard::settings::catalogue::rows(&services.catalogue);
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"models": rows}))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<22} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}  {:<5} source",
        "model (prefix)",
        "context",
        "output",
        "$in/M",
        "$out/M",
        "$read",
        "$write",
        "$w 1h",
        "knee"
    );
    for row in rows {
        let context = match row.context_1m {
            Some(big) => format!("{}/{}", short(row.context), short(big)),
            None => short(row.context),
        };
        println!(
            "{:<22} {:>9} {:>8} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3}  {:<5.2} {}",
            row.matched,
            context,
            short(row.output),
            row.price.input,
            row.price.output,
            row.price.cache_read,
            row.price.cache_write,
            row.price.cache_write_1h,
            row.quality_knee,
            row.source.as_str()
        );
    }
    println!(
        "\nPrices in US dollars per million tokens; context/output in tokens (a second context is the 1M-token beta). Correct an entry with LORE_MODEL_OVERRIDES, e.g. '{{\"claude-sonnet-4-6\":{{\"context\":64000,\"output\":8192}}}}'."
    );
    Ok(ExitCode::SUCCESS)
}

fn short(tokens: u64) -> String {
    if tokens >= 1_000_000 && tokens.is_multiple_of(1_000_000) {
        format!("{}M", tokens / 1_000_000)
    } else if tokens >= 1_000 && tokens.is_multiple_of(1_000) {
        format!("{}K", tokens / 1_000)
    } else {
        tokens.to_string()
    }
}
