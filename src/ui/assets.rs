//! The dashboard's static files, compiled into the binary: one stylesheet and two scripts.
//! Served with their own content types and a short cache, so the CSP can forbid inline code.

use actix_web::{HttpResponse, web};

const FILES: [(&str, &str, &str); 3] = [
    (
        "app.css",
        "text/css; charset=utf-8",
        include_str!("assets/app.css"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/app.js"),
    ),
    (
        "cards.js",
        "text/javascript; charset=utf-8",
        include_str!("assets/cards.js"),
    ),
];

/// `GET /ui/assets/{name}`.
pub async fn asset(name: web::Path<String>) -> HttpResponse {
    match FILES.iter().find(|(file, _, _)| *file == name.as_str()) {
        Some((_, content_type, body)) => HttpResponse::Ok()
            .content_type(*content_type)
            .insert_header(("cache-control", "max-age=300"))
            .body(*body),
        None => HttpResponse::NotFound().body("no such file"),
    }
}
