//! Jinja2's tests (`is defined`, `is string`, ...).

use crate::error::{err, Result};
use crate::eval::{compare, CallArgs, Evaluator};
use crate::syntax::ast::CmpOp;
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

fn one_arg<'a>(name: &str, args: &CallArgs<'a>) -> Result<Value<'a>> {
    let [v] = args.bind(name, ["other"])?;
    v.ok_or_else(|| err!(TypeError, "{name}() missing 1 required positional argument"))
}

fn int_of(v: &Value) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(*b as i64),
        Value::Undefined(_) => Err(v.undefined_error()),
        _ => Err(err!(TypeError, "not all arguments converted during string formatting")),
    }
}

/// Runs the test `name` on `x`.
pub fn call_test<'a>(ev: &mut Evaluator<'a>, name: &str, x: &Value<'a>, args: CallArgs<'a>) -> Result<bool> {
    let cmp = |op: CmpOp, args: &CallArgs<'a>| -> Result<bool> { compare(op, x, &one_arg(name, args)?) };
    Ok(match name {
        "defined" => !x.is_undefined(),
        "undefined" => x.is_undefined(),
        "none" => matches!(x, Value::None),
        "boolean" => matches!(x, Value::Bool(_)),
        "false" => matches!(x, Value::Bool(false)),
        "true" => matches!(x, Value::Bool(true)),
        "integer" => matches!(x, Value::Int(_)),
        "float" => matches!(x, Value::Float(_)),
        "number" => matches!(x, Value::Int(_) | Value::Float(_) | Value::Bool(_)),
        "string" => x.is_str(),
        "mapping" => x.is_mapping(),
        "sequence" => {
            x.is_str()
                || x.is_sequence_like()
                || x.is_mapping()
                || matches!(x, Value::Object(o) if matches!(&**o, Object::Range(..)))
        }
        "iterable" => x.iterate().is_ok() || x.is_undefined(),
        "callable" => match x {
            Value::Undefined(_) => true,
            Value::Object(o) => !matches!(&**o, Object::Namespace(_) | Object::Range(..)),
            _ => false,
        },
        "escaped" => matches!(x, Value::Safe(_)),
        "lower" => {
            let s = x.to_py_str();
            s.chars().any(|c| c.is_lowercase()) && !s.chars().any(|c| c.is_uppercase())
        }
        "upper" => {
            let s = x.to_py_str();
            s.chars().any(|c| c.is_uppercase()) && !s.chars().any(|c| c.is_lowercase())
        }
        "odd" => int_of(x)?.rem_euclid(2) == 1,
        "even" => int_of(x)?.rem_euclid(2) == 0,
        "divisibleby" => {
            let n = int_of(&one_arg(name, &args)?)?;
            if n == 0 {
                return Err(err!(ZeroDivisionError, "integer division or modulo by zero"));
            }
            int_of(x)?.rem_euclid(n) == 0
        }
        "eq" | "equalto" | "==" => cmp(CmpOp::Eq, &args)?,
        "ne" | "!=" => cmp(CmpOp::Ne, &args)?,
        "lt" | "lessthan" | "<" => cmp(CmpOp::Lt, &args)?,
        "le" | "<=" => cmp(CmpOp::Le, &args)?,
        "gt" | "greaterthan" | ">" => cmp(CmpOp::Gt, &args)?,
        "ge" | ">=" => cmp(CmpOp::Ge, &args)?,
        "in" => cmp(CmpOp::In, &args)?,
        "sameas" => {
            let o = one_arg(name, &args)?;
            match (x, &o) {
                (Value::None, Value::None) => true,
                (Value::Bool(a), Value::Bool(b)) => a == b,
                (Value::Int(a), Value::Int(b)) => a == b && (-5..=256).contains(a),
                (Value::Object(a), Value::Object(b)) => std::rc::Rc::ptr_eq(a, b),
                (Value::List(a), Value::List(b)) => std::rc::Rc::ptr_eq(a, b),
                (Value::Json(a), Value::Json(b)) => std::ptr::eq(*a, *b),
                _ => false,
            }
        }
        "filter" => x.as_str().is_some_and(super::is_filter),
        "test" => x.as_str().is_some_and(super::is_test),
        _ => {
            let _ = ev;
            return Err(err!(TemplateRuntimeError, "No test named '{name}' found."));
        }
    })
}
