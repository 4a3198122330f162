//! `chatfmt serve`: the HTTP server of `chatfmt-server`, until SIGTERM or Ctrl-C.

use anyhow::{Context as _, Result};
use chatfmt_server::{parse_request_limits, serve, App, Config, ModelSpec};
use clap::Args;
use std::time::Duration;

/// Options of `chatfmt serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// A model to serve (repeatable): any source `render --model` accepts, named NAME or, without
    /// NAME=, by the argument itself.
    #[arg(long = "model", value_name = "[NAME=]SOURCE", required = true)]
    models: Vec<String>,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// The port to listen on (0: any free port, printed at start).
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// The `max_model_len` reported for every model (else vLLM's derivation: the least of
    /// config.json's length keys and tokenizer_config.json's model_max_length, else 2048).
    #[arg(long, value_name = "N")]
    max_model_len: Option<u64>,
    /// Require `Authorization: Bearer KEY` on /v1 routes (as vLLM's --api-key).
    #[arg(long, value_name = "KEY")]
    api_key: Option<String>,
    /// Threads that render and tokenize (default: the number of cores).
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// Seconds requests in flight may take to finish after SIGTERM.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    shutdown_timeout: f64,
    /// Seconds /v1/render may spend finding message spans (their work grows with the square of the
    /// conversation's length, unless the template reads the messages in order).
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    spans_timeout: f64,
    /// Limits of templates sent with requests: steps=N,output=BYTES,ms=N (default
    /// steps=200000,output=1048576,ms=250).
    #[arg(long, value_name = "LIMITS")]
    request_template_limits: Option<String>,
    /// The largest request body, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 16 << 20)]
    max_body_bytes: usize,
    /// Evaluation steps one render of a served model's template may take (default 20,000,000):
    /// raise it for conversations of thousands of messages with templates that scan the
    /// conversation again for each message.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: Option<u64>,
}

/// Runs `chatfmt serve`.
pub fn run(args: ServeArgs) -> Result<()> {
    let mut config = Config {
        models: args.models.iter().map(|m| ModelSpec::parse(m)).collect(),
        max_model_len: args.max_model_len,
        api_key: args.api_key,
        max_body_bytes: args.max_body_bytes,
        ..Config::default()
    };
    if let Some(n) = args.workers {
        config.workers = n.max(1);
    }
    if let Some(n) = args.max_steps {
        config.max_steps = n;
    }
    if let Some(spec) = &args.request_template_limits {
        config.request_limits = parse_request_limits(spec)?;
    }
    config.shutdown_timeout = Duration::try_from_secs_f64(args.shutdown_timeout)
        .context("--shutdown-timeout: expected a number of seconds")?;
    config.spans_timeout =
        Duration::try_from_secs_f64(args.spans_timeout).context("--spans-timeout: expected a number of seconds")?;
    let app = App::load(config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
            .await
            .with_context(|| format!("cannot listen on {}:{}", args.host, args.port))?;
        let address = listener.local_addr()?;
        eprintln!(
            "chatfmt serve: listening on http://{address} (models: {})",
            app.model_names().join(", ")
        );
        serve(app, listener, shutdown_signal()).await?;
        eprintln!("chatfmt serve: stopped");
        Ok(())
    })
}

/// SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => {
                let _ = interrupt.await;
                return;
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = interrupt.await;
    }
}
