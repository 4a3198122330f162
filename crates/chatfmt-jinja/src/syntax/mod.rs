//! Lexing and parsing template source into a syntax tree.

pub(crate) mod lexer;
pub(crate) mod parser;
pub(crate) mod print_plan;
pub(crate) mod scopes;
mod symbols;
