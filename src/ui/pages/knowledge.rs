//! Knowledge (filtered list, one entry with its history) and entities (list, one entity).

use actix_web::{HttpResponse, web};
use askama::Template;

use super::answer;
use crate::dashboard::entities::{self, EntityDetail, EntityList};
use crate::dashboard::error::blocking;
use crate::dashboard::knowledge::{self, EntryDetail, KnowledgeList};
use crate::dashboard::paging::PageQuery;
use crate::server::AppState;
use crate::ui::fmt::pager_base;

/// The knowledge list.
#[derive(Template)]
#[template(path = "knowledge.html")]
pub struct KnowledgePage {
    title: String,
    active: &'static str,
    list: KnowledgeList,
    filter_project: String,
    filter_category: String,
    filter_scope: String,
    filter_q: String,
    pager_base: String,
}

fn text(value: &Option<String>) -> String {
    value.clone().unwrap_or_default()
}

/// `GET /ui/knowledge?project=&category=&scope=&q=&offset=`.
pub async fn knowledge(
    filter: web::Query<knowledge::Filter>,
    page: web::Query<PageQuery>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let filter = filter.into_inner();
    let (project, category, scope, q) = (
        text(&filter.project),
        text(&filter.category),
        text(&filter.scope),
        text(&filter.q),
    );
    let base = pager_base(
        "/ui/knowledge",
        &[
            ("project", &project),
            ("category", &category),
            ("scope", &scope),
            ("q", &q),
        ],
    );
    let store = state.store.clone();
    let page = page.into_inner();
    let list = blocking(move || knowledge::list(&store, &filter, page)).await;
    answer(list.map(|list| KnowledgePage {
        title: "Knowledge".into(),
        active: "Knowledge",
        list,
        filter_project: project,
        filter_category: category,
        filter_scope: if scope.is_empty() {
            "all".into()
        } else {
            scope
        },
        filter_q: q,
        pager_base: base,
    }))
    .await
}

/// One entry.
#[derive(Template)]
#[template(path = "knowledge_entry.html")]
pub struct EntryPage {
    title: String,
    active: &'static str,
    d: EntryDetail,
}

/// `GET /ui/knowledge/{id}`.
pub async fn entry(path: web::Path<String>, state: web::Data<AppState>) -> HttpResponse {
    let store = state.store.clone();
    let id = path.into_inner();
    let detail = blocking(move || knowledge::detail(&store, &id)).await;
    answer(detail.map(|d| EntryPage {
        title: d.entry.title.clone(),
        active: "Knowledge",
        d,
    }))
    .await
}

/// The entity list.
#[derive(Template)]
#[template(path = "entities.html")]
pub struct EntitiesPage {
    title: String,
    active: &'static str,
    list: EntityList,
    filter_q: String,
    filter_type: String,
    pager_base: String,
}

/// `GET /ui/entities?q=&type=&offset=`.
pub async fn entities(
    filter: web::Query<entities::Filter>,
    page: web::Query<PageQuery>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let filter = filter.into_inner();
    let (q, kind) = (text(&filter.q), text(&filter.entity_type));
    let base = pager_base("/ui/entities", &[("q", &q), ("type", &kind)]);
    let store = state.store.clone();
    let page = page.into_inner();
    let list = blocking(move || entities::list(&store, &filter, page)).await;
    answer(list.map(|list| EntitiesPage {
        title: "Entities".into(),
        active: "Entities",
        list,
        filter_q: q,
        filter_type: kind,
        pager_base: base,
    }))
    .await
}

/// One entity.
#[derive(Template)]
#[template(path = "entity.html")]
pub struct EntityPage {
    title: String,
    active: &'static str,
    d: EntityDetail,
}

/// `GET /ui/entities/{id}`.
pub async fn entity(path: web::Path<String>, state: web::Data<AppState>) -> HttpResponse {
    let store = state.store.clone();
    let id = path.into_inner();
    let detail = blocking(move || entities::detail(&store, &id)).await;
    answer(detail.map(|d| EntityPage {
        title: d.entity.name.clone(),
        active: "Entities",
        d,
    }))
    .await
}
