//! `docs/BUILTINS.md` is what the engine's built-in tables generate. With `CHATFMT_BLESS=1` the
//! test writes the file instead of comparing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

#[test]
fn builtins_doc_matches_the_tables() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/BUILTINS.md");
    let generated = chatfmt_jinja::builtins_reference();
    if std::env::var_os("CHATFMT_BLESS").is_some() {
        let tmp = path.with_extension("md.tmp");
        std::fs::write(&tmp, &generated).expect("write the temporary file");
        std::fs::rename(&tmp, &path).expect("move it into place");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/BUILTINS.md differs from what the built-in tables generate; regenerate it with\n    \
         CHATFMT_BLESS=1 cargo test --release -p chatfmt-jinja --test builtins_doc"
    );
}
