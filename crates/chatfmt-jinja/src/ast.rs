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
    Name(Ident),
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

/// An assignment target.
#[derive(Debug, Clone)]
pub enum Target {
    Name(Ident),
    Tuple(Vec<Target>),
    /// `ns.attr` (namespace attribute).
    Attr(Ident, Box<str>),
}

/// A macro definition (also used for `{% call %}` bodies).
#[derive(Debug)]
pub struct MacroDef {
    pub name: Ident,
    pub params: Vec<(Ident, Option<Expr>)>,
    pub body: Vec<Stmt>,
    pub uses_caller: bool,
    pub uses_varargs: bool,
    pub uses_kwargs: bool,
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
    SetBlock(Target, Option<Expr>, Vec<Stmt>),
    Macro(Arc<MacroDef>),
    CallBlock(Expr, Arc<MacroDef>),
    FilterBlock(Expr, Vec<Stmt>),
    With(Vec<(Target, Expr)>, Vec<Stmt>),
    Break,
    Continue,
    Generation(Vec<Stmt>),
    /// A `{% block %}` renders in place (there is no inheritance without a loader).
    Block(Box<str>, Vec<Stmt>),
    /// Tags that need a template loader (`extends`, `include`, `import`, `from`): fail when run.
    NeedsLoader(Expr),
    Autoescape(Expr, Vec<Stmt>),
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
