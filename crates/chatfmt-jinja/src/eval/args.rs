//! Evaluated call arguments and Python-style binding to a signature.

use crate::error::{err, Result};
use crate::value::Value;

/// Positional and keyword arguments of a call, evaluated.
#[derive(Default, Clone)]
pub struct CallArgs<'a> {
    pub pos: Vec<Value<'a>>,
    pub kw: Vec<(&'a str, Value<'a>)>,
}

impl<'a> CallArgs<'a> {
    /// Binds to parameter names as Python would for `def f(p0, p1, ...)` where every parameter
    /// has a default; `func` names the callable in error messages.
    pub fn bind<const N: usize>(&self, func: &str, names: [&str; N]) -> Result<[Option<Value<'a>>; N]> {
        if self.pos.len() > N {
            return Err(err!(
                TypeError,
                "{func}() takes at most {N} positional argument{} ({} given)",
                if N == 1 { "" } else { "s" },
                self.pos.len()
            ));
        }
        let mut out: [Option<Value<'a>>; N] = std::array::from_fn(|_| None);
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
        Ok(out)
    }

    /// Binds as CPython binds a call to a function written in Python, `def func(h0, .., p0, p1, ..)`,
    /// whose first `hidden` parameters (the context, the filtered value) are passed by the caller and
    /// whose first `required` of `names` have no default; the errors carry CPython's messages.
    pub fn bind_def<const N: usize>(
        &self,
        func: &str,
        hidden: usize,
        names: [&str; N],
        required: usize,
    ) -> Result<[Option<Value<'a>>; N]> {
        if self.pos.len() > N {
            let (least, most) = (hidden + required, hidden + N);
            let takes = if least == most {
                format!("{most} positional argument{}", if most == 1 { "" } else { "s" })
            } else {
                format!("from {least} to {most} positional arguments")
            };
            let given = hidden + self.pos.len();
            let were = if given == 1 { "was" } else { "were" };
            return Err(err!(TypeError, "{func}() takes {takes} but {given} {were} given"));
        }
        let out = self.bind(func, names)?;
        let missing: Vec<String> = names
            .iter()
            .zip(out.iter())
            .take(required)
            .filter(|(_, v)| v.is_none())
            .map(|(n, _)| format!("'{n}'"))
            .collect();
        if !missing.is_empty() {
            let list = match missing.as_slice() {
                [one] => one.clone(),
                [a, b] => format!("{a} and {b}"),
                [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
                [] => String::new(),
            };
            let n = missing.len();
            return Err(err!(
                TypeError,
                "{func}() missing {n} required positional argument{}: {list}",
                if n == 1 { "" } else { "s" }
            ));
        }
        Ok(out)
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
