//! The page handlers: each loads its view model ([`crate::dashboard`]) on the blocking pool
//! and renders its template; a failure renders the error page with the same detail the JSON
//! API gives.
//!
//! - [`overview`]: overview, projects, a project. [`session`]: a session.
//! - [`knowledge`]: knowledge and entities. [`tools`]: search, costs, settings.
//! - [`cards`]: the card editor.

pub mod cards;
pub mod knowledge;
pub mod overview;
pub mod session;
pub mod tools;

use actix_web::HttpResponse;
use askama::Template;

use crate::dashboard::error::ApiError;

/// The error page.
#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage {
    /// Page title.
    pub title: String,
    /// Active section.
    pub active: &'static str,
    /// What went wrong.
    pub detail: String,
    /// The error code.
    pub code: &'static str,
}

/// Renders a template as an HTML answer.
pub fn render<T: Template>(template: &T) -> HttpResponse {
    match template.render() {
        Ok(html) => HttpResponse::Ok()
            .content_type("text/html; charset=utf-8")
            .insert_header(("cache-control", "no-store"))
            .body(html),
        Err(err) => error_page(ApiError::internal(format!(
            "the page could not be rendered: {err}"
        ))),
    }
}

/// Renders an error as a page with its status.
pub fn error_page(err: ApiError) -> HttpResponse {
    let title = match err.status.as_u16() {
        404 => "Not found",
        400 => "Bad request",
        409 => "Conflict",
        503 => "Unavailable",
        _ => "Something went wrong",
    };
    let page = ErrorPage {
        title: title.to_string(),
        active: "",
        detail: err.detail.clone(),
        code: err.code,
    };
    let html = page.render().unwrap_or_else(|_| err.detail.clone());
    HttpResponse::build(err.status)
        .content_type("text/html; charset=utf-8")
        .insert_header(("cache-control", "no-store"))
        .body(html)
}

/// A page handler's answer: the page, or the error page.
pub fn answer<T: Template>(result: Result<T, ApiError>) -> HttpResponse {
    match result {
        Ok(page) => render(&page),
        Err(err) => error_page(err),
    }
}
