//! The playground: a page at `/` (HTML, CSS and JavaScript built into the binary, nothing fetched
//! from elsewhere) that renders a conversation with a loaded model or a pasted template through
//! `/v1/render`, and the two JSON routes it reads besides `/v1/models`: each model's templates and
//! special tokens, and the character offsets of a text's tokens.

use crate::answer::JsonAnswer;
use crate::api::ApiError;
use crate::body;
use crate::shared::Shared;
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use chatfmt::jinja::CodePoints;
use serde_json::{json, Value as Json};
use std::collections::HashSet;
use std::sync::Arc;

/// The page: one document, its style and script inline.
const PAGE: &str = concat!(
    "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    "<title>chatfmt playground</title>\n<style>\n",
    include_str!("../assets/playground.css"),
    "</style>\n</head>\n",
    include_str!("../assets/playground.html"),
    "<script>\n",
    include_str!("../assets/playground.js"),
    "</script>\n</body>\n</html>\n",
);

/// The playground's routes, mounted beside the API's.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/", get(page))
        .route("/v1/playground/models", get(models))
        .route("/v1/playground/tokens", post(tokens))
}

/// `GET /`: the page.
async fn page() -> Response {
    ([(header::CACHE_CONTROL, "no-cache")], Html(PAGE)).into_response()
}

/// `GET /v1/playground/models`: for each model, in the order served, its template sources (`name`
/// null for a single template), the special tokens to highlight (the tokenizer's special added
/// tokens and the template's named special tokens) and whether it can tokenize.
async fn models(State(shared): State<Arc<Shared>>) -> JsonAnswer {
    let data: Vec<Json> = (shared.models.all().iter())
        .map(|m| {
            // A model without a template of its own lists none (the page asks for one).
            let templates: Vec<Json> = (m.resolved.template.sources().into_iter())
                .filter(|_| m.has_template)
                .map(|(name, source)| json!({"name": name, "source": source}))
                .collect();
            let mut special: Vec<String> = Vec::new();
            if let Some(t) = &m.tokenizer {
                special.extend(t.special_added_tokens().into_iter().map(str::to_string));
            }
            let named = m.resolved.template.special_tokens().values();
            special.extend(named.filter_map(Json::as_str).map(str::to_string));
            let mut seen = HashSet::new();
            special.retain(|s| !s.is_empty() && seen.insert(s.clone()));
            json!({
                "id": m.name,
                "templates": templates,
                "special_tokens": special,
                "tokenizer": m.tokenizer.is_some(),
            })
        })
        .collect();
    JsonAnswer(json!({ "data": data }))
}

/// `POST /v1/playground/tokens {model?, text}`: the ids of `text` as a rendered prompt is encoded
/// (the `input_ids` of `/v1/render` for that prompt), each token's `[start, end]` code-point offsets
/// (the characters it has a byte of) and whether it is a special added token.
async fn tokens(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Body) -> Result<JsonAnswer, ApiError> {
    let bytes = body::read(body, shared.config.max_body_bytes).await?;
    if !body::is_json(&headers) {
        return Err(body::unsupported_media_type());
    }
    let mut f = body::object(&bytes)?;
    let model = shared.models.get(f.opt_str("model")?.as_deref())?;
    let text = f.str("text")?;
    f.deny_rest()?;
    let out = shared
        .pool
        .run(false, move || {
            let tokenizer = model.tokenizer()?;
            let found = tokenizer
                .encode_with_offsets(&text)
                .map_err(|e| ApiError::tokenize(&e, false))?;
            let special: HashSet<u32> = (tokenizer.special_added_tokens().into_iter())
                .filter_map(|t| tokenizer.token_to_id(t))
                .collect();
            let flags: Vec<bool> = found.input_ids.iter().map(|id| special.contains(id)).collect();
            let chars = CodePoints::new(&text);
            let offsets: Vec<[usize; 2]> = (found.offsets.iter())
                .map(|&span| {
                    let (s, e) = chars.covering(span);
                    [s, e]
                })
                .collect();
            Ok(json!({"input_ids": found.input_ids, "offsets": offsets, "special": flags}))
        })
        .await?;
    Ok(JsonAnswer(out))
}
