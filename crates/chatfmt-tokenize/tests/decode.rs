//! Decoding as transformers 5.23.0's `tokenizer.decode(ids)` with a tokenizer's own settings:
//! `clean_up_tokenization_spaces` from `tokenizer_config.json`, skipped for BPE models unless
//! `clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output` is set. The expected
//! texts are transformers' for the same folders.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt_tokenize::ChatTokenizer;

/// A Unigram model whose pieces put a space marker before punctuation and contractions.
const UNIGRAM: &str = r#"{"version":"1.0","added_tokens":[{"id":0,"content":"<unk>","single_word":false,
    "lstrip":false,"rstrip":false,"normalized":false,"special":true}],"normalizer":null,
    "pre_tokenizer":{"type":"Metaspace","replacement":"\u2581","prepend_scheme":"always","split":true},
    "post_processor":null,"decoder":{"type":"Metaspace","replacement":"\u2581","prepend_scheme":"always","split":true},
    "model":{"type":"Unigram","unk_id":0,"byte_fallback":false,"vocab":[["<unk>",0.0],["\u2581Hello",-1.0],
    ["\u2581,",-2.0],["\u2581world",-1.0],["\u2581.",-2.0],["\u2581it",-1.0],["\u2581's",-2.0]]}}"#;

/// A BPE model spelling "a ." with a space token.
const BPE: &str = r#"{"version":"1.0","added_tokens":[{"id":0,"content":"<unk>","single_word":false,
    "lstrip":false,"rstrip":false,"normalized":false,"special":true}],"normalizer":null,"pre_tokenizer":null,
    "post_processor":null,"decoder":{"type":"Fuse"},
    "model":{"type":"BPE","unk_token":"<unk>","vocab":{"<unk>":0,"a":1," ":2,".":3},"merges":[]}}"#;

fn decoded(name: &str, tokenizer_json: &str, config: &str, ids: &[u32]) -> String {
    let dir = std::env::temp_dir().join(format!("chatfmt-tokenize-decode-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tokenizer.json"), tokenizer_json).unwrap();
    std::fs::write(dir.join("tokenizer_config.json"), config).unwrap();
    let tokenizer = ChatTokenizer::from_model_dir(&dir);
    std::fs::remove_dir_all(&dir).ok();
    tokenizer.unwrap().decode_as_transformers(ids, false).unwrap()
}

#[test]
fn decoded_text_is_cleaned_up_as_the_config_asks() {
    let ids = [1, 2, 3, 4, 5, 6];
    let on = r#"{"clean_up_tokenization_spaces": true}"#;
    assert_eq!(decoded("unigram-on", UNIGRAM, on, &ids), "Hello, world. it's");
    assert_eq!(decoded("unigram-off", UNIGRAM, "{}", &ids), "Hello , world . it 's");
    // BPE: transformers leaves the text alone unless told the clean-up may corrupt it.
    assert_eq!(decoded("bpe-on", BPE, on, &[1, 2, 3]), "a .");
    let forced = r#"{"clean_up_tokenization_spaces": true,
        "clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output": true}"#;
    assert_eq!(decoded("bpe-forced", BPE, forced, &[1, 2, 3]), "a.");
}
