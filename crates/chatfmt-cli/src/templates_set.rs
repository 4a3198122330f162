//! `chatfmt templates set MODEL_DIR`: saves a chat template into a model folder as transformers'
//! `save_pretrained` does.

use crate::output::emit;
use chatfmt::defaults;
use chatfmt::template::{save_template, SaveLayout};
use chatfmt::ErrorKind;
use chatfmt_fastchat::jinja_export::export_jinja;
use chatfmt_fastchat::registry_snapshot;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// The arguments of `templates set`.
#[derive(Args)]
pub struct SetArgs {
    /// The model folder (it must exist).
    model_dir: PathBuf,
    #[command(flatten)]
    source: Source,
    /// Save it as this named template; `default` is the main one.
    #[arg(long, default_value = "default")]
    name: String,
    /// Write into tokenizer_config.json as transformers 4 did, instead of chat_template.jinja.
    #[arg(long)]
    legacy: bool,
}

/// Where the template comes from: exactly one of these.
#[derive(Args)]
#[group(required = true, multiple = false)]
struct Source {
    /// A Jinja template file.
    #[arg(long, value_name = "FILE")]
    template: Option<PathBuf>,
    /// A built-in template (`templates list` shows them).
    #[arg(long, value_name = "NAME")]
    default_template: Option<String>,
    /// A FastChat conversation template, exported to Jinja.
    #[arg(long, value_name = "NAME")]
    conv_template: Option<String>,
}

/// The template's source and how to name it in messages.
fn source(args: &Source) -> Result<(String, String), String> {
    if let Some(path) = &args.template {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the template: {e}", path.display()))?;
        return Ok((text, path.display().to_string()));
    }
    if let Some(name) = &args.default_template {
        let builtin = defaults::get(name).map_err(|e| format!("{e:#}"))?;
        return Ok((builtin.source.to_string(), format!("built-in template {name:?}")));
    }
    let name = args.conv_template.as_deref().unwrap_or_default();
    let conv = registry_snapshot()
        .get(name)
        .map_err(|e| format!("{e}; `chatfmt templates list` shows the FastChat templates"))?;
    let exported = export_jinja(&conv).map_err(|e| format!("cannot export {name:?} as Jinja: {e}"))?;
    eprintln!("note: the exported template does not reproduce these FastChat behaviours:");
    for limitation in &exported.limitations {
        eprintln!("  - {limitation}");
    }
    Ok((exported.source, format!("FastChat template {name:?}")))
}

/// Runs `templates set`: exit 0 on success, 2 on a usage or input error.
pub fn run(args: SetArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("error: {message}");
        ExitCode::from(2)
    };
    let (text, origin) = match source(&args.source) {
        Ok(found) => found,
        Err(message) => return fail(message),
    };
    let layout = if args.legacy {
        SaveLayout::Legacy
    } else {
        SaveLayout::Jinja
    };
    match save_template(&args.model_dir, &args.name, &text, layout) {
        Ok(saved) => {
            let mut report = String::new();
            for path in &saved.written {
                report += &format!("wrote {}\n", path.display());
            }
            for path in &saved.removed {
                report += &format!("removed {} (moved into tokenizer_config.json)\n", path.display());
            }
            emit(&report);
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == ErrorKind::Template => {
            let place = match (e.line(), e.column()) {
                (Some(line), Some(0) | None) => format!("line {line}"),
                (Some(line), Some(column)) => format!("line {line}, column {column}"),
                (None, _) => "its source".to_string(),
            };
            let why = e
                .template_error()
                .map(|t| format!(": {}: {}", t.kind().python_name(), t.message()))
                .unwrap_or_default();
            fail(format!(
                "{origin}: {place}: {}{why}; {} was left unchanged",
                e.message(),
                args.model_dir.display()
            ))
        }
        Err(e) if matches!(e.kind(), ErrorKind::Io | ErrorKind::NotFound) => fail(format!("{e:#}")),
        Err(e) => fail(format!("{e:#}; {} was left unchanged", args.model_dir.display())),
    }
}
