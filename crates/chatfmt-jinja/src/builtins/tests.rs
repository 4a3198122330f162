//! Jinja2's tests (`is defined`, `is string`, ...).

use crate::error::{err, Result};
use crate::eval::{compare, CallArgs, Evaluator};
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

fn one_arg<'a>(name: &str, args: &CallArgs<'a>) -> Result<Value<'a>> {
    let [v] = args.bind(name, ["other"])?;
    v.ok_or_else(|| err!(TypeError, "{name}() missing 1 required positional argument"))
}

/// Tests that take no argument besides the value.
const NO_ARGUMENTS: &[&str] = &[
    "boolean",
    "callable",
    "defined",
    "escaped",
    "false",
    "float",
    "integer",
    "iterable",
    "lower",
    "mapping",
    "none",
    "number",
    "odd",
    "even",
    "sequence",
    "string",
    "true",
    "undefined",
    "upper",
];

/// Runs the test `name` on `x`.
pub fn call_test<'a>(ev: &mut Evaluator<'a>, name: &str, x: &Value<'a>, args: &CallArgs<'a>) -> Result<bool> {
    if (!args.pos.is_empty() || !args.kw.is_empty()) && NO_ARGUMENTS.contains(&name) {
        let given = args.pos.len() + args.kw.len() + 1;
        return Err(err!(
            TypeError,
            "test_{name}() takes 1 positional argument but {given} were given"
        ));
    }
    let cmp = |op: CmpOp, args: &CallArgs<'a>| -> Result<bool> { compare(op, x, &one_arg(name, args)?) };
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
        "odd" => x.binary(BinOp::Mod, &Value::Int(2))?.py_eq(&Value::Int(1)),
        "even" => x.binary(BinOp::Mod, &Value::Int(2))?.py_eq(&Value::Int(0)),
        "divisibleby" => x.binary(BinOp::Mod, &one_arg(name, args)?)?.py_eq(&Value::Int(0)),
        "eq" | "equalto" | "==" => cmp(CmpOp::Eq, args)?,
        "ne" | "!=" => cmp(CmpOp::Ne, args)?,
        "lt" | "lessthan" | "<" => cmp(CmpOp::Lt, args)?,
        "le" | "<=" => cmp(CmpOp::Le, args)?,
        "gt" | "greaterthan" | ">" => cmp(CmpOp::Gt, args)?,
        "ge" | ">=" => cmp(CmpOp::Ge, args)?,
        "in" => cmp(CmpOp::In, args)?,
        "sameas" => {
            let o = one_arg(name, args)?;
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
        "filter" => x.as_str().is_some_and(super::is_filter),
        "test" => x.as_str().is_some_and(super::is_test),
        _ => {
            let _ = ev;
            return Err(err!(TemplateRuntimeError, "No test named '{name}' found."));
        }
    })
}
