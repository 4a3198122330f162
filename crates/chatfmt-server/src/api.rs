//! The error answers. vLLM's, llama.cpp's and chatfmt's routes answer `{"error": {"message", "type",
//! "param", "code"}}`, `code` the HTTP status, plus `line` and `column` for a template error whose
//! place in the template is known; SGLang's and TGI's routes answer in their stack's shape
//! ([`Shape`]). Library errors become messages here, without file paths or sources.

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
    /// How the answer is written.
    pub shape: Shape,
}

/// The shape of an error answer: each route answers as the stack it copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    /// `{"error": {"message", "type", "param", "code"}}` (vLLM, llama.cpp, chatfmt).
    #[default]
    Nested,
    /// SGLang's `ErrorResponse`, `{"object": "error", "message", "type", "param", "code"}`, of a body
    /// its request models refuse: `type` `"Bad Request"` for a 400 (its `RequestValidationError`
    /// handler, http_server.py), else the status, as its `HTTPException` handler writes it.
    SglangValidation,
    /// SGLang's `ErrorResponse` from its handler: `type` `"BadRequestError"` for a 400 (serving_base.py
    /// `create_error_response`), else the status.
    SglangHandler,
    /// TGI's `ErrorResponse`, `{"error", "error_type"}` (router/src/server.rs).
    Tgi,
    /// Plain text, as axum's `Json` extractor answers a body TGI's handler never sees.
    Text,
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
            shape: Shape::Nested,
        }
    }

    /// The same error, written in `shape`.
    pub fn shaped(self, shape: Shape) -> Self {
        ApiError { shape, ..self }
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
        let mut message = format!("{}: {}", e.kind().python_name(), e.message());
        let location = e.line().map(|line| (line, e.column()));
        if e.kind() == chatfmt::jinja::ErrorKind::LimitExceeded {
            if !request_template && e.is_step_limit() {
                message += " (the server's --max-steps)";
            }
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

    /// The answer's JSON body (for every shape but [`Shape::Text`]).
    fn json(&self) -> serde_json::Value {
        let code = self.status.as_u16();
        let sglang = |bad_request: &str| {
            let kind = if self.status == StatusCode::BAD_REQUEST {
                bad_request.to_string()
            } else {
                code.to_string()
            };
            json!({"object": "error", "message": self.message, "type": kind, "param": self.param, "code": code})
        };
        match self.shape {
            Shape::SglangValidation => sglang("Bad Request"),
            Shape::SglangHandler => sglang("BadRequestError"),
            Shape::Tgi => json!({"error": self.message, "error_type": self.kind}),
            Shape::Nested | Shape::Text => {
                let mut body = json!({"error": {
                    "message": self.message,
                    "type": self.kind,
                    "param": self.param,
                    "code": code,
                }});
                if let Some((line, column)) = self.location {
                    body["error"]["line"] = json!(line);
                    body["error"]["column"] = json!(column);
                }
                body
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = match self.shape {
            Shape::Text => (self.status, self.message.clone()).into_response(),
            _ => (
                self.status,
                [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                self.json().to_string(),
            )
                .into_response(),
        };
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
