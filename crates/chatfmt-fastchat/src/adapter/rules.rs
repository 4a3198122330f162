//! FastChat's 101 model adapters as data: each one's class name, match rule and template
//! choice, restated from `model_adapter.py` (reference commit 0e6d3e4) in registration order.

/// Model names FastChat's `ChatGPTAdapter` claims.
pub const OPENAI_MODELS: &[&str] = &[
    "gpt-3.5-turbo",
    "gpt-3.5-turbo-0301",
    "gpt-3.5-turbo-0613",
    "gpt-3.5-turbo-1106",
    "gpt-3.5-turbo-0125",
    "gpt-4",
    "gpt-4-0314",
    "gpt-4-0613",
    "gpt-4-turbo",
    "gpt-4-1106-preview",
    "gpt-4-0125-preview",
    "gpt-4-turbo-browsing",
    "gpt-4-turbo-2024-04-09",
    "gpt2-chatbot",
    "im-also-a-good-gpt2-chatbot",
    "im-a-good-gpt2-chatbot",
    "gpt-4o-mini-2024-07-18",
    "gpt-4o-2024-05-13",
    "gpt-4o-2024-08-06",
    "chatgpt-4o-latest-20240903",
    "chatgpt-4o-latest",
    "o1-preview",
    "o1-mini",
];

/// Model names FastChat's `ClaudeAdapter` claims.
pub const ANTHROPIC_MODELS: &[&str] = &[
    "claude-1",
    "claude-2",
    "claude-2.0",
    "claude-2.1",
    "claude-3-haiku-20240307",
    "claude-3-haiku-20240307-vertex",
    "claude-3-sonnet-20240229",
    "claude-3-sonnet-20240229-vertex",
    "claude-3-5-sonnet-20240620",
    "claude-3-opus-20240229",
    "claude-instant-1",
    "claude-instant-1.2",
];

/// How an adapter picks its template from the full model path.
pub(super) enum Choice {
    /// Always this template.
    Fixed(&'static str),
    /// Computed from the path.
    Rule(fn(&str) -> Pick),
    /// PEFT: the template of the base model named in `adapter_config.json`.
    Peft,
}

/// A template picked by a rule, with the warning FastChat prints (MPT base models).
pub(super) struct Pick(pub(super) &'static str, pub(super) Option<&'static str>);

/// One model adapter: FastChat's class name, its match rule and its template choice.
pub struct Adapter {
    /// FastChat's adapter class name.
    pub class: &'static str,
    pub(super) matches: fn(&str) -> bool,
    pub(super) choice: Choice,
}

fn lc(path: &str) -> String {
    path.to_lowercase()
}

pub(super) fn has(path: &str, needle: &str) -> bool {
    lc(path).contains(needle)
}

fn has_any(path: &str, needles: &[&str]) -> bool {
    let lower = lc(path);
    needles.iter().any(|n| lower.contains(n))
}

fn has_all(path: &str, needles: &[&str]) -> bool {
    let lower = lc(path);
    needles.iter().all(|n| lower.contains(n))
}

macro_rules! adapter {
    ($class:literal, $matches:expr, $choice:expr) => {
        Adapter {
            class: $class,
            matches: $matches,
            choice: $choice,
        }
    };
}

use Choice::{Fixed, Rule};

/// FastChat's 101 registered adapters, in registration order (the last matches everything).
pub static ADAPTERS: &[Adapter] = &[
    adapter!("PeftModelAdapter", |_| false, Choice::Peft),
    adapter!(
        "StableVicunaAdapter",
        |p| has(p, "stable-vicuna"),
        Fixed("stable-vicuna")
    ),
    adapter!("VicunaAdapter", |p| has(p, "vicuna"), Rule(vicuna_template)),
    adapter!(
        "AiroborosAdapter",
        |p| has_any(p, &["airoboros", "spicyboros"]),
        Rule(airoboros_template)
    ),
    adapter!("LongChatAdapter", |p| has(p, "longchat"), Fixed("vicuna_v1.1")),
    adapter!(
        "GoogleT5Adapter",
        |p| has_any(p, &["flan-", "fastchat-t5", "codet5p"]),
        Fixed("one_shot")
    ),
    adapter!("KoalaAdapter", |p| has(p, "koala"), Fixed("koala_v1")),
    adapter!("AlpacaAdapter", |p| has(p, "alpaca"), Fixed("alpaca")),
    adapter!("ChatGLMAdapter", |p| has(p, "chatglm"), Rule(chatglm_template)),
    adapter!("CodeGeexAdapter", |p| has(p, "codegeex"), Fixed("codegeex")),
    adapter!("DollyV2Adapter", |p| has(p, "dolly-v2"), Fixed("dolly_v2")),
    adapter!(
        "OasstPythiaAdapter",
        |p| has_all(p, &["oasst", "pythia"]),
        Fixed("oasst_pythia")
    ),
    adapter!(
        "OasstLLaMAAdapter",
        |p| has(p, "openassistant-sft-7-llama-30b-hf") || (has(p, "oasst") && !has(p, "pythia")),
        Fixed("oasst_llama")
    ),
    adapter!(
        "OpenChat35Adapter",
        |p| has_all(p, &["openchat", "3.5"]) || has(p, "starling-lm"),
        Fixed("openchat_3.5")
    ),
    adapter!("TenyxChatAdapter", |p| has(p, "tenyxchat"), Fixed("tenyxchat")),
    adapter!("StableLMAdapter", |p| has(p, "stablelm"), Fixed("stablelm")),
    adapter!("BaizeAdapter", |p| has(p, "baize"), Fixed("baize")),
    adapter!("RwkvAdapter", |p| has(p, "rwkv-4"), Fixed("rwkv")),
    adapter!("OpenBuddyAdapter", |p| has(p, "openbuddy"), Fixed("openbuddy")),
    adapter!("PhoenixAdapter", |p| has(p, "phoenix"), Fixed("phoenix")),
    adapter!("BardAdapter", |p| p == "bard", Fixed("bard")),
    adapter!("PaLM2Adapter", |p| p == "palm-2", Fixed("bard")),
    adapter!(
        "GeminiAdapter",
        |p| has_any(p, &["gemini", "bard"]),
        Rule(gemini_template)
    ),
    adapter!("GemmaAdapter", |p| has(p, "gemma"), Fixed("gemma")),
    adapter!("ChatGPTAdapter", |p| OPENAI_MODELS.contains(&p), Rule(chatgpt_template)),
    adapter!(
        "AzureOpenAIAdapter",
        |p| p == "azure-gpt-35-turbo" || p == "azure-gpt-4",
        Fixed("chatgpt")
    ),
    adapter!(
        "ClaudeAdapter",
        |p| ANTHROPIC_MODELS.contains(&p),
        Rule(claude_template)
    ),
    adapter!(
        "MPTAdapter",
        |p| has(p, "mpt") && !has(p, "airoboros"),
        Rule(mpt_template)
    ),
    adapter!("BiLLaAdapter", |p| has(p, "billa"), Fixed("billa")),
    adapter!(
        "RedPajamaINCITEAdapter",
        |p| has(p, "redpajama-incite"),
        Fixed("redpajama-incite")
    ),
    adapter!("H2OGPTAdapter", |p| has(p, "h2ogpt"), Fixed("h2ogpt")),
    adapter!("RobinAdapter", |p| has(p, "robin"), Fixed("Robin")),
    adapter!("SnoozyAdapter", |p| has_all(p, &["gpt4all", "snoozy"]), Fixed("snoozy")),
    adapter!("WizardLMAdapter", |p| has(p, "wizardlm"), Rule(wizardlm_template)),
    adapter!("ManticoreAdapter", |p| has(p, "manticore"), Fixed("manticore")),
    adapter!("GuanacoAdapter", |p| has(p, "guanaco"), Fixed("zero_shot")),
    adapter!("CamelAdapter", |p| has(p, "camel"), Fixed("vicuna_v1.1")),
    adapter!(
        "ChangGPTAdapter",
        |p| has_all(p, &["polyglot", "chang"]),
        Fixed("polyglot_changgpt")
    ),
    adapter!("TuluAdapter", |p| has(p, "tulu"), Fixed("tulu")),
    adapter!(
        "FalconChatAdapter",
        |p| has_all(p, &["falcon", "chat"]),
        Fixed("falcon-chat")
    ),
    adapter!(
        "FalconAdapter",
        |p| has(p, "falcon") && !has(p, "chat"),
        Fixed("falcon")
    ),
    adapter!("TigerBotAdapter", |p| has(p, "tigerbot"), Fixed("tigerbot")),
    adapter!("BaichuanAdapter", |p| has(p, "baichuan"), Rule(baichuan_template)),
    adapter!("XGenAdapter", |p| has(p, "xgen"), Fixed("xgen")),
    adapter!("PythiaAdapter", |p| has(p, "pythia"), Fixed("one_shot")),
    adapter!("InternLMChatAdapter", |p| has(p, "internlm"), Fixed("internlm-chat")),
    adapter!("StarChatAdapter", |p| has(p, "starchat"), Fixed("starchat")),
    adapter!("Llama2Adapter", |p| has(p, "llama-2"), Fixed("llama-2")),
    adapter!("CuteGPTAdapter", |p| has(p, "cutegpt"), Fixed("cutegpt")),
    adapter!("OpenOrcaAdapter", |p| has(p, "openorca"), Rule(openorca_template)),
    adapter!(
        "DolphinAdapter",
        |p| has_all(p, &["dolphin", "mistral"]),
        Fixed("dolphin-2.2.1-mistral-7b")
    ),
    adapter!(
        "Hermes2Adapter",
        |p| has_any(p, &["openhermes-2.5-mistral-7b", "openhermes-2-mistral-7b"]),
        Fixed("OpenHermes-2.5-Mistral-7B")
    ),
    adapter!(
        "NousHermes2MixtralAdapter",
        |p| has_any(p, &["nous-hermes-2-mixtral-8x7b-dpo", "nous-hermes-2-mixtral-8x7b-sft"]),
        Fixed("Nous-Hermes-2-Mixtral-8x7B-DPO")
    ),
    adapter!("NousHermesAdapter", |p| has(p, "nous-hermes"), Fixed("alpaca")),
    adapter!(
        "MistralAdapter",
        |p| has_any(p, &["mistral", "mixtral"]),
        Fixed("mistral")
    ),
    adapter!("WizardCoderAdapter", |p| has(p, "wizardcoder"), Fixed("alpaca")),
    adapter!("QwenChatAdapter", |p| has(p, "qwen"), Fixed("qwen-7b-chat")),
    adapter!("AquilaChatAdapter", |p| has(p, "aquila"), Rule(aquila_template)),
    adapter!("BGEAdapter", |p| has(p, "bge"), Fixed("one_shot")),
    adapter!("E5Adapter", |p| has(p, "e5-"), Fixed("one_shot")),
    adapter!(
        "Lamma2ChineseAdapter",
        |p| has(p, "llama2-chinese"),
        Fixed("llama2-chinese")
    ),
    adapter!(
        "Lamma2ChineseAlpacaAdapter",
        |p| has(p, "chinese-alpaca"),
        Fixed("chinese-alpaca2")
    ),
    adapter!(
        "VigogneAdapter",
        |p| has_any(p, &["vigogne", "vigostral"]),
        Rule(vigogne_template)
    ),
    adapter!(
        "OpenLLaMaOpenInstructAdapter",
        |p| has_all(p, &["open-llama", "open-instruct"]),
        Fixed("alpaca")
    ),
    adapter!("ReaLMAdapter", |p| p.contains("ReaLM"), Fixed("ReaLM-7b-v1")),
    adapter!("PhindCodeLlamaAdapter", |p| has(p, "phind-codellama-"), Fixed("phind")),
    adapter!("CodeLlamaAdapter", |p| has(p, "codellama"), Fixed("llama-2")),
    adapter!(
        "Llama2ChangAdapter",
        |p| has(p, "llama2-ko-chang"),
        Fixed("polyglot_changgpt")
    ),
    adapter!("ZephyrAdapter", |p| has(p, "zephyr"), Fixed("zephyr")),
    adapter!("NotusAdapter", |p| has(p, "notus"), Fixed("zephyr")),
    adapter!("CatPPTAdapter", |p| has(p, "catppt"), Fixed("catppt")),
    adapter!("TinyLlamaAdapter", |p| has(p, "tinyllama"), Fixed("TinyLlama")),
    adapter!("XwinLMAdapter", |p| has(p, "xwin-lm"), Fixed("vicuna_v1.1")),
    adapter!("LemurAdapter", |p| has(p, "lemur-70b-chat"), Fixed("lemur-70b-chat")),
    adapter!(
        "PygmalionAdapter",
        |p| has_any(p, &["pygmalion", "mythalion", "metharme"]),
        Fixed("metharme")
    ),
    adapter!("MicrosoftOrcaAdapter", |p| has(p, "orca-2"), Fixed("orca-2")),
    adapter!("XdanAdapter", |p| has_all(p, &["xdan", "v1"]), Fixed("xdan-v1")),
    adapter!("YiAdapter", |p| has_all(p, &["yi-", "chat"]), Fixed("Yi-34b-chat")),
    adapter!(
        "PplxAIAdapter",
        |p| p == "pplx-7b-online" || p == "pplx-70b-online",
        Fixed("pplxai")
    ),
    adapter!(
        "DeepseekCoderAdapter",
        |p| has(p, "deepseek-coder"),
        Fixed("deepseek-coder")
    ),
    adapter!(
        "DeepseekChatAdapter",
        |p| has_all(p, &["deepseek-llm", "chat"]),
        Fixed("deepseek-chat")
    ),
    adapter!("Yuan2Adapter", |p| has(p, "yuan2"), Fixed("yuan2")),
    adapter!("MetaMathAdapter", |p| has(p, "metamath"), Fixed("metamath")),
    adapter!("BagelAdapter", |p| has(p, "bagel"), Fixed("airoboros_v3")),
    adapter!("SolarAdapter", |p| has_all(p, &["solar-", "instruct"]), Fixed("solar")),
    adapter!("SteerLMAdapter", |p| has(p, "steerlm-chat"), Fixed("steerlm")),
    adapter!("LlavaAdapter", |p| has(p, "llava"), Rule(llava_template)),
    adapter!("YuanAdapter", |p| has(p, "yuan"), Fixed("yuan")),
    adapter!("OlmoAdapter", |p| has(p, "olmo"), Fixed("api_based_default")),
    adapter!("CohereAdapter", |p| p == "command-r", Fixed("api_based_default")),
    adapter!("DBRXAdapter", |p| p == "dbrx-instruct", Fixed("api_based_default")),
    adapter!("GemmaAdapter", |p| has(p, "gemma"), Fixed("gemma")),
    adapter!("YandexGPTAdapter", |p| has(p, "yandexgpt"), Fixed("yandexgpt")),
    adapter!("CllmAdapter", |p| has(p, "consistency-llm"), Fixed("cllm")),
    adapter!("RekaAdapter", |p| has(p, "reka"), Fixed("api_based_default")),
    adapter!("SmaugChatAdapter", |p| has(p, "smaug"), Fixed("qwen-7b-chat")),
    adapter!("Llama3Adapter", |p| has(p, "llama-3-"), Fixed("llama-3")),
    adapter!("Llama31Adapter", |p| has(p, "llama-3.1"), Rule(llama31_template)),
    adapter!("GrokAdapter", |p| has(p, "grok"), Rule(grok_template)),
    adapter!(
        "NoSystemAdapter",
        |p| matches!(lc(p).as_str(), "athene-70b" | "p2l"),
        Fixed("api_based_default")
    ),
    adapter!("BaseModelAdapter", |_| true, Fixed("one_shot")),
];

pub(super) const PEFT_INDEX: usize = 0;

fn fixed(name: &'static str) -> Pick {
    Pick(name, None)
}

fn vicuna_template(path: &str) -> Pick {
    // FastChat looks for "v0" in the last path component, after dropping one trailing "/".
    let trimmed = path.strip_suffix('/').unwrap_or(path);
    let last = trimmed.rsplit('/').next().unwrap_or(trimmed);
    fixed(if last.contains("v0") { "one_shot" } else { "vicuna_v1.1" })
}

fn airoboros_template(path: &str) -> Pick {
    if path.contains("-3.") || path.contains("-3p") {
        return fixed("airoboros_v3");
    }
    // re.search(r"-(2\.[2-9]+)", path)
    let v2_minor = path
        .match_indices("-2.")
        .any(|(i, _)| matches!(path.as_bytes().get(i + 3), Some(b'2'..=b'9')));
    fixed(if path.contains("spicyboros") || v2_minor {
        "airoboros_v2"
    } else {
        "airoboros_v1"
    })
}

fn chatglm_template(path: &str) -> Pick {
    fixed(if has(path, "chatglm2") {
        "chatglm2"
    } else if has(path, "chatglm3") {
        "chatglm3"
    } else {
        "chatglm"
    })
}

fn gemini_template(path: &str) -> Pick {
    fixed(if path.contains("gemini-1.5-pro") {
        "gemini-1.5-pro"
    } else {
        "gemini"
    })
}

fn chatgpt_template(path: &str) -> Pick {
    const RULES: &[(&str, &str)] = &[
        ("browsing", "api_based_default"),
        ("gpt-4-turbo-2024-04-09", "gpt-4-turbo-2024-04-09"),
        ("gpt2-chatbot", "gpt-4-turbo-2024-04-09"),
        ("gpt-4o-2024-05-13", "gpt-4-turbo-2024-04-09"),
        ("gpt-4o-2024-08-06", "gpt-mini"),
        ("anonymous-chatbot", "gpt-4-turbo-2024-04-09"),
        ("chatgpt-4o-latest", "gpt-4-turbo-2024-04-09"),
        ("gpt-mini", "gpt-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-mini"),
        ("o1", "api_based_default"),
    ];
    let name = RULES
        .iter()
        .find(|(needle, _)| path.contains(needle))
        .map_or("chatgpt", |&(_, template)| template);
    fixed(name)
}

fn claude_template(path: &str) -> Pick {
    const RULES: &[(&str, &str)] = &[
        ("claude-3-haiku", "claude-3-haiku-20240307"),
        ("claude-3-sonnet", "claude-3-sonnet-20240229"),
        ("claude-3-5-sonnet", "claude-3-5-sonnet-20240620-v2"),
        ("claude-3-opus", "claude-3-opus-20240229"),
    ];
    let name = RULES
        .iter()
        .find(|(needle, _)| path.contains(needle))
        .map_or("claude", |&(_, template)| template);
    fixed(name)
}

fn mpt_template(path: &str) -> Pick {
    let lower = lc(path);
    for name in ["mpt-7b-chat", "mpt-30b-chat", "mpt-30b-instruct"] {
        if lower.contains(name) {
            return fixed(name);
        }
    }
    Pick(
        "zero_shot",
        Some(
            "Warning: Loading base MPT model with `zero_shot` conversation configuration.  \
             If this is not desired, inspect model configurations and names.",
        ),
    )
}

fn wizardlm_template(path: &str) -> Pick {
    fixed(if has_any(path, &["13b", "30b", "70b"]) {
        "vicuna_v1.1"
    } else {
        "one_shot"
    })
}

fn baichuan_template(path: &str) -> Pick {
    fixed(if !has(path, "chat") {
        "zero_shot"
    } else if has(path, "baichuan2") {
        "baichuan2-chat"
    } else {
        "baichuan-chat"
    })
}

fn openorca_template(path: &str) -> Pick {
    fixed(if has(path, "mistral-7b-openorca") {
        "mistral-7b-openorca"
    } else {
        "open-orca"
    })
}

fn aquila_template(path: &str) -> Pick {
    let lower = lc(path);
    fixed(if !lower.contains("aquilachat2") {
        "aquila-chat"
    } else if lower.contains("16k") {
        "aquila"
    } else if lower.contains("34b") {
        "aquila-legacy"
    } else {
        "aquila-v1"
    })
}

fn vigogne_template(path: &str) -> Pick {
    fixed(if !has(path, "chat") {
        "vigogne_instruct"
    } else if has(path, "vigostral") {
        "vigogne_chat_v3"
    } else {
        "vigogne_chat_v2"
    })
}

fn llava_template(path: &str) -> Pick {
    fixed(if has(path, "34b") {
        "llava-chatml"
    } else {
        "vicuna_v1.1"
    })
}

fn llama31_template(path: &str) -> Pick {
    let special = ["llama-3.1-8b-instruct", "llama-3.1-70b-instruct", "the-real-chatbot-v2"];
    fixed(if special.contains(&lc(path).as_str()) {
        "meta-llama-3.1-sp"
    } else {
        "meta-llama-3.1"
    })
}

fn grok_template(path: &str) -> Pick {
    fixed(if has(path, "mini") { "grok-2-mini" } else { "grok-2" })
}
