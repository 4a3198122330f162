//! Sorting with Python's comparison sequence.

use super::PyError;

/// Sorts `items` stably with a fallible `lt` (Python's `<`), the way
/// CPython's `list.sort` does: for fewer than 64 items it makes exactly
/// CPython's comparisons (a natural run, then binary insertion), so the
/// first failing comparison, whose error names the operand types (`'<' not
/// supported between instances of 'str' and 'int'`), is the same one.
/// Longer lists are sorted with the same result, but an error may name a
/// different pair. The first error is returned and the order is then
/// unspecified.
pub fn python_sort<T>(items: &mut [T], lt: impl Fn(&T, &T) -> Result<bool, PyError>) -> Result<(), PyError> {
    let n = items.len();
    if n < 2 {
        return Ok(());
    }
    if n >= 64 {
        return merge_sort(items, &lt);
    }
    // count_run
    let mut run = 2;
    if lt(&items[1], &items[0])? {
        while run < n && lt(&items[run], &items[run - 1])? {
            run += 1;
        }
        items[..run].reverse();
    } else {
        while run < n && !lt(&items[run], &items[run - 1])? {
            run += 1;
        }
    }
    // binarysort of the rest
    for start in run..n {
        let (mut l, mut r) = (0, start);
        while l < r {
            let p = l + (r - l) / 2;
            if lt(&items[start], &items[p])? {
                r = p;
            } else {
                l = p + 1;
            }
        }
        items[l..=start].rotate_right(1);
    }
    Ok(())
}

/// A stable bottom-up merge sort for longer lists: it never panics,
/// whatever `lt` answers (NaN-style inconsistent orders included).
fn merge_sort<T>(items: &mut [T], lt: &impl Fn(&T, &T) -> Result<bool, PyError>) -> Result<(), PyError> {
    let n = items.len();
    let mut src: Vec<usize> = (0..n).collect();
    let mut dst = vec![0; n];
    let mut width = 1;
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut i, mut j, mut k) = (lo, mid, lo);
            while i < mid && j < hi {
                if lt(&items[src[j]], &items[src[i]])? {
                    dst[k] = src[j];
                    j += 1;
                } else {
                    dst[k] = src[i];
                    i += 1;
                }
                k += 1;
            }
            dst[k..k + (mid - i)].copy_from_slice(&src[i..mid]);
            k += mid - i;
            dst[k..k + (hi - j)].copy_from_slice(&src[j..hi]);
            lo = hi;
        }
        std::mem::swap(&mut src, &mut dst);
        width *= 2;
    }
    // Apply the permutation: position k receives the item at src[k].
    let mut done = vec![false; n];
    for start in 0..n {
        let mut j = start;
        while !done[j] {
            done[j] = true;
            let next = src[j];
            if next == start {
                break;
            }
            items.swap(j, next);
            j = next;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    enum V {
        I(i64),
        S(&'static str),
    }

    fn lt(a: &V, b: &V) -> Result<bool, PyError> {
        match (a, b) {
            (V::I(x), V::I(y)) => Ok(x < y),
            (V::S(x), V::S(y)) => Ok(x < y),
            (V::I(_), V::S(_)) => Err(PyError::type_error(
                "'<' not supported between instances of 'int' and 'str'",
            )),
            (V::S(_), V::I(_)) => Err(PyError::type_error(
                "'<' not supported between instances of 'str' and 'int'",
            )),
        }
    }

    #[test]
    fn stable_and_python_ordered() {
        let mut v: Vec<(i64, usize)> = [3, 1, 2, 1, 3, 0].iter().copied().zip(0..).collect();
        python_sort(&mut v, |a, b| Ok(a.0 < b.0)).unwrap_or(());
        assert_eq!(v, [(0, 5), (1, 1), (1, 3), (2, 2), (3, 0), (3, 4)]);
        let mut long: Vec<i64> = (0..200).map(|i| (i * 7919) % 211).collect();
        let mut want = long.clone();
        want.sort();
        python_sort(&mut long, |a, b| Ok(a < b)).unwrap_or(());
        assert_eq!(long, want);
        let mut pairs: Vec<(i64, usize)> = (0..300).map(|i| ((i * 31) % 7, i as usize)).collect();
        python_sort(&mut pairs, |a, b| Ok(a.0 < b.0)).unwrap_or(());
        assert!(pairs
            .windows(2)
            .all(|w| w[0].0 < w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)));
        // An inconsistent order (NaN-like) must not panic.
        let mut nan: Vec<f64> = (0..100).map(|i| if i % 3 == 0 { f64::NAN } else { i as f64 }).collect();
        python_sort(&mut nan, |a, b| Ok(a < b)).unwrap_or(());
        assert_eq!(nan.len(), 100);
        // Descending runs are reversed (strictly descending only, as in CPython).
        let mut d = vec![5, 4, 4, 1];
        python_sort(&mut d, |a, b| Ok(a < b)).unwrap_or(());
        assert_eq!(d, [1, 4, 4, 5]);
    }

    #[test]
    fn first_failing_comparison_is_cpythons() {
        // sorted([1, 'a']) -> 'a' < 1 is tried first.
        let mut v = vec![V::I(1), V::S("a")];
        let e = python_sort(&mut v, lt).map_err(|e| e.message);
        assert_eq!(e, Err("'<' not supported between instances of 'str' and 'int'".into()));
        // sorted(['b', 'a', 2]): run ['b','a'] descending, then 2 < 'b'... 2 < 'a'.
        let mut v = vec![V::S("b"), V::S("a"), V::I(2)];
        let e = python_sort(&mut v, lt).map_err(|e| e.message);
        assert_eq!(e, Err("'<' not supported between instances of 'int' and 'str'".into()));
    }
}
