//! `chatfmt check`: a chat template's errors, capabilities and warnings (exit 1 on errors).

use crate::model_args::{ModelArgs, Plan};
use crate::output::emit;
use anyhow::{bail, Result};
use chatfmt::check::{self, Report};
use clap::Args;
use serde_json::{json, Value as Json};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `chatfmt check`.
#[derive(Args)]
pub struct CheckArgs {
    /// A template file (Jinja source), a model folder or a .gguf file; the same as --template FILE or
    /// --model MODEL.
    #[arg(conflicts_with_all = ["hf_kit", "model", "template"])]
    path: Option<PathBuf>,
    #[command(flatten)]
    model: ModelArgs,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Check every template of the hf conformance kit's corpus instead ($CHATFMT_KITS, else
    /// ../shared/conformance from the current folder).
    #[arg(long)]
    hf_kit: bool,
    /// Only probe prefix stability: whether each prompt of growing probe conversations (plain, with a
    /// system message, with reasoning in the history, with tool calls) is a prefix of the next;
    /// `{"prefix_stable", "breaks"}` with --json. Exit 1 when it is not.
    #[arg(long, conflicts_with = "hf_kit")]
    prefix: bool,
    /// With --hf-kit: print the capability table as Markdown (docs/CAPABILITIES.md).
    #[arg(long, requires = "hf_kit", conflicts_with = "json")]
    markdown: bool,
}

/// Why `check` refuses a FastChat conversation template, and what to do instead.
const FASTCHAT_REFUSED: &str = "check analyses Jinja templates, and --conv-template names a FastChat template: \
    export it first (chatfmt templates export NAME --jinja > t.jinja) and check t.jinja";

/// Runs `chatfmt check`.
pub fn run(mut args: CheckArgs) -> Result<ExitCode> {
    if args.hf_kit {
        return run_kit(&args);
    }
    if args.model.conv_template.is_some() {
        bail!("{FASTCHAT_REFUSED}");
    }
    if let Some(path) = args.path.take() {
        let is_model = path.is_dir() || chatfmt::template::is_gguf(&path);
        match is_model {
            true => args.model.model = Some(path.display().to_string()),
            false => args.model.template = Some(path),
        }
    }
    let label = match (&args.model.template, &args.model.model, &args.model.default_template) {
        (Some(t), _, _) => t.display().to_string(),
        (None, Some(m), _) => m.clone(),
        (None, None, Some(d)) => format!("builtin template {d}"),
        _ => bail!("give a template file, a model folder or .gguf file, or --model / --template / --default-template"),
    };
    let chat = match args.model.plan()? {
        Plan::Jinja(resolved) => resolved.template,
        Plan::FastChat(_) => bail!("{FASTCHAT_REFUSED}"),
    };
    if args.prefix {
        let opts = chatfmt::ApplyOptions {
            chat_template: args.model.template_name.clone(),
            ..chatfmt::ApplyOptions::default()
        };
        return print_prefix(&label, &check::prefix_stability(&chat, &opts)?, args.json);
    }
    let reports = check::check(&chat);
    if args.json {
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&json!({"path": label, "templates": reports}))?
        ));
    } else {
        emit(&reports.iter().map(|r| report_text(&label, r)).collect::<String>());
    }
    Ok(exit_code(reports.iter()))
}

/// Prints a prefix-stability report; exit 1 when the template is not prefix-stable.
fn print_prefix(label: &str, report: &check::PrefixReport, json: bool) -> Result<ExitCode> {
    if json {
        emit(&format!("{}\n", serde_json::to_string_pretty(report)?));
    } else if report.prefix_stable {
        emit(&format!(
            "{label}: prefix-stable (every probe prompt is a prefix of the next)\n"
        ));
    } else {
        let mut out = format!("{label}: not prefix-stable\n");
        for b in &report.breaks {
            out.push_str(&format!(
                "  {} probe: adding message {} ({}) changes character {} on: {:?} became {:?}; {}\n",
                b.probe,
                b.messages + 1,
                b.added_role,
                b.offset,
                b.expected,
                b.actual,
                b.cause
            ));
        }
        emit(&out);
    }
    Ok(if report.prefix_stable {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn run_kit(args: &CheckArgs) -> Result<ExitCode> {
    let dir = kits_dir().join("hf");
    let checks = check::check_hf_kit(&dir)?;
    if args.markdown {
        emit(&check::markdown_table(&checks));
    } else if args.json {
        let all: Vec<Json> = checks
            .iter()
            .map(|c| json!({"id": c.id, "has_goldens": c.has_goldens, "report": c.report}))
            .collect();
        emit(&format!("{}\n", serde_json::to_string_pretty(&all)?));
    } else {
        emit(&checks.iter().map(|c| report_text(&c.id, &c.report)).collect::<String>());
    }
    Ok(exit_code(checks.iter().map(|c| &c.report)))
}

/// Where the conformance kits are: `$CHATFMT_KITS`, else `../shared/conformance` from the current
/// folder (the repository's root, beside which the kits are kept).
fn kits_dir() -> PathBuf {
    std::env::var_os("CHATFMT_KITS").map_or_else(|| PathBuf::from("../shared/conformance"), PathBuf::from)
}

fn exit_code<'r>(mut reports: impl Iterator<Item = &'r Report>) -> ExitCode {
    if reports.any(|r| !r.errors.is_empty()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// A report as text: the label, each diagnostic, then the capabilities.
fn report_text(label: &str, r: &Report) -> String {
    let mut out = String::new();
    let _ = match &r.name {
        Some(name) => writeln!(out, "{label} [{name}]"),
        None => writeln!(out, "{label}"),
    };
    for (what, list) in [("error", &r.errors), ("warning", &r.warnings)] {
        for d in list {
            let at = match (d.line, d.column) {
                (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
                _ => String::new(),
            };
            let _ = writeln!(out, "  {what}[{}]{at}: {}", d.code, d.message.replace('\n', "\n    "));
        }
    }
    if let Some(k) = &r.capabilities {
        let flags = [
            ("system role", k.system_role),
            ("tools", k.tools),
            ("tool calls", k.tool_calls),
            ("tool results", k.tool_results),
            ("parallel tool calls", k.parallel_tool_calls),
            ("content text parts", k.content_text_parts),
            ("content image parts", k.content_image_parts),
            ("reasoning", k.reasoning),
            ("reasoning kept in history", k.reasoning_in_history),
            ("documents", k.documents),
            ("{% generation %} tags", k.generation_tags),
            ("add_generation_prompt honoured", k.add_generation_prompt),
            ("date-dependent (strftime_now)", k.date_dependent),
        ];
        let yes: Vec<&str> = flags.iter().filter(|f| f.1).map(|f| f.0).collect();
        let no: Vec<&str> = flags.iter().filter(|f| !f.1).map(|f| f.0).collect();
        let _ = writeln!(out, "  supports: {}", yes.join(", "));
        let _ = writeln!(out, "  does not: {}", no.join(", "));
        if k.tool_calls {
            let _ = writeln!(out, "  tool-call arguments: {:?}", k.tool_call_arguments);
        }
        if !k.extra_variables.is_empty() {
            let _ = writeln!(out, "  extra variables: {}", k.extra_variables.join(", "));
        }
        let _ = writeln!(out, "  message fields read: {}", k.message_fields.join(", "));
    }
    out
}
