//! The one error object every route answers with: `{"error": {"message", "type", "param", "code"}}`,
//! `code` the HTTP status, plus `line` and `column` for a template error whose place in the template is
//! known. Library errors become messages here, without file paths or sources.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error answer.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    /// The `type` string (also the `kind` label of the error metric).
    pub kind: &'static str,
    pub message: String,
    /// Where in the request the problem is (`body.messages`), when known.
    pub param: Option<String>,
    /// The 1-based template line of a template error, and its column when known.
    pub location: Option<(u32, Option<u32>)>,
}

/// A request the server does not take (400).
pub const INVALID_REQUEST: &str = "invalid_request_error";
/// A template sent with the request went over its limits.
pub const TEMPLATE_LIMIT: &str = "template_limit_exceeded";

impl ApiError {
    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            kind,
            message: message.into(),
            param: None,
            location: None,
        }
    }

    /// A 400 about the request field at `param`.
    pub fn bad(message: impl Into<String>, param: Option<&str>) -> Self {
        ApiError {
            param: param.map(str::to_string),
            ..ApiError::new(StatusCode::BAD_REQUEST, INVALID_REQUEST, message)
        }
    }

    /// 503: every worker is busy and the queue is full.
    pub fn busy() -> Self {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "server_busy",
            "the server is busy: every worker is rendering and the queue is full; retry shortly",
        )
    }

    /// A template error: its Python class and message (no file or source), and its line and column
    /// in the template when known.
    pub fn template(e: &chatfmt::jinja::Error, request_template: bool) -> Self {
        let message = format!("{}: {}", e.kind().python_name(), e.message());
        let location = e.line().map(|line| (line, e.column()));
        if e.kind() == chatfmt::jinja::ErrorKind::LimitExceeded {
            let param = request_template.then_some("chat_template");
            return ApiError {
                param: param.map(str::to_string),
                location,
                ..ApiError::new(StatusCode::BAD_REQUEST, TEMPLATE_LIMIT, message)
            };
        }
        ApiError {
            location,
            ..ApiError::new(StatusCode::BAD_REQUEST, INVALID_REQUEST, message)
        }
    }

    /// An error of the chat layer.
    pub fn chat(e: &chatfmt::Error, request_template: bool) -> Self {
        match e.template_error() {
            Some(t) => ApiError::template(t, request_template),
            None => ApiError::bad(e.message(), None),
        }
    }

    /// An error of the tokenizer layer.
    pub fn tokenize(e: &chatfmt_tokenize::Error, request_template: bool) -> Self {
        match e.template_error() {
            Some(t) => ApiError::template(t, request_template),
            None => ApiError::bad(e.message(), None),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({"error": {
            "message": self.message,
            "type": self.kind,
            "param": self.param,
            "code": self.status.as_u16(),
        }});
        if let Some((line, column)) = self.location {
            body["error"]["line"] = json!(line);
            body["error"]["column"] = json!(column);
        }
        let mut response = (self.status, crate::answer::JsonAnswer(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response.extensions_mut().insert(ErrorKindLabel(self.kind));
        response
    }
}

/// The `type` of an error answer, read by the metrics layer.
#[derive(Debug, Clone, Copy)]
pub struct ErrorKindLabel(pub &'static str);
