//! FastChat template names and chatfmt's built-in Jinja templates share one namespace on the
//! command line (`templates show NAME`), so no built-in name may shadow a FastChat template.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

#[test]
fn built_in_jinja_names_do_not_shadow_fastchat_templates() {
    let registry = chatfmt_fastchat::registry_snapshot();
    for d in chatfmt::defaults::all() {
        assert!(registry.get(d.name).is_err(), "{} is also a FastChat template", d.name);
    }
}
