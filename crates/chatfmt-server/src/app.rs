//! The application: the router over the shared state (`crate::shared`), with its authentication and
//! metrics layers, and serving with a graceful shutdown.

use crate::api::{ApiError, ErrorKindLabel};
use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::sglang_tgi::{sglang, tgi};
use crate::shared::Shared;
use crate::{generate, routes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// A loaded server.
#[derive(Clone)]
pub struct App {
    shared: Arc<Shared>,
}

impl App {
    /// Loads every model and starts the worker threads.
    pub fn load(config: Config) -> Result<App, Error> {
        Ok(App {
            shared: Arc::new(Shared::load(config)?),
        })
    }

    /// The served names, in the order given.
    pub fn model_names(&self) -> Vec<String> {
        self.shared.models.all().iter().map(|m| m.name.clone()).collect()
    }

    /// The service.
    pub fn router(&self) -> Router {
        let shared = Arc::clone(&self.shared);
        Router::new()
            .route("/tokenize", post(routes::tokenize))
            .route("/detokenize", post(routes::detokenize))
            .route("/v1/models", get(routes::models))
            .route("/apply-template", post(routes::apply_template))
            .route("/v1/render", post(routes::render))
            .route("/v1/chat/completions/render", post(generate::chat))
            .route("/v1/completions/render", post(generate::completion))
            .route("/v1/tokenize", post(sglang::tokenize))
            .route("/v1/detokenize", post(sglang::detokenize))
            .route("/chat_tokenize", post(tgi::chat_tokenize))
            .route("/health", get(routes::health))
            .route("/metrics", get(routes::metrics))
            .merge(crate::playground::routes())
            .fallback(routes::not_found)
            .method_not_allowed_fallback(routes::method_not_allowed)
            .layer(middleware::from_fn_with_state(Arc::clone(&shared), authenticate))
            .layer(middleware::from_fn_with_state(Arc::clone(&shared), measure))
            .with_state(shared)
    }
}

/// The path prefixes vLLM's `--api-key` guards.
const GUARDED: [&str; 4] = ["/v1", "/v2", "/inference", "/cohere"];

/// vLLM's `--api-key`: paths under [`GUARDED`] need `Authorization: Bearer KEY` (the scheme in any
/// case); `OPTIONS` requests pass.
async fn authenticate(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if let Some(key) = &shared.config.api_key {
        let given = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token);
        let guarded = GUARDED.iter().any(|p| request.uri().path().starts_with(p));
        if guarded && request.method() != Method::OPTIONS && given != Some(key.as_str()) {
            return ApiError::new(StatusCode::UNAUTHORIZED, "authentication_error", "Unauthorized").into_response();
        }
    }
    next.run(request).await
}

/// Counts every answer by route, status and error type.
async fn measure(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("other", |p| p.as_str())
        .to_string();
    let start = Instant::now();
    let response = next.run(request).await;
    let kind = response.extensions().get::<ErrorKindLabel>().map(|k| k.0);
    shared
        .metrics
        .record(&route, response.status().as_u16(), start.elapsed(), kind);
    response
}

/// Serves `app` on `listener` until `shutdown` completes; then stops accepting and lets requests in
/// flight finish within [`Config::shutdown_timeout`].
pub async fn serve(
    app: App,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let timeout = app.shared.config.shutdown_timeout;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let graceful = async move {
        shutdown.await;
        let _ = tx.send(());
    };
    let server = axum::serve(listener, app.router()).with_graceful_shutdown(graceful);
    let deadline = async move {
        if rx.await.is_ok() {
            tokio::time::sleep(timeout).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = server => result.map_err(|e| Error::new(ErrorKind::Io, "the server failed").with_source(e)),
        () = deadline => Ok(()),
    }
}
