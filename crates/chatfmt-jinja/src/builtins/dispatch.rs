//! A method call: the entry of [`super::table`] for the receiver's type and the name, its
//! arguments bound by its signature, its body run (or refused, when it mutates its receiver).

use super::args::CallArgs;
use super::entry::{Body, Method, MethodCall};
use super::{method_sig, table};
use crate::error::{err, Error, Result};
use crate::value::Value;

/// Whether `obj` has a Python method called `name`.
pub fn has_method(obj: &Value, name: &str) -> bool {
    table::method(obj, name).is_some()
}

/// Whether `name` is a method of `dict` (so `d.name` is the method, not the item).
pub fn is_dict_method(name: &str) -> bool {
    table::dict_method(name).is_some()
}

/// Whether `name` is a method that mutates its receiver (none is a `str` method, so a call of
/// such a name fails on any value that has it).
pub(crate) fn is_mutator_name(name: &str) -> bool {
    table::METHODS
        .iter()
        .any(|t| t.iter().any(|m| m.name == name && m.mutates()))
}

/// Calls the method `name` of `recv`.
pub fn call_method<'a>(recv: &Value<'a>, name: &str, args: CallArgs<'a>) -> Result<Value<'a>> {
    match table::method(recv, name) {
        Some(m) => call(m, recv, args),
        None => Err(err!(
            AttributeError,
            "'{}' object has no attribute '{name}'",
            recv.type_name()
        )),
    }
}

/// Calls the method `m` of `recv`: refused when it mutates its receiver, else its arguments bound
/// by its signature and its body run.
pub fn call<'a>(m: &'static Method, recv: &Value<'a>, args: CallArgs<'a>) -> Result<Value<'a>> {
    let Body::Runs(run) = m.body else {
        return Err(unsafe_access(recv, m.name));
    };
    let bound = method_sig::bind(m.sig, recv, m.name, &args)?;
    if m.scans {
        crate::limits::charge_bytes(recv.as_str().map_or(0, str::len))?;
    }
    run(
        recv,
        MethodCall {
            method: m,
            args: bound,
            given: args,
        },
    )
}

/// The sandbox's refusal of the attribute `name` of `obj`.
fn unsafe_access(obj: &Value, name: &str) -> Error {
    err!(
        SecurityError,
        "access to attribute '{name}' of '{}' object is unsafe.",
        obj.type_name()
    )
}
