//! Template values with Python semantics. Context data (JSON) is viewed in place, never copied.

mod dict;
pub(crate) mod ops;
pub(crate) mod percent;

pub(crate) use ops::{compare, ordering_holds, sort_values};
pub(crate) mod repr;
mod slots;

pub(crate) use slots::Slots;

use crate::ast::{ForLoop, MacroDef};
use crate::error::{err, Error, ErrorKind, Result};
use serde_json::Value as Json;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Every ASCII character, so the characters of a computed string need no allocation each.
const ASCII: &str = "\0\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\x7f";

/// A one-character string.
fn char_value<'a>(c: char) -> Value<'a> {
    match ASCII.get(c as usize..c as usize + 1) {
        Some(s) if c.is_ascii() => Value::Str(s),
        _ => Value::string(c.to_string()),
    }
}

/// What the list of a string's characters costs per byte of the string, against the value-size
/// limit: two items, so strings up to half the limit can be iterated character by character (as
/// vision templates do with a message's content when it is a string), and no further.
const CHAR_LIST_COST: usize = 2;

/// Iterating a string builds a list of its characters: that list counts against the value-size
/// limit by its memory, so a huge string cannot be exploded into a far larger list.
fn check_char_list(s: &str) -> Result<()> {
    crate::limits::check_value_size(s.len().saturating_mul(CHAR_LIST_COST))
}

/// `map[key]` for a JSON object. Messages and token maps are small: scanning a few keys is faster
/// than hashing one.
#[inline]
pub fn json_map_get<'j>(map: &'j serde_json::Map<String, Json>, key: &str) -> Option<&'j Json> {
    if map.len() <= 8 {
        map.iter()
            .find_map(|(k, v)| (k.len() == key.len() && short_eq(k.as_bytes(), key.as_bytes())).then_some(v))
    } else {
        map.get(key)
    }
}

/// A value during rendering. `'a` is the lifetime of the template and the render context.
#[derive(Clone)]
pub enum Value<'a> {
    /// Jinja2's `Undefined`, with what it knows about why.
    Undefined(Option<Rc<UndefInfo<'a>>>),
    None,
    Bool(bool),
    Int(i64),
    /// An integer beyond 64 bits (always outside `i64`'s range).
    BigInt(Rc<num_bigint::BigInt>),
    Float(f64),
    /// A string borrowed from the template or the context.
    Str(&'a str),
    /// A string computed during rendering.
    String(Rc<str>),
    /// A `Markup` string (from `|safe`, `|escape`).
    Safe(Rc<str>),
    /// A JSON array or object of the context, viewed in place.
    Json(&'a Json),
    List(Rc<Vec<Value<'a>>>),
    Tuple(Rc<Vec<Value<'a>>>),
    Dict(Rc<Dict<'a>>),
    /// A one-shot iterator (Python generator): iterable once, has no length and prints as a
    /// generator.
    Iter(Rc<Generator<'a>>),
    Object(Rc<Object<'a>>),
}

/// Why a value is undefined; decides the error message when it is used.
pub enum UndefInfo<'a> {
    /// A name that is not defined.
    Name(&'a str),
    /// A missing attribute or key of an object (`'dict object' has no attribute 'x'`).
    Member(&'static str, Value<'a>),
    /// An explicit message, raised as `kind` on use (the sandbox's "unsafe" undefined).
    Hint(String, ErrorKind),
}

pub use dict::{check_hashable, Dict, Set};

/// What a generator filter (`select`, `map`, `items`, ...) or `reverse` gives: its items, computed
/// at once, and how many of them were consumed, since a Python iterator is iterated only once.
pub struct Generator<'a> {
    items: Rc<Vec<Value<'a>>>,
    next: Cell<usize>,
    /// Python's type name of the iterator (`generator`, or what `reversed()` returns).
    kind: &'static str,
    /// A generator's function (`sync_do_map`, `select_or_reject`, ...), which its repr names.
    function: &'static str,
}

impl<'a> Generator<'a> {
    /// The items not consumed yet, consuming them (`list(g)`, `for x in g`).
    pub fn drain(&self) -> Rc<Vec<Value<'a>>> {
        match self.next.replace(self.items.len()) {
            0 => self.items.clone(),
            start => Rc::new(self.items.get(start..).unwrap_or_default().to_vec()),
        }
    }

    /// The next item, consuming it (`next(g)`).
    pub fn next_item(&self) -> Option<Value<'a>> {
        let i = self.next.get();
        let item = self.items.get(i).cloned();
        if item.is_some() {
            self.next.set(i + 1);
        }
        item
    }

    /// The items not consumed yet, left as they are.
    pub fn remaining(&self) -> &[Value<'a>] {
        self.items.get(self.next.get()..).unwrap_or_default()
    }

    /// Python's type name (`generator`, `list_reverseiterator`, ...).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// Names the function a generator runs.
    pub(crate) fn set_function(&mut self, function: &'static str) {
        self.function = function;
    }

    /// The function a generator runs (empty for other iterators).
    pub fn function(&self) -> &'static str {
        self.function
    }
}

/// Objects that are not plain data.
pub enum Object<'a> {
    Namespace(RefCell<Dict<'a>>),
    Macro(MacroValue<'a>),
    Loop(LoopValue<'a>),
    /// A global function (`range`, `dict`, `namespace`, `raise_exception`, ...).
    Function(&'static str),
    /// A method bound to its receiver (`s.strip` before the call); `true` when written in Python
    /// (a `Markup` override, whose repr names the class).
    Method(Value<'a>, &'a str, bool),
    Cycler(Vec<Value<'a>>, Cell<usize>),
    Joiner(Value<'a>, Cell<bool>),
    /// `range(start, stop, step)`, its bounds as wide as Python code can make them here.
    Range(i128, i128, i128),
    /// A `groupby` result: a named tuple `(grouper, list)`.
    Group(Value<'a>, Value<'a>),
    /// The template reference `self`, with the template's blocks.
    SelfRef(Vec<(&'a str, &'a [crate::ast::Stmt])>),
    /// A block of the template, callable as `self.name()`.
    Block(&'a [crate::ast::Stmt]),
    /// A dict view (`dict_items`, `dict_keys`, `dict_values`): its kind, its dict, its items.
    View(&'static str, Value<'a>, Rc<Vec<Value<'a>>>),
    /// A `bytes` value (`str.encode`, `int.to_bytes`).
    Bytes(Vec<u8>),
    /// A generator whose body raised (`select`, `map`, `unique`, ... run lazily in Jinja2): it
    /// prints as a generator and raises the error when iterated.
    FailedGenerator(Error, &'static str),
}

/// A macro (or the `caller` of a call block) bound to where it can find its variables.
pub struct MacroValue<'a> {
    pub def: &'a MacroDef,
    /// The frame whose variables the body sees besides its own (the definition scope).
    pub scope: usize,
}

/// The items a loop runs over: values, or a list of the caller's JSON read in place.
pub enum LoopItems<'a> {
    Values(Rc<Vec<Value<'a>>>),
    Json(&'a [Json]),
    /// The `(key, value)` pairs of a JSON object of the context (`obj | items`).
    Pairs(Rc<JsonPairs<'a>>),
}

/// Pairs of a JSON object iterated in place: the loop binds each key and value as they are; the
/// pairs become tuples only when the `loop` object hands one out (`loop.previtem`), once.
pub struct JsonPairs<'a> {
    pub pairs: Vec<(&'a str, &'a Json)>,
    tuples: std::cell::OnceCell<Vec<Value<'a>>>,
}

impl<'a> JsonPairs<'a> {
    /// The pairs, as a loop over them sees them.
    pub fn new(pairs: Vec<(&'a str, &'a Json)>) -> Self {
        JsonPairs {
            pairs,
            tuples: std::cell::OnceCell::new(),
        }
    }

    /// The pair at `i` as the tuple `items` would have made (the same tuple every time).
    #[inline(never)]
    fn get(&self, i: usize) -> Option<Value<'a>> {
        let tuples = self.tuples.get_or_init(|| {
            self.pairs
                .iter()
                .map(|(k, v)| Value::Tuple(Rc::new(vec![Value::Str(k), Value::from_json(v)])))
                .collect()
        });
        tuples.get(i).cloned()
    }
}

impl<'a> LoopItems<'a> {
    /// How many items there are.
    pub(crate) fn len(&self) -> usize {
        match self {
            LoopItems::Values(v) => v.len(),
            LoopItems::Json(j) => j.len(),
            LoopItems::Pairs(p) => p.pairs.len(),
        }
    }

    /// The item at `i`, if there is one.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<Value<'a>> {
        match self {
            LoopItems::Values(v) => v.get(i).cloned(),
            LoopItems::Json(j) => j.get(i).map(Value::from_json),
            LoopItems::Pairs(p) => p.get(i),
        }
    }
}

/// The `loop` variable of a for loop.
pub struct LoopValue<'a> {
    pub index0: Cell<usize>,
    pub items: LoopItems<'a>,
    pub depth0: usize,
    pub changed_last: RefCell<Option<Vec<Value<'a>>>>,
    /// The loop itself, for recursive loops (`loop(children)`).
    pub recursive: Option<&'a ForLoop>,
    pub scope: usize,
}

impl<'a> Object<'a> {
    fn write_repr(&self, out: &mut String) {
        match self {
            Object::Namespace(d) => {
                out.push_str("<Namespace ");
                Value::Dict(Rc::new(d.borrow().clone())).write_repr(out);
                out.push('>');
            }
            Object::Macro(m) if m.def.anonymous => out.push_str("<Macro anonymous>"),
            Object::Macro(m) => out.push_str(&format!("<Macro '{}'>", m.def.name)),
            Object::Loop(l) => out.push_str(&format!("<LoopContext {}/{}>", l.index0.get() + 1, l.items.len())),
            // The globals print as the objects transformers' environment holds: classes, functions
            // and a `TemplateDict` instance, the last two with `0x0` for their address.
            Object::Function(name) => out.push_str(match &**name {
                "cycler" => "<class 'jinja2.utils.Cycler'>",
                "joiner" => "<class 'jinja2.utils.Joiner'>",
                "namespace" => {
                    "<class 'transformers.utils.chat_template_utils._cached_compile_jinja_template.<locals>.TemplateNamespace'>"
                }
                "dict" => {
                    "<transformers.utils.chat_template_utils._cached_compile_jinja_template.<locals>.TemplateDict object at 0x0>"
                }
                "lipsum" => "<function generate_lorem_ipsum at 0x0>",
                "range" => "<function safe_range at 0x0>",
                "raise_exception" => "<function _cached_compile_jinja_template.<locals>.raise_exception at 0x0>",
                "strftime_now" => "<function _cached_compile_jinja_template.<locals>.strftime_now at 0x0>",
                _ => return out.push_str(&format!("<function {name} at 0x0>")),
            }),
            Object::Method(recv, name, true) => {
                out.push_str(&format!("<bound method Markup.{name} of "));
                recv.write_repr(out);
                out.push('>');
            }
            Object::Method(recv, name, false) => out.push_str(&format!(
                "<built-in method {name} of {} object at 0x0>",
                recv.type_name()
            )),
            Object::Cycler(..) => out.push_str("<jinja2.utils.Cycler object at 0x0>"),
            Object::Joiner(..) => out.push_str("<jinja2.utils.Joiner object at 0x0>"),
            Object::FailedGenerator(_, function) => out.push_str(&format!("<generator object {function} at 0x0>")),
            Object::Group(k, l) => Value::Tuple(Rc::new(vec![k.clone(), l.clone()])).write_repr(out),
            Object::SelfRef(_) => out.push_str("<TemplateReference None>"),
            Object::Block(_) => out.push_str("<BlockReference>"),
            Object::View(kind, _, items) => {
                out.push_str(kind);
                out.push('(');
                Value::List(items.clone()).write_repr(out);
                out.push(')');
            }
            Object::Bytes(b) => repr::write_bytes_repr(b, out),
            Object::Range(a, b, s) => {
                if *s == 1 {
                    out.push_str(&format!("range({a}, {b})"))
                } else {
                    out.push_str(&format!("range({a}, {b}, {s})"))
                }
            }
        }
    }
}

impl<'a> Value<'a> {
    /// Views a JSON value (scalars are converted, arrays and objects borrowed).
    #[inline]
    pub fn from_json(j: &'a Json) -> Value<'a> {
        match j {
            Json::Null => Value::None,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::from_json_number(n),
            Json::String(s) => Value::Str(s),
            _ => Value::Json(j),
        }
    }

    /// The value of a JSON number: an integer, a big integer past `i64`, or a float.
    fn from_json_number(n: &serde_json::Number) -> Value<'a> {
        match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::BigInt(Rc::new(u.into())),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    /// An integer value of a 128-bit integer.
    pub fn from_i128(i: i128) -> Value<'a> {
        match i64::try_from(i) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::BigInt(Rc::new(num_bigint::BigInt::from(i))),
        }
    }

    /// An integer from a big integer, as `Int` when it fits 64 bits.
    pub fn from_bigint(b: num_bigint::BigInt) -> Value<'a> {
        match i64::try_from(&b) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::BigInt(Rc::new(b)),
        }
    }

    /// Fails as CPython's `str(int)` does beyond 4300 digits.
    pub fn check_printable(&self) -> Result<()> {
        if let Value::BigInt(b) = self {
            if b.magnitude().bits() > 14_280 && b.magnitude().to_string().len() > 4300 {
                return Err(err!(
                    ValueError,
                    "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit"
                ));
            }
        }
        Ok(())
    }

    /// A computed string.
    pub fn string(s: impl Into<Rc<str>>) -> Value<'a> {
        Value::String(s.into())
    }

    /// A new list.
    pub fn list(items: Vec<Value<'a>>) -> Value<'a> {
        Value::List(Rc::new(items))
    }

    /// A generator of `items`, none consumed.
    pub fn generator(items: Vec<Value<'a>>) -> Value<'a> {
        Value::iterator("generator", items)
    }

    /// A one-shot iterator of `items` whose Python type is `kind` (`list_reverseiterator`, ...).
    pub fn iterator(kind: &'static str, items: Vec<Value<'a>>) -> Value<'a> {
        Value::Iter(Rc::new(Generator {
            items: Rc::new(items),
            next: Cell::new(0),
            kind,
            function: "",
        }))
    }

    /// A dict view of `dict` with its items.
    pub fn view(kind: &'static str, dict: &Value<'a>, items: Vec<Value<'a>>) -> Value<'a> {
        Value::Object(Rc::new(Object::View(kind, dict.clone(), Rc::new(items))))
    }

    /// An undefined value for a missing member of `owner`.
    pub fn missing_member(owner: &Value<'a>, key: Value<'a>) -> Value<'a> {
        Value::Undefined(Some(Rc::new(UndefInfo::Member(owner.object_type_repr(), key))))
    }

    /// Python's type name (`type(x).__name__`).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Undefined(_) => "Undefined",
            Value::None => "NoneType",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) | Value::String(_) => "str",
            Value::Safe(_) => "Markup",
            Value::Json(Json::Array(_)) | Value::List(_) => "list",
            Value::Json(_) | Value::Dict(_) => "dict",
            Value::Tuple(_) => "tuple",
            Value::Iter(g) => g.kind,
            Value::Object(o) => match &**o {
                Object::Namespace(_) => "TemplateNamespace",
                Object::Macro(_) => "Macro",
                Object::Loop(_) => "LoopContext",
                Object::Function(_) => "function",
                Object::Method(..) => "builtin_function_or_method",
                Object::Cycler(..) => "Cycler",
                Object::Joiner(..) => "Joiner",
                Object::Range(..) => "range",
                Object::Group(..) => "_GroupTuple",
                Object::View(kind, ..) => kind,
                Object::Bytes(_) => "bytes",
                Object::FailedGenerator(..) => "generator",
                Object::SelfRef(_) => "TemplateReference",
                Object::Block(_) => "BlockReference",
            },
        }
    }

    /// Jinja2's `object_type_repr` used in undefined messages.
    pub fn object_type_repr(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool object",
            Value::Int(_) | Value::BigInt(_) => "int object",
            Value::Float(_) => "float object",
            Value::Str(_) | Value::String(_) => "str object",
            Value::Safe(_) => "markupsafe.Markup object",
            Value::Json(Json::Array(_)) | Value::List(_) => "list object",
            Value::Json(_) | Value::Dict(_) => "dict object",
            Value::Tuple(_) => "tuple object",
            Value::Iter(g) => match g.kind {
                "list_reverseiterator" => "list_reverseiterator object",
                "reversed" => "reversed object",
                "dict_reversekeyiterator" => "dict_reversekeyiterator object",
                "dict_reversevalueiterator" => "dict_reversevalueiterator object",
                "dict_reverseitemiterator" => "dict_reverseitemiterator object",
                "range_iterator" => "range_iterator object",
                _ => "generator object",
            },
            Value::Undefined(_) => "jinja2.runtime.Undefined object",
            Value::Object(o) => match &**o {
                Object::Namespace(_) => "transformers.utils.chat_template_utils.TemplateNamespace object",
                Object::Macro(_) => "jinja2.runtime.Macro object",
                Object::Loop(_) => "jinja2.runtime.LoopContext object",
                Object::Function(_) => "function object",
                Object::Method(..) => "builtin_function_or_method object",
                Object::Cycler(..) => "jinja2.utils.Cycler object",
                Object::Joiner(..) => "jinja2.utils.Joiner object",
                Object::Range(..) => "range object",
                Object::Group(..) => "jinja2.filters._GroupTuple object",
                Object::SelfRef(_) => "jinja2.runtime.TemplateReference object",
                Object::Block(_) => "jinja2.runtime.BlockReference object",
                Object::FailedGenerator(..) => "generator object",
                Object::Bytes(_) => "bytes object",
                Object::View(kind, ..) => match *kind {
                    "dict_items" => "dict_items object",
                    "dict_keys" => "dict_keys object",
                    _ => "dict_values object",
                },
            },
        }
    }

    /// The JSON array or object of the context this value views in place, if it is one.
    pub fn as_json(&self) -> Option<&'a Json> {
        match self {
            Value::Json(j) => Some(j),
            _ => None,
        }
    }

    /// The string content, for any kind of string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            Value::String(s) | Value::Safe(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_undefined(&self) -> bool {
        matches!(self, Value::Undefined(_))
    }

    pub fn is_str(&self) -> bool {
        matches!(self, Value::Str(_) | Value::String(_) | Value::Safe(_))
    }

    /// A list, tuple or JSON array.
    pub fn is_sequence_like(&self) -> bool {
        matches!(self, Value::List(_) | Value::Tuple(_) | Value::Json(Json::Array(_)))
    }

    /// A dict or JSON object.
    pub fn is_mapping(&self) -> bool {
        matches!(self, Value::Dict(_) | Value::Json(Json::Object(_)))
    }

    /// Calls `f` for each item of a list-like value.
    pub fn for_each_item(&self, mut f: impl FnMut(Value<'a>)) {
        match self {
            Value::List(v) | Value::Tuple(v) => v.iter().for_each(|x| f(x.clone())),
            Value::Iter(g) => g.drain().iter().for_each(|x| f(x.clone())),
            Value::Json(Json::Array(a)) => a.iter().for_each(|x| f(Value::from_json(x))),
            _ => {}
        }
    }

    /// Calls `f` for each key and value of a mapping.
    pub fn for_each_pair(&self, mut f: impl FnMut(Value<'a>, Value<'a>)) {
        match self {
            Value::Dict(d) => d.iter().for_each(|(k, v)| f(k.clone(), v.clone())),
            Value::Json(Json::Object(m)) => m.iter().for_each(|(k, v)| f(Value::Str(k), Value::from_json(v))),
            Value::Object(o) => {
                if let Object::Namespace(d) = &**o {
                    d.borrow().iter().for_each(|(k, v)| f(k.clone(), v.clone()))
                }
            }
            _ => {}
        }
    }

    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Undefined(_) | Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::BigInt(_) => true,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::String(s) | Value::Safe(s) => !s.is_empty(),
            Value::Json(Json::Array(a)) => !a.is_empty(),
            Value::Json(Json::Object(m)) => !m.is_empty(),
            Value::Json(_) => true,
            Value::List(v) | Value::Tuple(v) => !v.is_empty(),
            Value::Dict(d) => !d.is_empty(),
            Value::Iter(_) => true,
            Value::Object(o) => match &**o {
                Object::Range(a, b, s) => range_len(*a, *b, *s) > 0,
                Object::View(_, _, items) => !items.is_empty(),
                Object::Bytes(b) => !b.is_empty(),
                _ => true,
            },
        }
    }

    /// Python `len()`, or the TypeError Python raises.
    pub fn py_len(&self) -> Result<usize> {
        if let Some(s) = self.as_str() {
            crate::limits::charge_copy(s.len())?;
        }
        Ok(match self {
            Value::Str(s) => s.chars().count(),
            Value::String(s) | Value::Safe(s) => s.chars().count(),
            Value::Json(Json::Array(a)) => a.len(),
            Value::Json(Json::Object(m)) => m.len(),
            Value::List(v) | Value::Tuple(v) => v.len(),
            Value::Dict(d) => d.len(),
            Value::Undefined(_) => 0,
            Value::Object(o) if matches!(&**o, Object::Range(..)) => match &**o {
                Object::Range(a, b, s) => range_len(*a, *b, *s),
                _ => 0,
            },
            Value::Object(o) if matches!(&**o, Object::Group(..)) => 2,
            Value::Object(o) if matches!(&**o, Object::Bytes(..)) => match &**o {
                Object::Bytes(b) => b.len(),
                _ => 0,
            },
            Value::Object(o) if matches!(&**o, Object::View(..)) => match &**o {
                Object::View(_, _, items) => items.len(),
                _ => 0,
            },
            // Jinja2's `LoopContext.__len__`: the loop's length.
            Value::Object(o) if matches!(&**o, Object::Loop(..)) => match &**o {
                Object::Loop(l) => l.items.len(),
                _ => 0,
            },
            _ => return Err(err!(TypeError, "object of type '{}' has no len()", self.type_name())),
        })
    }

    /// The items Python's `iter()` would produce (dicts give their keys, strings their characters).
    pub fn iterate(&self) -> Result<Rc<Vec<Value<'a>>>> {
        // What is built here is charged: a string's characters, a JSON container's items, the keys
        // of a dict, a range's numbers (lists and tuples are shared, not copied).
        let built = match self {
            Value::Json(Json::Array(a)) => a.len(),
            Value::Json(Json::Object(m)) => m.len(),
            Value::Dict(d) => d.len(),
            Value::Str(_) | Value::String(_) | Value::Safe(_) => self.as_str().map_or(0, str::len),
            Value::Object(o) => match &**o {
                Object::Range(a, b, s) => range_len(*a, *b, *s),
                _ => 0,
            },
            _ => 0,
        };
        crate::limits::charge_values(built)?;
        Ok(match self {
            Value::List(v) | Value::Tuple(v) => v.clone(),
            // A generator consumed in part gives a copy of the rest.
            Value::Iter(g) => {
                if g.next.get() > 0 {
                    crate::limits::charge_values(g.remaining().len())?;
                }
                g.drain()
            }
            Value::Json(Json::Array(a)) => Rc::new(a.iter().map(Value::from_json).collect()),
            Value::Json(Json::Object(m)) => Rc::new(m.keys().map(|k| Value::Str(k)).collect()),
            Value::Dict(d) => Rc::new(d.keys().cloned().collect()),
            Value::Str(s) => {
                check_char_list(s)?;
                Rc::new(
                    s.char_indices()
                        .map(|(i, c)| Value::Str(&s[i..i + c.len_utf8()]))
                        .collect(),
                )
            }
            Value::String(s) | Value::Safe(s) => {
                check_char_list(s)?;
                Rc::new(s.chars().map(char_value).collect())
            }
            Value::Undefined(_) => Rc::new(Vec::new()),
            Value::Object(o) => match &**o {
                Object::Range(a, b, s) => Rc::new(range_items(*a, *b, *s).map(Value::from_i128).collect()),
                Object::Group(k, l) => Rc::new(vec![k.clone(), l.clone()]),
                Object::View(_, _, items) => items.clone(),
                Object::Bytes(b) => Rc::new(b.iter().map(|x| Value::Int(*x as i64)).collect()),
                Object::FailedGenerator(e, _) => return Err(e.clone()),
                _ => return Err(err!(TypeError, "'{}' object is not iterable", self.type_name())),
            },
            _ => return Err(err!(TypeError, "'{}' object is not iterable", self.type_name())),
        })
    }

    /// The error raised when an undefined value is used.
    pub fn undefined_error(&self) -> Error {
        match self {
            Value::Undefined(Some(info)) => match &**info {
                UndefInfo::Name(n) => {
                    let mut s = String::new();
                    repr::write_str_repr(n, &mut s);
                    err!(UndefinedError, "{s} is undefined")
                }
                UndefInfo::Member(owner, key) => {
                    if key.is_str() {
                        // `repr(key)`: a Markup key shows as `Markup('...')`.
                        let mut s = String::new();
                        key.write_repr(&mut s);
                        let mut o = String::new();
                        repr::write_str_repr(owner, &mut o);
                        err!(UndefinedError, "{o} has no attribute {s}")
                    } else {
                        let mut k = String::new();
                        key.write_repr(&mut k);
                        err!(UndefinedError, "{owner} has no element {k}")
                    }
                }
                UndefInfo::Hint(msg, kind) => Error::new(*kind, msg.clone()),
            },
            _ => err!(UndefinedError, "'undefined' is undefined"),
        }
    }
}

/// The number of items in `range(a, b, step)`.
pub fn range_len(a: i128, b: i128, step: i128) -> usize {
    let n = if step > 0 && a < b {
        (b - a - 1) / step + 1
    } else if step < 0 && a > b {
        (a - b - 1) / (-step) + 1
    } else {
        0
    };
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// The items of `range(a, b, step)`.
pub fn range_items(a: i128, b: i128, step: i128) -> impl Iterator<Item = i128> {
    let n = range_len(a, b, step);
    (0..n).map(move |i| a + step * i as i128)
}

/// Byte equality of two slices, inline (names and keys are short: a `memcmp` call costs more than
/// the comparison). Compared a word at a time: the first and the last word of the length's size
/// class (2, 4 or 8 bytes), which overlap or meet, cover the shorter slices whole.
#[inline]
pub(crate) fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1 => a.first() == b.first(),
        2..=3 => word::<2>(a, 0) == word::<2>(b, 0) && word::<2>(a, n - 2) == word::<2>(b, n - 2),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        _ => {
            let mut at = 0;
            while at + 8 < n {
                if word::<8>(a, at) != word::<8>(b, at) {
                    return false;
                }
                at += 8;
            }
            word::<8>(a, n - 8) == word::<8>(b, n - 8)
        }
    }
}

/// The `N` bytes of `s` from `at` (`None` past its end).
#[inline(always)]
fn word<const N: usize>(s: &[u8], at: usize) -> Option<[u8; N]> {
    s.get(at..at + N)?.try_into().ok()
}

/// Fails when putting `items` into a new container would nest values deeper than the limit.
pub(crate) fn check_nesting<'v, 'a: 'v>(items: impl IntoIterator<Item = &'v Value<'a>>) -> Result<()> {
    for item in items {
        if nesting(item, crate::limits::MAX_VALUE_NESTING) >= crate::limits::MAX_VALUE_NESTING {
            return Err(err!(
                LimitExceeded,
                "values nested deeper than {} levels",
                crate::limits::MAX_VALUE_NESTING
            ));
        }
    }
    Ok(())
}

/// How deeply `v` nests containers, counting no further than `limit`.
fn nesting(v: &Value, limit: usize) -> usize {
    if limit == 0 {
        return 0;
    }
    match v {
        Value::List(items) | Value::Tuple(items) => 1 + items.iter().map(|i| nesting(i, limit - 1)).max().unwrap_or(0),
        Value::Iter(g) => 1 + g.remaining().iter().map(|i| nesting(i, limit - 1)).max().unwrap_or(0),
        Value::Dict(d) => 1 + d.values().map(|i| nesting(i, limit - 1)).max().unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_table_holds_each_character_at_its_code() {
        assert_eq!(ASCII.len(), 128);
        for (i, c) in ASCII.chars().enumerate() {
            assert_eq!(c as usize, i);
        }
        assert!(matches!(char_value('a'), Value::Str("a")));
        assert!(matches!(char_value('\u{e9}'), Value::String(s) if &*s == "\u{e9}"));
    }

    #[test]
    fn short_eq_is_byte_equality_at_every_length() {
        let text: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for n in 0..=text.len() {
            let a = &text[..n];
            let copy = a.to_vec();
            assert!(short_eq(a, &copy), "{n}");
            assert!(!short_eq(a, &text[..n.saturating_sub(1)]) || n == 0, "{n}");
            for i in 0..n {
                let mut b = a.to_vec();
                b[i] ^= 1;
                assert!(!short_eq(a, &b), "{n} {i}");
            }
        }
    }
}
