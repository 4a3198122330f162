//! `docs/BUILTINS.md`, written from the built-in tables.

use super::entry::Builtin;
use super::table::{FILTERS, GLOBALS, METHODS, TESTS};
use std::fmt::Write as _;

/// The reference of every filter, test, global function and method, as Markdown.
pub fn reference_markdown() -> String {
    let mut out = String::from(
        "# Built-ins\n\n\
         Generated from the engine's table (`crates/chatfmt-jinja/src/builtins/table.rs`); do not \
         edit. Regenerate with\n\
         `CHATFMT_BLESS=1 cargo test --release -p chatfmt-jinja --test builtins_doc`.\n\n\
         Parameters are those of the Python function behind each name (Jinja2 3.1, transformers, \
         CPython 3.11, MarkupSafe): arguments bind to them, and fail, as CPython binds them. \
         The value a filter or test applies to, and the context or environment Jinja2 passes, are \
         left out.\n",
    );
    section(
        &mut out,
        "Filters",
        "`value|name(...)`. *pure*: evaluated again freely when printed (no side effects); \
         *lazy*: a generator in Jinja2, whose errors wait until the result is used.",
        FILTERS,
    );
    section(&mut out, "Tests", "`value is name(...)`.", TESTS);
    section(&mut out, "Global functions", "`name(...)`.", GLOBALS);
    out.push_str(
        "\n## Methods\n\n`value.name(...)`, by the value's type; methods that mutate their receiver \
         are listed but refused by the sandbox (*refused*). `[...]`: optional positional arguments. \
         A `Markup` override runs the `str` method's body, escaping what it inserts.\n",
    );
    for methods in METHODS {
        let Some(first) = methods.first() else { continue };
        let _ = write!(
            out,
            "\n### {}\n\n| method | parameters | does |\n|---|---|---|\n",
            first.on.title()
        );
        for m in methods.iter() {
            let refused = if m.mutates() { " *refused*" } else { "" };
            let _ = writeln!(
                out,
                "| `{}` | `({})` | {}{refused} |",
                m.name,
                m.sig.parse.describe(),
                m.summary
            );
        }
    }
    out
}

fn section<F>(out: &mut String, title: &str, intro: &str, entries: &[Builtin<F>]) {
    let _ = write!(
        out,
        "\n## {title}\n\n{intro}\n\n| name | parameters | Python function | does |\n|---|---|---|---|\n"
    );
    for b in entries {
        let mut flags = String::new();
        if b.pure {
            flags.push_str(" *pure*");
        }
        if b.lazy {
            flags.push_str(" *lazy*");
        }
        let _ = writeln!(
            out,
            "| `{}` | `({})` | `{}` | {}{flags} |",
            b.name.replace('|', "\\|"),
            b.sig.describe(),
            b.sig.func,
            b.summary
        );
    }
}
