//! Jinja2's tests (`is defined`, `is string`, ...).

use crate::error::{err, Result};
use crate::eval::{compare, CallArgs, Evaluator, Signature};
use crate::syntax::ast::{BinOp, CmpOp};
use crate::value::{Object, Value};

/// The names of the environment's tests.
pub const TESTS: &[&str] = &[
    "boolean",
    "callable",
    "defined",
    "divisibleby",
    "eq",
    "equalto",
    "==",
    "escaped",
    "even",
    "false",
    "filter",
    "float",
    "ge",
    ">=",
    "gt",
    "greaterthan",
    ">",
    "in",
    "integer",
    "iterable",
    "le",
    "<=",
    "lower",
    "lt",
    "lessthan",
    "<",
    "mapping",
    "ne",
    "!=",
    "none",
    "number",
    "odd",
    "sameas",
    "sequence",
    "string",
    "test",
    "true",
    "undefined",
    "upper",
];

/// Binds the arguments of the test `name` as CPython binds them to Jinja2's function behind it: the
/// comparison tests are C functions of `operator` (positional only, two arguments), the others
/// Python functions `test_NAME(value, ...)` (`filter` and `test` also take the environment first).
/// Returns the one argument a test takes after the value, if any.
fn bind_test<'a>(name: &str, args: &CallArgs<'a>) -> Result<Option<Value<'a>>> {
    let operator = match name {
        "eq" | "equalto" | "==" => Some("eq"),
        "ne" | "!=" => Some("ne"),
        "lt" | "lessthan" | "<" => Some("lt"),
        "le" | "<=" => Some("le"),
        "gt" | "greaterthan" | ">" => Some("gt"),
        "ge" | ">=" => Some("ge"),
        _ => None,
    };
    if let Some(op) = operator {
        if !args.kw.is_empty() {
            return Err(err!(TypeError, "_operator.{op}() takes no keyword arguments"));
        }
        if args.pos.len() != 1 {
            return Err(err!(TypeError, "{op} expected 2 arguments, got {}", args.pos.len() + 1));
        }
        return Ok(args.pos.first().cloned());
    }
    const VALUE: &[&str] = &["value"];
    let sig = match name {
        "callable" => Signature::one_arg("callable"),
        "divisibleby" => Signature::def("test_divisibleby", &["value", "num"], 1, 2),
        "in" => Signature::def("test_in", &["value", "seq"], 1, 2),
        "sameas" => Signature::def("test_sameas", &["value", "other"], 1, 2),
        "filter" => Signature::def("test_filter", &["env", "value"], 2, 2),
        "test" => Signature::def("test_test", &["env", "value"], 2, 2),
        _ => match NO_ARGUMENTS.iter().find(|(n, _)| *n == name) {
            Some((_, func)) => Signature::def(func, VALUE, 1, 1),
            None => return Ok(None),
        },
    };
    let mut b = args.bind_sig(&sig)?;
    let [arg] = b.take();
    Ok(arg)
}

/// Tests that take no argument besides the value, with their function names.
const NO_ARGUMENTS: &[(&str, &str)] = &[
    ("boolean", "test_boolean"),
    ("defined", "test_defined"),
    ("escaped", "test_escaped"),
    ("false", "test_false"),
    ("float", "test_float"),
    ("integer", "test_integer"),
    ("iterable", "test_iterable"),
    ("lower", "test_lower"),
    ("mapping", "test_mapping"),
    ("none", "test_none"),
    ("number", "test_number"),
    ("odd", "test_odd"),
    ("even", "test_even"),
    ("sequence", "test_sequence"),
    ("string", "test_string"),
    ("true", "test_true"),
    ("undefined", "test_undefined"),
    ("upper", "test_upper"),
];

/// Runs the test `name` on `x`.
pub fn call_test<'a>(ev: &mut Evaluator<'a>, name: &str, x: &Value<'a>, args: &CallArgs<'a>) -> Result<bool> {
    let arg = bind_test(name, args)?;
    let other = || -> Result<Value<'a>> {
        arg.clone()
            .ok_or_else(|| err!(TypeError, "test_{name}() missing 1 required positional argument"))
    };
    let cmp = |op: CmpOp| -> Result<bool> { compare(op, x, &other()?) };
    Ok(match name {
        "defined" => !x.is_undefined(),
        "undefined" => x.is_undefined(),
        "none" => matches!(x, Value::None),
        "boolean" => matches!(x, Value::Bool(_)),
        "false" => matches!(x, Value::Bool(false)),
        "true" => matches!(x, Value::Bool(true)),
        "integer" => matches!(x, Value::Int(_) | Value::BigInt(_)),
        "float" => matches!(x, Value::Float(_)),
        "number" => matches!(x, Value::Int(_) | Value::BigInt(_) | Value::Float(_) | Value::Bool(_)),
        "string" => x.is_str(),
        "mapping" => x.is_mapping(),
        "sequence" => {
            x.is_undefined()
                || x.is_str()
                || x.is_sequence_like()
                || x.is_mapping()
                || matches!(x, Value::Object(o) if matches!(&**o, Object::Range(..)))
        }
        "iterable" => x.iterate().is_ok() || x.is_undefined(),
        "callable" => match x {
            Value::Undefined(_) => true,
            Value::Object(o) => !matches!(
                &**o,
                Object::Namespace(_)
                    | Object::Range(..)
                    | Object::Cycler(..)
                    | Object::Group(..)
                    | Object::View(..)
                    | Object::SelfRef(_)
            ),
            _ => false,
        },
        "escaped" => matches!(x, Value::Safe(_)),
        "lower" => crate::pystr::islower(&x.to_py_str()),
        "upper" => crate::pystr::isupper(&x.to_py_str()),
        "odd" => x.binary(BinOp::Mod, &Value::Int(2))?.py_eq(&Value::Int(1)),
        "even" => x.binary(BinOp::Mod, &Value::Int(2))?.py_eq(&Value::Int(0)),
        "divisibleby" => x.binary(BinOp::Mod, &other()?)?.py_eq(&Value::Int(0)),
        "eq" | "equalto" | "==" => cmp(CmpOp::Eq)?,
        "ne" | "!=" => cmp(CmpOp::Ne)?,
        "lt" | "lessthan" | "<" => cmp(CmpOp::Lt)?,
        "le" | "<=" => cmp(CmpOp::Le)?,
        "gt" | "greaterthan" | ">" => cmp(CmpOp::Gt)?,
        "ge" | ">=" => cmp(CmpOp::Ge)?,
        "in" => cmp(CmpOp::In)?,
        "sameas" => {
            let o = other()?;
            match (x, &o) {
                (Value::None, Value::None) => true,
                (Value::Bool(a), Value::Bool(b)) => a == b,
                (Value::Int(a), Value::Int(b)) => a == b && (-5..=256).contains(a),
                (a, b) if a.is_str() && b.is_str() => a.as_str() == b.as_str(),
                (Value::Object(a), Value::Object(b)) => std::rc::Rc::ptr_eq(a, b),
                (Value::List(a), Value::List(b)) => std::rc::Rc::ptr_eq(a, b),
                (Value::Json(a), Value::Json(b)) => std::ptr::eq(*a, *b),
                _ => false,
            }
        }
        "filter" | "test" => {
            super::filters::check_hashable(x)?;
            let known = if name == "filter" {
                super::is_filter
            } else {
                super::is_test
            };
            x.as_str().is_some_and(known)
        }
        _ => {
            let _ = ev;
            return Err(err!(TemplateRuntimeError, "No test named '{name}' found."));
        }
    })
}
