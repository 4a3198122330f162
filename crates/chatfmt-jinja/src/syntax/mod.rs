//! Lexing and parsing template source into a syntax tree.

pub mod ast;
pub mod lexer;
pub mod parser;
pub mod print_plan;
