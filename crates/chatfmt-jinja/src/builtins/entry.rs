//! The shape of the built-ins' tables: what an entry of [`super::table`] holds, what a filter, test,
//! global or method body receives, and the argument errors method bodies share (CPython's own
//! wording).

use super::args::{Bound, CallArgs, Signature as S};
use super::method_sig::{owned, Owner, Sig};
use crate::context::Clock;
use crate::error::{err, Error, Result};
use crate::value::Value;

/// A filter: the filtered value and the bound arguments in, the result out.
pub type FilterFn = for<'a> fn(Value<'a>, Bound<'a>) -> Result<Value<'a>>;
/// A test: the tested value and the bound arguments in, whether it passes out.
pub type TestFn = for<'a> fn(&Value<'a>, Bound<'a>) -> Result<bool>;
/// A global function: the render's clock and the bound arguments in, the result out.
pub type GlobalFn = for<'a> fn(&Clock, Bound<'a>) -> Result<Value<'a>>;

/// One built-in.
pub struct Builtin<F> {
    /// The name templates use.
    pub name: &'static str,
    /// The parameters of the Python function behind it (binding and error messages follow them).
    pub sig: S,
    /// The function.
    pub run: F,
    /// Without side effects, its result depending only on its input and arguments (a filter the
    /// print plan may evaluate again).
    pub pure: bool,
    /// A generator in Jinja2: its arguments bind when called, its body fails only when iterated.
    pub lazy: bool,
    /// A filter whose result holds the items of its input (a list of messages stays messages).
    pub keeps_items: bool,
    /// For a filter that, called without arguments on a string, gives a part of it: that part,
    /// taken without binding arguments or building values (the evaluator's shortcut).
    pub on_str: Option<fn(&str) -> &str>,
    /// A filter giving the number of items of its input (`length`, `count`): called without
    /// arguments on a list or mapping, the evaluator reads the length without binding arguments.
    pub counts: bool,
    /// What it does, in one line.
    pub summary: &'static str,
}

/// A method: the receiver and the call in, the result out.
pub type MethodFn = for<'a> fn(&Value<'a>, MethodCall<'a>) -> Result<Value<'a>>;

/// A call of a method, its arguments bound to the method's parameters.
pub struct MethodCall<'a> {
    /// The method's entry (its name is the one error messages give).
    pub method: &'static Method,
    /// The bound arguments, a slot per parameter (`None` where left out; none for `*args`).
    pub args: Vec<Option<Value<'a>>>,
    /// The arguments as given (what a method taking `*args, **kwargs` reads).
    pub given: CallArgs<'a>,
}

impl<'a> MethodCall<'a> {
    /// The argument bound to parameter `i`, if given.
    pub fn arg(&self, i: usize) -> Option<Value<'a>> {
        self.args.get(i).cloned().flatten()
    }

    /// The method's name.
    pub fn name(&self) -> &'static str {
        self.method.name
    }
}

/// The type whose method an entry is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Receiver {
    /// `str`.
    Str,
    /// MarkupSafe's `Markup`, whose overrides come before the `str` methods.
    Markup,
    /// `list`.
    List,
    /// `dict`.
    Dict,
    /// `tuple`.
    Tuple,
    /// `range`.
    Range,
    /// `int` (and `bool`).
    Int,
    /// `float`.
    Float,
    /// The `dict` global, the type itself.
    DictType,
    /// The `dict_keys` and `dict_items` views.
    DictView,
    /// Jinja2's `loop`.
    Loop,
    /// Jinja2's `cycler(...)`.
    Cycler,
}

impl Receiver {
    /// The type as the documentation names it.
    pub fn title(self) -> &'static str {
        match self {
            Receiver::Str => "`str`",
            Receiver::Markup => "`Markup`",
            Receiver::List => "`list`",
            Receiver::Dict => "`dict`",
            Receiver::Tuple => "`tuple`",
            Receiver::Range => "`range`",
            Receiver::Int => "`int`",
            Receiver::Float => "`float`",
            Receiver::DictType => "the `dict` global (the type)",
            Receiver::DictView => "`dict_keys`, `dict_items`",
            Receiver::Loop => "`loop`",
            Receiver::Cycler => "`cycler(...)`",
        }
    }
}

/// What a method does when called.
#[derive(Clone, Copy)]
pub enum Body {
    /// Runs this function.
    Runs(MethodFn),
    /// Mutates its receiver: declared (so the name is a method) but refused by the immutable
    /// sandbox.
    Mutates,
}

/// One method.
pub struct Method {
    /// The type it belongs to.
    pub on: Receiver,
    /// The name templates call.
    pub name: &'static str,
    /// How it takes its arguments, and the type its messages name.
    pub(crate) sig: Sig,
    /// What it does.
    pub body: Body,
    /// A `str` method that reads the whole string: charged its length before it runs (the others
    /// look at the ends only, or charge as they go).
    pub scans: bool,
    /// What it does, in one line.
    pub summary: &'static str,
}

impl Method {
    /// Whether it mutates its receiver (the sandbox refuses it).
    pub fn mutates(&self) -> bool {
        matches!(self.body, Body::Mutates)
    }

    /// A class or static method: messages name the type `owner`.
    pub(super) const fn of_type(self, owner: &'static str) -> Self {
        Method {
            sig: owned(self.sig.parse, owner),
            ..self
        }
    }

    /// Messages give the bare name.
    pub(super) const fn bare(self) -> Self {
        Method {
            sig: Sig {
                parse: self.sig.parse,
                owner: Owner::Bare,
            },
            ..self
        }
    }

    /// Looks at the ends of the string only, or charges its own work.
    pub(super) const fn ends_only(self) -> Self {
        Method { scans: false, ..self }
    }
}

/// A method body called on a receiver of another type (CPython's descriptor check).
pub(crate) fn wrong_receiver(c: &MethodCall, recv: &Value) -> Error {
    err!(
        TypeError,
        "descriptor '{}' doesn't apply to a '{}' object",
        c.name(),
        recv.type_name()
    )
}

/// The type name CPython's `_PyArg_BadArgument` prints (`None` for `None`).
pub(crate) fn arg_type_name(v: &Value) -> &'static str {
    match v {
        Value::None => "None",
        _ => v.type_name(),
    }
}

/// `func() which must be expected, not T` (`which` is e.g. "argument 2").
pub(crate) fn bad_argument(func: &str, which: &str, expected: &str, v: &Value) -> Error {
    err!(
        TypeError,
        "{func}() {which} must be {expected}, not {}",
        arg_type_name(v)
    )
}

pub(crate) fn not_integer(v: &Value) -> Error {
    err!(
        TypeError,
        "'{}' object cannot be interpreted as an integer",
        v.type_name()
    )
}

/// An integer argument converted to a C `Py_ssize_t` (`__index__`).
pub(crate) fn ssize(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(*b as i64),
        Value::BigInt(_) => Err(err!(OverflowError, "Python int too large to convert to C ssize_t")),
        _ => Err(not_integer(v)),
    }
}
