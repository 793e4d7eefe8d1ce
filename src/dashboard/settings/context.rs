//! The settings rows of the context manager (`LORE_CONTEXT`, `LORE_TARGET_CACHE_READ_COST`,
//! `LORE_MAX_LAYER0_TOKENS`, `LORE_CACHE_TTL`, `LORE_IDLE_RESUME_MINUTES`, `LORE_LTM`,
//! `LORE_MODEL_OVERRIDES`) and of the cost tracker (`LORE_COSTS`, `LORE_DAILY_BUDGET`,
//! `LORE_QUOTA`, `LORE_QUOTA_URL`), read from the configuration the gateway runs with.

use lore_actors::catalogue::Source;
use lore_actors::gradient::TtlMode;

use super::{SettingRow, source_of};
use crate::config::GatewayConfig;

fn on_off(on: bool) -> String {
    if on { "on".into() } else { "off".into() }
}

/// The rows, in the order the README lists the variables.
pub fn rows(config: &GatewayConfig) -> Vec<SettingRow> {
    let env = |name: &str| source_of(config, None, name);
    let context = &config.context;
    let settings = &context.settings;
    let costs = &config.costs;
    let overridden = context
        .catalogue
        .table()
        .iter()
        .filter(|row| row.source == Source::Override)
        .count();
    let row = |name: &'static str, value: String, about: &'static str| SettingRow {
        name,
        value,
        source: env(name),
        about,
    };
    vec![
        row(
            "LORE_CONTEXT",
            on_off(settings.enabled),
            "the context manager (layers 1–4 when a session outgrows its window or its cap)",
        ),
        row(
            "LORE_TARGET_CACHE_READ_COST",
            format!("${} per turn", settings.target_cache_read_cost),
            "cache-read dollars a layer-0 turn may cost before compressing (0 disables the cap)",
        ),
        row(
            "LORE_MAX_LAYER0_TOKENS",
            settings.max_layer0_tokens.map_or_else(
                || "not set (cost-aware cap)".into(),
                |t| format!("{t} tokens"),
            ),
            "pins the layer-0 cap",
        ),
        row(
            "LORE_CACHE_TTL",
            match settings.ttl {
                TtlMode::Auto => "auto".into(),
                TtlMode::FiveMinutes => "5m".into(),
                TtlMode::OneHour => "1h".into(),
            },
            "prompt-cache lifetime of the conversation's breakpoint",
        ),
        row(
            "LORE_IDLE_RESUME_MINUTES",
            format!("{} min", settings.idle_resume.as_secs_f64() / 60.0),
            "quiet time after which a resumed session is compacted first",
        ),
        row(
            "LORE_LTM",
            on_off(context.ltm),
            "long-term knowledge in the prompt (system[1], system[2], deltas)",
        ),
        row(
            "LORE_MODEL_OVERRIDES",
            if overridden == 0 {
                "not set".into()
            } else {
                format!(
                    "{overridden} catalogue entr{}",
                    if overridden == 1 { "y" } else { "ies" }
                )
            },
            "corrections of the model catalogue (marked in the table below)",
        ),
        row(
            "LORE_COSTS",
            on_off(costs.enabled),
            "the cost tracker: prices every turn and worker call, the budget and the throttle",
        ),
        row(
            "LORE_DAILY_BUDGET",
            costs
                .settings
                .budget_env
                .map_or_else(|| "not set".into(), |usd| format!("${usd} a day")),
            "daily budget (US dollars per UTC day); wins over one set on the costs page",
        ),
        row(
            "LORE_QUOTA",
            on_off(costs.enabled && costs.settings.quota.enabled),
            "polls Claude Code subscription quota and throttles near its end",
        ),
        row(
            "LORE_QUOTA_URL",
            costs.settings.quota.url.clone(),
            "the OAuth usage endpoint polled",
        ),
    ]
}
