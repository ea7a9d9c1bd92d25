//! Structural directive rules. (stub: being written)
use crate::ast::Program;
use crate::diag::Diagnostic;

pub fn validate(_program: &Program) -> Vec<Diagnostic> {
    Vec::new()
}
