//! Search and settings.

use actix_web::{HttpResponse, web};
use askama::Template;

use super::answer;
use crate::dashboard::search::{self, SearchQuery, SearchResults};
use crate::dashboard::settings::{self, Settings};
use crate::server::AppState;

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
