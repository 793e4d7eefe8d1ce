//! One session: its conversation, per-turn charts (tokens; cost by kind) with each turn's
//! context layer, its context state and knowledge block, forks and observation logs.

use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::answer;
use crate::dashboard::error::blocking;
use crate::dashboard::paging::PageQuery;
use crate::dashboard::sessions::{SessionView, view};
use crate::dashboard::turns::TurnUsage;
use crate::server::AppState;
use crate::ui::fmt::{fields, pager_base};
use crate::ui::svg::{Bar, Unit, stacked_bars};

/// `?offset=&limit=&seq=` of the session page.
#[derive(Debug, Default, Deserialize)]
pub struct SessionQuery {
    /// First message shown.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Messages shown.
    #[serde(default)]
    pub limit: Option<usize>,
    /// Open the window holding this message.
    #[serde(default)]
    pub seq: Option<u64>,
}

/// The session page.
#[derive(Template)]
#[template(path = "session.html")]
pub struct SessionPage {
    title: String,
    active: &'static str,
    v: SessionView,
    chart: String,
    cost_chart: String,
    context_rows: Vec<(String, String)>,
    knowledge_rows: Vec<(String, String)>,
    pager_base: String,
}

/// The per-turn cost chart: uncached input, cache reads, cache writes and output, stacked.
pub fn cost_chart(turns: &[TurnUsage]) -> String {
    let bars: Vec<Bar> = turns
        .iter()
        .map(|t| Bar {
            label: t.turn.to_string(),
            values: vec![
                t.input_usd,
                t.cache_read_usd,
                t.cache_write_usd,
                t.output_usd,
            ],
        })
        .collect();
    stacked_bars(
        "cost per turn",
        &["uncached input", "cache read", "cache write", "output"],
        &bars,
        Unit::Dollars,
    )
}

/// The per-turn chart: uncached input, cache reads and cache writes, stacked.
pub fn turn_chart(turns: &[TurnUsage]) -> String {
    let bars: Vec<Bar> = turns
        .iter()
        .map(|t| Bar {
            label: t.turn.to_string(),
            values: vec![
                t.input_tokens as f64,
                t.cache_read_tokens as f64,
                t.cache_write_tokens as f64,
            ],
        })
        .collect();
    stacked_bars(
        "prompt tokens per turn",
        &["uncached input", "cache read", "cache write"],
        &bars,
        Unit::Tokens,
    )
}

/// `GET /ui/sessions/{id}`.
pub async fn session(
    path: web::Path<String>,
    query: web::Query<SessionQuery>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let store = state.store.clone();
    let id = path.into_inner();
    let query = query.into_inner();
    let base = pager_base(&format!("/ui/sessions/{id}"), &[]);
    let page = PageQuery {
        offset: query.offset,
        limit: query.limit,
    };
    let catalogue = state.config.context.catalogue.clone();
    let loaded = blocking(move || view(&store, &catalogue, &id, page, query.seq)).await;
    answer(loaded.map(|v| SessionPage {
        title: format!("Session {}", crate::ui::fmt::short(&v.session.id)),
        active: "Projects",
        chart: turn_chart(&v.turns),
        cost_chart: cost_chart(&v.turns),
        context_rows: fields(&v.context),
        knowledge_rows: fields(&v.knowledge),
        v,
        pager_base: base,
    }))
    .await
}
