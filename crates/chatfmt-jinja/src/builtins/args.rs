//! Evaluated call arguments and Python-style binding to a signature.

use crate::error::{err, Result};
use crate::value::{Slots, Value};

/// Positional and keyword arguments of a call, evaluated.
#[derive(Default, Clone)]
pub struct CallArgs<'a> {
    pub pos: Vec<Value<'a>>,
    pub kw: Vec<(&'a str, Value<'a>)>,
}

/// A parameter's default value, as a Python literal.
#[derive(Clone, Copy, Debug)]
pub enum ParamDefault {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(&'static str),
}

impl ParamDefault {
    /// The value the parameter takes when the call leaves it out.
    pub fn value<'a>(self) -> Value<'a> {
        match self {
            ParamDefault::None => Value::None,
            ParamDefault::Bool(b) => Value::Bool(b),
            ParamDefault::Int(i) => Value::Int(i),
            ParamDefault::Float(f) => Value::Float(f),
            ParamDefault::Str(s) => Value::Str(s),
        }
    }

    /// The default as Python writes it.
    pub fn repr(self) -> String {
        match self {
            ParamDefault::None => "None".to_string(),
            ParamDefault::Bool(true) => "True".to_string(),
            ParamDefault::Bool(false) => "False".to_string(),
            ParamDefault::Int(i) => i.to_string(),
            ParamDefault::Float(f) => crate::pystr::float_repr(f),
            ParamDefault::Str(s) => {
                let mut out = String::new();
                crate::pystr::str_repr(s, &mut out);
                out
            }
        }
    }
}

/// How a callable words the errors of a bad call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Style {
    /// A function written in Python (CPython's binding of `def f(...)`).
    Python,
    /// A C function taking exactly one argument (`METH_O`: `len`, `abs`, `callable`).
    OneArg,
    /// A C function of the `operator` module taking exactly two positional arguments.
    Operator,
    /// Checked by the function itself (`dict(...)`, `namespace(...)`): everything is collected.
    Own,
}

/// How a callable takes its arguments, so that calls bind (and fail) as CPython binds them.
#[derive(Clone, Copy)]
pub struct Signature {
    /// The name in error messages (CPython's qualified name, `do_center`, `Cycler.__init__`).
    pub func: &'static str,
    /// The parameter names, the leading `hidden` ones included.
    pub params: &'static [&'static str],
    /// The defaults of the parameters after the `required` ones, in order.
    pub defaults: &'static [ParamDefault],
    /// Leading parameters the caller passes itself (the context, the filtered value, `self`).
    pub hidden: usize,
    /// How many leading parameters have no default.
    pub required: usize,
    /// How many leading parameters are positional-only.
    pub posonly: usize,
    /// Whether extra positional arguments are collected (`*args`).
    pub varargs: bool,
    /// Whether extra keyword arguments are collected (`**kwargs`).
    pub varkw: bool,
    /// How errors are worded.
    pub style: Style,
}

impl Signature {
    /// Whether a call without arguments binds nothing: a Python function of hidden parameters only
    /// (`test_string(value)`, `do_length(obj)`).
    pub fn takes_only_hidden(&self) -> bool {
        matches!(self.style, Style::Python) && self.params.len() == self.hidden
    }

    /// `def func(params...)` whose first `hidden` parameters the caller passes, the others after
    /// the first `required` ones taking `defaults`.
    pub const fn def(
        func: &'static str,
        params: &'static [&'static str],
        hidden: usize,
        required: usize,
        defaults: &'static [ParamDefault],
    ) -> Self {
        Signature {
            func,
            params,
            defaults,
            hidden,
            required,
            posonly: 0,
            varargs: false,
            varkw: false,
            style: Style::Python,
        }
    }

    /// A C function of exactly one argument, passed by the caller.
    pub const fn one_arg(func: &'static str) -> Self {
        Signature {
            style: Style::OneArg,
            ..Signature::def(func, &[], 1, 1, &[])
        }
    }

    /// A C function of the `operator` module: the value and one more positional argument.
    pub const fn operator(func: &'static str) -> Self {
        Signature {
            style: Style::Operator,
            ..Signature::def(func, &["a", "b"], 1, 2, &[])
        }
    }

    /// A function that checks its arguments itself (`*args, **kwargs`, no error from binding).
    pub const fn own(func: &'static str) -> Self {
        Signature {
            style: Style::Own,
            ..Signature::def(func, &[], 0, 0, &[]).variadic()
        }
    }

    /// The first `n` parameters are positional-only.
    pub const fn posonly(self, n: usize) -> Self {
        Signature { posonly: n, ..self }
    }

    /// The function also takes `*args` and `**kwargs`.
    pub const fn variadic(self) -> Self {
        Signature {
            varargs: true,
            varkw: true,
            ..self
        }
    }

    /// The function also takes `*args`.
    pub const fn star(self) -> Self {
        Signature { varargs: true, ..self }
    }

    /// The parameters as Python declares them, the hidden ones left out
    /// (`width=80, first=False, *args, **kwargs`).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        match self.style {
            Style::OneArg | Style::Own if self.params.is_empty() => {}
            Style::Operator => parts.push("b, /".to_string()),
            _ => {}
        }
        if self.style != Style::Operator {
            for (j, p) in self.params.iter().enumerate().skip(self.hidden) {
                let mut s = p.to_string();
                if let Some(d) = j.checked_sub(self.required).and_then(|i| self.defaults.get(i)) {
                    s.push('=');
                    s.push_str(&d.repr());
                }
                parts.push(s);
                if j + 1 == self.posonly {
                    parts.push("/".to_string());
                }
            }
        }
        if self.varargs {
            parts.push("*args".to_string());
        }
        if self.varkw {
            parts.push("**kwargs".to_string());
        }
        parts.join(", ")
    }
}

/// How many bound parameters [`Bound`] keeps in place; a signature with more puts them on the heap.
const INLINE_ARGS: usize = 4;

/// A slot per bound parameter, in place for the signatures of most built-ins, so binding the
/// arguments of a call such as `x | trim` allocates nothing.
type ArgSlots<'a> = Slots<'a, INLINE_ARGS>;

/// Arguments bound to a [`Signature`].
#[derive(Default, Clone)]
pub struct Bound<'a> {
    /// The parameters after the hidden ones; `None` where the default applies (see [`Bound::take`]).
    args: ArgSlots<'a>,
    /// Extra positional arguments (`*args`).
    pub rest: Vec<Value<'a>>,
    /// Extra keyword arguments (`**kwargs`), in call order.
    pub kwrest: Vec<(&'a str, Value<'a>)>,
}

impl<'a> Bound<'a> {
    /// The first `N` bound parameters, moved out.
    pub fn take<const N: usize>(&mut self) -> [Option<Value<'a>>; N] {
        std::array::from_fn(|i| self.args.get_mut(i).and_then(Option::take))
    }
}

/// `'a'`, `'a' and 'b'`, `'a', 'b', and 'c'`: CPython's list of missing parameter names.
fn name_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

impl<'a> CallArgs<'a> {
    /// Binds to parameter names as Python would for `def f(p0, p1, ...)` where every parameter
    /// has a default; `func` names the callable in error messages.
    pub fn bind<const N: usize>(&self, func: &str, names: [&str; N]) -> Result<[Option<Value<'a>>; N]> {
        let mut out: [Option<Value<'a>>; N] = std::array::from_fn(|_| None);
        self.bind_into(func, &names, &mut out)?;
        Ok(out)
    }

    /// [`CallArgs::bind`] into `out`, a slot for each of `names`.
    pub fn bind_into(&self, func: &str, names: &[&str], out: &mut [Option<Value<'a>>]) -> Result<()> {
        let n = names.len();
        if self.pos.len() > n {
            return Err(err!(
                TypeError,
                "{func}() takes at most {n} positional argument{} ({} given)",
                plural(n),
                self.pos.len()
            ));
        }
        for (slot, v) in out.iter_mut().zip(self.pos.iter()) {
            *slot = Some(v.clone());
        }
        for (k, v) in &self.kw {
            let Some(i) = names.iter().position(|n| n == k) else {
                return Err(err!(TypeError, "{func}() got an unexpected keyword argument '{k}'"));
            };
            if out[i].is_some() {
                return Err(err!(TypeError, "{func}() got multiple values for argument '{k}'"));
            }
            out[i] = Some(v.clone());
        }
        Ok(())
    }

    /// [`bind_sig`](Self::bind_sig), taking the arguments: a signature of hidden parameters and
    /// `*args` called without keywords (`selectattr`, `map`) gets the positional list itself, and
    /// one that reads its arguments as given (`namespace`) both lists.
    #[inline]
    pub fn bind_owned(self, sig: &Signature) -> Result<Bound<'a>> {
        if sig.takes_only_hidden() && sig.varargs && self.kw.is_empty() {
            return Ok(Bound {
                rest: self.pos,
                ..Bound::default()
            });
        }
        if let Style::Own = sig.style {
            return Ok(Bound {
                args: ArgSlots::default(),
                rest: self.pos,
                kwrest: self.kw,
            });
        }
        self.bind_sig(sig)
    }

    /// Binds as CPython binds a call to `sig`, the hidden parameters being passed by the caller:
    /// keywords first (unexpected, positional-only or repeated), then the positional count, then
    /// the missing parameters, each failure with CPython's message.
    pub fn bind_sig(&self, sig: &Signature) -> Result<Bound<'a>> {
        let func = sig.func;
        match sig.style {
            Style::Python => {}
            Style::OneArg => {
                if !self.kw.is_empty() {
                    return Err(err!(TypeError, "{func}() takes no keyword arguments"));
                }
                let given = sig.hidden + self.pos.len();
                if given != 1 {
                    return Err(err!(TypeError, "{func}() takes exactly one argument ({given} given)"));
                }
                return Ok(Bound::default());
            }
            Style::Operator => {
                if !self.kw.is_empty() {
                    return Err(err!(TypeError, "_operator.{func}() takes no keyword arguments"));
                }
                if self.pos.len() != 1 {
                    return Err(err!(
                        TypeError,
                        "{func} expected 2 arguments, got {}",
                        self.pos.len() + 1
                    ));
                }
                let mut args = ArgSlots::empty(self.pos.len());
                for (slot, v) in args.iter_mut().zip(&self.pos) {
                    *slot = Some(v.clone());
                }
                return Ok(Bound {
                    args,
                    ..Bound::default()
                });
            }
            Style::Own => {
                return Ok(Bound {
                    args: ArgSlots::default(),
                    rest: self.pos.clone(),
                    kwrest: self.kw.clone(),
                })
            }
        }
        let total = sig.params.len();
        if sig.takes_only_hidden() && self.pos.is_empty() && self.kw.is_empty() {
            return Ok(Bound::default());
        }
        let given = sig.hidden + self.pos.len();
        // Slots of all parameters: filled by the hidden ones and the positional arguments (and,
        // only when there are keyword arguments, kept in a list).
        let mut filled: Vec<bool> = match self.kw.is_empty() {
            true => Vec::new(),
            false => (0..total).map(|i| i < given).collect(),
        };
        let mut args = ArgSlots::empty(total.saturating_sub(sig.hidden));
        for (i, v) in self.pos.iter().enumerate() {
            if let Some(slot) = args.get_mut(i) {
                *slot = Some(v.clone());
            }
        }
        let mut kwrest = Vec::new();
        for (k, v) in &self.kw {
            let found = sig
                .params
                .iter()
                .skip(sig.posonly)
                .position(|p| p == k)
                .map(|i| i + sig.posonly);
            match found {
                Some(j) => {
                    if filled[j] {
                        return Err(err!(TypeError, "{func}() got multiple values for argument '{k}'"));
                    }
                    filled[j] = true;
                    if let Some(slot) = j.checked_sub(sig.hidden).and_then(|i| args.get_mut(i)) {
                        *slot = Some(v.clone());
                    }
                }
                None if sig.varkw => kwrest.push((*k, v.clone())),
                None => {
                    let posonly: Vec<String> = sig.params[..sig.posonly.min(total)]
                        .iter()
                        .filter(|p| self.kw.iter().any(|(k, _)| k == *p))
                        .map(|p| format!("'{p}'"))
                        .collect();
                    if !posonly.is_empty() {
                        return Err(err!(
                            TypeError,
                            "{func}() got some positional-only arguments passed as keyword arguments: {}",
                            posonly.join(", ")
                        ));
                    }
                    return Err(err!(TypeError, "{func}() got an unexpected keyword argument '{k}'"));
                }
            }
        }
        let mut rest = Vec::new();
        if given > total {
            if !sig.varargs {
                return Err(too_many(func, sig.required, total, given));
            }
            rest = self.pos[total.saturating_sub(sig.hidden)..].to_vec();
        }
        let missing: Vec<String> = sig.params[..sig.required.min(total)]
            .iter()
            .enumerate()
            .filter(|(i, _)| !filled.get(*i).copied().unwrap_or(*i < given))
            .map(|(_, n)| format!("'{n}'"))
            .collect();
        if !missing.is_empty() {
            let n = missing.len();
            return Err(err!(
                TypeError,
                "{func}() missing {n} required positional argument{}: {}",
                plural(n),
                name_list(&missing)
            ));
        }
        for (i, slot) in args.iter_mut().enumerate() {
            if slot.is_none() {
                let j = i + sig.hidden;
                if let Some(d) = j.checked_sub(sig.required).and_then(|k| sig.defaults.get(k)) {
                    *slot = Some(d.value());
                }
            }
        }
        Ok(Bound { args, rest, kwrest })
    }

    /// Fails unless there are no arguments at all.
    pub fn none(&self, func: &str) -> Result<()> {
        if !self.pos.is_empty() || !self.kw.is_empty() {
            let n = self.pos.len() + self.kw.len();
            return Err(err!(TypeError, "{func}() takes no arguments ({n} given)"));
        }
        Ok(())
    }
}

/// CPython's "takes N positional arguments but M were given".
fn too_many(func: &str, least: usize, most: usize, given: usize) -> crate::error::Error {
    let takes = if least == most {
        format!("{most} positional argument{}", plural(most))
    } else {
        format!("from {least} to {most} positional arguments")
    };
    let were = if given == 1 { "was" } else { "were" };
    err!(TypeError, "{func}() takes {takes} but {given} {were} given")
}
