//! The template's syntax tree. Every expression and statement knows its source position.

use std::sync::Arc;

/// A source position (1-based line and column).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A variable name. The parser gives every occurrence of a name in one template the same
/// allocation, so the evaluator usually matches names by address.
pub type Ident = Arc<str>;

/// A literal value.
#[derive(Debug, Clone)]
pub enum Const {
    None,
    Bool(bool),
    Int(i64),
    /// An integer literal beyond 64 bits.
    BigInt(Box<num_bigint::BigInt>),
    Float(f64),
    Str(Box<str>),
}

/// Binary arithmetic operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
}

/// Comparison operators (`in`/`not in` included).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    NotIn,
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Pos,
    Not,
}

/// Call arguments: positional, keyword, `*args`, `**kwargs`.
#[derive(Debug, Clone, Default)]
pub struct Args {
    pub pos: Vec<Expr>,
    pub kw: Vec<(Box<str>, Expr)>,
    pub star: Option<Box<Expr>>,
    pub dstar: Option<Box<Expr>>,
}

impl Args {
    /// No argument at all (`f()`, or a filter without parentheses).
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty() && self.kw.is_empty() && self.star.is_none() && self.dstar.is_none()
    }
}

/// An expression node.
#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub pos: Pos,
}

/// The kinds of expression.
#[derive(Debug, Clone)]
pub enum ExprKind {
    Const(Const),
    /// A variable, with where it is found (set when the template compiles).
    Name(Ident, VarRef),
    List(Vec<Expr>),
    Tuple(Vec<Expr>),
    Dict(Vec<(Expr, Expr)>),
    GetAttr(Box<Expr>, Member),
    GetItem(Box<Expr>, Box<Expr>),
    Slice(Option<Box<Expr>>, Option<Box<Expr>>, Option<Box<Expr>>),
    Call(Box<Expr>, Box<Args>),
    /// A filter applied to a value (`None` for the body of a filter block).
    Filter(Option<Box<Expr>>, Box<Named>, Box<Args>),
    Test(Box<Expr>, Box<Named>, Box<Args>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Compare(Box<Expr>, Vec<(CmpOp, Expr)>),
    Concat(Vec<Expr>),
    Cond(Box<Expr>, Box<Expr>, Option<Box<Expr>>),
}

/// A filter or test name, resolved when the template compiles (boxed in the tree, which keeps
/// every expression node as small as before).
#[derive(Debug, Clone)]
pub struct Named {
    pub name: Box<str>,
    /// Its index in the environment's table of filters (or tests); `None` when there is no such
    /// filter (or test), which fails when the expression runs.
    pub index: Option<usize>,
}

impl std::ops::Deref for Named {
    type Target = str;
    fn deref(&self) -> &str {
        &self.name
    }
}

/// The name in `obj.name`, with what the parser knows about it.
#[derive(Debug, Clone)]
pub struct Member {
    pub name: Box<str>,
    /// On a JSON object, `obj.name` is the item `name` (or missing): the name is neither private
    /// (`_x`) nor a `dict` method.
    pub data_key: bool,
}

impl std::ops::Deref for Member {
    type Target = str;
    fn deref(&self) -> &str {
        &self.name
    }
}

/// Where an assignment stores a name: a slot of the frames of one scope (see [`Scopes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Bind {
    /// The scope whose frames hold the name.
    pub scope: u32,
    /// The name's slot in those frames.
    pub slot: u32,
}

/// An assignment target.
#[derive(Debug, Clone)]
pub enum Target {
    Name(Ident, Bind),
    Tuple(Vec<Target>),
    /// `ns.attr` (namespace attribute), with where `ns` is found.
    Attr(Ident, VarRef, Box<str>),
}

/// Where a variable reference is found: its resolution in [`Scopes::names`], with the innermost
/// scope that binds the name copied here so the commonest lookup reads no table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarRef {
    /// The index of its resolution in [`Scopes::names`].
    pub res: u32,
    /// The name's index in [`Scopes::outer`], used when no scope has it bound.
    pub outer: u32,
    /// The innermost enclosing scope that binds the name ([`VarRef::NO_SCOPE`] when none does).
    pub scope: u32,
    /// The name's slot in that scope's frames.
    pub slot: u16,
    /// How many frames up from the current one that frame is.
    pub up: u8,
    /// Whether the resolution lists scopes not copied here (see [`NameRes::scopes`]).
    pub more: bool,
}

impl VarRef {
    /// The `scope` of a reference no enclosing scope binds (or one too far out to copy here).
    pub const NO_SCOPE: u32 = u32::MAX;
    /// The `outer` of a reference that is undefined when its scopes do not bind it: an enclosing
    /// frame starts without the name (see `syntax::symbols`), so the context is not read.
    pub const UNBOUND_OUTSIDE: u32 = u32::MAX;
}

impl Default for VarRef {
    fn default() -> Self {
        VarRef {
            res: 0,
            outer: 0,
            scope: VarRef::NO_SCOPE,
            slot: 0,
            up: 0,
            more: false,
        }
    }
}

/// A macro definition (also used for `{% call %}` bodies).
#[derive(Debug, Clone)]
pub struct MacroDef {
    pub name: Ident,
    /// A call block's `caller`, which Jinja2 gives no name (`<Macro anonymous>`, `macro None ...`).
    pub anonymous: bool,
    pub params: Vec<(Ident, Option<Expr>)>,
    pub body: Vec<Stmt>,
    pub uses_caller: bool,
    pub uses_varargs: bool,
    pub uses_kwargs: bool,
    /// The scope of the body's frame (see [`Scopes`]).
    pub scope: u32,
}

impl MacroDef {
    /// The name as Jinja2's messages show it: `'name'`, or `None` for a call block's `caller`.
    pub fn shown_name(&self) -> String {
        if self.anonymous {
            "None".to_string()
        } else {
            format!("'{}'", self.name)
        }
    }
}

/// A statement node.
#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub pos: Pos,
}

/// The kinds of statement.
#[derive(Debug, Clone)]
pub enum StmtKind {
    /// Template text written as is.
    Text(Box<str>),
    /// A printed expression, with its print plan when it has one (see [`super::print_plan`]).
    Print(Expr, Option<Box<[Expr]>>),
    If(Vec<(Expr, Vec<Stmt>)>, Vec<Stmt>),
    For(Box<ForLoop>),
    Set(Target, Expr),
    /// A captured block: the target, the filter, the body and the scope of the body's frame.
    SetBlock(Target, Option<Expr>, Vec<Stmt>, u32),
    Macro(Arc<MacroDef>),
    CallBlock(Expr, Arc<MacroDef>),
    /// A filtered block: the filter, the body and the scope of the body's frame.
    FilterBlock(Expr, Vec<Stmt>, u32),
    /// Assignments, the body, and the scope of the body's frame.
    With(Vec<(Target, Expr)>, Vec<Stmt>, u32),
    Break,
    Continue,
    /// transformers' `{% generation %}` (a call block): the body and the scope of its frame.
    Generation(Vec<Stmt>, u32),
    /// A `{% block %}` renders in place (there is no inheritance without a loader).
    Block(Box<str>, Vec<Stmt>, BlockScope),
    /// Tags that need a template loader (`extends`, `include`, `import`, `from`): fail when run.
    NeedsLoader(Expr),
    Autoescape(Expr, Vec<Stmt>, u32),
}

/// A `{% for %}` loop.
#[derive(Debug, Clone)]
pub struct ForLoop {
    pub target: Target,
    pub iter: Expr,
    pub cond: Option<Expr>,
    pub body: Vec<Stmt>,
    pub else_body: Vec<Stmt>,
    pub recursive: bool,
    /// The body mentions `loop` (so the loop object must exist).
    pub uses_loop: bool,
    /// The scope of the body's frame (see [`Scopes`]).
    pub scope: u32,
    /// The slot of `loop` in that frame (when `uses_loop`).
    pub loop_slot: u32,
    /// Every slot of that frame is bound afresh before each iteration's body sees it (the body
    /// binds no other names, and no loop filter could see the previous `loop`): an iteration
    /// need not unbind the previous one's values first.
    pub rebinds_all: bool,
    /// The scope of the `else` body's frame: a child of the loop's enclosing frame, so what it
    /// sets stays in it, as in Jinja2.
    pub else_scope: u32,
}

/// The frame a `{% block %}` body runs in. As Jinja2 renders a block as a function of its own,
/// what the body sets stays in it, and it sees the template's top-level variables but not the
/// variables of the loops, `with` blocks and macros around it, unless it is `scoped`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BlockScope {
    /// `{% block name scoped %}`: the enclosing frames are visible.
    pub scoped: bool,
    /// The scope of the body's frame (see [`Scopes`]).
    pub scope: u32,
}

/// How a template's variables are found, decided when it compiles.
///
/// Each construct that runs in a frame of its own (the template, a `for` body, a `with` body, a
/// macro or call-block body) is a scope: the names it binds (its own `set`s, loop targets,
/// parameters, `loop`, `caller`, ...) each get a slot in its frames. A variable reference lists
/// the enclosing scopes that bind its name, innermost first, so a lookup reads those slots and
/// then the render's context; only a frame chain that differs from the template's nesting (a
/// block called as `self.name()`, a macro or loop object used outside the frame it was made in)
/// falls back to a search by name.
#[derive(Debug, Default)]
pub struct Scopes {
    /// The names of each scope's slots, by scope (0 is the template).
    pub layouts: Vec<Box<[Ident]>>,
    /// The resolution of every variable reference.
    pub names: Vec<NameRes>,
    /// The names read outside every scope (context variables and globals), by index: the global
    /// function each name is, if it is one.
    pub outer: Vec<Option<&'static str>>,
}

/// Where a variable reference finds its value.
#[derive(Debug, Default)]
pub struct NameRes {
    /// The enclosing scopes that bind the name, innermost first.
    pub scopes: Box<[ScopeSlot]>,
}

/// A slot of an enclosing frame.
#[derive(Debug, Clone, Copy)]
pub struct ScopeSlot {
    /// How many frames up from the current one.
    pub up: u32,
    /// The scope the frame must belong to.
    pub scope: u32,
    /// The slot in that frame.
    pub slot: u32,
}

#[cfg(test)]
mod tests {
    /// Every node of a template's expressions has this size: rendering walks them, so a larger
    /// variant (say, an unboxed name) costs time on every template.
    #[test]
    fn expression_nodes_stay_small() {
        assert_eq!(std::mem::size_of::<super::Expr>(), 48);
    }
}
