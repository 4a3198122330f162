//! Jinja2's built-in filters, tests and globals, the Python methods templates call, and the
//! sandboxed attribute and item lookup.

pub(crate) mod args;
pub(crate) mod dispatch;
pub(crate) mod doc;
pub(crate) mod entry;
pub(crate) mod filters;
pub(crate) mod format;
pub(crate) mod globals;
pub(crate) mod json;
pub(crate) mod method_sig;
pub(crate) mod methods;
pub(crate) mod num_methods;
pub(crate) mod predicates;
pub(crate) mod table;
mod urlize;

use crate::context::Clock;
use crate::error::{err, ErrorKind, Result};
use crate::value::{Object, UndefInfo, Value};
use args::CallArgs;
use entry::{Builtin, FilterFn, TestFn};
use serde_json::Value as Json;
use std::rc::Rc;

/// Whether `name` is a filter of the environment.
pub fn is_filter(name: &str) -> bool {
    table::filter_index(name).is_some()
}

/// Whether `name` is a test of the environment.
pub fn is_test(name: &str) -> bool {
    table::test_index(name).is_some()
}

/// Whether `name` is a global function of the environment.
pub fn is_global(name: &str) -> bool {
    table::global(name).is_some()
}

/// Applies the filter `f` to `v`, its arguments bound as Python binds them to Jinja2's function.
pub fn call_filter<'a>(f: &Builtin<FilterFn>, v: Value<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
    let b = args.bind_owned(&f.sig)?;
    if !f.lazy {
        return (f.run)(v, b);
    }
    // A generator's repr names the function Jinja2 runs it in.
    let function = match f.sig.func {
        "sync_do_select" | "sync_do_reject" | "sync_do_selectattr" | "sync_do_rejectattr" => "select_or_reject",
        func => func,
    };
    match (f.run)(v, b) {
        Ok(Value::Iter(mut g)) => {
            if let Some(g) = Rc::get_mut(&mut g) {
                g.set_function(function);
            }
            Ok(Value::Iter(g))
        }
        // Jinja2's generator filters raise only once iterated; limits stop the render at once.
        Err(e) if e.kind() != ErrorKind::LimitExceeded => {
            Ok(Value::Object(Rc::new(Object::FailedGenerator(e, function))))
        }
        result => result,
    }
}

/// Runs the test `t` on `x`.
pub fn call_test<'a>(t: &Builtin<TestFn>, x: &Value<'a>, args: &CallArgs<'a>) -> Result<bool> {
    (t.run)(x, args.bind_sig(&t.sig)?)
}

/// Calls the global function `name`.
pub fn call_global<'a>(clock: &Clock, name: &str, args: CallArgs<'a>) -> Result<Value<'a>> {
    let Some(g) = table::global(name) else {
        return Err(err!(TypeError, "'{name}' is not callable"));
    };
    (g.run)(clock, args.bind_owned(&g.sig)?)
}

/// Charges a call of a filter, method or function [`crate::limits::CALL_STEPS`], and checks a
/// string it returned against the value limit (filters that grow strings by a bounded factor, such
/// as `upper` or `indent`, are checked here) and charges it by its size, so a chain of filters
/// over huge strings runs out of steps.
pub fn charge_result(v: &Value) -> Result<()> {
    if let Value::String(s) | Value::Safe(s) = v {
        crate::limits::check_value_size(s.len())?;
        crate::limits::charge_bytes(s.len())?;
    }
    crate::limits::charge(crate::limits::CALL_STEPS)
}

fn is_dunder(name: &str) -> bool {
    name.starts_with("__") && name.ends_with("__") && name.len() > 4
}

/// The attributes every Python object has (CPython 3.11's `dir(object)`).
const OBJECT_PRIVATE: &[&str] = &[
    "__class__",
    "__delattr__",
    "__dir__",
    "__doc__",
    "__eq__",
    "__format__",
    "__ge__",
    "__getattribute__",
    "__getstate__",
    "__gt__",
    "__hash__",
    "__init__",
    "__init_subclass__",
    "__le__",
    "__lt__",
    "__ne__",
    "__new__",
    "__reduce__",
    "__reduce_ex__",
    "__repr__",
    "__setattr__",
    "__sizeof__",
    "__str__",
    "__subclasshook__",
];

/// What a `dict` adds to [`OBJECT_PRIVATE`].
const DICT_PRIVATE: &[&str] = &[
    "__class_getitem__",
    "__contains__",
    "__delitem__",
    "__getitem__",
    "__ior__",
    "__iter__",
    "__len__",
    "__or__",
    "__reversed__",
    "__ror__",
    "__setitem__",
];

/// What Jinja2's `Undefined` adds to [`OBJECT_PRIVATE`] (all its attributes start with `_`).
const UNDEFINED_PRIVATE: &[&str] = &[
    "__add__",
    "__aiter__",
    "__bool__",
    "__call__",
    "__complex__",
    "__div__",
    "__float__",
    "__floordiv__",
    "__getattr__",
    "__getitem__",
    "__int__",
    "__iter__",
    "__len__",
    "__mod__",
    "__module__",
    "__mul__",
    "__neg__",
    "__pos__",
    "__pow__",
    "__radd__",
    "__rdiv__",
    "__rfloordiv__",
    "__rmod__",
    "__rmul__",
    "__rpow__",
    "__rsub__",
    "__rtruediv__",
    "__slots__",
    "__sub__",
    "__truediv__",
    "_fail_with_undefined_error",
    "_undefined_exception",
    "_undefined_hint",
    "_undefined_message",
    "_undefined_name",
    "_undefined_obj",
];

/// What `int` and `bool` add to [`OBJECT_PRIVATE`] (CPython 3.11's `dir(int)`), space-separated.
const INT_PRIVATE: &str = "__abs__ __add__ __and__ __bool__ __ceil__ __divmod__ __float__ __floor__ \
    __floordiv__ __getnewargs__ __index__ __int__ __invert__ __lshift__ __mod__ __mul__ __neg__ __or__ __pos__ \
    __pow__ __radd__ __rand__ __rdivmod__ __rfloordiv__ __rlshift__ __rmod__ __rmul__ __ror__ __round__ __rpow__ \
    __rrshift__ __rshift__ __rsub__ __rtruediv__ __rxor__ __sub__ __truediv__ __trunc__ __xor__";

/// What `float` adds to [`OBJECT_PRIVATE`], space-separated.
const FLOAT_PRIVATE: &str = "__abs__ __add__ __bool__ __ceil__ __divmod__ __float__ __floor__ __floordiv__ \
    __getformat__ __getnewargs__ __int__ __mod__ __mul__ __neg__ __pos__ __pow__ __radd__ __rdivmod__ \
    __rfloordiv__ __rmod__ __rmul__ __round__ __rpow__ __rsub__ __rtruediv__ __sub__ __truediv__ __trunc__";

/// What `str` adds to [`OBJECT_PRIVATE`], space-separated.
const STR_PRIVATE: &str =
    "__add__ __contains__ __getitem__ __getnewargs__ __iter__ __len__ __mod__ __mul__ __rmod__ __rmul__";

/// What `list` adds to [`OBJECT_PRIVATE`], space-separated.
const LIST_PRIVATE: &str = "__add__ __class_getitem__ __contains__ __delitem__ __getitem__ __iadd__ __imul__ \
    __iter__ __len__ __mul__ __reversed__ __rmul__ __setitem__";

/// What `tuple` adds to [`OBJECT_PRIVATE`], space-separated.
const TUPLE_PRIVATE: &str =
    "__add__ __class_getitem__ __contains__ __getitem__ __getnewargs__ __iter__ __len__ __mul__ __rmul__";

/// What Markupsafe's `Markup` adds to [`OBJECT_PRIVATE`], space-separated.
const MARKUP_PRIVATE: &str = "__add__ __contains__ __getitem__ __getnewargs__ __html__ __html_format__ __iter__ \
    __len__ __mod__ __module__ __mul__ __radd__ __rmod__ __rmul__ __slots__";

/// What Jinja2's `LoopContext` (an instance) adds to [`OBJECT_PRIVATE`], space-separated.
const LOOP_PRIVATE: &str = "__annotations__ __call__ __dict__ __iter__ __len__ __module__ __next__ __weakref__ \
    _after _before _current _iterable _iterator _last_changed_value _length _peek_next _recurse _to_iterator \
    _undefined";

/// What Jinja2's `Macro` (an instance) adds to [`OBJECT_PRIVATE`], space-separated.
const MACRO_PRIVATE: &str = "__call__ __dict__ __module__ __weakref__ _argument_count _async_invoke \
    _default_autoescape _environment _func _invoke";

/// What the dict views `dict_keys` and `dict_items` add to [`OBJECT_PRIVATE`], space-separated.
const SET_VIEW_PRIVATE: &str =
    "__and__ __contains__ __iter__ __len__ __or__ __rand__ __reversed__ __ror__ __rsub__ __rxor__ __sub__ __xor__";

/// What `bytes` adds to [`OBJECT_PRIVATE`], space-separated.
const BYTES_PRIVATE: &str =
    "__add__ __bytes__ __contains__ __getitem__ __getnewargs__ __iter__ __len__ __mod__ __mul__ __rmod__ __rmul__";

/// What a generator adds to [`OBJECT_PRIVATE`], space-separated.
const GENERATOR_PRIVATE: &str = "__del__ __iter__ __name__ __next__ __qualname__";

/// What an iterator of `reversed()` adds to [`OBJECT_PRIVATE`], space-separated.
const REVERSED_PRIVATE: &str = "__iter__ __length_hint__ __next__ __setstate__";

/// Whether Python's `getattr(obj, name)` finds an attribute for a `name` starting with `_`, which
/// the sandbox then refuses as unsafe (a name it does not find reads the item, else is undefined).
/// Exact for data, `Markup`, iterators, namespaces, loops, macros, cyclers, joiners, ranges, dict
/// views and bytes (CPython 3.11, Jinja2 3.1.6); functions, methods and template references are
/// taken to have every dunder.
fn has_private_attr(obj: &Value, name: &str) -> bool {
    let own = |names: &str| OBJECT_PRIVATE.contains(&name) || names.split_whitespace().any(|n| n == name);
    match obj {
        Value::Json(Json::Object(_)) | Value::Dict(_) => OBJECT_PRIVATE.contains(&name) || DICT_PRIVATE.contains(&name),
        Value::Undefined(_) => OBJECT_PRIVATE.contains(&name) || UNDEFINED_PRIVATE.contains(&name),
        Value::Int(_) | Value::BigInt(_) | Value::Bool(_) | Value::Json(Json::Bool(_)) => own(INT_PRIVATE),
        Value::Json(Json::Number(n)) if n.is_f64() => own(FLOAT_PRIVATE),
        Value::Json(Json::Number(_)) => own(INT_PRIVATE),
        Value::Float(_) => own(FLOAT_PRIVATE),
        Value::None | Value::Json(Json::Null) => own("__bool__"),
        Value::Str(_) | Value::String(_) | Value::Json(Json::String(_)) => own(STR_PRIVATE),
        Value::List(_) | Value::Json(Json::Array(_)) => own(LIST_PRIVATE),
        Value::Tuple(_) => own(TUPLE_PRIVATE),
        Value::Safe(_) => own(MARKUP_PRIVATE),
        Value::Iter(g) => match g.kind() {
            "generator" => own(GENERATOR_PRIVATE),
            "dict_reversekeyiterator" | "dict_reversevalueiterator" | "dict_reverseitemiterator" => {
                own("__iter__ __length_hint__ __next__")
            }
            _ => own(REVERSED_PRIVATE),
        },
        Value::Object(o) => match &**o {
            // transformers' namespace answers only these two; its values never start with `_`.
            Object::Namespace(_) => matches!(name, "__class__" | "_Namespace__attrs"),
            Object::Loop(_) => own(LOOP_PRIVATE),
            Object::Macro(_) => own(MACRO_PRIVATE),
            Object::Cycler(..) => own("__dict__ __module__ __next__ __weakref__"),
            Object::Joiner(..) => own("__call__ __dict__ __module__ __weakref__"),
            Object::Range(..) => own("__bool__ __contains__ __getitem__ __iter__ __len__ __reversed__"),
            Object::FailedGenerator(..) => own(GENERATOR_PRIVATE),
            Object::View("dict_values", ..) => own("__iter__ __len__ __reversed__"),
            Object::View(..) => own(SET_VIEW_PRIVATE),
            Object::Bytes(_) => own(BYTES_PRIVATE),
            _ => is_dunder(name),
        },
    }
}

/// `obj.name` in the sandbox: Python attribute first, then the item, then undefined.
pub fn getattr<'a>(obj: &Value<'a>, name: &'a str) -> Result<Value<'a>> {
    if obj.is_undefined() {
        // `Undefined.__class__` exists (and is refused as unsafe); any other name raises.
        if has_private_attr(obj, name) {
            return Ok(UndefInfo::unsafe_attr(name, obj));
        }
        return Err(obj.undefined_error());
    }
    if name.starts_with('_') {
        if has_private_attr(obj, name) {
            return Ok(UndefInfo::unsafe_attr(name, obj));
        }
        return Ok(obj
            .get_item_opt(&Value::Str(name))
            .unwrap_or_else(|| Value::missing_member(obj, Value::Str(name))));
    }
    if let Some(v) = attribute(obj, name) {
        return Ok(v);
    }
    Ok(obj
        .get_item_opt(&Value::Str(name))
        .unwrap_or_else(|| Value::missing_member(obj, Value::Str(name))))
}

/// `obj.name` for a name that does not live as long as the render (format-string fields):
/// data attributes and items; a method is not bound (it reads as undefined).
pub fn getattr_transient<'a>(obj: &Value<'a>, name: &str) -> Result<Value<'a>> {
    if obj.is_undefined() {
        return Err(obj.undefined_error());
    }
    let key = Value::string(name);
    if is_dunder(name) {
        return Ok(UndefInfo::unsafe_attr(name, obj));
    }
    if dispatch::has_method(obj, name) && !name.starts_with('_') {
        return Ok(Value::missing_member(obj, key));
    }
    if let Some(v) = python_attribute(obj, name) {
        return Ok(v);
    }
    Ok(obj
        .get_item_opt(&key)
        .unwrap_or_else(|| Value::missing_member(obj, key)))
}

/// `obj[key]` in the sandbox: the item first, then (for string keys) the Python attribute.
pub fn getitem<'a>(obj: &Value<'a>, key: &Value<'a>) -> Result<Value<'a>> {
    if obj.is_undefined() {
        return Err(obj.undefined_error());
    }
    if let Some(v) = obj.get_item_opt(key) {
        return Ok(v);
    }
    if let Some(name) = key.as_str() {
        if name.starts_with('_') && has_private_attr(obj, name) {
            return Ok(UndefInfo::unsafe_attr(name, obj));
        }
        if !name.starts_with('_') {
            if let Value::Str(n) = key {
                if let Some(v) = attribute(obj, n) {
                    return Ok(v);
                }
            }
        }
    }
    Ok(Value::missing_member(obj, key.clone()))
}

/// The Python attribute `name` (any lifetime) of `obj`, without the item fallback (the `attr` filter).
pub fn python_attribute<'a>(obj: &Value<'a>, name: &str) -> Option<Value<'a>> {
    if name.starts_with('_') {
        return has_private_attr(obj, name).then(|| UndefInfo::unsafe_attr(name, obj));
    }
    if let Some(m) = table::method(obj, name) {
        return attribute(obj, m.name);
    }
    let owned: &'static str = match name {
        "real" => "real",
        "imag" => "imag",
        "numerator" => "numerator",
        "denominator" => "denominator",
        "grouper" => "grouper",
        "list" => "list",
        "start" => "start",
        "stop" => "stop",
        "step" => "step",
        "name" => "name",
        _ => match obj {
            Value::Object(o) => match &**o {
                Object::Namespace(d) => return d.borrow().get(&Value::string(name)).cloned(),
                _ => return None,
            },
            _ => return None,
        },
    };
    attribute(obj, owned)
}

/// The Python attribute `name` of `obj` (methods and data attributes), if it has one.
fn attribute<'a>(obj: &Value<'a>, name: &'a str) -> Option<Value<'a>> {
    if let Some(m) = table::method(obj, name) {
        if m.mutates() {
            return Some(UndefInfo::unsafe_attr(name, obj));
        }
        let markup = m.on == entry::Receiver::Markup;
        return Some(Value::Object(Rc::new(Object::Method(obj.clone(), name, markup))));
    }
    match obj {
        Value::Int(i) => match name {
            "real" | "numerator" => Some(Value::Int(*i)),
            "imag" => Some(Value::Int(0)),
            "denominator" => Some(Value::Int(1)),
            _ => None,
        },
        Value::BigInt(_) => match name {
            "real" | "numerator" => Some(obj.clone()),
            "imag" => Some(Value::Int(0)),
            "denominator" => Some(Value::Int(1)),
            _ => None,
        },
        Value::Bool(b) => match name {
            "real" | "numerator" => Some(Value::Int(*b as i64)),
            "imag" => Some(Value::Int(0)),
            "denominator" => Some(Value::Int(1)),
            _ => None,
        },
        Value::Float(f) => match name {
            "real" => Some(Value::Float(*f)),
            "imag" => Some(Value::Float(0.0)),
            _ => None,
        },
        Value::Object(o) => match &**o {
            Object::Namespace(d) => d.borrow().get_str(name).cloned(),
            Object::Loop(l) => globals::loop_attribute(l, name),
            Object::Macro(m) => match name {
                "name" if m.def.anonymous => Some(Value::None),
                "name" => Some(Value::Str(&m.def.name)),
                "arguments" => Some(Value::Tuple(Rc::new(
                    m.def.params.iter().map(|(n, _)| Value::Str(n)).collect(),
                ))),
                "catch_kwargs" => Some(Value::Bool(m.def.uses_kwargs)),
                "catch_varargs" => Some(Value::Bool(m.def.uses_varargs)),
                "caller" => Some(Value::Bool(m.def.uses_caller)),
                _ => None,
            },
            Object::View(_, dict, _) => (name == "mapping").then(|| dict.clone()),
            Object::SelfRef(blocks) => blocks
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, b)| Value::Object(Rc::new(Object::Block(b)))),
            Object::Cycler(items, pos) => match name {
                "current" => items.get(pos.get()).cloned(),
                "items" => Some(Value::Tuple(Rc::new(items.clone()))),
                _ => None,
            },
            Object::Joiner(sep, used) => match name {
                "sep" => Some(sep.clone()),
                "used" => Some(Value::Bool(used.get())),
                _ => None,
            },
            Object::Group(k, l) => match name {
                "grouper" => Some(k.clone()),
                "list" => Some(l.clone()),
                _ => None,
            },
            Object::Range(a, b, s) => match name {
                "start" => Some(Value::from_i128(*a)),
                "stop" => Some(Value::from_i128(*b)),
                "step" => Some(Value::from_i128(*s)),
                _ => None,
            },
            _ => None,
        },
        Value::Json(Json::Object(_)) | Value::Dict(_) => None,
        _ => None,
    }
}
