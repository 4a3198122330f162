//! The globals of transformers' environment print as Jinja2 3.1.6 prints them there (transformers
//! 5.23.0): classes by name, functions and the `dict` object with their address, which is `0x0` here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use chatfmt_jinja::{Context, Template};
use serde_json::json;

fn render(source: &str) -> String {
    let t = Template::new("t", source).unwrap();
    t.render(&Context::from_json(json!({})).unwrap()).unwrap().text
}

#[test]
fn globals_print_as_transformers_environment_holds_them() {
    let local = "_cached_compile_jinja_template.<locals>";
    let cases = [
        ("cycler", "<class 'jinja2.utils.Cycler'>".to_string()),
        ("joiner", "<class 'jinja2.utils.Joiner'>".to_string()),
        (
            "namespace",
            format!("<class 'transformers.utils.chat_template_utils.{local}.TemplateNamespace'>"),
        ),
        (
            "dict",
            format!("<transformers.utils.chat_template_utils.{local}.TemplateDict object at 0x0>"),
        ),
        ("lipsum", "<function generate_lorem_ipsum at 0x0>".to_string()),
        ("range", "<function safe_range at 0x0>".to_string()),
        ("raise_exception", format!("<function {local}.raise_exception at 0x0>")),
        ("strftime_now", format!("<function {local}.strftime_now at 0x0>")),
    ];
    for (name, repr) in cases {
        assert_eq!(render(&format!("{{{{ {name} }}}}")), repr, "{name}");
        assert_eq!(render(&format!("{{{{ {name}|string }}}}")), repr, "{name}");
        assert_eq!(render(&format!("{{{{ [{name}] }}}}")), format!("[{repr}]"), "{name}");
    }
}
