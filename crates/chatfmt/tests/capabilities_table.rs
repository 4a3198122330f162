//! `chatfmt check` against `tests/data/capabilities.tsv`: capabilities of kit templates written from
//! each template's source. Every cell must agree; all disagreements are printed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "support/kits.rs"]
mod kits;
#[path = "support/trials.rs"]
mod trials;

use chatfmt::check::{self, ArgumentsFormat, Capabilities};
use libtest_mimic::Trial;
use std::path::{Path, PathBuf};

/// The value `check` reports for a column, in the table's spelling.
fn reported(c: &Capabilities, column: &str) -> Option<String> {
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
    let list = |v: &[String]| if v.is_empty() { "-".to_string() } else { v.join(",") };
    Some(match column {
        "system_role" => yes_no(c.system_role),
        "tools" => yes_no(c.tools),
        "tool_calls" => yes_no(c.tool_calls),
        "tool_results" => yes_no(c.tool_results),
        "parallel_tool_calls" => yes_no(c.parallel_tool_calls),
        "tool_call_arguments" => match c.tool_call_arguments {
            ArgumentsFormat::None => "none",
            ArgumentsFormat::Object => "object",
            ArgumentsFormat::String => "string",
            ArgumentsFormat::Both => "both",
        }
        .to_string(),
        "content_text_parts" => yes_no(c.content_text_parts),
        "content_image_parts" => yes_no(c.content_image_parts),
        "reasoning" => yes_no(c.reasoning),
        "reasoning_in_history" => yes_no(c.reasoning_in_history),
        "documents" => yes_no(c.documents),
        "generation_tags" => yes_no(c.generation_tags),
        "add_generation_prompt" => yes_no(c.add_generation_prompt),
        "date_dependent" => yes_no(c.date_dependent),
        "extra_variables" => list(&c.extra_variables),
        "message_fields" => list(&c.message_fields),
        _ => return None,
    })
}

fn main() {
    trials::run(trials::kit_trials("capabilities_table", "hf", |dir| {
        Ok(vec![Trial::test("capabilities_table::agrees_with_check", move || {
            check_agrees_with_capabilities_read_from_template_sources(&dir);
            Ok(())
        })])
    }));
}

fn check_agrees_with_capabilities_read_from_template_sources(dir: &Path) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/capabilities.tsv");
    let text = std::fs::read_to_string(&path).expect("capabilities.tsv readable");
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty());
    let (_, header) = lines.next().expect("a header line");
    let columns: Vec<&str> = header.split('\t').collect();
    assert_eq!(
        columns.first(),
        Some(&"template"),
        "the first column names the template"
    );

    let checks = check::check_hf_kit(dir).expect("kit readable");
    let mut disagreements = Vec::new();
    let mut rows = 0;
    for (i, line) in lines {
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            cells.len(),
            columns.len(),
            "capabilities.tsv line {}: {} cells for {} columns",
            i + 1,
            cells.len(),
            columns.len()
        );
        rows += 1;
        let id = cells[0];
        let Some(found) = checks.iter().find(|c| c.id == id) else {
            disagreements.push(format!("line {}: {id} is not in the kit's corpus", i + 1));
            continue;
        };
        let Some(caps) = &found.report.capabilities else {
            disagreements.push(format!("line {}: {id} does not compile", i + 1));
            continue;
        };
        for (column, expected) in columns.iter().zip(&cells).skip(1) {
            let got = reported(caps, column).unwrap_or_else(|| panic!("unknown column {column}"));
            if got != *expected {
                disagreements.push(format!(
                    "line {}: {id}: {column}: the table says {expected}, check says {got}",
                    i + 1
                ));
            }
        }
    }
    assert!(rows >= 25, "the table covers at least 25 templates ({rows} rows)");
    assert!(
        disagreements.is_empty(),
        "{} disagreements with capabilities.tsv:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}
