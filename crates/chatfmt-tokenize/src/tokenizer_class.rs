//! Which class transformers 5.23.0's `AutoTokenizer` loads a folder as, as far as it decides how
//! the tokenizer is built here: a folder that names `LlamaTokenizer` gets that class's rebuilt
//! pipeline (see `load::apply_llama_preprocessing`) only when `AutoTokenizer.from_pretrained`
//! picks it. It does not when `tokenizer.json` is byte-level, nor when `config.json`'s
//! `model_type` has a registered class of its own: a generic backend (Mistral, Mixtral, Phi-3,
//! LLaVA: `tokenizer.json` as written), or a specific class for the model types whose declared
//! class transformers distrusts (Qwen2's: `Qwen2Tokenizer`, see `load::apply_qwen2_preprocessing`,
//! whatever the folder declares).

use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// The registered tokenizer class of each model type and the model types whose declared class
/// transformers distrusts (`TOKENIZER_MAPPING_NAMES`, `MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS`),
/// written by `scripts/gen_tokenizer_classes.py`.
#[derive(Deserialize, Default)]
struct ClassTable {
    registered: HashMap<String, String>,
    incorrect_hub_class: HashSet<String>,
}

fn table() -> &'static ClassTable {
    static TABLE: OnceLock<ClassTable> = OnceLock::new();
    TABLE.get_or_init(|| serde_json::from_str(include_str!("tokenizer_classes.json")).unwrap_or_default())
}

/// The classes after which `AutoTokenizer` loads `tokenizer.json` as written.
const GENERIC: [&str; 4] = [
    "TokenizersBackend",
    "PythonBackend",
    "PreTrainedTokenizerFast",
    "MistralCommonBackend",
];

/// The class `AutoTokenizer` loads the folder as when that class builds its own pipeline, given its
/// `tokenizer_config.json` (`config`), its `config.json` (`model_config`, null when absent) and
/// whether `tokenizer.json` mentions `"ByteLevel"` (asked only for a declared `LlamaTokenizer`);
/// `None` when it loads `tokenizer.json` as written (a generic backend) or nothing declares a class.
/// The name has no `Fast` suffix. A tokenizer with remote code (`auto_map`) keeps its declared class.
pub(crate) fn loaded_class(config: &Json, model_config: &Json, byte_level: impl FnOnce() -> bool) -> Option<String> {
    let declared = (config.get("tokenizer_class").and_then(Json::as_str))
        .or_else(|| model_config.get("tokenizer_class").and_then(Json::as_str))?;
    let declared = declared.strip_suffix("Fast").unwrap_or(declared);
    // Names are compared without `Fast`: `PreTrainedTokenizer` is `PreTrainedTokenizerFast`.
    let generic = |class: &str| GENERIC.iter().any(|g| g.strip_suffix("Fast").unwrap_or(g) == class);
    let own_pipeline = |class: &str| (!generic(class)).then(|| class.to_string());
    if config.get("auto_map").is_some() {
        return own_pipeline(declared);
    }
    let model_type = model_config.get("model_type").and_then(Json::as_str).unwrap_or("");
    let table = table();
    let registered = (table.registered.get(model_type)).map(|c| c.strip_suffix("Fast").unwrap_or(c));
    let distrusted = table.incorrect_hub_class.contains(model_type);
    // A declared LlamaTokenizer whose file is byte-level (Llama 3's) is loaded as written.
    if declared == "LlamaTokenizer" && registered != Some("MistralCommonBackend") && !distrusted && byte_level() {
        return None;
    }
    match registered {
        Some(r) if !model_type.is_empty() && r != declared => match (generic(r), distrusted) {
            (true, _) => None,
            (false, true) => own_pipeline(r),
            (false, false) => own_pipeline(declared),
        },
        _ => own_pipeline(declared),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table_is_transformers() {
        let t = table();
        assert_eq!(
            t.registered.get("mistral").map(String::as_str),
            Some("TokenizersBackend")
        );
        assert_eq!(t.registered.get("qwen2").map(String::as_str), Some("Qwen2Tokenizer"));
        assert!(t.incorrect_hub_class.contains("phi3"));
    }

    #[test]
    fn the_declared_llama_class_yields_to_byte_level_files_and_model_types() {
        let llama = json!({"tokenizer_class": "LlamaTokenizerFast"});
        // transformers 5.23.0 (AutoTokenizer, type of the loaded tokenizer) on the tokens kit's Mistral
        // 7B v0.1 folder with a config.json of each model type.
        for (model_type, rebuilt) in [
            (None, true),
            (Some("llama"), true),
            (Some("mistral"), false),
            (Some("mixtral"), false),
            (Some("phi3"), false),
            (Some("llava"), false),
            (Some("qwen2"), false),
            (Some("gemma"), true),
            (Some("no_such_model"), true),
        ] {
            let model_config = model_type.map_or(Json::Null, |m| json!({ "model_type": m }));
            assert_eq!(
                loaded_class(&llama, &model_config, || false).as_deref() == Some("LlamaTokenizer"),
                rebuilt,
                "{model_type:?}"
            );
        }
        // Llama 3's byte-level tokenizer.json declared as LlamaTokenizerFast: loaded as written.
        assert_eq!(loaded_class(&llama, &Json::Null, || true), None);
        // The declared class may come from config.json; other classes are never rebuilt here.
        assert_eq!(
            loaded_class(&json!({}), &json!({"tokenizer_class": "LlamaTokenizer"}), || false).as_deref(),
            Some("LlamaTokenizer")
        );
    }

    #[test]
    fn qwen2_models_load_as_qwen2_tokenizer_and_declared_classes_stay() {
        let qwen2 = json!({"model_type": "qwen2"});
        // DeepSeek-R1-Distill-Qwen's shape: a declared LlamaTokenizerFast, byte-level, model type qwen2.
        for declared in [
            "LlamaTokenizerFast",
            "PreTrainedTokenizerFast",
            "Qwen2Tokenizer",
            "GPT2Tokenizer",
        ] {
            let config = json!({ "tokenizer_class": declared });
            assert_eq!(
                loaded_class(&config, &qwen2, || true).as_deref(),
                Some("Qwen2Tokenizer"),
                "{declared}"
            );
        }
        let declared = json!({"tokenizer_class": "Qwen2TokenizerFast"});
        assert_eq!(
            loaded_class(&declared, &Json::Null, || true).as_deref(),
            Some("Qwen2Tokenizer")
        );
        // A declared class with a pipeline of its own is kept over a model type's trusted class
        // (SmolLM2: GPT2Tokenizer, model type llama).
        let gpt2 = json!({"tokenizer_class": "GPT2Tokenizer"});
        assert_eq!(
            loaded_class(&gpt2, &json!({"model_type": "llama"}), || true).as_deref(),
            Some("GPT2Tokenizer")
        );
        // A generic class declared where no model type says otherwise: the file as written.
        let generic = json!({"tokenizer_class": "PreTrainedTokenizerFast"});
        assert_eq!(loaded_class(&generic, &Json::Null, || true), None);
        assert_eq!(loaded_class(&generic, &json!({"model_type": "mistral"}), || true), None);
    }
}
