//! Python's `dict`: an insertion-ordered hash map whose keys hash and compare as Python's do
//! (`1`, `1.0` and `True` are one key; lists and dicts are unhashable).

use super::{Object, Value};
use crate::error::{err, Result};
use indexmap::IndexMap;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

/// A dict key: a hashable value, hashed consistently with [`Value::py_eq`].
#[derive(Clone)]
pub struct Key<'a>(Value<'a>);

impl<'a> Key<'a> {
    /// The key for `v`, or Python's `TypeError` when `v` is unhashable.
    pub fn new(v: Value<'a>) -> Result<Key<'a>> {
        check_hashable(&v)?;
        Ok(Key(v))
    }
}

/// Python's `TypeError` for an unhashable value (lists, dicts, and tuples holding them).
pub fn check_hashable(v: &Value) -> Result<()> {
    match v {
        Value::List(_) | Value::Json(_) | Value::Dict(_) => Err(unhashable(v)),
        Value::Tuple(items) => items.iter().try_for_each(check_hashable),
        Value::Object(o) => match &**o {
            Object::View(kind, ..) if *kind != "dict_values" => Err(unhashable(v)),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

fn unhashable(v: &Value) -> crate::error::Error {
    err!(TypeError, "unhashable type: '{}'", v.type_name())
}

impl PartialEq for Key<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.py_eq(&other.0)
    }
}

impl Eq for Key<'_> {}

impl Hash for Key<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(&self.0, state);
    }
}

/// Hashes what [`Value::py_eq`] compares: numbers by their value as a float (`py_eq` compares
/// mixed numbers so), strings by their text, tuples by their items, other objects by identity.
fn hash_value<H: Hasher>(v: &Value, state: &mut H) {
    match v {
        Value::None => state.write_u8(0),
        Value::Undefined(_) => state.write_u8(1),
        Value::Bool(_) | Value::Int(_) | Value::BigInt(_) | Value::Float(_) => {
            let f = match v {
                Value::Bool(b) => f64::from(u8::from(*b)),
                Value::Int(i) => *i as f64,
                Value::Float(f) => *f,
                Value::BigInt(b) => b.to_string().parse().unwrap_or(f64::NAN),
                _ => f64::NAN,
            };
            state.write_u8(2);
            // `-0.0 == 0.0`: one hash for both.
            state.write_u64(if f == 0.0 { 0 } else { f.to_bits() });
        }
        Value::Str(_) | Value::String(_) | Value::Safe(_) => {
            state.write_u8(3);
            state.write(v.as_str().unwrap_or("").as_bytes());
            state.write_u8(0xff);
        }
        Value::Tuple(items) => {
            state.write_u8(4);
            state.write_usize(items.len());
            for item in items.iter() {
                crate::limits::grow_stack(|| hash_value(item, state));
            }
        }
        Value::Iter(g) => {
            state.write_u8(5);
            state.write_usize(Rc::as_ptr(g) as usize);
        }
        Value::Object(o) => match &**o {
            Object::Range(a, b, s) => {
                let n = super::range_len(*a, *b, *s);
                state.write_u8(6);
                state.write_usize(n);
                if n > 0 {
                    state.write_i128(*a);
                }
                if n > 1 {
                    state.write_i128(*s);
                }
            }
            _ => {
                state.write_u8(7);
                state.write_usize(Rc::as_ptr(o) as usize);
            }
        },
        // Unhashable: a key never holds one.
        Value::List(_) | Value::Json(_) | Value::Dict(_) => state.write_u8(8),
    }
}

/// An insertion-ordered dict with Python key equality and hashing.
#[derive(Default, Clone)]
pub struct Dict<'a> {
    entries: Entries<'a>,
}

/// A dict's entries: a few in a list searched entry by entry (faster than hashing the key:
/// namespaces, messages and keyword arguments are small), more in a hash map.
#[derive(Clone)]
enum Entries<'a> {
    Few(Vec<(Key<'a>, Value<'a>)>),
    Many(IndexMap<Key<'a>, Value<'a>>),
}

impl Default for Entries<'_> {
    fn default() -> Self {
        Entries::Few(Vec::new())
    }
}

/// A borrowed key to look up, without cloning it into a [`Key`].
struct KeyRef<'r, 'a>(&'r Value<'a>);

impl Hash for KeyRef<'_, '_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(self.0, state);
    }
}

impl<'a> indexmap::Equivalent<Key<'a>> for KeyRef<'_, 'a> {
    fn equivalent(&self, key: &Key<'a>) -> bool {
        self.0.py_eq(&key.0)
    }
}

/// The most entries a dict keeps in a list.
const SCAN_LEN: usize = 8;

impl<'a> Dict<'a> {
    /// The value for `key`, if present (an unhashable key is never present).
    pub fn get(&self, key: &Value<'a>) -> Option<&Value<'a>> {
        match &self.entries {
            Entries::Few(list) => list.iter().find(|(k, _)| k.0.py_eq(key)).map(|(_, v)| v),
            Entries::Many(_) if check_hashable(key).is_err() => None,
            Entries::Many(map) => map.get(&KeyRef(key)),
        }
    }

    /// The value for the string key `key`, if present: [`get`](Self::get) for a string, without
    /// comparing it as a general value (namespace attributes are read this way).
    pub fn get_str(&self, key: &'a str) -> Option<&Value<'a>> {
        match &self.entries {
            Entries::Few(list) => list.iter().find(|(k, _)| k.0.as_str() == Some(key)).map(|(_, v)| v),
            Entries::Many(map) => map.get(&KeyRef(&Value::Str(key))),
        }
    }

    /// Whether `key` is present, or Python's `TypeError` when it is unhashable.
    pub fn contains(&self, key: &Value<'a>) -> Result<bool> {
        check_hashable(key)?;
        Ok(self.get(key).is_some())
    }

    /// Sets `key`, keeping the key and the position of an existing equal key as Python does; a
    /// `TypeError` when the key is unhashable.
    pub fn insert(&mut self, key: Value<'a>, value: Value<'a>) -> Result<()> {
        let key = Key::new(key)?;
        match &mut self.entries {
            Entries::Few(list) => match list.iter().position(|(k, _)| *k == key) {
                Some(at) => list[at].1 = value,
                None if list.len() < SCAN_LEN => list.push((key, value)),
                None => {
                    let mut map: IndexMap<Key<'a>, Value<'a>> = std::mem::take(list).into_iter().collect();
                    map.insert(key, value);
                    self.entries = Entries::Many(map);
                }
            },
            Entries::Many(map) => {
                map.insert(key, value);
            }
        }
        Ok(())
    }

    /// [`insert`](Self::insert) of the string key `key` (always hashable), found without comparing
    /// it as a general value: keyword arguments and namespace attributes are set this way.
    pub fn insert_str(&mut self, key: &'a str, value: Value<'a>) {
        match &mut self.entries {
            Entries::Few(list) => match list.iter().position(|(k, _)| k.0.as_str() == Some(key)) {
                Some(at) => list[at].1 = value,
                None if list.len() < SCAN_LEN => list.push((Key(Value::Str(key)), value)),
                None => {
                    let mut map: IndexMap<Key<'a>, Value<'a>> = std::mem::take(list).into_iter().collect();
                    map.insert(Key(Value::Str(key)), value);
                    self.entries = Entries::Many(map);
                }
            },
            Entries::Many(map) => {
                map.insert(Key(Value::Str(key)), value);
            }
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        match &self.entries {
            Entries::Few(list) => list.len(),
            Entries::Many(map) => map.len(),
        }
    }

    /// Whether the dict is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries in insertion order.
    pub fn iter(&self) -> Iter<'_, 'a> {
        match &self.entries {
            Entries::Few(list) => Iter::Few(list.iter()),
            Entries::Many(map) => Iter::Many(map.iter()),
        }
    }

    /// The keys in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = &Value<'a>> {
        self.iter().map(|(k, _)| k)
    }

    /// The values in insertion order.
    pub fn values(&self) -> impl Iterator<Item = &Value<'a>> {
        self.iter().map(|(_, v)| v)
    }
}

/// The entries of a [`Dict`] in insertion order.
pub enum Iter<'r, 'a> {
    /// Of a list.
    Few(std::slice::Iter<'r, (Key<'a>, Value<'a>)>),
    /// Of a hash map.
    Many(indexmap::map::Iter<'r, Key<'a>, Value<'a>>),
}

impl<'r, 'a> Iterator for Iter<'r, 'a> {
    type Item = (&'r Value<'a>, &'r Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Few(entries) => entries.next().map(|(k, v)| (&k.0, v)),
            Iter::Many(entries) => entries.next().map(|(k, v)| (&k.0, v)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Iter::Few(entries) => entries.size_hint(),
            Iter::Many(entries) => entries.size_hint(),
        }
    }
}

/// A set of hashable values (what `unique` and `in` over many items need).
#[derive(Default)]
pub struct Set<'a> {
    set: indexmap::IndexSet<Key<'a>>,
}

impl<'a> Set<'a> {
    /// Adds `v`; whether it was new, or Python's `TypeError` when it is unhashable.
    pub fn insert(&mut self, v: Value<'a>) -> Result<bool> {
        Ok(self.set.insert(Key::new(v)?))
    }
}
