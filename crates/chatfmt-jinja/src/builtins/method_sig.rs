//! How the Python methods templates call take their arguments, as CPython 3.11 and MarkupSafe
//! declare them, and the binding of a call's arguments with the errors each way of parsing raises.
//! Each method's signature is declared with it in [`super::table`].

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
    /// Python `*args, **kwargs`: anything; the body reads the arguments as given.
    Any,
    /// Python `*name` (no keywords): any positional arguments, which the body reads as given.
    VarArgs(&'static str),
    /// Parameters bound by name, each optional, with the engine's plain binding
    /// ([`CallArgs::bind`]): the methods of Jinja2's helper objects.
    Named(&'static [&'static str]),
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

/// A bound method's signature: its messages name the receiver's type.
pub(crate) const fn sig(parse: Parse) -> Sig {
    Sig {
        parse,
        owner: Owner::Receiver,
    }
}

/// A class or static method's signature: its messages name the type `owner`.
pub(crate) const fn owned(parse: Parse, owner: &'static str) -> Sig {
    Sig {
        parse,
        owner: Owner::Type(owner),
    }
}

use Parse::*;

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
            VarArgs(name) => format!("*{name}"),
            Named(names) => names.join(", "),
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Binds a call of the method `name` of `recv` to its parameters, with CPython's errors; the
/// result has one slot per parameter (none for [`Parse::Any`]).
pub(crate) fn bind<'a>(sig: Sig, recv: &Value, name: &str, args: &CallArgs<'a>) -> Result<Vec<Option<Value<'a>>>> {
    // The qualified name only errors print: spelled out when one is raised.
    let qual = || match sig.owner {
        Owner::Receiver => format!("{}.{name}", recv.type_name()),
        Owner::Type(t) => format!("{t}.{name}"),
        Owner::Bare => name.to_string(),
    };
    let n = args.pos.len();
    let positional = |slots: usize| -> Vec<Option<Value<'a>>> {
        let mut out = Vec::with_capacity(slots.max(n));
        out.extend(args.pos.iter().cloned().map(Some));
        out.resize(slots, None);
        out
    };
    let no_keywords = |who: &dyn Fn() -> String| {
        if args.kw.is_empty() {
            Ok(())
        } else {
            Err(err!(TypeError, "{}() takes no keyword arguments", who()))
        }
    };
    match sig.parse {
        NoArgs => {
            no_keywords(&qual)?;
            if n > 0 {
                return Err(err!(TypeError, "{}() takes no arguments ({n} given)", qual()));
            }
            Ok(Vec::new())
        }
        One => {
            no_keywords(&qual)?;
            if n != 1 {
                return Err(err!(TypeError, "{}() takes exactly one argument ({n} given)", qual()));
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
            no_keywords(&|| name.to_string())?;
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
        Any => Ok(Vec::new()),
        VarArgs(_) => match args.kw.first() {
            Some((k, _)) => Err(err!(TypeError, "{}() got an unexpected keyword argument '{k}'", qual())),
            None => Ok(Vec::new()),
        },
        Named(names) => {
            let mut out = vec![None; names.len()];
            args.bind_into(name, names, &mut out)?;
            Ok(out)
        }
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
    qual: &dyn Fn() -> String,
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
                    return Err(err!(TypeError, "{}() got multiple values for argument '{k}'", qual()));
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
                        "{}() got some positional-only arguments passed as keyword arguments: '{}'",
                        qual(),
                        passed.join(", ")
                    ));
                }
                return Err(err!(TypeError, "{}() got an unexpected keyword argument '{k}'", qual()));
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
        return Err(err!(TypeError, "{}() takes {takes} but {given} {were} given", qual()));
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
            "{}() missing {k} required positional argument{}: {list}",
            qual(),
            plural(k)
        ));
    }
    out.remove(0);
    Ok(out)
}
