//! Tokens to AST. (stub: being written)
use crate::ast::Program;
use crate::diag::Diagnostic;
use crate::span::Span;
use crate::token::Token;

pub fn parse(_tokens: &[(Token<'_>, Span)], _len: usize) -> (Program, Vec<Diagnostic>) {
    (Program::default(), Vec::new())
}
