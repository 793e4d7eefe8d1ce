//! Search, costs (the worker ledger) and settings.

use actix_web::{HttpResponse, web};
use askama::Template;

use super::answer;
use crate::dashboard::costs::{self, WorkerUsage};
use crate::dashboard::error::blocking;
use crate::dashboard::search::{self, SearchQuery, SearchResults};
use crate::dashboard::settings::{self, Settings};
use crate::server::AppState;
use crate::ui::svg::{Bar, Unit, stacked_bars};

/// The search page.
#[derive(Template)]
#[template(path = "search.html")]
pub struct SearchPage {
    title: String,
    active: &'static str,
    r: SearchResults,
    project: String,
    session: String,
}

/// `GET /ui/search?q=&mode=&scope=&project=&session=`.
pub async fn search(query: web::Query<SearchQuery>, state: web::Data<AppState>) -> HttpResponse {
    let query = query.into_inner();
    let project = query.project.clone().unwrap_or_default();
    let session = query.session.clone().unwrap_or_default();
    answer(search::run(&state, &query).await.map(|r| SearchPage {
        title: "Search".into(),
        active: "Search",
        r,
        project,
        session,
    }))
    .await
}

/// The costs page.
#[derive(Template)]
#[template(path = "costs.html")]
pub struct CostsPage {
    title: String,
    active: &'static str,
    u: WorkerUsage,
    buckets: Vec<String>,
    chart: String,
}

/// The daily chart of worker spend, one series per bucket.
pub fn cost_chart(usage: &WorkerUsage) -> (Vec<String>, String) {
    let mut buckets: Vec<String> = Vec::new();
    for day in &usage.days {
        for (bucket, _) in &day.buckets {
            if !buckets.contains(bucket) {
                buckets.push(bucket.clone());
            }
        }
    }
    let bars: Vec<Bar> = usage
        .days
        .iter()
        .map(|day| Bar {
            label: day.day.get(5..).unwrap_or(&day.day).to_string(),
            values: buckets
                .iter()
                .map(|b| {
                    day.buckets
                        .iter()
                        .find(|(name, _)| name == b)
                        .map_or(0.0, |(_, t)| t.cost_usd)
                })
                .collect(),
        })
        .collect();
    let names: Vec<&str> = buckets.iter().map(String::as_str).collect();
    let chart = stacked_bars("worker spend per day", &names, &bars, Unit::Dollars);
    (buckets, chart)
}

/// `GET /ui/costs`.
pub async fn costs(state: web::Data<AppState>) -> HttpResponse {
    let store = state.store.clone();
    let usage = blocking(move || costs::load(&store)).await;
    answer(usage.map(|u| {
        let (buckets, chart) = cost_chart(&u);
        CostsPage {
            title: "Costs".into(),
            active: "Costs",
            u,
            buckets,
            chart,
        }
    }))
    .await
}

/// The settings page.
#[derive(Template)]
#[template(path = "settings.html")]
pub struct SettingsPage {
    title: String,
    active: &'static str,
    s: Settings,
}

/// `GET /ui/settings`.
pub async fn settings(state: web::Data<AppState>) -> HttpResponse {
    answer(Ok(SettingsPage {
        title: "Settings".into(),
        active: "Settings",
        s: settings::load(&state.config),
    }))
    .await
}
