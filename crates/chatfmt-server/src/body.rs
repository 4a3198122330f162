//! Request bodies: read within the size limit, parsed as one JSON object, and fields read with
//! their types checked, each failure a 400 naming the field as FastAPI locates it (`body.tokens`).

use crate::api::ApiError;
use axum::body::Body;
use axum::http::{header, HeaderMap, StatusCode};
use serde_json::{Map, Value as Json};

/// Reads the whole body; over `limit` bytes is a 413.
pub async fn read(body: Body, limit: usize) -> Result<axum::body::Bytes, ApiError> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let too_large = std::error::Error::source(&e).is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
            || e.to_string().contains("length limit");
        if too_large {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!("the request body is larger than the limit of {limit} bytes"),
            )
        } else {
            ApiError::bad("the request body could not be read", Some("body"))
        }
    })
}

/// Whether the `Content-Type` is `application/json` (parameters aside).
pub fn is_json(headers: &HeaderMap) -> bool {
    let value = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    // As vLLM's and SGLang's `validate_json_request`: the part before `;`, in any case, untrimmed.
    let media = value.split(';').next().unwrap_or("");
    media.eq_ignore_ascii_case("application/json")
}

/// The 415 of vLLM's routes.
pub fn unsupported_media_type() -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        "Unsupported Media Type: Only 'application/json' is allowed",
    )
}

/// The largest body of a request that runs on the async runtime instead of a worker (see
/// [`Fields::light`]): a conversation of this size renders and tokenizes in tens of microseconds,
/// less than the hand-off to a worker and back costs.
const LIGHT_BODY_BYTES: usize = 8 * 1024;

/// The body as a JSON object.
pub fn object(bytes: &[u8]) -> Result<Fields, ApiError> {
    let value: Json = serde_json::from_slice(bytes).map_err(|e| {
        ApiError::bad(
            format!("JSON decode error at line {}, column {}", e.line(), e.column()),
            Some("body"),
        )
    })?;
    match value {
        Json::Object(map) => {
            let light = bytes.len() <= LIGHT_BODY_BYTES && !map.contains_key("chat_template");
            Ok(Fields(map, light))
        }
        _ => Err(ApiError::bad(
            "Input should be a valid dictionary or object to extract fields from",
            Some("body"),
        )),
    }
}

/// A request object whose fields are taken out one by one, and whether the request is light: a
/// small body using the model's own template (a template sent with the request may take up to its
/// limits), whose work runs on the async runtime rather than on a worker (see `Pool::run`).
#[derive(Debug)]
pub struct Fields(pub Map<String, Json>, pub bool);

fn param(name: &str) -> String {
    format!("body.{name}")
}

pub fn wrong(name: &str, expected: &str) -> ApiError {
    ApiError::bad(format!("Input should be {expected}"), Some(&param(name)))
}

impl Fields {
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// A field that must be there.
    pub fn required(&mut self, name: &str) -> Result<Json, ApiError> {
        self.0
            .remove(name)
            .ok_or_else(|| ApiError::bad("Field required", Some(&param(name))))
    }

    /// A boolean, `default` when absent; `null` only when `nullable`.
    pub fn bool(&mut self, name: &str, default: bool, nullable: bool) -> Result<bool, ApiError> {
        match self.0.remove(name) {
            None => Ok(default),
            Some(Json::Null) if nullable => Ok(default),
            Some(Json::Bool(b)) => Ok(b),
            Some(_) => Err(wrong(name, "a valid boolean")),
        }
    }

    /// A string, or nothing when absent or `null`.
    pub fn opt_str(&mut self, name: &str) -> Result<Option<String>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) => Ok(Some(s)),
            Some(_) => Err(wrong(name, "a valid string")),
        }
    }

    /// A string that must be there.
    pub fn str(&mut self, name: &str) -> Result<String, ApiError> {
        match self.required(name)? {
            Json::String(s) => Ok(s),
            _ => Err(wrong(name, "a valid string")),
        }
    }

    /// An object, or nothing when absent or `null`.
    pub fn opt_object(&mut self, name: &str) -> Result<Option<Map<String, Json>>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Object(o)) => Ok(Some(o)),
            Some(_) => Err(wrong(name, "a valid dictionary")),
        }
    }

    /// A list, or nothing when absent or `null`.
    pub fn opt_list(&mut self, name: &str) -> Result<Option<Vec<Json>>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Array(a)) => Ok(Some(a)),
            Some(_) => Err(wrong(name, "a valid list")),
        }
    }

    /// A number, or nothing when absent or `null` (an integer is read as a float, as pydantic does).
    pub fn opt_f64(&mut self, name: &str) -> Result<Option<f64>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Number(n)) => n.as_f64().map(Some).ok_or_else(|| wrong(name, "a valid number")),
            Some(_) => Err(wrong(name, "a valid number")),
        }
    }

    /// An integer, or nothing when absent or `null` (a float without a fraction is accepted, as
    /// pydantic does).
    pub fn opt_i64(&mut self, name: &str) -> Result<Option<i64>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => as_int(&v).map(Some).ok_or_else(|| wrong(name, "a valid integer")),
        }
    }

    /// A boolean, or nothing when absent or `null`.
    pub fn opt_bool(&mut self, name: &str) -> Result<Option<bool>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::Bool(b)) => Ok(Some(b)),
            Some(_) => Err(wrong(name, "a valid boolean")),
        }
    }

    /// A list of strings, or nothing when absent or `null`; a single string when `one` allows it.
    pub fn opt_strs(&mut self, name: &str, one: bool) -> Result<Option<Vec<String>>, ApiError> {
        match self.0.remove(name) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) if one => Ok(Some(vec![s])),
            Some(Json::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Json::String(s) => Ok(s),
                    _ => Err(wrong(&format!("{name}.{i}"), "a valid string")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(wrong(name, "a valid list")),
        }
    }

    /// A list of token ids, or nothing when absent or `null`.
    pub fn opt_token_ids(&mut self, name: &str) -> Result<Option<Vec<u32>>, ApiError> {
        match self.0.get(name) {
            None | Some(Json::Null) => {
                self.0.remove(name);
                Ok(None)
            }
            Some(_) => self.token_ids(name).map(Some),
        }
    }

    /// A list of token ids.
    pub fn token_ids(&mut self, name: &str) -> Result<Vec<u32>, ApiError> {
        let Json::Array(items) = self.required(name)? else {
            return Err(wrong(name, "a valid list"));
        };
        ids_of(name, &items)
    }

    /// Chat messages: a list of objects, each with a string `role`.
    pub fn messages(&mut self) -> Result<Vec<Json>, ApiError> {
        let Json::Array(items) = self.required("messages")? else {
            return Err(wrong("messages", "a valid list"));
        };
        for (i, m) in items.iter().enumerate() {
            let Some(obj) = m.as_object() else {
                return Err(wrong(&format!("messages.{i}"), "a valid dictionary"));
            };
            match obj.get("role") {
                Some(Json::String(_)) => {}
                None => {
                    return Err(ApiError::bad(
                        "Field required",
                        Some(&param(&format!("messages.{i}.role"))),
                    ))
                }
                Some(_) => return Err(wrong(&format!("messages.{i}.role"), "a valid string")),
            }
        }
        Ok(items)
    }

    /// Refuses any field left (for routes that take no others).
    pub fn deny_rest(self) -> Result<(), ApiError> {
        match self.0.keys().next() {
            Some(k) => Err(ApiError::bad("Extra inputs are not permitted", Some(&param(k)))),
            None => Ok(()),
        }
    }
}

/// An integer of JSON: an integer, or a float without a fraction.
pub fn as_int(v: &Json) -> Option<i64> {
    match v {
        Json::Number(n) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
                .map(|f| f as i64)
        }),
        _ => None,
    }
}

/// The token ids of a list at field `name`, each a 400 naming its index when it is not one.
pub fn ids_of(name: &str, items: &[Json]) -> Result<Vec<u32>, ApiError> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            v.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(|| {
                wrong(
                    &format!("{name}.{i}"),
                    "a valid token id (an integer from 0 to 4294967295)",
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_body_with_the_models_template_is_light() {
        let light = |body: &str| object(body.as_bytes()).map(|f| f.1).unwrap();
        assert!(light(r#"{"messages": [{"role": "user", "content": "Hi"}]}"#));
        assert!(
            !light(r#"{"messages": [], "chat_template": "{{ 1 }}"}"#),
            "a request's template"
        );
        let big = format!(r#"{{"prompt": "{}"}}"#, "x".repeat(LIGHT_BODY_BYTES));
        assert!(!light(&big), "a body over the size");
    }
}
