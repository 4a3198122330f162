//! The engine's own Python semantics against the CPython reference values of `tests/data/pystr/`.

use crate::ast::{BinOp, CmpOp};
use crate::builtins::json::{dumps, DumpOptions};
use crate::pystr::test_support::{bits, boolean, float_bits, int, load, opt_int, opt_string, result, string, Py};
use crate::pystr::MAX_INT_BITS;
use crate::value::compare;
use crate::value::{Dict, Object, Value};
use num_bigint::BigInt;
use num_integer::Integer;
use std::cell::Cell;
use std::cmp::Ordering;
use std::rc::Rc;

/// The engine's value for a Python value of the reference files.
fn value<'a>(py: &Py<'a>) -> Value<'a> {
    match py {
        Py::None => Value::None,
        Py::Bool(b) => Value::Bool(*b),
        Py::Int(i) => Value::Int(*i),
        Py::Float(f) => Value::Float(*f),
        Py::Str(s) => Value::Str(s),
        Py::List(items) => Value::list(items.iter().map(value).collect()),
        Py::Tuple(items) => Value::Tuple(Rc::new(items.iter().map(value).collect())),
        Py::Dict(items) => {
            let mut d = Dict::default();
            for (k, v) in items {
                d.insert(value(k), value(v)).expect("a hashable key");
            }
            Value::Dict(Rc::new(d))
        }
        // A key of another hashable type, and an object of a class the function does not know.
        Py::Object("tuple") => Value::Tuple(Rc::new(Vec::new())),
        Py::Object(_) => Value::Object(Rc::new(Object::Cycler(Vec::new(), Cell::new(0)))),
    }
}

#[test]
fn repr_matches_cpython() {
    for case in load("value_repr", 27) {
        let v = Py::from_json(&case[0]);
        let mut out = String::new();
        value(&v).write_repr(&mut out);
        assert_eq!(out, string(&case[1]), "{v:?}");
    }
}

/// Jinja turns the `IndexError` of a subscript into an undefined value.
#[test]
fn string_indexing_matches_cpython() {
    for case in load("str_index", 36) {
        let (s, i) = (string(&case[0]), int(&case[1]));
        let got = Value::Str(s).get_item_opt(&Value::Int(i));
        let want = result(&case[2], string).ok();
        assert_eq!(got.as_ref().and_then(Value::as_str), want, "{s:?}[{i}]");
    }
}

/// Collects the cases that differ, so that one failure shows how many there are.
struct Differences(Vec<String>);

impl Differences {
    fn new() -> Self {
        Differences(Vec::new())
    }

    fn check(&mut self, same: bool, what: impl FnOnce() -> String) {
        if !same {
            self.0.push(what());
        }
    }

    fn assert_none(self, family: &str) {
        let shown: Vec<&str> = self.0.iter().take(20).map(String::as_str).collect();
        assert!(
            self.0.is_empty(),
            "{family}: {} cases differ:\n{}",
            self.0.len(),
            shown.join("\n")
        );
    }
}

/// An engine error as `(class, message)`.
fn class_and_message(e: &crate::Error) -> (String, String) {
    (e.kind().python_name().to_string(), e.message().to_string())
}

/// Renders `source` with a JSON context.
fn render(source: &str, ctx: serde_json::Value) -> std::result::Result<String, (String, String)> {
    let t = crate::Template::new("case", source).map_err(|e| class_and_message(&e))?;
    let ctx = crate::Context::from_json(ctx).map_err(|e| class_and_message(&e))?;
    t.render(&ctx).map(|r| r.text).map_err(|e| class_and_message(&e))
}

/// A number or an error, as the arithmetic cases expect them.
#[derive(Debug, PartialEq)]
enum Num {
    Int(BigInt),
    /// A float by bits (every NaN as the same NaN: Python shows no NaN sign or payload).
    Float(u64),
    Err(String, String),
}

fn float_num(f: f64) -> Num {
    Num::Float(if f.is_nan() { f64::NAN.to_bits() } else { f.to_bits() })
}

/// The engine's result of an operation.
fn engine_num(r: crate::Result<Value>) -> Num {
    match r {
        Ok(Value::Int(i)) => Num::Int(i.into()),
        Ok(Value::BigInt(b)) => Num::Int((*b).clone()),
        Ok(Value::Float(f)) => float_num(f),
        Ok(other) => Num::Err("not a number".into(), other.type_name().into()),
        Err(e) => {
            let (k, m) = class_and_message(&e);
            Num::Err(k, m)
        }
    }
}

/// The expected result of a case: an int, a float, or an error. The reference files write a result
/// beyond 64 bits as `OverflowError: integer overflow`; `big` gives the exact result for those.
fn want_num(v: &serde_json::Value, big: impl FnOnce() -> Num) -> Num {
    match result(v, |x| x) {
        Ok(x) if x.is_number() => Num::Int(int(x).into()),
        Ok(x) => float_num(f64::from_bits(float_bits(x))),
        Err(("OverflowError", "integer overflow")) => big(),
        Err((k, m)) => Num::Err(k.into(), m.into()),
    }
}

/// `a ** b` for ints with `b > 0` beyond 64 bits: exact up to the engine's size limit.
fn big_pow(a: i64, b: i64) -> Num {
    let a = BigInt::from(a);
    match u32::try_from(b) {
        Ok(e) if a.bits().saturating_mul(e.into()) <= MAX_INT_BITS => Num::Int(a.pow(e)),
        Ok(_) => Num::Err(
            "LimitExceeded".into(),
            format!("integer result beyond {MAX_INT_BITS} bits"),
        ),
        Err(_) => Num::Err("LimitExceeded".into(), "exponent too large".into()),
    }
}

#[test]
fn int_arithmetic_matches_cpython() {
    let mut diff = Differences::new();
    for case in load("int_arith", 2500) {
        let (a, b) = (int(&case[0]), int(&case[1]));
        let ops = [
            (BinOp::FloorDiv, "//", 2),
            (BinOp::Mod, "%", 3),
            (BinOp::Div, "/", 4),
            (BinOp::Pow, "**", 5),
        ];
        for (op, sym, field) in ops {
            let got = engine_num(Value::Int(a).binary(op, &Value::Int(b)));
            let want = want_num(&case[field], || match op {
                BinOp::Pow => big_pow(a, b),
                _ => Num::Int(BigInt::from(a).div_floor(&BigInt::from(b))),
            });
            diff.check(got == want, || format!("{a} {sym} {b}: got {got:?}, want {want:?}"));
        }
    }
    diff.assert_none("int arithmetic");
}

#[test]
fn float_arithmetic_matches_cpython() {
    let mut diff = Differences::new();
    for case in load("float_arith", 676) {
        let (a, b) = (f64::from_bits(bits(&case[0])), f64::from_bits(bits(&case[1])));
        let ops = [
            (BinOp::Div, "/", 2),
            (BinOp::FloorDiv, "//", 3),
            (BinOp::Mod, "%", 4),
            (BinOp::Pow, "**", 5),
        ];
        for (op, sym, field) in ops {
            let got = engine_num(Value::Float(a).binary(op, &Value::Float(b)));
            let want = want_num(&case[field], || Num::Err("none".into(), "beyond 64 bits".into()));
            diff.check(got == want, || format!("{a:?} {sym} {b:?}: got {got:?}, want {want:?}"));
        }
    }
    diff.assert_none("float arithmetic");
}

/// `<`, `==` and `>` between an int and a float, both ways round, are exact.
#[test]
fn int_float_comparisons_match_cpython() {
    let mut diff = Differences::new();
    for case in load("cmp_int_float", 620) {
        let (a, b) = (int(&case[0]), f64::from_bits(bits(&case[1])));
        let want = case[2].as_i64().map(|c| c.cmp(&0));
        let (i, f) = (Value::Int(a), Value::Float(b));
        let lt = compare(CmpOp::Lt, &i, &f).ok();
        let eq = compare(CmpOp::Eq, &i, &f).ok();
        let gt = compare(CmpOp::Gt, &i, &f).ok();
        let got = match (lt, eq, gt) {
            (Some(true), Some(false), Some(false)) => Some(Ordering::Less),
            (Some(false), Some(true), Some(false)) => Some(Ordering::Equal),
            (Some(false), Some(false), Some(true)) => Some(Ordering::Greater),
            _ => None,
        };
        let nan = (lt, eq, gt) == (Some(false), Some(false), Some(false));
        let mirrored = [CmpOp::Gt, CmpOp::Eq, CmpOp::Lt].map(|op| compare(op, &f, &i).ok());
        diff.check(
            (got == want || (want.is_none() && nan)) && mirrored == [lt, eq, gt],
            || format!("{a} vs {b:?}: got {:?} and {mirrored:?}, want {want:?}", (lt, eq, gt)),
        );
    }
    diff.assert_none("int/float comparisons");
}

/// Strings, lists and tuples slice alike: the string cases are checked on all three.
#[test]
fn slices_match_cpython() {
    let mut diff = Differences::new();
    for case in load("str_slice", 6050) {
        let s = string(&case[0]);
        let [start, stop, step] = [1, 2, 3].map(|i| opt_int(&case[i]));
        let want = result(&case[4], string).map_err(|(k, m)| (k.to_string(), m.to_string()));
        let got = Value::Str(s).slice(start, stop, step);
        let got = got
            .map(|v| v.as_str().map(str::to_string))
            .map_err(|e| class_and_message(&e));
        diff.check(got == want.clone().map(|w| Some(w.to_string())), || {
            format!("{s:?}[{start:?}:{stop:?}:{step:?}]: got {got:?}, want {want:?}")
        });
        let chars: Vec<Value> = s.chars().map(|c| Value::string(c.to_string())).collect();
        for seq in [Value::list(chars.clone()), Value::Tuple(Rc::new(chars))] {
            let got = seq
                .slice(start, stop, step)
                .map_err(|e| class_and_message(&e))
                .map(|v| {
                    let mut out = String::new();
                    v.for_each_item(|c| out.push_str(c.as_str().unwrap_or("?")));
                    (v.type_name(), out)
                });
            let want = want.clone().map(|w| (seq.type_name(), w.to_string()));
            diff.check(got == want, || {
                format!(
                    "{s:?} as a {}[{start:?}:{stop:?}:{step:?}]: got {got:?}, want {want:?}",
                    seq.type_name()
                )
            });
        }
    }
    diff.assert_none("slices");
}

/// `title` and `wordcount` as Jinja2 computes them.
#[test]
fn title_and_wordcount_match_jinja() {
    let mut diff = Differences::new();
    for case in load("jinja", 603) {
        let (s, title, words) = (string(&case[0]), string(&case[1]), int(&case[2]));
        let got = render("{{ s|title }}|{{ s|wordcount }}", serde_json::json!({ "s": s }));
        let want = Ok(format!("{title}|{words}"));
        diff.check(got == want, || format!("{s:?}: got {got:?}, want {want:?}"));
    }
    diff.assert_none("title and wordcount");
}

/// A float as a template expression: a context value, or `'nan'|float` for what JSON cannot hold.
fn float_expr(x: f64) -> (String, serde_json::Value) {
    match serde_json::Number::from_f64(x) {
        Some(n) => ("x".to_string(), serde_json::json!({ "x": n })),
        None => (format!("('{x}'|float)"), serde_json::json!({})),
    }
}

/// Jinja2's `int` filter: `int(value)`, and after a `ValueError` `int(float(value))`, and after
/// another the default. An `OverflowError` is raised.
#[test]
fn int_filter_on_floats_matches_cpython() {
    let mut diff = Differences::new();
    for case in load("float_to_int", 33) {
        let x = f64::from_bits(bits(&case[0]));
        let (expr, ctx) = float_expr(x);
        let got = render(&format!("{{{{ {expr}|int(none) }}}}"), ctx);
        let want = match result(&case[1], |v| v) {
            Ok(v) => Ok(int(v).to_string()),
            Err(("OverflowError", "integer overflow")) => Ok(format!("{x:.0}")),
            Err(("ValueError", _)) => Ok("None".to_string()),
            Err((k, m)) => Err((k.to_string(), m.to_string())),
        };
        diff.check(got == want, || format!("{x:?}|int: got {got:?}, want {want:?}"));
    }
    diff.assert_none("int filter on floats");
}

/// `s|int(none, base)`: `int(s, base)`; where that raises `ValueError`, `int(float(s))` (its own
/// results are checked against CPython's in `pystr`), else the default.
#[test]
fn int_filter_on_strings_matches_cpython() {
    let mut diff = Differences::new();
    for case in load("parse_int", 61) {
        let (s, base) = (string(&case[0]), int(&case[1]));
        let got = render("{{ s|int(none, base) }}", serde_json::json!({ "s": s, "base": base }));
        let want = match result(&case[2], |v| v) {
            Ok(v) => Ok(int(v).to_string()),
            Err(("OverflowError", _)) => {
                let digits = s.trim().trim_start_matches('+');
                BigInt::parse_bytes(digits.as_bytes(), base as u32)
                    .map(|b| b.to_string())
                    .ok_or_else(|| ("unparsable".to_string(), s.to_string()))
            }
            Err(("ValueError", _)) => Ok(match crate::pystr::parse_float(s) {
                Ok(f) if f.is_finite() => format!("{:.0}", f.trunc() + 0.0),
                _ => "None".to_string(),
            }),
            Err((k, m)) => Err((k.to_string(), m.to_string())),
        };
        diff.check(got == want, || {
            format!("{s:?}|int(none, {base}): got {got:?}, want {want:?}")
        });
    }
    diff.assert_none("int filter on strings");
}

/// `json.dumps` with the options of transformers' `tojson`. An object of a class `json` does not
/// know is a cycler here, named in the message by its own class.
#[test]
fn json_dumps_matches_cpython() {
    let mut diff = Differences::new();
    for case in load("json_dumps", 288) {
        let v = value(&Py::from_json(&case[0]));
        let indent = opt_string(&case[2]).map(str::to_string);
        let (item_sep, key_sep) = match &case[3] {
            serde_json::Value::Null => (if indent.is_some() { "," } else { ", " }, ": "),
            seps => (string(&seps[0]), string(&seps[1])),
        };
        let opts = DumpOptions {
            ensure_ascii: boolean(&case[1]),
            indent,
            item_sep: item_sep.to_string().into(),
            key_sep: key_sep.to_string().into(),
            sort_keys: boolean(&case[4]),
            markup_indent: false,
        };
        let mut out = String::new();
        let got = dumps(&v, &opts, 0, &mut out)
            .map(|()| out)
            .map_err(|e| class_and_message(&e));
        let want = result(&case[5], string)
            .map(str::to_string)
            .map_err(|(k, m)| (k.to_string(), m.replace("type Opaque", "type Cycler")));
        diff.check(got == want, || format!("{}: got {got:?}, want {want:?}", case[0]));
    }
    diff.assert_none("json.dumps");
}

/// Big ints, exact int/float mixing and range slices, as Jinja2 renders them.
#[test]
fn numbers_beyond_the_reference_files_match_jinja() {
    type Output = std::result::Result<&'static str, (&'static str, &'static str)>;
    let cases: &[(&str, Output)] = &[
        ("{{ 10**400 / 10**399 }}", Ok("10.0")),
        (
            "{{ 10**400 / 3 }}",
            Err(("OverflowError", "integer division result too large for a float")),
        ),
        ("{{ 1 / 10**400 }}", Ok("0.0")),
        ("{{ -1 / 10**400 }}", Ok("-0.0")),
        ("{{ 1 / 2**1074 }}", Ok("5e-324")),
        ("{{ 3 / 2**1075 }}", Ok("1e-323")),
        ("{{ 2**1075 / 2**2149 }}", Ok("5e-324")),
        ("{{ (2**64 + 1) / 3 }}", Ok("6.148914691236517e+18")),
        ("{{ (10**30 + 7) / (10**15 + 3) }}", Ok("999999999999997.0")),
        ("{{ -(2**70) / 7 }}", Ok("-1.6865594581677303e+20")),
        ("{{ 2**1024 / 2 }}", Ok("8.98846567431158e+307")),
        (
            "{{ (2**1024 - 2**970) / 1 }}",
            Err(("OverflowError", "integer division result too large for a float")),
        ),
        ("{{ 10**400 > 1e308 }}", Ok("True")),
        ("{{ 2**63 == 9.223372036854776e18 }}", Ok("True")),
        ("{{ 2**63 + 1 > 9.223372036854776e18 }}", Ok("True")),
        ("{{ -(10**400) < -1e308 }}", Ok("True")),
        ("{{ 2**64 < 1e400|float }}", Ok("True")),
        (
            "{{ (10**400) ** -1 }}",
            Err(("OverflowError", "int too large to convert to float")),
        ),
        ("{{ 2 ** -(10**20) }}", Ok("0.0")),
        ("{{ 10**20 % 0 }}", Err(("ZeroDivisionError", "integer modulo by zero"))),
        (
            "{{ 10**20 // 0 }}",
            Err(("ZeroDivisionError", "integer division or modulo by zero")),
        ),
        ("{{ 10**20 / 0 }}", Err(("ZeroDivisionError", "division by zero"))),
        ("{{ (-1) ** (10**20 + 1) }}", Ok("-1")),
        ("{{ 0 ** (10**20) }}", Ok("0")),
        ("{{ -(2**63) // -1 }}", Ok("9223372036854775808")),
        ("{{ -(2**63) % -1 }}", Ok("0")),
        ("{{ 7 ** 30 }}", Ok("22539340290692258087863249")),
        ("{{ (-3) ** 41 }}", Ok("-36472996377170786403")),
        ("{{ 10**20 == 1e20 }}", Ok("True")),
        ("{{ 10**20 + 0.5 }}", Ok("1e+20")),
        ("{{ [10**20, 1e20, 2**70]|max }}", Ok("1180591620717411303424")),
        ("{{ -7.5 // 2 }}", Ok("-4.0")),
        ("{{ 1e308 * 10 }}", Ok("inf")),
        (
            "{{ 10**400 * 1.0 }}",
            Err(("OverflowError", "int too large to convert to float")),
        ),
        ("{{ (10**20)|float }}", Ok("1e+20")),
        ("{{ \" 0x_ff \"|int(0, 0) }}", Ok("255")),
        ("{{ \"inf\"|int }}", Ok("0")),
        ("{{ \"nan\"|int(7) }}", Ok("7")),
        ("{{ \"12\"|int(0, \"x\") }}", Ok("12")),
        ("{{ \"0b11\"|int(0, true) }}", Ok("0")),
        ("{{ (10**20)|int }}", Ok("100000000000000000000")),
        ("{{ \"abc\"[::-1] }}", Ok("cba")),
        ("{{ [1,2,3,4,5][-2::-2] }}", Ok("[4, 2]")),
        ("{{ \"héllo\"[1:-1] }}", Ok("éll")),
        ("{{ range(10)[::3] }}", Ok("range(0, 10, 3)")),
        ("{{ \"ΣΑΣ ΟΔΥΣΣΕΥΣ\"|title }}", Ok("Σας Οδυσσευς")),
        ("{{ \"ǆx ⓐⓑ\"|wordcount }}", Ok("1")),
        ("{{ (\"1\"*5000)|int }}", Ok("0")),
        ("{{ (\"1\"*4300)|int|string|length }}", Ok("4300")),
        ("{{ (\"1\"*4300)|int % 1000 }}", Ok("111")),
        ("{{ (\"1\"*4301)|int }}", Ok("0")),
        ("{{ (\"f\"*5000)|int(0, 16) % 65536 }}", Ok("65535")),
        ("{{ \"1.5e3\"|int }}", Ok("1500")),
        ("{{ \"-0.0\"|int }}", Ok("0")),
        ("{{ range(10)[5:] }}", Ok("range(5, 10)")),
        ("{{ range(10)[::-1] }}", Ok("range(9, -1, -1)")),
        ("{{ range(0,10,3)[5:] }}", Ok("range(12, 12, 3)")),
        ("{{ range(10)[1:8:2]|list }}", Ok("[1, 3, 5, 7]")),
        ("{{ \"ab\"[::0] }}", Err(("ValueError", "slice step cannot be zero"))),
        ("{{ (2**63)|tojson }}", Ok("9223372036854775808")),
        (
            "{{ {2: 1, 1.5: 2, false: 3, none: 4}|tojson(sort_keys=true) }}",
            Err((
                "TypeError",
                "'<' not supported between instances of 'NoneType' and 'bool'",
            )),
        ),
        (
            "{{ {\"b\": 1, \"a\": 2}|tojson(sort_keys=true) }}",
            Ok("{\"a\": 2, \"b\": 1}"),
        ),
        ("{{ 1 <= ((\"nan\")|float) }}", Ok("False")),
        ("{{ 2**53 + 1 == (2**53)|float }}", Ok("False")),
    ];
    let mut diff = Differences::new();
    for (source, want) in cases {
        let got = render(source, serde_json::json!({}));
        let want = want
            .map(str::to_string)
            .map_err(|(k, m)| (k.to_string(), m.to_string()));
        diff.check(got == want, || format!("{source}: got {got:?}, want {want:?}"));
    }
    diff.assert_none("numbers");
}
