//! The fake OAuth usage endpoint of Claude Code subscriptions: `GET /api/oauth/usage`
//! answers the utilisation a test set (`{"five_hour": {"utilization": …}, "seven_day": …}`),
//! or a scripted error status, and records each call's `authorization` and `anthropic-beta`
//! headers so a test can check the bearer it was asked with and how often.

use actix_web::{HttpRequest, HttpResponse};
use serde_json::json;
use std::sync::Mutex;

use crate::server::lock;

/// The path the endpoint answers.
pub const QUOTA_PATH: &str = "/api/oauth/usage";

/// One call of the usage endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaCall {
    /// The `authorization` header as sent.
    pub authorization: Option<String>,
    /// The `anthropic-beta` header as sent.
    pub beta: Option<String>,
}

#[derive(Debug)]
struct State {
    five_hour: f64,
    seven_day: f64,
    status: u16,
    calls: Vec<QuotaCall>,
}

/// What the endpoint answers, and who asked.
#[derive(Debug)]
pub(crate) struct FakeQuota {
    state: Mutex<State>,
}

impl Default for FakeQuota {
    fn default() -> Self {
        Self {
            state: Mutex::new(State {
                five_hour: 0.0,
                seven_day: 0.0,
                status: 200,
                calls: Vec::new(),
            }),
        }
    }
}

impl FakeQuota {
    /// Sets the utilisation (percent) of both windows.
    pub fn set(&self, five_hour: f64, seven_day: f64) {
        let mut state = lock(&self.state);
        state.five_hour = five_hour;
        state.seven_day = seven_day;
    }

    /// Answers every later call with `status` (200 for the utilisation).
    pub fn set_status(&self, status: u16) {
        lock(&self.state).status = status;
    }

    /// Every call so far.
    pub fn calls(&self) -> Vec<QuotaCall> {
        lock(&self.state).calls.clone()
    }

    /// The answer to `req` when it is a usage-endpoint call.
    pub fn handle(&self, req: &HttpRequest) -> Option<HttpResponse> {
        if req.method().as_str() != "GET" || req.path() != QUOTA_PATH {
            return None;
        }
        let header = |name: &str| {
            req.headers()
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        };
        let mut state = lock(&self.state);
        state.calls.push(QuotaCall {
            authorization: header("authorization"),
            beta: header("anthropic-beta"),
        });
        if state.status != 200 {
            let status = actix_web::http::StatusCode::from_u16(state.status)
                .unwrap_or(actix_web::http::StatusCode::INTERNAL_SERVER_ERROR);
            return Some(HttpResponse::build(status).json(json!({
                "type": "error",
                "error": {"type": "api_error", "message": "fake quota failure"},
            })));
        }
        Some(HttpResponse::Ok().json(json!({
            "five_hour": {"utilization": state.five_hour, "resets_at": "2026-12-01T05:00:00Z"},
            "seven_day": {"utilization": state.seven_day, "resets_at": "2026-12-07T00:00:00Z"},
            "extra_usage": {"is_enabled": false, "monthly_limit": null, "used_credits": null, "utilization": null},
        })))
    }
}
