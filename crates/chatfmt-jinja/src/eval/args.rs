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

    /// Fails unless there are no arguments at all.
    pub fn none(&self, func: &str) -> Result<()> {
        if !self.pos.is_empty() || !self.kw.is_empty() {
            let n = self.pos.len() + self.kw.len();
            return Err(err!(TypeError, "{func}() takes no arguments ({n} given)"));
        }
        Ok(())
    }
}
