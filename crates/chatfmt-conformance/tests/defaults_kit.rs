//! The built-in default templates against the hf kit's reference outputs for the `legacy-default`
//! templates: chatfmt's own copies replace the kit's corpus files and must match every case. One
//! trial per built-in default, and one that every legacy default of the kit has one.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[path = "../../chatfmt/tests/support/kits.rs"]
mod kits;
#[path = "support/show.rs"]
mod show;
#[path = "../../chatfmt/tests/support/trials.rs"]
mod trials;

use chatfmt::defaults;
use chatfmt_conformance::{hf, KnownDifferences};
use libtest_mimic::Trial;
use show::{both, diff};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use trials::{check, kit_trials};

/// The kit's template id for each built-in default.
const KIT_IDS: [(&str, &str); 4] = [
    ("chatml", "transformers--default-chatml"),
    ("llama", "transformers--default-llama"),
    ("blenderbot", "transformers--default-blenderbot"),
    ("gpt2", "transformers--default-gpt2"),
];

fn main() {
    trials::run(kit_trials("defaults_kit", "hf", |dir| {
        let dir = Arc::new(dir);
        let mut out = vec![every_legacy_default(dir.clone())];
        out.extend(KIT_IDS.iter().map(|&(name, id)| matches_goldens(dir.clone(), name, id)));
        Ok(out)
    }));
}

fn every_legacy_default(dir: Arc<PathBuf>) -> Trial {
    Trial::test("defaults_kit::every_legacy_default_is_built_in", move || {
        let text = std::fs::read_to_string(dir.join("index.json")).map_err(|e| e.to_string())?;
        let index: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let mut legacy: Vec<&str> = index["templates"]
            .as_array()
            .ok_or("index.json has no templates")?
            .iter()
            .filter(|t| t["kind"] == "legacy-default")
            .filter_map(|t| t["id"].as_str())
            .collect();
        legacy.sort();
        let mut ids: Vec<&str> = KIT_IDS.iter().map(|(_, id)| *id).collect();
        ids.sort();
        if ids != legacy {
            return Err(format!("legacy defaults of the kit {legacy:?}, built in {ids:?}").into());
        }
        if defaults::all().len() != KIT_IDS.len() {
            return Err(format!(
                "{} built-in defaults, {} in the kit",
                defaults::all().len(),
                KIT_IDS.len()
            )
            .into());
        }
        Ok(())
    })
}

fn matches_goldens(dir: Arc<PathBuf>, name: &'static str, id: &'static str) -> Trial {
    Trial::test(format!("defaults_kit::{name}"), move || {
        let source = defaults::get(name).map_err(|e| e.to_string())?.source;
        let sources = HashMap::from([(id.to_string(), source.to_string())]);
        let filter = hf::Filter {
            template: Some(id.to_string()),
            scenario: None,
        };
        let r =
            hf::run_with_sources(&dir, &filter, &KnownDifferences::default(), &sources).map_err(|e| e.to_string())?;
        if r.cases < 10 {
            return Err(format!("{id}: only {} cases in the kit", r.cases).into());
        }
        let failures = r
            .failures
            .iter()
            .map(|f| {
                let detail = if f.kind == "output_mismatch" {
                    diff(&f.expected, &f.actual)
                } else {
                    both(&f.expected, &f.actual)
                };
                format!("--- {name} / {} {} [{}]\n{detail}", f.scenario, f.options, f.kind)
            })
            .collect();
        check(
            || {
                format!(
                    "{name}: {} of {} cases differ from the goldens of {id}",
                    r.failures.len(),
                    r.cases
                )
            },
            failures,
        )
    })
}
