//! Recursive-descent parser producing the syntax tree, with Jinja2's grammar and precedence.

use super::lexer::{Tok, Token};
use crate::ast::*;
use crate::builtins::{dispatch::is_dict_method, table};
use crate::error::{err, Error, Result};
use std::collections::HashMap;
use std::sync::Arc;

struct Parser<'s> {
    toks: Vec<Token<'s>>,
    i: usize,
    /// The block tags we are inside, innermost last (for error messages).
    open: Vec<&'static str>,
    /// The indices in `open` of the `for` blocks whose `else` body is being parsed.
    for_else: Vec<usize>,
    /// The end tags each enclosing block body is waiting for, innermost last (for error messages).
    ends: Vec<&'static [&'static str]>,
    /// Block names seen so far (a name may be defined once).
    blocks: Vec<&'s str>,
    /// Current nesting of expressions and blocks.
    depth: usize,
    /// One shared allocation per distinct variable name (see [`Ident`]).
    idents: HashMap<&'s str, Ident>,
}

/// The deepest nesting of expressions and blocks a template may have.
pub const MAX_NESTING: usize = 500;

fn describe(t: &Tok) -> String {
    match t {
        Tok::Data(_) => "template data / text".into(),
        Tok::VarBegin => "begin of print statement".into(),
        Tok::VarEnd => "end of print statement".into(),
        Tok::BlockBegin => "begin of statement block".into(),
        Tok::BlockEnd => "end of statement block".into(),
        Tok::Name(n) => (*n).to_string(),
        Tok::Str(_) => "string".into(),
        Tok::Int(_) | Tok::BigInt(_) => "integer".into(),
        Tok::Float(_) => "float".into(),
        Tok::Op(o) => (*o).to_string(),
        Tok::Eof => "end of template".into(),
    }
}

fn describe_expected(t: &Tok) -> String {
    match t {
        Tok::Name(n) => (*n).to_string(),
        Tok::Op(o) => (*o).to_string(),
        other => describe(other),
    }
}

impl<'s> Parser<'s> {
    fn cur(&self) -> &Tok<'s> {
        &self.toks[self.i].tok
    }

    fn look(&self) -> &Tok<'s> {
        &self.toks[(self.i + 1).min(self.toks.len() - 1)].tok
    }

    fn pos(&self) -> Pos {
        let t = &self.toks[self.i];
        Pos {
            line: t.line,
            col: t.col,
        }
    }

    fn next(&mut self) -> Tok<'s> {
        let t = self.toks[self.i].tok.clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    fn fail(&self, msg: impl Into<String>) -> Error {
        let p = self.pos();
        Error::new(crate::error::ErrorKind::TemplateSyntaxError, msg).at(p.line, p.col)
    }

    fn fail_at(&self, msg: impl Into<String>, p: Pos) -> Error {
        Error::new(crate::error::ErrorKind::TemplateSyntaxError, msg).at(p.line, p.col)
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(self.cur(), Tok::Op(o) if *o == op)
    }

    fn is_name(&self, name: &str) -> bool {
        matches!(self.cur(), Tok::Name(n) if *n == name)
    }

    fn skip_op(&mut self, op: &str) -> bool {
        let hit = self.is_op(op);
        if hit {
            self.next();
        }
        hit
    }

    fn skip_name(&mut self, name: &str) -> bool {
        let hit = self.is_name(name);
        if hit {
            self.next();
        }
        hit
    }

    fn unexpected(&self, expected: &str) -> Error {
        if *self.cur() == Tok::Eof {
            return self.fail(format!("unexpected end of template, expected '{expected}'."));
        }
        self.fail(format!(
            "expected token '{expected}', got '{}'",
            describe_expected(self.cur())
        ))
    }

    fn expect_op(&mut self, op: &str) -> Result<()> {
        if self.skip_op(op) {
            Ok(())
        } else {
            Err(self.unexpected(op))
        }
    }

    fn expect_name_kw(&mut self, name: &str) -> Result<()> {
        if self.skip_name(name) {
            Ok(())
        } else {
            Err(self.unexpected(name))
        }
    }

    fn expect_name(&mut self) -> Result<&'s str> {
        match self.cur() {
            Tok::Name(n) => {
                let n = *n;
                self.next();
                Ok(n)
            }
            _ => Err(self.unexpected("name")),
        }
    }

    fn expect_block_end(&mut self) -> Result<()> {
        if *self.cur() == Tok::BlockEnd {
            self.next();
            Ok(())
        } else {
            Err(self.unexpected("end of statement block"))
        }
    }

    // ---- template structure -------------------------------------------------------------

    /// The statements up to one of the tags `end` (the template's end for the top level, whose
    /// `end` is empty).
    fn subparse(&mut self, end: &'static [&'static str]) -> Result<Vec<Stmt>> {
        if end.is_empty() {
            return self.subparse_inner(end);
        }
        self.ends.push(end);
        let r = self.subparse_inner(end);
        self.ends.pop();
        r
    }

    fn subparse_inner(&mut self, end: &[&str]) -> Result<Vec<Stmt>> {
        let mut body = Vec::new();
        loop {
            let pos = self.pos();
            match self.cur().clone() {
                Tok::Data(text) => {
                    self.next();
                    body.push(Stmt {
                        kind: StmtKind::Text(text.into()),
                        pos,
                    });
                }
                Tok::VarBegin => {
                    self.next();
                    let e = self.parse_tuple(true, false)?;
                    if *self.cur() != Tok::VarEnd {
                        return Err(self.unexpected("end of print statement"));
                    }
                    self.next();
                    let plan = super::print_plan::leaves(&e);
                    body.push(Stmt {
                        kind: StmtKind::Print(e, plan),
                        pos,
                    });
                }
                Tok::BlockBegin => {
                    self.next();
                    if let Tok::Name(n) = self.cur() {
                        if end.contains(n) {
                            return Ok(body);
                        }
                    }
                    if self.is_name("print") {
                        self.parse_print(pos, &mut body)?;
                    } else {
                        let stmt = self.parse_statement()?;
                        body.push(stmt);
                    }
                    self.expect_block_end()?;
                }
                Tok::Eof => return Ok(body),
                other => return Err(self.fail(format!("unexpected '{}'", describe(&other)))),
            }
        }
    }

    fn eof_error(&self, end: &[&str]) -> Error {
        let mut msg = "Unexpected end of template.".to_string();
        msg.push_str(&self.looking_for(end, None));
        self.fail(msg)
    }

    /// Jinja2's explanation after an unknown `tag` (or the template's end, `None`): the tags the
    /// innermost body waits for (`end`), worded as a nesting mistake when an enclosing body waits
    /// for `tag`, then the innermost open block.
    fn looking_for(&self, end: &[&str], tag: Option<&str>) -> String {
        let mut msg = String::new();
        if !end.is_empty() {
            let names: Vec<String> = end.iter().map(|e| format!("'{e}'")).collect();
            let names = names.join(" or ");
            if tag.is_some_and(|t| self.ends.iter().any(|e| e.contains(&t))) {
                msg.push_str(&format!(
                    " You probably made a nesting mistake. Jinja is expecting this tag, but currently \
                     looking for {names}."
                ));
            } else {
                msg.push_str(&format!(" Jinja was looking for the following tags: {names}."));
            }
        }
        if let Some(open) = self.open.last() {
            msg.push_str(&format!(" The innermost block that needs to be closed is '{open}'."));
        }
        msg
    }

    fn parse_statements(&mut self, end: &'static [&'static str], drop_needle: bool) -> Result<Vec<Stmt>> {
        self.skip_op(":");
        self.expect_block_end()?;
        let body = self.subparse(end)?;
        if *self.cur() == Tok::Eof {
            return Err(self.eof_error(end));
        }
        if drop_needle {
            self.next();
        }
        Ok(body)
    }

    /// `{% print a, b %}`: Jinja2's `print` tag writes each of its comma-separated expressions (none
    /// at all for a bare `{% print %}`), one statement each.
    fn parse_print(&mut self, pos: Pos, body: &mut Vec<Stmt>) -> Result<()> {
        self.next();
        let mut first = true;
        while *self.cur() != Tok::BlockEnd {
            if !first {
                self.expect_op(",")?;
            }
            first = false;
            let e = self.parse_expression(true)?;
            let plan = super::print_plan::leaves(&e);
            body.push(Stmt {
                kind: StmtKind::Print(e, plan),
                pos,
            });
        }
        Ok(())
    }

    fn parse_statement(&mut self) -> Result<Stmt> {
        self.nested(Self::parse_statement_inner)
    }

    fn parse_statement_inner(&mut self) -> Result<Stmt> {
        let pos = self.pos();
        let Tok::Name(tag) = self.cur().clone() else {
            return Err(self.fail("tag name expected"));
        };
        let kind = match tag {
            "if" => self.with_open("if", Self::parse_if)?,
            "for" => self.with_open("for", Self::parse_for)?,
            "set" => self.with_open("set", Self::parse_set)?,
            "macro" => self.with_open("macro", Self::parse_macro)?,
            "call" => self.with_open("call", Self::parse_call_block)?,
            "filter" => self.with_open("filter", Self::parse_filter_block)?,
            "with" => self.with_open("with", Self::parse_with)?,
            "generation" => {
                self.next();
                StmtKind::Generation(self.with_open_body("generation", &["endgeneration"])?, 0)
            }
            "block" => self.with_open("block", Self::parse_block)?,
            "autoescape" => {
                self.next();
                let e = self.parse_expression(true)?;
                StmtKind::Autoescape(e, self.with_open_body("autoescape", &["endautoescape"])?, 0)
            }
            "break" | "continue" => {
                self.next();
                if !self.can_leave_loop() {
                    return Err(
                        // CPython's messages.
                        Error::new(
                            crate::error::ErrorKind::SyntaxError,
                            match tag {
                                "break" => "'break' outside loop",
                                _ => "'continue' not properly in loop",
                            },
                        )
                        .at(pos.line, pos.col),
                    );
                }
                if tag == "break" {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                }
            }
            "import" => self.parse_import()?,
            "from" => self.parse_from()?,
            "extends" => {
                self.next();
                StmtKind::NeedsLoader(self.parse_expression(true)?)
            }
            "include" => {
                self.next();
                let e = self.parse_expression(true)?;
                if self.is_name("ignore") && matches!(self.look(), Tok::Name("missing")) {
                    self.next();
                    self.next();
                }
                self.parse_import_context();
                StmtKind::NeedsLoader(e)
            }
            _ => return Err(self.unknown_tag(tag)),
        };
        Ok(Stmt { kind, pos })
    }

    /// Jinja2's error for a tag no statement starts with (see [`looking_for`](Self::looking_for)).
    fn unknown_tag(&self, tag: &str) -> Error {
        let end = self.ends.last().copied().unwrap_or_default();
        self.fail(format!(
            "Encountered unknown tag '{tag}'.{}",
            self.looking_for(end, Some(tag))
        ))
    }

    fn with_open(&mut self, tag: &'static str, f: fn(&mut Self) -> Result<StmtKind>) -> Result<StmtKind> {
        self.open.push(tag);
        let r = f(self);
        self.open.pop();
        r
    }

    fn with_open_body(&mut self, tag: &'static str, end: &'static [&'static str]) -> Result<Vec<Stmt>> {
        self.open.push(tag);
        let r = self.parse_statements(end, true);
        self.open.pop();
        r
    }

    /// Whether a `break` or `continue` here is inside a loop in the Python code Jinja2 compiles the
    /// template to: in a `for` body, not in an `else` body after it, and with no block between that
    /// Jinja2 compiles to a function of its own (a macro or call body, a named block, a generation
    /// block, which transformers runs as a call block).
    fn can_leave_loop(&self) -> bool {
        for (i, tag) in self.open.iter().enumerate().rev() {
            match *tag {
                "macro" | "call" | "block" | "generation" => return false,
                "for" if !self.for_else.contains(&i) => return true,
                _ => {}
            }
        }
        false
    }

    /// Whether the statement being parsed sits in a `for` body (not inside a macro or call body).
    fn in_loop_body(&self) -> bool {
        self.open
            .iter()
            .rev()
            .take_while(|t| **t != "macro" && **t != "call")
            .any(|t| *t == "for")
    }

    fn parse_if(&mut self) -> Result<StmtKind> {
        self.next();
        let mut branches = Vec::new();
        loop {
            let test = self.parse_tuple(false, false)?;
            let body = self.parse_statements(&["elif", "else", "endif"], false)?;
            branches.push((test, body));
            match self.next() {
                Tok::Name("elif") => continue,
                Tok::Name("else") => {
                    let else_body = self.parse_statements(&["endif"], true)?;
                    return Ok(StmtKind::If(branches, else_body));
                }
                _ => return Ok(StmtKind::If(branches, Vec::new())),
            }
        }
    }

    fn parse_for(&mut self) -> Result<StmtKind> {
        self.next();
        let (target, loop_at) = self.parse_assign_target(true, false)?;
        self.expect_name_kw("in")?;
        if let Some(at) = loop_at {
            return Err(loop_assignment(at));
        }
        let iter = self.parse_tuple(false, false)?;
        let cond = if self.skip_name("if") {
            Some(self.parse_expression(true)?)
        } else {
            None
        };
        let recursive = self.skip_name("recursive");
        let body = self.parse_statements(&["endfor", "else"], false)?;
        let else_body = match self.next() {
            Tok::Name("endfor") => Vec::new(),
            _ => {
                self.for_else.push(self.open.len() - 1);
                let body = self.parse_statements(&["endfor"], true);
                self.for_else.pop();
                body?
            }
        };
        // The `loop` object is built only for loops whose body can see it.
        let mut uses = UsedNames {
            deep: true,
            ..UsedNames::default()
        };
        uses.stmts(&body);
        Ok(StmtKind::For(Box::new(ForLoop {
            target,
            iter,
            cond,
            body,
            else_body,
            recursive,
            uses_loop: uses.loop_var || recursive,
            scope: 0,
            loop_slot: 0,
            rebinds_all: false,
            else_scope: 0,
        })))
    }

    fn parse_set(&mut self) -> Result<StmtKind> {
        self.next();
        let (target, loop_at) = self.parse_assign_target(true, true)?;
        if let Some(at) = loop_at.filter(|_| self.in_loop_body()) {
            return Err(loop_assignment(at));
        }
        if self.skip_op("=") {
            let value = self.parse_tuple(true, false)?;
            return Ok(StmtKind::Set(target, value));
        }
        let filter = if self.is_op("|") {
            Some(self.parse_filter(None, false)?)
        } else {
            None
        };
        let body = self.parse_statements(&["endset"], true)?;
        Ok(StmtKind::SetBlock(target, filter, body, 0))
    }

    /// The shared allocation of the variable name `name`.
    fn ident(&mut self, name: &'s str) -> Ident {
        self.idents.entry(name).or_insert_with(|| name.into()).clone()
    }

    fn parse_signature(&mut self) -> Result<Vec<(Ident, Option<Expr>)>> {
        self.expect_op("(")?;
        let mut params: Vec<(Ident, Option<Expr>)> = Vec::new();
        while !self.is_op(")") {
            if !params.is_empty() {
                self.expect_op(",")?;
            }
            let name = self.expect_name()?;
            let default = if self.skip_op("=") {
                Some(self.parse_expression(true)?)
            } else {
                if params.iter().any(|(_, d)| d.is_some()) {
                    return Err(self.fail("non-default argument follows default argument"));
                }
                None
            };
            if params.iter().any(|(n, _)| &**n == name) {
                return Err(Error::new(
                    crate::error::ErrorKind::SyntaxError,
                    format!("duplicate argument '{name}' in function definition"),
                ));
            }
            params.push((self.ident(name), default));
        }
        self.expect_op(")")?;
        Ok(params)
    }

    fn make_macro(name: Ident, anonymous: bool, params: Vec<(Ident, Option<Expr>)>, body: Vec<Stmt>) -> Arc<MacroDef> {
        let mut uses = UsedNames::default();
        uses.stmts(&body);
        // A parameter named `varargs` or `kwargs` is an ordinary parameter, not the catch-all.
        let param = |name: &str| params.iter().any(|(n, _)| &**n == name);
        let (uses_varargs, uses_kwargs) = (uses.varargs && !param("varargs"), uses.kwargs && !param("kwargs"));
        Arc::new(MacroDef {
            name,
            anonymous,
            params,
            body,
            uses_caller: uses.caller,
            uses_varargs,
            uses_kwargs,
            scope: 0,
        })
    }

    fn parse_macro(&mut self) -> Result<StmtKind> {
        self.next();
        let name = self.expect_name()?;
        let name = self.ident(name);
        let params = self.parse_signature()?;
        let body = self.parse_statements(&["endmacro"], true)?;
        Ok(StmtKind::Macro(Self::make_macro(name, false, params, body)))
    }

    fn parse_call_block(&mut self) -> Result<StmtKind> {
        let pos = self.pos();
        self.next();
        let params = if self.is_op("(") {
            self.parse_signature()?
        } else {
            Vec::new()
        };
        let call = self.parse_expression(true)?;
        if !matches!(call.kind, ExprKind::Call(..)) {
            return Err(self.fail_at("expected call", pos));
        }
        let body = self.parse_statements(&["endcall"], true)?;
        Ok(StmtKind::CallBlock(
            call,
            Self::make_macro(self.ident("caller"), true, params, body),
        ))
    }

    fn parse_filter_block(&mut self) -> Result<StmtKind> {
        self.next();
        let filter = self.parse_filter(None, true)?;
        let body = self.parse_statements(&["endfilter"], true)?;
        Ok(StmtKind::FilterBlock(filter, body, 0))
    }

    fn parse_with(&mut self) -> Result<StmtKind> {
        self.next();
        let mut assigns = Vec::new();
        while *self.cur() != Tok::BlockEnd {
            if !assigns.is_empty() {
                self.expect_op(",")?;
            }
            let (target, _) = self.parse_assign_target(true, false)?;
            self.expect_op("=")?;
            assigns.push((target, self.parse_expression(true)?));
        }
        let body = self.parse_statements(&["endwith"], true)?;
        Ok(StmtKind::With(assigns, body, 0))
    }

    fn parse_block(&mut self) -> Result<StmtKind> {
        let pos = self.pos();
        self.next();
        let name = self.expect_name()?;
        if self.blocks.contains(&name) {
            return Err(Error::new(
                crate::error::ErrorKind::TemplateAssertionError,
                format!("block '{name}' defined twice"),
            )
            .at(pos.line, pos.col));
        }
        self.blocks.push(name);
        let scoped = self.skip_name("scoped");
        self.skip_name("required");
        if self.is_op("-") {
            return Err(self.fail(
                "Block names in Jinja have to be valid Python identifiers and may not contain hyphens, use an underscore instead.",
            ));
        }
        let body = self.parse_statements(&["endblock"], true)?;
        self.skip_name(name);
        Ok(StmtKind::Block(
            name.into(),
            body,
            BlockScope {
                scoped,
                ..BlockScope::default()
            },
        ))
    }

    fn parse_import_context(&mut self) {
        if matches!(self.cur(), Tok::Name("with" | "without")) && matches!(self.look(), Tok::Name("context")) {
            self.next();
            self.next();
        }
    }

    fn parse_import(&mut self) -> Result<StmtKind> {
        self.next();
        let e = self.parse_expression(true)?;
        self.expect_name_kw("as")?;
        self.expect_name()?;
        self.parse_import_context();
        Ok(StmtKind::NeedsLoader(e))
    }

    fn parse_from(&mut self) -> Result<StmtKind> {
        self.next();
        let e = self.parse_expression(true)?;
        self.expect_name_kw("import")?;
        let mut first = true;
        loop {
            if !first {
                self.expect_op(",")?;
            }
            first = false;
            if !matches!(self.cur(), Tok::Name(_)) {
                self.expect_name()?;
            }
            if matches!(self.cur(), Tok::Name("with" | "without")) && matches!(self.look(), Tok::Name("context")) {
                self.parse_import_context();
                break;
            }
            let pos = self.pos();
            let name = self.expect_name()?;
            if name.starts_with('_') {
                return Err(Error::new(
                    crate::error::ErrorKind::TemplateAssertionError,
                    "names starting with an underline can not be imported",
                )
                .at(pos.line, pos.col));
            }
            if self.skip_name("as") {
                self.expect_name()?;
            }
            if matches!(self.cur(), Tok::Name("with" | "without")) && matches!(self.look(), Tok::Name("context")) {
                self.parse_import_context();
                break;
            }
            if !self.is_op(",") {
                break;
            }
        }
        Ok(StmtKind::NeedsLoader(e))
    }

    /// An assignment target: a name, `ns.attr` (with `with_namespace`), or a tuple of them. As in
    /// Jinja2 3.1.6, only the end of the tag or a `)` ends a tuple of targets (its parser's extra end
    /// rules, such as a `for` loop's `in`, never match), and whether the target can be assigned to is
    /// checked once it is parsed, naming its node (`can't assign to 'tuple'` for `a, 1`). Also gives
    /// where the target names `loop`, if it does.
    fn parse_assign_target(&mut self, with_tuple: bool, with_namespace: bool) -> Result<(Target, Option<Pos>)> {
        let mut items = Vec::new();
        let mut is_tuple = false;
        // Where Jinja2's tuple node says it is: the line of its last comma.
        let mut tuple_pos = self.pos();
        loop {
            if !items.is_empty() {
                self.expect_op(",")?;
            }
            if with_tuple && self.is_tuple_end() {
                if items.is_empty() {
                    return Err(self.fail(format!("Expected an expression, got '{}'", describe(self.cur()))));
                }
                break;
            }
            items.push(self.parse_target_item(with_namespace)?);
            if with_tuple && self.is_op(",") {
                is_tuple = true;
                tuple_pos = self.pos();
            } else {
                break;
            }
        }
        let loop_at = items.iter().find_map(|i| match i {
            TargetItem::Expr(e) => loop_name_pos(e),
            TargetItem::Namespace(_) => None,
        });
        let target = |item: &TargetItem| match item {
            TargetItem::Namespace(t) => Some(t.clone()),
            TargetItem::Expr(e) => to_target(e),
        };
        if is_tuple {
            return (items.iter().map(target).collect::<Option<Vec<_>>>())
                .map(|items| (Target::Tuple(items), loop_at))
                .ok_or_else(|| self.fail_at("can't assign to 'tuple'", tuple_pos));
        }
        match items.pop() {
            Some(TargetItem::Namespace(t)) => Ok((t, None)),
            Some(TargetItem::Expr(e)) => (to_target(&e).map(|t| (t, loop_at)))
                .ok_or_else(|| self.fail_at(format!("can't assign to '{}'", node_name(&e)), e.pos)),
            None => Err(self.fail("Expected an expression")),
        }
    }

    /// One item of an assignment target: `ns.attr` where a namespace may be assigned to (a name
    /// other than a constant's, then a dot), else a primary expression.
    fn parse_target_item(&mut self, with_namespace: bool) -> Result<TargetItem> {
        let constant = matches!(
            self.cur(),
            Tok::Name("true" | "false" | "True" | "False" | "none" | "None")
        );
        if with_namespace && !constant && matches!(self.look(), Tok::Op(".")) && matches!(self.cur(), Tok::Name(_)) {
            let ns = self.expect_name()?;
            self.next();
            let attr = self.expect_name()?;
            return Ok(TargetItem::Namespace(Target::Attr(
                self.ident(ns),
                VarRef::default(),
                attr.into(),
            )));
        }
        Ok(TargetItem::Expr(self.parse_primary()?))
    }

    // ---- expressions ---------------------------------------------------------------------

    /// Jinja2 passes extra end rules here too, but its `test_any` receives them as one tuple and
    /// never matches, so only these tokens end a tuple (`{% for a, in x %}` is a syntax error).
    fn is_tuple_end(&self) -> bool {
        matches!(self.cur(), Tok::VarEnd | Tok::BlockEnd | Tok::Op(")"))
    }

    fn parse_tuple(&mut self, with_condexpr: bool, explicit: bool) -> Result<Expr> {
        let pos = self.pos();
        let mut items = Vec::new();
        let mut is_tuple = false;
        loop {
            if !items.is_empty() {
                self.expect_op(",")?;
            }
            if self.is_tuple_end() {
                break;
            }
            items.push(self.parse_expression(with_condexpr)?);
            if self.is_op(",") {
                is_tuple = true;
            } else {
                break;
            }
        }
        if !is_tuple {
            if let Some(e) = items.pop() {
                return Ok(e);
            }
            if !explicit {
                return Err(self.fail(format!("Expected an expression, got '{}'", describe(self.cur()))));
            }
        }
        Ok(Expr {
            kind: ExprKind::Tuple(items),
            pos,
        })
    }

    fn parse_expression(&mut self, with_condexpr: bool) -> Result<Expr> {
        if with_condexpr {
            self.parse_condexpr()
        } else {
            self.parse_or()
        }
    }

    fn parse_condexpr(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let mut e1 = self.parse_or()?;
        while self.skip_name("if") {
            let e2 = self.parse_or()?;
            let e3 = if self.skip_name("else") {
                Some(Box::new(self.parse_condexpr()?))
            } else {
                None
            };
            e1 = Expr {
                kind: ExprKind::Cond(Box::new(e2), Box::new(e1), e3),
                pos,
            };
        }
        Ok(e1)
    }

    fn parse_or(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let mut left = self.parse_and()?;
        while self.skip_name("or") {
            let right = self.parse_and()?;
            left = Expr {
                kind: ExprKind::Or(Box::new(left), Box::new(right)),
                pos,
            };
        }
        Ok(left)
    }

    fn parse_and(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let mut left = self.parse_not()?;
        while self.skip_name("and") {
            let right = self.parse_not()?;
            left = Expr {
                kind: ExprKind::And(Box::new(left), Box::new(right)),
                pos,
            };
        }
        Ok(left)
    }

    fn parse_not(&mut self) -> Result<Expr> {
        let pos = self.pos();
        if self.skip_name("not") {
            let e = self.parse_not()?;
            return Ok(Expr {
                kind: ExprKind::Unary(UnOp::Not, Box::new(e)),
                pos,
            });
        }
        self.parse_compare()
    }

    fn parse_compare(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let first = self.parse_math1()?;
        let mut ops = Vec::new();
        loop {
            let op = match self.cur() {
                Tok::Op("==") => CmpOp::Eq,
                Tok::Op("!=") => CmpOp::Ne,
                Tok::Op("<") => CmpOp::Lt,
                Tok::Op("<=") => CmpOp::Le,
                Tok::Op(">") => CmpOp::Gt,
                Tok::Op(">=") => CmpOp::Ge,
                Tok::Name("in") => CmpOp::In,
                Tok::Name("not") if matches!(self.look(), Tok::Name("in")) => {
                    self.next();
                    CmpOp::NotIn
                }
                _ => break,
            };
            self.next();
            ops.push((op, self.parse_math1()?));
        }
        if ops.is_empty() {
            return Ok(first);
        }
        Ok(Expr {
            kind: ExprKind::Compare(Box::new(first), ops),
            pos,
        })
    }

    fn parse_math1(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let mut left = self.parse_concat()?;
        loop {
            let op = match self.cur() {
                Tok::Op("+") => BinOp::Add,
                Tok::Op("-") => BinOp::Sub,
                _ => return Ok(left),
            };
            self.next();
            let right = self.parse_concat()?;
            left = Expr {
                kind: ExprKind::Binary(op, Box::new(left), Box::new(right)),
                pos,
            };
        }
    }

    fn parse_concat(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let mut args = vec![self.parse_math2()?];
        while self.skip_op("~") {
            args.push(self.parse_math2()?);
        }
        if args.len() == 1 {
            return Ok(args.remove(0));
        }
        Ok(Expr {
            kind: ExprKind::Concat(args),
            pos,
        })
    }

    fn parse_math2(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let mut left = self.parse_pow()?;
        loop {
            let op = match self.cur() {
                Tok::Op("*") => BinOp::Mul,
                Tok::Op("/") => BinOp::Div,
                Tok::Op("//") => BinOp::FloorDiv,
                Tok::Op("%") => BinOp::Mod,
                _ => return Ok(left),
            };
            self.next();
            let right = self.parse_pow()?;
            left = Expr {
                kind: ExprKind::Binary(op, Box::new(left), Box::new(right)),
                pos,
            };
        }
    }

    fn parse_pow(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let mut left = self.parse_unary(true)?;
        while self.skip_op("**") {
            let right = self.parse_unary(true)?;
            left = Expr {
                kind: ExprKind::Binary(BinOp::Pow, Box::new(left), Box::new(right)),
                pos,
            };
        }
        Ok(left)
    }

    fn parse_unary(&mut self, with_filter: bool) -> Result<Expr> {
        self.nested(|p| p.parse_unary_inner(with_filter))
    }

    /// Runs a nested parse step within the nesting limit, growing the stack when needed.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Error::new(
                crate::error::ErrorKind::LimitExceeded,
                format!("template nesting deeper than {MAX_NESTING} levels (expressions or blocks)"),
            )
            .at(self.pos().line, self.pos().col));
        }
        let r = stacker::maybe_grow(crate::limits::STACK_RED_ZONE, crate::limits::STACK_SEGMENT, || f(self));
        self.depth -= 1;
        r
    }

    fn parse_unary_inner(&mut self, with_filter: bool) -> Result<Expr> {
        let pos = self.pos();
        let mut node = if self.skip_op("-") {
            let e = self.parse_unary(false)?;
            Expr {
                kind: ExprKind::Unary(UnOp::Neg, Box::new(e)),
                pos,
            }
        } else if self.skip_op("+") {
            let e = self.parse_unary(false)?;
            Expr {
                kind: ExprKind::Unary(UnOp::Pos, Box::new(e)),
                pos,
            }
        } else {
            self.parse_primary()?
        };
        node = self.parse_postfix(node)?;
        if with_filter {
            node = self.parse_filter_expr(node)?;
        }
        Ok(node)
    }

    fn parse_primary(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let kind = match self.cur().clone() {
            Tok::Name(n) => {
                self.next();
                match n {
                    "true" | "True" => ExprKind::Const(Const::Bool(true)),
                    "false" | "False" => ExprKind::Const(Const::Bool(false)),
                    "none" | "None" => ExprKind::Const(Const::None),
                    _ => ExprKind::Name(self.ident(n), VarRef::default()),
                }
            }
            Tok::Str(s) => {
                self.next();
                let mut buf = s;
                while let Tok::Str(more) = self.cur() {
                    buf.push_str(more);
                    self.next();
                }
                ExprKind::Const(Const::Str(buf.into()))
            }
            Tok::Int(v) => {
                self.next();
                ExprKind::Const(Const::Int(v))
            }
            Tok::BigInt(v) => {
                self.next();
                ExprKind::Const(Const::BigInt(v))
            }
            Tok::Float(v) => {
                self.next();
                ExprKind::Const(Const::Float(v))
            }
            Tok::Op("(") => {
                self.next();
                let e = self.parse_tuple(true, true)?;
                self.expect_op(")")?;
                return Ok(e);
            }
            Tok::Op("[") => {
                self.next();
                let mut items = Vec::new();
                while !self.is_op("]") {
                    if !items.is_empty() {
                        self.expect_op(",")?;
                    }
                    if self.is_op("]") {
                        break;
                    }
                    items.push(self.parse_expression(true)?);
                }
                self.expect_op("]")?;
                ExprKind::List(items)
            }
            Tok::Op("{") => {
                self.next();
                let mut items = Vec::new();
                while !self.is_op("}") {
                    if !items.is_empty() {
                        self.expect_op(",")?;
                    }
                    if self.is_op("}") {
                        break;
                    }
                    let k = self.parse_expression(true)?;
                    self.expect_op(":")?;
                    let v = self.parse_expression(true)?;
                    items.push((k, v));
                }
                self.expect_op("}")?;
                ExprKind::Dict(items)
            }
            other => return Err(self.fail(format!("unexpected '{}'", describe(&other)))),
        };
        Ok(Expr { kind, pos })
    }

    fn parse_postfix(&mut self, mut node: Expr) -> Result<Expr> {
        loop {
            let pos = self.pos();
            if self.skip_op(".") {
                let attr_pos = self.pos();
                match self.next() {
                    Tok::Name(n) => {
                        node = Expr {
                            kind: ExprKind::GetAttr(Box::new(node), member(n)),
                            pos,
                        }
                    }
                    Tok::Int(v) => {
                        let key = Expr {
                            kind: ExprKind::Const(Const::Int(v)),
                            pos,
                        };
                        node = Expr {
                            kind: ExprKind::GetItem(Box::new(node), Box::new(key)),
                            pos,
                        };
                    }
                    _ => return Err(self.fail_at("expected name or number", attr_pos)),
                }
            } else if self.skip_op("[") {
                let mut args = Vec::new();
                while !self.is_op("]") {
                    if !args.is_empty() {
                        self.expect_op(",")?;
                    }
                    args.push(self.parse_subscribed()?);
                }
                self.expect_op("]")?;
                let arg = if args.len() == 1 {
                    args.remove(0)
                } else {
                    Expr {
                        kind: ExprKind::Tuple(args),
                        pos,
                    }
                };
                node = Expr {
                    kind: ExprKind::GetItem(Box::new(node), Box::new(arg)),
                    pos,
                };
            } else if self.is_op("(") {
                let args = self.parse_call_args()?;
                node = Expr {
                    kind: ExprKind::Call(Box::new(node), Box::new(args)),
                    pos,
                };
            } else {
                return Ok(node);
            }
        }
    }

    fn parse_subscribed(&mut self) -> Result<Expr> {
        let pos = self.pos();
        let start = if self.skip_op(":") {
            None
        } else {
            let e = self.parse_expression(true)?;
            if !self.skip_op(":") {
                return Ok(e);
            }
            Some(Box::new(e))
        };
        let stop = if self.is_op(":") || self.is_op("]") || self.is_op(",") {
            None
        } else {
            Some(Box::new(self.parse_expression(true)?))
        };
        let step = if self.skip_op(":") {
            if self.is_op("]") || self.is_op(",") {
                None
            } else {
                Some(Box::new(self.parse_expression(true)?))
            }
        } else {
            None
        };
        Ok(Expr {
            kind: ExprKind::Slice(start, stop, step),
            pos,
        })
    }

    fn parse_call_args(&mut self) -> Result<Args> {
        let pos = self.pos();
        self.expect_op("(")?;
        let mut args = Args::default();
        let mut require_comma = false;
        let invalid = |p: &Self| p.fail_at("invalid syntax for function call expression", pos);
        while !self.is_op(")") {
            if require_comma {
                self.expect_op(",")?;
                if self.is_op(")") {
                    break;
                }
            }
            if self.skip_op("*") {
                if args.star.is_some() || args.dstar.is_some() {
                    return Err(invalid(self));
                }
                args.star = Some(Box::new(self.parse_expression(true)?));
            } else if self.skip_op("**") {
                if args.dstar.is_some() {
                    return Err(invalid(self));
                }
                args.dstar = Some(Box::new(self.parse_expression(true)?));
            } else if let (Tok::Name(n), Tok::Op("=")) = (self.cur().clone(), self.look().clone()) {
                if args.dstar.is_some() {
                    return Err(invalid(self));
                }
                if args.kw.iter().any(|(k, _)| &**k == n) {
                    return Err(Error::new(
                        crate::error::ErrorKind::SyntaxError,
                        format!("keyword argument repeated: {n}"),
                    ));
                }
                self.next();
                self.next();
                let v = self.parse_expression(true)?;
                args.kw.push((n.into(), v));
            } else {
                if args.star.is_some() || args.dstar.is_some() || !args.kw.is_empty() {
                    return Err(invalid(self));
                }
                args.pos.push(self.parse_expression(true)?);
            }
            require_comma = true;
        }
        self.expect_op(")")?;
        Ok(args)
    }

    fn parse_dotted_name(&mut self) -> Result<String> {
        let mut name = self.expect_name()?.to_string();
        while self.skip_op(".") {
            name.push('.');
            name.push_str(self.expect_name()?);
        }
        Ok(name)
    }

    fn parse_filter(&mut self, mut node: Option<Expr>, mut start_inline: bool) -> Result<Expr> {
        while self.is_op("|") || start_inline {
            if !start_inline {
                self.next();
            }
            let pos = self.pos();
            let name = self.parse_dotted_name()?;
            let args = if self.is_op("(") {
                self.parse_call_args()?
            } else {
                Args::default()
            };
            node = Some(Expr {
                kind: ExprKind::Filter(
                    node.map(Box::new),
                    Box::new(Named {
                        index: table::filter_index(&name),
                        name: name.into(),
                    }),
                    Box::new(args),
                ),
                pos,
            });
            start_inline = false;
        }
        node.ok_or_else(|| self.fail("expected filter"))
    }

    fn parse_filter_expr(&mut self, mut node: Expr) -> Result<Expr> {
        loop {
            if self.is_op("|") {
                node = self.parse_filter(Some(node), false)?;
            } else if self.is_name("is") {
                node = self.parse_test(node)?;
            } else if self.is_op("(") {
                let pos = self.pos();
                let args = self.parse_call_args()?;
                node = Expr {
                    kind: ExprKind::Call(Box::new(node), Box::new(args)),
                    pos,
                };
            } else {
                return Ok(node);
            }
        }
    }

    fn parse_test(&mut self, node: Expr) -> Result<Expr> {
        let pos = self.pos();
        self.next();
        let negated = self.skip_name("not");
        let name = self.parse_dotted_name()?;
        let args = if self.is_op("(") {
            self.parse_call_args()?
        } else if matches!(
            self.cur(),
            Tok::Name(_) | Tok::Str(_) | Tok::Int(_) | Tok::BigInt(_) | Tok::Float(_) | Tok::Op("(" | "[" | "{")
        ) && !matches!(self.cur(), Tok::Name("else" | "or" | "and"))
        {
            if self.is_name("is") {
                return Err(self.fail("You cannot chain multiple tests with is"));
            }
            let arg = self.parse_primary()?;
            let arg = self.parse_postfix(arg)?;
            Args {
                pos: vec![arg],
                ..Args::default()
            }
        } else {
            Args::default()
        };
        let test = Expr {
            kind: ExprKind::Test(
                Box::new(node),
                Box::new(Named {
                    index: table::test_index(&name),
                    name: name.into(),
                }),
                Box::new(args),
            ),
            pos,
        };
        if negated {
            return Ok(Expr {
                kind: ExprKind::Unary(UnOp::Not, Box::new(test)),
                pos,
            });
        }
        Ok(test)
    }
}

fn to_target(e: &Expr) -> Option<Target> {
    match &e.kind {
        ExprKind::Name(n, _) => Some(Target::Name(n.clone(), Bind::default())),
        ExprKind::Tuple(items) => items
            .iter()
            .map(to_target)
            .collect::<Option<Vec<_>>>()
            .map(Target::Tuple),
        _ => None,
    }
}

/// An item of an assignment target as parsed, before it is checked.
enum TargetItem {
    Namespace(Target),
    Expr(Expr),
}

/// Where an assignment target's expression names `loop`, if it does.
fn loop_name_pos(e: &Expr) -> Option<Pos> {
    match &e.kind {
        ExprKind::Name(n, _) if &**n == "loop" => Some(e.pos),
        ExprKind::Tuple(items) => items.iter().find_map(loop_name_pos),
        _ => None,
    }
}

/// Jinja2's error for a `for` target or `set` inside a loop that assigns to `loop`, at the target.
fn loop_assignment(at: Pos) -> Error {
    Error::new(
        crate::error::ErrorKind::TemplateAssertionError,
        "Can't assign to special loop variable in for-loop target",
    )
    .at(at.line, at.col)
}

/// The lowercased class name of Jinja2's node for an expression (what its parser names in `can't
/// assign to '...'`).
fn node_name(e: &Expr) -> &'static str {
    match &e.kind {
        ExprKind::Const(_) => "const",
        ExprKind::Name(..) => "name",
        ExprKind::List(_) => "list",
        ExprKind::Tuple(_) => "tuple",
        ExprKind::Dict(_) => "dict",
        ExprKind::GetAttr(..) => "getattr",
        ExprKind::GetItem(..) => "getitem",
        ExprKind::Slice(..) => "slice",
        ExprKind::Call(..) => "call",
        ExprKind::Filter(..) => "filter",
        ExprKind::Test(..) => "test",
        ExprKind::Unary(UnOp::Neg, _) => "neg",
        ExprKind::Unary(UnOp::Pos, _) => "pos",
        ExprKind::Unary(UnOp::Not, _) => "not",
        ExprKind::Binary(op, ..) => match op {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::FloorDiv => "floordiv",
            BinOp::Mod => "mod",
            BinOp::Pow => "pow",
        },
        ExprKind::And(..) => "and",
        ExprKind::Or(..) => "or",
        ExprKind::Compare(..) => "compare",
        ExprKind::Concat(_) => "concat",
        ExprKind::Cond(..) => "condexpr",
    }
}

/// Which of the special names `caller`, `varargs`, `kwargs`, `loop` a body reads.
#[derive(Default)]
struct UsedNames {
    caller: bool,
    varargs: bool,
    kwargs: bool,
    /// `loop` is mentioned (with `deep`, inside nested macro bodies too; not inside the bodies of
    /// nested loops, where `loop` is their own).
    loop_var: bool,
    /// Walk into the bodies of nested macros.
    deep: bool,
}

impl UsedNames {
    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Text(_) | StmtKind::Break | StmtKind::Continue => {}
            StmtKind::Print(e, _) | StmtKind::Set(_, e) | StmtKind::NeedsLoader(e) => self.expr(e),
            StmtKind::If(branches, else_body) => {
                for (t, b) in branches {
                    self.expr(t);
                    self.stmts(b);
                }
                self.stmts(else_body);
            }
            StmtKind::For(f) => {
                self.expr(&f.iter);
                if let Some(c) = &f.cond {
                    self.expr(c);
                }
                // `loop` in a nested loop's body is that loop's own object.
                let loop_var = self.loop_var;
                self.stmts(&f.body);
                self.loop_var = loop_var;
                self.stmts(&f.else_body);
            }
            StmtKind::SetBlock(_, filter, body, _) => {
                if let Some(f) = filter {
                    self.expr(f);
                }
                self.stmts(body);
            }
            StmtKind::Macro(m) => {
                if self.deep {
                    for (_, d) in &m.params {
                        if let Some(d) = d {
                            self.expr(d);
                        }
                    }
                    self.stmts(&m.body);
                }
            }
            StmtKind::CallBlock(call, m) => {
                self.expr(call);
                for (_, d) in &m.params {
                    if let Some(d) = d {
                        self.expr(d);
                    }
                }
                self.stmts(&m.body);
            }
            StmtKind::FilterBlock(f, body, _) | StmtKind::Autoescape(f, body, _) => {
                self.expr(f);
                self.stmts(body);
            }
            StmtKind::With(assigns, body, _) => {
                for (_, e) in assigns {
                    self.expr(e);
                }
                self.stmts(body);
            }
            StmtKind::Generation(body, _) | StmtKind::Block(_, body, _) => self.stmts(body),
        }
    }

    fn expr(&mut self, e: &Expr) {
        crate::analysis::visit_names(e, &mut |n| match n {
            "caller" => self.caller = true,
            "varargs" => self.varargs = true,
            "kwargs" => self.kwargs = true,
            "loop" => self.loop_var = true,
            _ => {}
        });
    }
}

/// Parses a token stream into the template body.
pub fn parse(toks: Vec<Token<'_>>) -> Result<Vec<Stmt>> {
    let mut p = Parser {
        toks,
        i: 0,
        open: Vec::new(),
        for_else: Vec::new(),
        ends: Vec::new(),
        blocks: Vec::new(),
        depth: 0,
        idents: HashMap::new(),
    };
    let body = p.subparse(&[])?;
    if *p.cur() != Tok::Eof {
        return Err(p.fail("unexpected token after template end"));
    }
    Ok(body)
}

/// Unknown filters and tests are compile-time errors outside `if` bodies and conditional
/// expressions (Jinja2's "soft" frames), and run-time errors inside them.
/// Jinja2's check of a macro (or call block) whose body calls `caller` and that names `caller` as a
/// parameter: the parameter needs a default.
fn caller_has_default(m: &MacroDef, pos: Pos) -> Result<()> {
    if m.uses_caller && m.params.iter().any(|(n, d)| &**n == "caller" && d.is_none()) {
        return Err(err!(
            TemplateAssertionError,
            "When defining macros or call blocks the special \"caller\" argument must be omitted or be given a default."
        )
        .at(pos.line, pos.col));
    }
    Ok(())
}

pub fn check_names(body: &[Stmt]) -> Result<()> {
    NameCheck.stmts(body, false)
}

struct NameCheck;

impl NameCheck {
    fn stmts(&mut self, body: &[Stmt], soft: bool) -> Result<()> {
        body.iter().try_for_each(|s| self.stmt(s, soft))
    }

    fn stmt(&mut self, s: &Stmt, soft: bool) -> Result<()> {
        match &s.kind {
            StmtKind::Text(_) | StmtKind::Break | StmtKind::Continue => Ok(()),
            StmtKind::Print(e, _) | StmtKind::Set(_, e) | StmtKind::NeedsLoader(e) => self.expr(e, soft),
            StmtKind::If(branches, else_body) => {
                for (t, b) in branches {
                    self.expr(t, true)?;
                    self.stmts(b, true)?;
                }
                self.stmts(else_body, true)
            }
            // Jinja2 compiles a loop's filter condition before its iterable.
            StmtKind::For(f) => {
                if let Some(c) = &f.cond {
                    self.expr(c, false)?;
                }
                self.expr(&f.iter, soft)?;
                self.stmts(&f.body, false)?;
                self.stmts(&f.else_body, false)
            }
            // Block bodies compile before the filter applied to them.
            StmtKind::SetBlock(_, filter, body, _) => {
                self.stmts(body, false)?;
                match filter {
                    Some(f) => self.expr(f, false),
                    None => Ok(()),
                }
            }
            StmtKind::Macro(m) => {
                caller_has_default(m, s.pos)?;
                for (_, d) in &m.params {
                    if let Some(d) = d {
                        self.expr(d, false)?;
                    }
                }
                self.stmts(&m.body, false)
            }
            // The caller's body (defaults, then statements) compiles before the call.
            StmtKind::CallBlock(call, m) => {
                caller_has_default(m, s.pos)?;
                for (_, d) in &m.params {
                    if let Some(d) = d {
                        self.expr(d, false)?;
                    }
                }
                self.stmts(&m.body, false)?;
                self.expr(call, soft)
            }
            StmtKind::FilterBlock(f, body, _) => {
                self.stmts(body, false)?;
                self.expr(f, false)
            }
            StmtKind::Autoescape(e, body, _) => {
                self.expr(e, soft)?;
                self.stmts(body, soft)
            }
            StmtKind::With(assigns, body, _) => {
                for (_, e) in assigns {
                    self.expr(e, soft)?;
                }
                self.stmts(body, false)
            }
            StmtKind::Generation(body, _) | StmtKind::Block(_, body, _) => self.stmts(body, soft),
        }
    }

    fn args(&mut self, a: &Args, soft: bool) -> Result<()> {
        for e in a.pos.iter().chain(a.kw.iter().map(|(_, e)| e)) {
            self.expr(e, soft)?;
        }
        for e in [&a.star, &a.dstar].into_iter().flatten() {
            self.expr(e, soft)?;
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr, soft: bool) -> Result<()> {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Name(..) => Ok(()),
            ExprKind::List(items) | ExprKind::Tuple(items) | ExprKind::Concat(items) => {
                items.iter().try_for_each(|i| self.expr(i, soft))
            }
            ExprKind::Dict(items) => items.iter().try_for_each(|(k, v)| {
                self.expr(k, soft)?;
                self.expr(v, soft)
            }),
            ExprKind::GetAttr(o, _) | ExprKind::Unary(_, o) => self.expr(o, soft),
            ExprKind::Binary(..) => {
                if let ExprKind::Binary(_, a, b) = &e.kind {
                    self.expr(a, soft)?;
                    self.expr(b, soft)?;
                }
                check_folded_int(e)
            }
            ExprKind::GetItem(a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                self.expr(a, soft)?;
                self.expr(b, soft)
            }
            ExprKind::Slice(a, b, c) => [a, b, c].into_iter().flatten().try_for_each(|x| self.expr(x, soft)),
            ExprKind::Call(f, args) => {
                self.expr(f, soft)?;
                self.args(args, soft)
            }
            // A filter's or test's own name is checked before its operand, as Jinja2 compiles
            // the call before its arguments: `x|a|b` reports `b` first.
            ExprKind::Filter(v, name, args) => {
                if !soft && name.index.is_none() {
                    return Err(
                        err!(TemplateAssertionError, "No filter named '{}'.", &*name.name).at(e.pos.line, e.pos.col)
                    );
                }
                if let Some(v) = v {
                    self.expr(v, soft)?;
                }
                self.args(args, soft)
            }
            ExprKind::Test(v, name, args) => {
                if !soft && name.index.is_none() {
                    return Err(
                        err!(TemplateAssertionError, "No test named '{}'.", &*name.name).at(e.pos.line, e.pos.col)
                    );
                }
                self.expr(v, soft)?;
                self.args(args, soft)
            }
            ExprKind::Compare(first, rest) => {
                self.expr(first, soft)?;
                rest.iter().try_for_each(|(_, e)| self.expr(e, soft))
            }
            ExprKind::Cond(a, b, c) => {
                self.expr(a, true)?;
                self.expr(b, true)?;
                if let Some(c) = c {
                    self.expr(c, true)?;
                }
                Ok(())
            }
        }
    }
}

/// The member `name` of `obj.name`: on a JSON object, the item `name` unless the name is private
/// (`_x`) or a `dict` method.
fn member(name: &str) -> Member {
    Member {
        data_key: !name.starts_with('_') && !is_dict_method(name),
        name: name.into(),
    }
}

/// Jinja2 folds constant integer arithmetic at compile time and writes the result into generated
/// Python code, so an integer constant beyond CPython's 4300-digit `str()` limit fails to compile.
fn check_folded_int(e: &Expr) -> Result<()> {
    if let Some(v) = const_int(e) {
        if v.magnitude().bits() > 14_280 && v.magnitude().to_string().len() > 4300 {
            return Err(Error::new(
                crate::error::ErrorKind::ValueError,
                "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit",
            )
            .at(e.pos.line, e.pos.col));
        }
    }
    Ok(())
}

/// The value of a constant integer expression, if it is one (and reasonably sized).
fn const_int(e: &Expr) -> Option<num_bigint::BigInt> {
    use num_bigint::BigInt;
    match &e.kind {
        ExprKind::Const(Const::Int(i)) => Some(BigInt::from(*i)),
        ExprKind::Const(Const::BigInt(i)) => Some((**i).clone()),
        ExprKind::Const(Const::Bool(b)) => Some(BigInt::from(*b as i64)),
        ExprKind::Unary(UnOp::Neg, x) => const_int(x).map(|v| -v),
        ExprKind::Unary(UnOp::Pos, x) => const_int(x),
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (const_int(a)?, const_int(b)?);
            match op {
                BinOp::Add => Some(a + b),
                BinOp::Sub => Some(a - b),
                BinOp::Mul if a.bits() + b.bits() < 1 << 20 => Some(a * b),
                BinOp::Pow => {
                    let e = u32::try_from(&b).ok()?;
                    (a.bits().saturating_mul(e as u64) < 1 << 20).then(|| a.pow(e))
                }
                _ => None,
            }
        }
        _ => None,
    }
}
