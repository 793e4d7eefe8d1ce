//! The overview, the project list and one project.

use actix_web::{HttpResponse, web};
use askama::Template;

use super::answer;
use crate::dashboard::error::blocking;
use crate::dashboard::overview::{Overview, load};
use crate::dashboard::paging::PageQuery;
use crate::dashboard::projects::{self, ProjectDetail, ProjectRow};
use crate::server::AppState;
use crate::ui::fmt::pager_base;

/// The overview page.
#[derive(Template)]
#[template(path = "overview.html")]
pub struct OverviewPage {
    title: String,
    active: &'static str,
    o: Overview,
}

/// `GET /ui`.
pub async fn overview(state: web::Data<AppState>) -> HttpResponse {
    answer(load(&state).await.map(|o| OverviewPage {
        title: "Overview".into(),
        active: "Overview",
        o,
    }))
    .await
}

/// The project list.
#[derive(Template)]
#[template(path = "projects.html")]
pub struct ProjectsPage {
    title: String,
    active: &'static str,
    projects: Vec<ProjectRow>,
}

/// `GET /ui/projects`.
pub async fn projects(state: web::Data<AppState>) -> HttpResponse {
    let store = state.store.clone();
    let rows = blocking(move || {
        Ok(projects::list(
            &store.session_summaries()?,
            &store.all_knowledge()?,
        ))
    })
    .await;
    answer(rows.map(|projects| ProjectsPage {
        title: "Projects".into(),
        active: "Projects",
        projects,
    }))
    .await
}

/// One project.
#[derive(Template)]
#[template(path = "project.html")]
pub struct ProjectPage {
    title: String,
    active: &'static str,
    d: ProjectDetail,
    pager_base: String,
}

/// `GET /ui/projects/{id}?offset=`.
pub async fn project(
    path: web::Path<String>,
    page: web::Query<PageQuery>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let store = state.store.clone();
    let id = path.into_inner();
    let base = pager_base(&format!("/ui/projects/{id}"), &[]);
    let page = page.into_inner();
    let detail = blocking(move || projects::detail(&store, &id, page)).await;
    answer(detail.map(|d| ProjectPage {
        title: d.project.path.clone(),
        active: "Projects",
        d,
        pager_base: base,
    }))
    .await
}
