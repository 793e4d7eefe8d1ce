//! The costs page: daily spend by bucket as stacked bars, the budget and its form, the
//! throttle, the savings with how each was computed, the dearest sessions.

use actix_web::{HttpResponse, web};
use askama::Template;

use super::answer;
use crate::dashboard::costs::{self, CostsQuery, CostsView};
use crate::server::AppState;
use crate::ui::svg::{Bar, Unit, stacked_bars};

/// The costs page.
#[derive(Template)]
#[template(path = "costs.html")]
pub struct CostsPage {
    title: String,
    active: &'static str,
    c: CostsView,
    chart: String,
    day_rows: Vec<(String, Vec<f64>, f64)>,
}

/// The table's rows, newest day first: each bucket's cost in the chart's order, and the total.
pub fn day_rows(view: &CostsView) -> Vec<(String, Vec<f64>, f64)> {
    view.report
        .days
        .iter()
        .map(|day| {
            let values = view
                .buckets
                .iter()
                .map(|name| {
                    day.buckets
                        .iter()
                        .find(|b| &b.bucket == name)
                        .map_or(0.0, |b| b.totals.cost_usd)
                })
                .collect();
            (day.day.clone(), values, day.total_usd)
        })
        .collect()
}

/// The daily chart, oldest day first, one series per bucket.
pub fn cost_chart(view: &CostsView) -> String {
    let bars: Vec<Bar> = day_rows(view)
        .into_iter()
        .rev()
        .map(|(day, values, _)| Bar {
            label: day.get(5..).unwrap_or(&day).to_string(),
            values,
        })
        .collect();
    let names: Vec<&str> = view.buckets.iter().map(String::as_str).collect();
    stacked_bars("spend per day by bucket", &names, &bars, Unit::Dollars)
}

/// `GET /ui/costs?days=`.
pub async fn costs(query: web::Query<CostsQuery>, state: web::Data<AppState>) -> HttpResponse {
    answer(costs::load(&state, query.days).await.map(|c| CostsPage {
        title: "Costs".into(),
        active: "Costs",
        chart: cost_chart(&c),
        day_rows: day_rows(&c),
        c,
    }))
    .await
}
