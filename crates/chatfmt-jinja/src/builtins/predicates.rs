//! Jinja2's tests, the predicates of `x is name` (`is defined`, `is string`, ...); [`super::table::TESTS`] declares them.

use super::args::Bound;
use crate::ast::{BinOp, CmpOp};
use crate::error::{err, Result};
use crate::value::{compare, Object, Value};

/// The one argument a test takes after the value.
fn other<'a>(mut b: Bound<'a>) -> Result<Value<'a>> {
    let [arg] = b.take();
    arg.ok_or_else(|| err!(TypeError, "missing the argument to compare with"))
}

fn cmp<'a>(x: &Value<'a>, b: Bound<'a>, op: CmpOp) -> Result<bool> {
    compare(op, x, &other(b)?)
}

pub(super) fn defined(x: &Value, _: Bound) -> Result<bool> {
    Ok(!x.is_undefined())
}

pub(super) fn undefined(x: &Value, _: Bound) -> Result<bool> {
    Ok(x.is_undefined())
}

pub(super) fn none(x: &Value, _: Bound) -> Result<bool> {
    Ok(matches!(x, Value::None))
}

pub(super) fn boolean(x: &Value, _: Bound) -> Result<bool> {
    Ok(matches!(x, Value::Bool(_)))
}

pub(super) fn false_(x: &Value, _: Bound) -> Result<bool> {
    Ok(matches!(x, Value::Bool(false)))
}

pub(super) fn true_(x: &Value, _: Bound) -> Result<bool> {
    Ok(matches!(x, Value::Bool(true)))
}

pub(super) fn integer(x: &Value, _: Bound) -> Result<bool> {
    Ok(matches!(x, Value::Int(_) | Value::BigInt(_)))
}

pub(super) fn float(x: &Value, _: Bound) -> Result<bool> {
    Ok(matches!(x, Value::Float(_)))
}

pub(super) fn number(x: &Value, _: Bound) -> Result<bool> {
    Ok(matches!(
        x,
        Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Bool(_)
    ))
}

pub(super) fn string(x: &Value, _: Bound) -> Result<bool> {
    Ok(x.is_str())
}

pub(super) fn mapping(x: &Value, _: Bound) -> Result<bool> {
    Ok(x.is_mapping())
}

pub(super) fn sequence(x: &Value, _: Bound) -> Result<bool> {
    Ok(x.is_undefined()
        || x.is_str()
        || x.is_sequence_like()
        || x.is_mapping()
        || matches!(x, Value::Object(o) if matches!(&**o, Object::Range(..))))
}

pub(super) fn iterable(x: &Value, _: Bound) -> Result<bool> {
    // A generator is iterable even when its body will raise once it runs.
    let generator = matches!(x, Value::Object(o) if matches!(&**o, Object::FailedGenerator(..)));
    Ok(generator || x.iterate().is_ok() || x.is_undefined())
}

pub(super) fn callable(x: &Value, _: Bound) -> Result<bool> {
    Ok(match x {
        Value::Undefined(_) => true,
        Value::Object(o) => !matches!(
            &**o,
            Object::Namespace(_)
                | Object::Range(..)
                | Object::Cycler(..)
                | Object::Group(..)
                | Object::View(..)
                | Object::SelfRef(_)
                | Object::FailedGenerator(..)
        ),
        _ => false,
    })
}

pub(super) fn escaped(x: &Value, _: Bound) -> Result<bool> {
    Ok(matches!(x, Value::Safe(_)))
}

pub(super) fn lower(x: &Value, _: Bound) -> Result<bool> {
    Ok(crate::pystr::islower(&x.to_py_str()))
}

pub(super) fn upper(x: &Value, _: Bound) -> Result<bool> {
    Ok(crate::pystr::isupper(&x.to_py_str()))
}

pub(super) fn odd(x: &Value, _: Bound) -> Result<bool> {
    Ok(x.binary(BinOp::Mod, &Value::Int(2))?.py_eq(&Value::Int(1)))
}

pub(super) fn even(x: &Value, _: Bound) -> Result<bool> {
    Ok(x.binary(BinOp::Mod, &Value::Int(2))?.py_eq(&Value::Int(0)))
}

pub(super) fn divisibleby<'a>(x: &Value<'a>, b: Bound<'a>) -> Result<bool> {
    Ok(x.binary(BinOp::Mod, &other(b)?)?.py_eq(&Value::Int(0)))
}

pub(super) fn eq<'a>(x: &Value<'a>, b: Bound<'a>) -> Result<bool> {
    cmp(x, b, CmpOp::Eq)
}

pub(super) fn ne<'a>(x: &Value<'a>, b: Bound<'a>) -> Result<bool> {
    cmp(x, b, CmpOp::Ne)
}

pub(super) fn lt<'a>(x: &Value<'a>, b: Bound<'a>) -> Result<bool> {
    cmp(x, b, CmpOp::Lt)
}

pub(super) fn le<'a>(x: &Value<'a>, b: Bound<'a>) -> Result<bool> {
    cmp(x, b, CmpOp::Le)
}

pub(super) fn gt<'a>(x: &Value<'a>, b: Bound<'a>) -> Result<bool> {
    cmp(x, b, CmpOp::Gt)
}

pub(super) fn ge<'a>(x: &Value<'a>, b: Bound<'a>) -> Result<bool> {
    cmp(x, b, CmpOp::Ge)
}

pub(super) fn in_<'a>(x: &Value<'a>, b: Bound<'a>) -> Result<bool> {
    cmp(x, b, CmpOp::In)
}

pub(super) fn sameas<'a>(x: &Value<'a>, b: Bound<'a>) -> Result<bool> {
    let o = other(b)?;
    Ok(match (x, &o) {
        (Value::None, Value::None) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Int(a), Value::Int(b)) => a == b && (-5..=256).contains(a),
        (a, b) if a.is_str() && b.is_str() => a.as_str() == b.as_str(),
        (Value::Object(a), Value::Object(b)) => std::rc::Rc::ptr_eq(a, b),
        (Value::List(a), Value::List(b)) | (Value::Tuple(a), Value::Tuple(b)) => std::rc::Rc::ptr_eq(a, b),
        (Value::Iter(a), Value::Iter(b)) => std::rc::Rc::ptr_eq(a, b),
        (Value::Dict(a), Value::Dict(b)) => std::rc::Rc::ptr_eq(a, b),
        (Value::BigInt(a), Value::BigInt(b)) => std::rc::Rc::ptr_eq(a, b),
        (Value::Json(a), Value::Json(b)) => std::ptr::eq(*a, *b),
        _ => false,
    })
}

pub(super) fn filter(x: &Value, _: Bound) -> Result<bool> {
    crate::value::check_hashable(x)?;
    Ok(x.as_str().and_then(super::table::filter_index).is_some())
}

pub(super) fn test(x: &Value, _: Bound) -> Result<bool> {
    crate::value::check_hashable(x)?;
    Ok(x.as_str().and_then(super::table::test_index).is_some())
}
