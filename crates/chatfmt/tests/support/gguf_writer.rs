//! A tiny GGUF writer for tests: a header, metadata key/values, a tensor table and aligned tensor
//! data, little-endian as llama.cpp writes them (shared by the library and CLI tests).

/// One metadata value.
#[allow(dead_code)] // each test file uses a different subset
pub enum V<'a> {
    U32(u32),
    I32(i32),
    U64(u64),
    F32(f32),
    Bool(bool),
    Str(&'a str),
    Strs(Vec<&'a str>),
    I32s(Vec<i32>),
}

fn string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u64).to_le_bytes());
    out.extend(s.as_bytes());
}

fn value(out: &mut Vec<u8>, v: &V) {
    let (ty, bytes): (u32, Vec<u8>) = match v {
        V::U32(x) => (4, x.to_le_bytes().to_vec()),
        V::I32(x) => (5, x.to_le_bytes().to_vec()),
        V::U64(x) => (10, x.to_le_bytes().to_vec()),
        V::F32(x) => (6, x.to_le_bytes().to_vec()),
        V::Bool(x) => (7, vec![u8::from(*x)]),
        V::Str(s) => {
            let mut b = Vec::new();
            string(&mut b, s);
            (8, b)
        }
        V::Strs(items) => {
            let mut b = 8u32.to_le_bytes().to_vec();
            b.extend((items.len() as u64).to_le_bytes());
            for s in items {
                string(&mut b, s);
            }
            (9, b)
        }
        V::I32s(items) => {
            let mut b = 5u32.to_le_bytes().to_vec();
            b.extend((items.len() as u64).to_le_bytes());
            for x in items {
                b.extend(x.to_le_bytes());
            }
            (9, b)
        }
    };
    out.extend(ty.to_le_bytes());
    out.extend(bytes);
}

/// A GGUF file of `version` with the metadata `kv` and one 4×2 F32 tensor `token_embd.weight`.
pub fn gguf(version: u32, kv: &[(&str, V)]) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    out.extend(version.to_le_bytes());
    out.extend(1u64.to_le_bytes());
    out.extend((kv.len() as u64).to_le_bytes());
    for (k, v) in kv {
        string(&mut out, k);
        value(&mut out, v);
    }
    string(&mut out, "token_embd.weight");
    out.extend(2u32.to_le_bytes());
    out.extend(4u64.to_le_bytes());
    out.extend(2u64.to_le_bytes());
    out.extend(0u32.to_le_bytes()); // F32
    out.extend(0u64.to_le_bytes()); // offset in the data section
    out.resize(out.len().div_ceil(32) * 32, 0); // the data section is 32-byte aligned
    for i in 0..8 {
        out.extend((i as f32).to_le_bytes());
    }
    out
}

/// The metadata of a small llama-style chat model: architecture, vocabulary, special token ids and
/// a ChatML template, then `extra` pairs.
pub fn chat_model<'a>(template: &'a str, extra: Vec<(&'a str, V<'a>)>) -> Vec<(&'a str, V<'a>)> {
    let mut kv = vec![
        ("general.architecture", V::Str("llama")),
        ("general.name", V::Str("tiny")),
        ("llama.context_length", V::U32(4096)),
        ("llama.rope.freq_base", V::F32(10000.0)),
        ("tokenizer.ggml.model", V::Str("gpt2")),
        (
            "tokenizer.ggml.tokens",
            V::Strs(vec!["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "hi"]),
        ),
        ("tokenizer.ggml.token_type", V::I32s(vec![2, 3, 3, 3, 3, 1])),
        ("tokenizer.ggml.bos_token_id", V::U32(1)),
        ("tokenizer.ggml.eos_token_id", V::U32(4)),
        ("tokenizer.ggml.add_bos_token", V::Bool(false)),
        ("tokenizer.chat_template", V::Str(template)),
    ];
    kv.extend(extra);
    kv
}
