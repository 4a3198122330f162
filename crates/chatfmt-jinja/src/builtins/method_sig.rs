//! The signatures of the Python methods templates call, as CPython 3.11 and MarkupSafe declare
//! them, and the binding of a call's arguments with the errors each way of parsing raises.

use crate::builtins::args::CallArgs;
use crate::error::{err, Result};
use crate::value::Value;

/// How a method takes its arguments; each way words its errors differently.
#[derive(Clone, Copy)]
pub(crate) enum Parse {
    /// `METH_NOARGS`: no arguments.
    NoArgs,
    /// `METH_O`: exactly one positional argument.
    One,
    /// Argument Clinic with positional-only parameters, from `.0` to `.1` of them.
    Clinic(usize, usize),
    /// `PyArg_ParseTuple` on `METH_VARARGS`, from `.0` to `.1` positional arguments.
    Tuple(usize, usize),
    /// Argument Clinic with keyword parameters: their names, how many are required, how many
    /// may be given by position (the rest are keyword-only).
    Keywords(&'static [&'static str], usize, usize),
    /// A method written in Python: its parameters with `self`, how many of them are
    /// positional-only, how many are required.
    Python(&'static [&'static str], usize, usize),
    /// Python `*args, **kwargs`: anything.
    Any,
}

/// The type a method's messages name (`str.center()`).
#[derive(Clone, Copy)]
pub(crate) enum Owner {
    /// The receiver's type (a bound method).
    Receiver,
    /// A fixed type (class and static methods).
    Type(&'static str),
    /// No type: the bare name (the sandbox's wrapper of `format_map`).
    Bare,
}

/// One method's signature.
#[derive(Clone, Copy)]
pub(crate) struct Sig {
    pub parse: Parse,
    pub owner: Owner,
}

const fn sig(parse: Parse) -> Sig {
    Sig {
        parse,
        owner: Owner::Receiver,
    }
}

const fn owned(parse: Parse, owner: &'static str) -> Sig {
    Sig {
        parse,
        owner: Owner::Type(owner),
    }
}

use Parse::*;

const SPLIT: Parse = Keywords(&["sep", "maxsplit"], 0, 2);
const FINDS: Parse = Tuple(1, 3);
const PAD: Parse = Clinic(1, 2);
const STRIP: Parse = Clinic(0, 1);
const PY_PAD: Parse = Python(&["self", "width", "fillchar"], 3, 2);
const PY_STRIP: Parse = Python(&["self", "chars"], 2, 1);
const PY_NONE: Parse = Python(&["self"], 1, 1);
const PY_SPLIT: Parse = Python(&["self", "sep", "maxsplit"], 1, 1);

/// The methods of `str`.
const STR: &[(&str, Sig)] = &[
    ("capitalize", sig(NoArgs)),
    ("casefold", sig(NoArgs)),
    ("center", sig(PAD)),
    ("count", sig(FINDS)),
    ("encode", sig(Keywords(&["encoding", "errors"], 0, 2))),
    ("endswith", sig(FINDS)),
    ("expandtabs", sig(Keywords(&["tabsize"], 0, 1))),
    ("find", sig(FINDS)),
    ("format", sig(Any)),
    (
        "format_map",
        Sig {
            parse: One,
            owner: Owner::Bare,
        },
    ),
    ("index", sig(FINDS)),
    ("isalnum", sig(NoArgs)),
    ("isalpha", sig(NoArgs)),
    ("isascii", sig(NoArgs)),
    ("isdecimal", sig(NoArgs)),
    ("isdigit", sig(NoArgs)),
    ("isidentifier", sig(NoArgs)),
    ("islower", sig(NoArgs)),
    ("isnumeric", sig(NoArgs)),
    ("isprintable", sig(NoArgs)),
    ("isspace", sig(NoArgs)),
    ("istitle", sig(NoArgs)),
    ("isupper", sig(NoArgs)),
    ("join", sig(One)),
    ("ljust", sig(PAD)),
    ("lower", sig(NoArgs)),
    ("lstrip", sig(STRIP)),
    ("maketrans", owned(Clinic(1, 3), "str")),
    ("partition", sig(One)),
    ("removeprefix", sig(One)),
    ("removesuffix", sig(One)),
    ("replace", sig(Clinic(2, 3))),
    ("rfind", sig(FINDS)),
    ("rindex", sig(FINDS)),
    ("rjust", sig(PAD)),
    ("rpartition", sig(One)),
    ("rsplit", sig(SPLIT)),
    ("rstrip", sig(STRIP)),
    ("split", sig(SPLIT)),
    ("splitlines", sig(Keywords(&["keepends"], 0, 1))),
    ("startswith", sig(FINDS)),
    ("strip", sig(STRIP)),
    ("swapcase", sig(NoArgs)),
    ("title", sig(NoArgs)),
    ("translate", sig(One)),
    ("upper", sig(NoArgs)),
    ("zfill", sig(One)),
];

/// MarkupSafe's `Markup` overrides of `str` methods (written in Python).
const MARKUP: &[(&str, Sig)] = &[
    ("capitalize", sig(PY_NONE)),
    ("casefold", sig(PY_NONE)),
    ("center", sig(PY_PAD)),
    ("expandtabs", sig(Python(&["self", "tabsize"], 1, 1))),
    ("join", sig(Python(&["self", "iterable"], 2, 2))),
    ("ljust", sig(PY_PAD)),
    ("lower", sig(PY_NONE)),
    ("lstrip", sig(PY_STRIP)),
    ("partition", sig(Python(&["self", "sep"], 2, 2))),
    ("removeprefix", sig(Python(&["self", "prefix"], 2, 2))),
    ("removesuffix", sig(Python(&["self", "suffix"], 0, 2))),
    ("replace", sig(Python(&["self", "old", "new", "count"], 4, 3))),
    ("rjust", sig(PY_PAD)),
    ("rpartition", sig(Python(&["self", "sep"], 2, 2))),
    ("rsplit", sig(PY_SPLIT)),
    ("rstrip", sig(PY_STRIP)),
    ("split", sig(PY_SPLIT)),
    ("splitlines", sig(Python(&["self", "keepends"], 1, 1))),
    ("strip", sig(PY_STRIP)),
    ("swapcase", sig(PY_NONE)),
    ("title", sig(PY_NONE)),
    ("translate", sig(Python(&["self", "table"], 2, 2))),
    ("upper", sig(PY_NONE)),
    ("zfill", sig(Python(&["self", "width"], 2, 2))),
];

/// The methods of `list` (those that mutate it are only listed: the sandbox refuses them).
const LIST: &[(&str, Sig)] = &[
    ("append", sig(One)),
    ("clear", sig(NoArgs)),
    ("copy", sig(NoArgs)),
    ("count", sig(One)),
    ("extend", sig(One)),
    ("index", sig(Clinic(1, 3))),
    ("insert", sig(Clinic(2, 2))),
    ("pop", sig(Clinic(0, 1))),
    ("remove", sig(One)),
    ("reverse", sig(NoArgs)),
    ("sort", sig(Keywords(&["key", "reverse"], 0, 0))),
];

/// The methods of `dict`.
const DICT: &[(&str, Sig)] = &[
    ("clear", sig(NoArgs)),
    ("copy", sig(NoArgs)),
    ("fromkeys", owned(Clinic(1, 2), "dict")),
    ("get", sig(Clinic(1, 2))),
    ("items", sig(NoArgs)),
    ("keys", sig(NoArgs)),
    ("pop", sig(Clinic(1, 2))),
    ("popitem", sig(NoArgs)),
    ("setdefault", sig(Clinic(1, 2))),
    ("update", sig(Any)),
    ("values", sig(NoArgs)),
];

/// The methods of `tuple` and `range`.
const TUPLE: &[(&str, Sig)] = &[("count", sig(One)), ("index", sig(Clinic(1, 3)))];
const RANGE: &[(&str, Sig)] = &[("count", sig(One)), ("index", sig(One))];

/// The methods of `int` (and `bool`).
const INT: &[(&str, Sig)] = &[
    ("as_integer_ratio", sig(NoArgs)),
    ("bit_count", sig(NoArgs)),
    ("bit_length", sig(NoArgs)),
    ("conjugate", sig(NoArgs)),
    ("from_bytes", sig(Keywords(&["bytes", "byteorder", "signed"], 1, 2))),
    ("to_bytes", sig(Keywords(&["length", "byteorder", "signed"], 0, 2))),
];

/// The methods of `float`.
const FLOAT: &[(&str, Sig)] = &[
    ("as_integer_ratio", sig(NoArgs)),
    ("conjugate", sig(NoArgs)),
    ("fromhex", owned(One, "float")),
    ("hex", sig(NoArgs)),
    ("is_integer", sig(NoArgs)),
];

/// Every method table with the type it belongs to, for the reference documentation.
pub(crate) const TYPES: &[(&str, &[(&str, Sig)])] = &[
    ("str", STR),
    ("Markup", MARKUP),
    ("list", LIST),
    ("dict", DICT),
    ("tuple", TUPLE),
    ("range", RANGE),
    ("int", INT),
    ("float", FLOAT),
];

impl Parse {
    /// The parameters as the documentation shows them (`/` ends the positional-only ones; `[...]`
    /// marks optional positional-only ones).
    pub(crate) fn describe(self) -> String {
        let optional = |names: Vec<String>, required: usize| -> String {
            let mut parts: Vec<String> = names[..required.min(names.len())].to_vec();
            let rest = &names[required.min(names.len())..];
            if !rest.is_empty() {
                parts.push(format!("[{}]", rest.join(", ")));
            }
            parts.join(", ")
        };
        let args = |n: usize| (1..=n).map(|i| format!("arg{i}")).collect::<Vec<_>>();
        match self {
            NoArgs => String::new(),
            One => "arg, /".to_string(),
            Clinic(lo, hi) | Tuple(lo, hi) => format!("{}, /", optional(args(hi), lo)).replace("[], /", "/"),
            Keywords(names, required, positional) => {
                let mut parts: Vec<String> = names.iter().map(|n| n.to_string()).collect();
                for p in parts.iter_mut().skip(required) {
                    p.push_str("=...");
                }
                if positional < parts.len() {
                    parts.insert(positional, "*".to_string());
                }
                parts.join(", ")
            }
            Python(names, posonly, required) => {
                let mut parts = Vec::new();
                for (i, n) in names.iter().enumerate().skip(1) {
                    parts.push(if i < required {
                        n.to_string()
                    } else {
                        format!("{n}=...")
                    });
                    if i + 1 == posonly {
                        parts.push("/".to_string());
                    }
                }
                parts.join(", ")
            }
            Any => "*args, **kwargs".to_string(),
        }
    }
}

fn find(table: &[(&str, Sig)], name: &str) -> Option<Sig> {
    table.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
}

/// The signature tables of a receiver's type, most specific first.
fn tables(recv: &Value) -> &'static [&'static [(&'static str, Sig)]] {
    use crate::value::Object;
    use serde_json::Value as Json;
    match recv {
        Value::Safe(_) => &[MARKUP, STR],
        Value::Str(_) | Value::String(_) => &[STR],
        Value::Json(Json::Array(_)) | Value::List(_) => &[LIST],
        Value::Json(Json::Object(_)) | Value::Dict(_) => &[DICT],
        Value::Tuple(_) => &[TUPLE],
        Value::Int(_) | Value::BigInt(_) | Value::Bool(_) => &[INT],
        Value::Float(_) => &[FLOAT],
        Value::Object(o) if matches!(&**o, Object::Range(..)) => &[RANGE],
        _ => &[],
    }
}

/// The signature of the Python method `name` of `recv`, if it has one.
pub(crate) fn lookup(recv: &Value, name: &str) -> Option<Sig> {
    tables(recv).iter().find_map(|t| find(t, name))
}

/// The name of the Python method `name` of `recv` as the table spells it (a `'static` name).
pub(crate) fn static_name(recv: &Value, name: &str) -> Option<&'static str> {
    tables(recv)
        .iter()
        .find_map(|t| t.iter().find(|(n, _)| *n == name).map(|(n, _)| *n))
}

/// Whether `Markup` overrides the `str` method `name` with one written in Python.
pub(crate) fn is_markup_override(name: &str) -> bool {
    find(MARKUP, name).is_some()
}

/// The signature of `dict.fromkeys`, for the `dict` global too.
pub(crate) fn fromkeys() -> Sig {
    owned(Clinic(1, 2), "dict")
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Binds a call of the method `name` of `recv` to its parameters, with CPython's errors; the
/// result has one slot per parameter.
pub(crate) fn bind<'a>(sig: Sig, recv: &Value, name: &str, args: &CallArgs<'a>) -> Result<Vec<Option<Value<'a>>>> {
    let qual = match sig.owner {
        Owner::Receiver => format!("{}.{name}", recv.type_name()),
        Owner::Type(t) => format!("{t}.{name}"),
        Owner::Bare => name.to_string(),
    };
    let n = args.pos.len();
    let positional = |slots: usize| -> Vec<Option<Value<'a>>> {
        let mut out: Vec<Option<Value<'a>>> = args.pos.iter().cloned().map(Some).collect();
        out.resize(slots, None);
        out
    };
    let no_keywords = |who: &str| {
        if args.kw.is_empty() {
            Ok(())
        } else {
            Err(err!(TypeError, "{who}() takes no keyword arguments"))
        }
    };
    match sig.parse {
        NoArgs => {
            no_keywords(&qual)?;
            if n > 0 {
                return Err(err!(TypeError, "{qual}() takes no arguments ({n} given)"));
            }
            Ok(Vec::new())
        }
        One => {
            no_keywords(&qual)?;
            if n != 1 {
                return Err(err!(TypeError, "{qual}() takes exactly one argument ({n} given)"));
            }
            Ok(positional(1))
        }
        Clinic(min, max) => {
            no_keywords(&qual)?;
            let bound = if n < min {
                Some(("at least ", min))
            } else if n > max {
                Some(("at most ", max))
            } else {
                None
            };
            if let Some((how, k)) = bound {
                let how = if min == max { "" } else { how };
                return Err(err!(
                    TypeError,
                    "{name} expected {how}{k} argument{}, got {n}",
                    plural(k)
                ));
            }
            Ok(positional(max))
        }
        Tuple(min, max) => {
            no_keywords(name)?;
            if n < min || n > max {
                let (how, k) = match (min == max, n < min) {
                    (true, _) => ("exactly", min),
                    (false, true) => ("at least", min),
                    (false, false) => ("at most", max),
                };
                return Err(err!(
                    TypeError,
                    "{name}() takes {how} {k} argument{} ({n} given)",
                    plural(k)
                ));
            }
            Ok(positional(max))
        }
        Keywords(names, min, maxpos) => bind_keywords(name, names, min, maxpos, args),
        Python(names, posonly, required) => bind_python(&qual, names, posonly, required, args),
        Any => Ok(positional(n)),
    }
}

/// `_PyArg_UnpackKeywords`: Argument Clinic's binding of keyword parameters.
fn bind_keywords<'a>(
    name: &str,
    names: &[&str],
    min: usize,
    maxpos: usize,
    args: &CallArgs<'a>,
) -> Result<Vec<Option<Value<'a>>>> {
    let (n, nkw, max) = (args.pos.len(), args.kw.len(), names.len());
    if n + nkw > max {
        let kw = if n == 0 { "keyword " } else { "" };
        return Err(err!(
            TypeError,
            "{name}() takes at most {max} {kw}argument{} ({} given)",
            plural(max),
            n + nkw
        ));
    }
    if n > maxpos {
        let how = if min < maxpos { "at most" } else { "exactly" };
        return Err(err!(
            TypeError,
            "{name}() takes {how} {maxpos} positional argument{} ({n} given)",
            plural(maxpos)
        ));
    }
    let mut out: Vec<Option<Value<'a>>> = args.pos.iter().cloned().map(Some).collect();
    out.resize(max, None);
    let mut left = nkw;
    for (i, slot) in out.iter_mut().enumerate().skip(n) {
        let given = if left > 0 {
            args.kw.iter().find(|(k, _)| *k == names[i]).map(|(_, v)| v.clone())
        } else if i >= min {
            break;
        } else {
            None
        };
        if given.is_some() {
            left -= 1;
        } else if i < min {
            return Err(err!(
                TypeError,
                "{name}() missing required argument '{}' (pos {})",
                names[i],
                i + 1
            ));
        }
        *slot = given;
    }
    if left > 0 {
        for (i, p) in names.iter().enumerate().take(n) {
            if args.kw.iter().any(|(k, _)| k == p) {
                return Err(err!(
                    TypeError,
                    "argument for {name}() given by name ('{p}') and position ({})",
                    i + 1
                ));
            }
        }
        if let Some((k, _)) = args.kw.iter().find(|(k, _)| !names.contains(k)) {
            return Err(err!(TypeError, "'{k}' is an invalid keyword argument for {name}()"));
        }
    }
    Ok(out)
}

/// CPython's binding of a call to a function written in Python, whose first parameter `self`
/// is already bound.
fn bind_python<'a>(
    qual: &str,
    names: &[&str],
    posonly: usize,
    required: usize,
    args: &CallArgs<'a>,
) -> Result<Vec<Option<Value<'a>>>> {
    let total = names.len();
    let given = 1 + args.pos.len();
    let mut out: Vec<Option<Value<'a>>> = vec![None; total];
    out[0] = Some(Value::None);
    for (slot, v) in out.iter_mut().skip(1).zip(args.pos.iter()) {
        *slot = Some(v.clone());
    }
    for (k, v) in &args.kw {
        match names.iter().skip(posonly).position(|p| p == k) {
            Some(j) => {
                let slot = &mut out[posonly + j];
                if slot.is_some() {
                    return Err(err!(TypeError, "{qual}() got multiple values for argument '{k}'"));
                }
                *slot = Some(v.clone());
            }
            None => {
                let passed: Vec<&str> = args
                    .kw
                    .iter()
                    .map(|(k, _)| *k)
                    .filter(|k| names[..posonly].contains(k))
                    .collect();
                if !passed.is_empty() {
                    return Err(err!(
                        TypeError,
                        "{qual}() got some positional-only arguments passed as keyword arguments: '{}'",
                        passed.join(", ")
                    ));
                }
                return Err(err!(TypeError, "{qual}() got an unexpected keyword argument '{k}'"));
            }
        }
    }
    if given > total {
        let takes = if required == total {
            format!("{total} positional argument{}", plural(total))
        } else {
            format!("from {required} to {total} positional arguments")
        };
        let were = if given == 1 { "was" } else { "were" };
        return Err(err!(TypeError, "{qual}() takes {takes} but {given} {were} given"));
    }
    let missing: Vec<String> = names[..required]
        .iter()
        .zip(out.iter())
        .filter(|(_, v)| v.is_none())
        .map(|(p, _)| format!("'{p}'"))
        .collect();
    if !missing.is_empty() {
        let list = match missing.as_slice() {
            [one] => one.clone(),
            [a, b] => format!("{a} and {b}"),
            [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
            [] => String::new(),
        };
        let k = missing.len();
        return Err(err!(
            TypeError,
            "{qual}() missing {k} required positional argument{}: {list}",
            plural(k)
        ));
    }
    out.remove(0);
    Ok(out)
}
