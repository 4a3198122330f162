//! A fixed number of optional values, kept in place when there are few of them.

use super::Value;

/// `n` slots of optional values: in place for up to `N`, on the heap for more, so the slots of
/// most calls and scopes allocate nothing.
#[derive(Clone)]
pub(crate) enum Slots<'a, const N: usize> {
    Inline(usize, [Option<Value<'a>>; N]),
    Heap(Vec<Option<Value<'a>>>),
}

impl<'a, const N: usize> Slots<'a, N> {
    /// `n` empty slots.
    #[inline(always)]
    pub(crate) fn empty(n: usize) -> Self {
        match n <= N {
            true => Slots::Inline(n, std::array::from_fn(|_| None)),
            false => Slots::Heap(vec![None; n]),
        }
    }

    /// Makes these `n` empty slots (a heap list keeps its capacity).
    pub(crate) fn reset(&mut self, n: usize) {
        match self {
            Slots::Heap(slots) if n > N => {
                slots.clear();
                slots.resize(n, None);
            }
            _ => *self = Slots::empty(n),
        }
    }
}

impl<const N: usize> Default for Slots<'_, N> {
    fn default() -> Self {
        Slots::empty(0)
    }
}

impl<'a, const N: usize> std::ops::Deref for Slots<'a, N> {
    type Target = [Option<Value<'a>>];
    fn deref(&self) -> &Self::Target {
        match self {
            Slots::Inline(n, slots) => &slots[..*n],
            Slots::Heap(slots) => slots,
        }
    }
}

impl<const N: usize> std::ops::DerefMut for Slots<'_, N> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            Slots::Inline(n, slots) => &mut slots[..*n],
            Slots::Heap(slots) => slots,
        }
    }
}
