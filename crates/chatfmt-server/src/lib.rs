//! chatfmt-server: chatfmt's rendering and tokenizing over HTTP, with the routes of vLLM's
//! tokenizer and render endpoints, llama.cpp's, SGLang's and TGI's beside chatfmt's own `/v1/render`.
//!
//! [`App::load`] loads every model of a [`Config`] once; [`App::router`] is the service (usable
//! in-process with `tower::ServiceExt`), and [`serve`] runs it on a listener until a shutdown signal,
//! then lets requests in flight finish within [`Config::shutdown_timeout`]. Rendering and tokenizing
//! run on a pool of worker threads with a bounded queue, except for light requests (a body of at
//! most 8 KiB using the model's own template), which take less time than the hand-off to a worker
//! and run in place; a template sent with a request renders under [`Config::request_limits`], on a
//! worker. `/` is a playground page built into the
//! binary that renders through the same routes.

mod answer;
mod api;
mod app;
mod body;
mod cache;
mod config;
mod error;
mod generate;
mod kwargs;
mod metrics;
mod models;
mod playground;
mod pool;
mod routes;
mod sampling;
mod sglang_tgi;
mod shared;
mod work;

pub use app::{serve, App};
pub use config::{parse_request_limits, Config, ModelSpec};
pub use error::{Error, ErrorKind};
