//! `chatfmt templates list|show|match|export`: FastChat conversation templates.

use crate::output::emit;
use chatfmt::defaults;
use chatfmt_fastchat::jinja_export::export_jinja;
use chatfmt_fastchat::{match_model, registry_snapshot, Conversation, MatchedOn, Message};
use clap::Subcommand;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

/// The `templates` subcommands.
#[derive(Subcommand)]
pub enum TemplatesCommand {
    /// List the FastChat templates with their style and stop strings, then the built-in Jinja
    /// templates (`render --default-template NAME`).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show every field of one template (JSON); a built-in Jinja template shows its source.
    Show {
        /// The template name.
        name: String,
    },
    /// Show which adapter and template FastChat picks for a model path.
    Match {
        /// A model path or Hugging Face repo id.
        model_path: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a template as a Hugging Face chat template (Jinja): a FastChat template exported, a
    /// built-in Jinja template as it is.
    Export {
        /// The template name.
        name: String,
        /// Write Jinja source (the default and only format).
        #[arg(long)]
        jinja: bool,
        /// Write to this file instead of stdout.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Save a chat template into a model folder as transformers' save_pretrained does.
    Set(crate::templates_set::SetArgs),
}

pub fn run(cmd: TemplatesCommand) -> ExitCode {
    match cmd {
        TemplatesCommand::List { json } => list(json),
        TemplatesCommand::Show { name } => show(&name),
        TemplatesCommand::Match { model_path, json } => match_path(&model_path, json),
        TemplatesCommand::Export { name, jinja: _, output } => export(&name, output),
        TemplatesCommand::Set(args) => crate::templates_set::run(args),
    }
}

fn lookup(name: &str) -> Result<Conversation, ExitCode> {
    registry_snapshot().get(name).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}

/// One line of `templates list`.
struct Row {
    kind: &'static str,
    name: String,
    style: String,
    stops: Vec<String>,
    /// Why FastChat itself fails to render the template, if it does.
    unrenderable: Option<String>,
}

/// Why FastChat fails to render `template` (a user turn and an open assistant turn), if it does.
fn unrenderable(template: &Conversation) -> Option<String> {
    let mut conv = template.clone();
    let user = conv.roles.first().cloned().unwrap_or_default();
    let assistant = conv.roles.get(1).cloned().unwrap_or_default();
    conv.append_message(user, Some(Message::Text("Hello".to_string())));
    conv.append_message(assistant, None);
    conv.get_prompt().err().map(|e| e.to_string())
}

fn list(as_json: bool) -> ExitCode {
    let registry = registry_snapshot();
    let mut rows: Vec<Row> = registry
        .templates()
        .iter()
        .map(|t| Row {
            kind: "fastchat",
            name: t.name.clone(),
            style: t.sep_style.map_or("(none)", |s| s.name()).to_owned(),
            stops: t.stop_str.as_ref().map(|s| s.to_vec()).unwrap_or_default(),
            unrenderable: unrenderable(t),
        })
        .collect();
    rows.extend(defaults::all().iter().map(|d| Row {
        kind: "jinja",
        name: d.name.to_owned(),
        style: "jinja".to_owned(),
        stops: Vec::new(),
        unrenderable: None,
    }));
    if as_json {
        let v: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({"kind": r.kind, "name": r.name, "style": r.style, "stop_str": r.stops,
                       "renders": r.unrenderable.is_none()})
            })
            .collect();
        emit(&format!("{}\n", json!(v)));
        return ExitCode::SUCCESS;
    }
    let mut text = format!("{:<32} {:<8} {:<24} {}\n", "NAME", "KIND", "STYLE", "STOP STRINGS");
    for r in &rows {
        let stops = if r.stops.is_empty() {
            String::new()
        } else {
            format!("{:?}", r.stops)
        };
        let mut line = format!("{:<32} {:<8} {:<24} {}", r.name, r.kind, r.style, stops);
        if r.unrenderable.is_some() {
            line += "  (FastChat cannot render it)";
        }
        text += line.trim_end();
        text.push('\n');
    }
    emit(&text);
    ExitCode::SUCCESS
}

fn show(name: &str) -> ExitCode {
    let text = match registry_snapshot().get(name) {
        Ok(conv) => serde_json::to_string_pretty(&conv),
        Err(e) => match defaults::get(name) {
            Ok(d) => serde_json::to_string_pretty(&json!({
                "kind": "jinja",
                "name": d.name,
                "description": d.description,
                "special_tokens": d.special_token_map(),
                "source": d.source,
            })),
            Err(_) => {
                let builtin: Vec<&str> = defaults::all().iter().map(|d| d.name).collect();
                eprintln!("error: {e}; built-in Jinja templates: {}", builtin.join(", "));
                return ExitCode::from(2);
            }
        },
    };
    match text {
        Ok(text) => {
            emit(&(text + "\n"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn match_path(model_path: &str, as_json: bool) -> ExitCode {
    let found = match_model(model_path);
    if let Some(warning) = found.warning {
        eprintln!("{warning}");
    }
    let matched_on = match found.matched_on {
        MatchedOn::Basename => "basename",
        MatchedOn::FullPath => "full_path",
    };
    if as_json {
        if let Err(e) = &found.template {
            eprintln!("error: {e}");
        }
        let template = found.template.as_ref().ok();
        let v = json!({"template": template, "adapter": found.adapter, "adapter_index": found.index, "matched_on": matched_on});
        emit(&format!("{v}\n"));
    } else {
        let mut text = format!(
            "adapter:    {} (#{})\nmatched on: {matched_on}\n",
            found.adapter, found.index
        );
        match &found.template {
            Ok(name) => text += &format!("template:   {name}\n"),
            Err(e) => eprintln!("error: {e}"),
        }
        emit(&text);
    }
    if found.template.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn export(name: &str, output: Option<PathBuf>) -> ExitCode {
    if let (Err(_), Ok(d)) = (registry_snapshot().get(name), defaults::get(name)) {
        return write_export(d.source, output);
    }
    let conv = match lookup(name) {
        Ok(conv) => conv,
        Err(code) => return code,
    };
    if let Some(why) = unrenderable(&conv) {
        eprintln!("error: FastChat itself cannot render '{name}' ({why}), so there is nothing to export");
        return ExitCode::from(2);
    }
    let exported = match export_jinja(&conv) {
        Ok(exported) => exported,
        Err(e) => {
            eprintln!("error: cannot export {name:?}: {e}");
            return ExitCode::from(1);
        }
    };
    eprintln!("note: the exported template does not reproduce these FastChat behaviours:");
    for limitation in &exported.limitations {
        eprintln!("  - {limitation}");
    }
    write_export(&exported.source, output)
}

/// Prints the exported source, or writes it to `output` (atomically: a temporary file renamed).
fn write_export(source: &str, output: Option<PathBuf>) -> ExitCode {
    let Some(path) = output else {
        emit(source);
        return ExitCode::SUCCESS;
    };
    let written = chatfmt_dataset::safe_file::AtomicFile::create(&path).and_then(|(file, mut f)| {
        use std::io::Write as _;
        f.write_all(source.as_bytes())
            .map_err(|e| chatfmt_dataset::Error::new(chatfmt_dataset::ErrorKind::Output, e.to_string()).at(&path))?;
        file.commit()
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", path.display());
            ExitCode::from(2)
        }
    }
}
