//! The built-in default templates against the hf kit's reference outputs for the `legacy-default`
//! templates: chatfmt's own copies replace the kit's corpus files and must match every case.

use chatfmt::conformance::{self, hf, KnownDifferences};
use chatfmt::defaults;
use std::collections::HashMap;

/// The kit's template id for each built-in default.
const KIT_IDS: [(&str, &str); 4] = [
    ("chatml", "transformers--default-chatml"),
    ("llama", "transformers--default-llama"),
    ("blenderbot", "transformers--default-blenderbot"),
    ("gpt2", "transformers--default-gpt2"),
];

#[test]
fn defaults_match_the_legacy_default_goldens() {
    let Some(dir) = conformance::kit_for_test("hf") else {
        return;
    };
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("index.json")).expect("index.json")).expect("json");
    let legacy: Vec<&str> = index["templates"]
        .as_array()
        .expect("templates")
        .iter()
        .filter(|t| t["kind"] == "legacy-default")
        .filter_map(|t| t["id"].as_str())
        .collect();
    let mut ids: Vec<&str> = KIT_IDS.iter().map(|(_, id)| *id).collect();
    ids.sort();
    let mut legacy_sorted = legacy.clone();
    legacy_sorted.sort();
    assert_eq!(
        ids, legacy_sorted,
        "every legacy-default of the kit has a built-in default"
    );
    assert_eq!(defaults::all().len(), KIT_IDS.len());

    for (name, id) in KIT_IDS {
        let source = defaults::get(name).expect("built in").source;
        let sources = HashMap::from([(id.to_string(), source.to_string())]);
        let filter = hf::Filter {
            template: Some(id.to_string()),
            scenario: None,
        };
        let r = hf::run_with_sources(&dir, &filter, &KnownDifferences::default(), &sources).expect("kit readable");
        for f in r.failures.iter().take(3) {
            eprintln!(
                "--- {name} / {} {} [{}]\nexpected: {:?}\nactual:   {:?}",
                f.scenario, f.options, f.kind, f.expected, f.actual
            );
        }
        eprintln!("{name}: {} / {} cases matched", r.matched, r.cases);
        assert!(r.cases >= 10, "{id}: only {} cases in the kit", r.cases);
        assert_eq!(r.matched, r.cases, "{name} differs from the kit's goldens for {id}");
    }
}
