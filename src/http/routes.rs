//! The route table, and nothing else: it reads as the index of the HTTP API.

use actix_web::{guard, web};

use actix_web::middleware::from_fn;

use crate::gateway::{handlers, passthrough};
use crate::{api, costs_api, import_api, knowledge, memory_api, recall, session_api, ui, ui_api};

/// Registers every route of the gateway.
pub fn configure(cfg: &mut web::ServiceConfig) {
    // Checked first and without reading a body: an upgrade request's body never ends.
    cfg.service(
        web::resource("/{any:.*}")
            .guard(guard::fn_guard(|ctx| {
                ctx.head()
                    .headers()
                    .get("upgrade")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
            }))
            .to(|| async { crate::http::errors::websocket_refused() }),
    )
    .route("/health", web::get().to(api::health))
    .route("/v1/messages", web::post().to(handlers::anthropic_messages))
    .route(
        "/v1/chat/completions",
        web::post().to(handlers::openai_chat),
    )
    .route("/chat/completions", web::post().to(handlers::openai_chat))
    .route("/v1/responses", web::post().to(handlers::openai_responses))
    .route(
        "/v1/codex/responses",
        web::post().to(handlers::codex_responses),
    )
    // The dashboard (issue 14): `/` redirects to it; the guard covers `/ui` and all of `/api/v1`.
    .service(
        web::resource("/")
            .guard(guard::Get())
            .wrap(from_fn(ui::guard::guard))
            .to(ui::root),
    )
    .service(
        web::scope("/ui")
            .wrap(from_fn(ui::guard::guard))
            .configure(ui::configure),
    )
    .service(
        web::scope("/api/v1")
            .wrap(from_fn(ui::guard::guard))
            .configure(ui_api::configure)
            .route("/sessions", web::get().to(api::list_sessions))
            .route("/sessions/{id}", web::get().to(session_api::show))
            .route(
                "/sessions/{id}/messages",
                web::get().to(api::session_messages),
            )
            .route(
                "/sessions/{id}/memory",
                web::get().to(memory_api::session_memory),
            )
            .route(
                "/sessions/{id}/costs",
                web::get().to(costs_api::session_costs),
            )
            .route("/costs", web::get().to(costs_api::costs))
            .route("/costs/budget", web::post().to(costs_api::set_budget))
            .route("/actors", web::get().to(api::actors))
            .route("/import", web::post().to(import_api::import))
            .route("/recall", web::get().to(recall::recall))
            .route("/reindex", web::post().to(recall::reindex))
            .route("/knowledge", web::get().to(knowledge::list))
            .route("/knowledge/export", web::get().to(knowledge::export))
            .route("/knowledge/import", web::post().to(knowledge::import))
            .route("/knowledge/{id}", web::get().to(knowledge::show))
            .route("/knowledge/{id}", web::delete().to(knowledge::forget)),
    )
    .default_service(web::to(passthrough::proxy));
}
