//! [`ApiError`]: what went wrong in a dashboard or management call, as an HTTP status, a short
//! code and a detail that says what to do. The JSON API answers it as
//! `{"error": code, "detail": message}`; the pages show the detail.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use lore_actors::ActorError;
use lore_storage::StorageError;
use serde_json::json;

/// An error of a dashboard or management call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Short machine-readable code (`not_found`, `bad_request`, `conflict`, …).
    pub code: &'static str,
    /// What was wrong and what to do.
    pub detail: String,
    /// Extra fields for the JSON body (a 409's `current`).
    pub extra: Option<serde_json::Value>,
}

impl ApiError {
    /// An error with a status, code and detail.
    pub fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        Self {
            status,
            code,
            detail: detail.into(),
            extra: None,
        }
    }

    /// 400: the request is malformed.
    pub fn bad_request(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", detail)
    }

    /// 404: nothing has this id.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", detail)
    }

    /// 409 with a code of its own.
    pub fn conflict(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, code, detail)
    }

    /// 503: a part of the gateway this call needs is off or failed to start.
    pub fn unavailable(code: &'static str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, code, detail)
    }

    /// 500: our own failure.
    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", detail)
    }

    /// Adds a field to the JSON body.
    pub fn with(mut self, name: &str, value: serde_json::Value) -> Self {
        let mut extra = self.extra.take().unwrap_or_else(|| json!({}));
        extra[name] = value;
        self.extra = Some(extra);
        self
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.detail)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut body = json!({"error": self.code, "detail": self.detail});
        if let Some(serde_json::Value::Object(extra)) = &self.extra {
            for (name, value) in extra {
                body[name] = value.clone();
            }
        }
        HttpResponse::build(self.status)
            .insert_header(("cache-control", "no-store"))
            .json(body)
    }
}

impl From<StorageError> for ApiError {
    fn from(err: StorageError) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "storage_error",
            err.to_string(),
        )
    }
}

impl From<ActorError> for ApiError {
    fn from(err: ActorError) -> Self {
        match err {
            ActorError::NotFound(message) => Self::not_found(message),
            ActorError::Invalid(message) => Self::bad_request(message),
            other => Self::internal(other.to_string()),
        }
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(err: actix_web::error::BlockingError) -> Self {
        Self::internal(format!("the blocking pool failed: {err}"))
    }
}

/// Runs storage work on the blocking pool, never on the HTTP executor.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    actix_web::web::block(work).await?
}
