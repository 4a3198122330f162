//! The HTTP floor of `scripts/bench_server.sh`: an axum server whose one route parses the JSON
//! body as the render server does and answers a fixed 200-byte JSON object, so that the
//! benchmark can set the server's throughput against what HTTP and JSON parsing alone allow.
//!
//! `cargo run --release -p chatfmt-server --example http_floor -- PORT`
#![allow(clippy::print_stderr)]

use axum::body::Bytes;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;

/// A JSON object of exactly 200 bytes.
fn answer() -> String {
    let head = r#"{"ok":true,"pad":""#;
    let tail = r#""}"#;
    format!("{head}{}{tail}", "x".repeat(200 - head.len() - tail.len()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let port: u16 = std::env::args().nth(1).unwrap_or_else(|| "0".into()).parse()?;
    let body = answer();
    let app = Router::new().fallback(post(move |bytes: Bytes| {
        let body = body.clone();
        async move {
            match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(serde_json::Value::Object(_)) => {
                    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
                }
                _ => StatusCode::BAD_REQUEST.into_response(),
            }
        }
    }));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("http_floor: listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
