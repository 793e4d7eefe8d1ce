//! The dashboard at `/ui`: server-rendered pages (askama templates in `src/ui/templates/`,
//! checked at compile time), one stylesheet and two small scripts served by the gateway, no
//! external resource of any kind. Pages only read; every change goes through the JSON API
//! ([`crate::ui_api`]) from `app.js`, which adds `x-lore-request: 1`. Storage is read on the
//! blocking pool, so a slow page never holds an HTTP worker an LLM call needs.
//!
//! - [`guard`]: loopback peer, served `Host`, same `Origin`, the write header, the CSP.
//! - [`pages`]: one handler per page.
//! - [`svg`]: the charts. [`fmt`]: helpers the templates call. [`assets`]: CSS and JS.

pub mod assets;
pub mod fmt;
pub mod guard;
pub mod pages;
pub mod svg;

use actix_web::{HttpResponse, web};

/// The navigation: path and name of each section.
pub const NAV: [(&str, &str); 8] = [
    ("/ui", "Overview"),
    ("/ui/projects", "Projects"),
    ("/ui/knowledge", "Knowledge"),
    ("/ui/entities", "Entities"),
    ("/ui/search", "Search"),
    ("/ui/cards", "Cards"),
    ("/ui/costs", "Costs"),
    ("/ui/settings", "Settings"),
];

/// The knowledge scopes of the filter: value and name.
pub const SCOPES: [(&str, &str); 3] = [
    ("all", "project and global"),
    ("project", "project only"),
    ("global", "global only"),
];

/// `GET /`: the dashboard.
pub async fn root() -> HttpResponse {
    HttpResponse::Found()
        .insert_header(("location", "/ui"))
        .finish()
}

/// Registers the pages under `/ui` (the caller wraps the scope in [`guard::guard`]).
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("", web::get().to(pages::overview::overview))
        .route("/", web::get().to(pages::overview::overview))
        .route("/assets/{name}", web::get().to(assets::asset))
        .route("/projects", web::get().to(pages::overview::projects))
        .route("/projects/{id}", web::get().to(pages::overview::project))
        .route("/sessions/{id}", web::get().to(pages::session::session))
        .route("/knowledge", web::get().to(pages::knowledge::knowledge))
        .route("/knowledge/{id}", web::get().to(pages::knowledge::entry))
        .route("/entities", web::get().to(pages::knowledge::entities))
        .route("/entities/{id}", web::get().to(pages::knowledge::entity))
        .route("/search", web::get().to(pages::tools::search))
        .route("/costs", web::get().to(pages::costs::costs))
        .route("/settings", web::get().to(pages::tools::settings))
        .route("/cards", web::get().to(pages::cards::list))
        .route("/cards/new", web::get().to(pages::cards::new))
        .route("/cards/{kind}/{key}", web::get().to(pages::cards::card));
}
