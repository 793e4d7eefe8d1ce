//! Every path that is not an LLM route (`/v1/models`, batch and file endpoints, …): forwarded
//! untouched to the upstream of the protocol the request appears to speak, and relayed back
//! byte for byte. Nothing is captured.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use lore_proto::Protocol;

use crate::gateway::forward::{self, Outbound, UpstreamClient};
use crate::gateway::headers::forward_response_header;
use crate::gateway::upstream::{Ingress, resolve};
use crate::gateway::{access, header_str};
use crate::http::errors;
use crate::server::AppState;

/// Default service: proxies the request as it is.
pub async fn proxy(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<AppState>,
    client: web::Data<UpstreamClient>,
) -> HttpResponse {
    if let Some(refusal) = access::refuse_data_plane(&req, &state) {
        return refusal;
    }
    let headers = req.headers();
    // Anthropic clients always send anthropic-version; everything else is taken for OpenAI.
    let protocol = if headers.contains_key("anthropic-version") {
        Protocol::Anthropic
    } else {
        Protocol::OpenAiChat
    };
    let path = req
        .uri()
        .path_and_query()
        .map(|pq| pq.as_str().to_string())
        .unwrap_or_default();
    let resolved = match resolve(
        &state.config.upstream,
        Ingress::Other { protocol },
        &path,
        header_str(headers, "x-lore-upstream-url"),
        header_str(headers, "x-lore-provider"),
        None,
    ) {
        Ok(resolved) => resolved,
        Err(err) => return errors::bad_request(protocol, &err.to_string()),
    };
    let method = Method::from_bytes(req.method().as_str().as_bytes()).unwrap_or(Method::GET);
    let outbound = Outbound {
        method,
        url: &resolved.url,
        client_headers: headers,
        extra_headers: &state.config.extra_headers,
        body,
    };
    let upstream = match forward::send(&client, &outbound, &state.config.retry).await {
        Ok(response) => response,
        Err(err) => return errors::upstream_unreachable(protocol, &err.to_string()),
    };
    let mut response = HttpResponse::build(upstream.status());
    for (name, value) in upstream.headers() {
        if forward_response_header(name.as_str()) {
            response.append_header((name.clone(), value.clone()));
        }
    }
    response.streaming(upstream)
}
