//! Answers as JSON, serialized into one buffer: axum's `Json` writes through a `BytesMut` writer,
//! which costs a call per piece of output (a list of 44 token ids took ~6k instructions more that
//! way).

use crate::api::ApiError;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A JSON answer (`application/json`), serialized into one buffer.
pub struct JsonAnswer<T = serde_json::Value>(pub T);

impl<T: Serialize> IntoResponse for JsonAnswer<T> {
    fn into_response(self) -> Response {
        match serde_json::to_vec(&self.0) {
            Ok(bytes) => JsonBytes(bytes).into_response(),
            Err(e) => internal(&e).into_response(),
        }
    }
}

/// An answer already written as JSON.
pub struct JsonBytes(pub Vec<u8>);

impl IntoResponse for JsonBytes {
    fn into_response(self) -> Response {
        (
            [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            self.0,
        )
            .into_response()
    }
}

/// The error of an answer that could not be written: ids, strings, values and the answer structs always
/// serialize, so this would be a bug of the server's.
pub fn internal(e: &serde_json::Error) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal_error",
        format!("the answer could not be written: {e}"),
    )
}
