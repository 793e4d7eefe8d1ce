//! The page handlers: each loads its view model ([`crate::dashboard`]) on the blocking pool
//! and renders its template; a failure renders the error page with the same detail the JSON
//! API gives.
//!
//! - [`overview`]: overview, projects, a project. [`session`]: a session.
//! - [`knowledge`]: knowledge and entities. [`costs`]: costs. [`tools`]: search, settings.
//! - [`cards`]: the card editor.

pub mod cards;
pub mod costs;
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

/// Renders a template as an HTML answer, on the blocking pool: a large page never holds an
/// HTTP worker that an LLM request needs.
pub async fn render<T: Template + Send + 'static>(template: T) -> HttpResponse {
    match actix_web::web::block(move || template.render()).await {
        Ok(Ok(html)) => HttpResponse::Ok()
            .content_type("text/html; charset=utf-8")
            .insert_header(("cache-control", "no-store"))
            .body(html),
        Ok(Err(err)) => error_page(ApiError::internal(format!(
            "the page could not be rendered: {err}"
        ))),
        Err(err) => error_page(ApiError::from(err)),
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
pub async fn answer<T: Template + Send + 'static>(result: Result<T, ApiError>) -> HttpResponse {
    match result {
        Ok(page) => render(page).await,
        Err(err) => error_page(err),
    }
}
