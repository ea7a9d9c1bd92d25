//! Directive analysis. (stub: being written)
use crate::diag::Diagnostic;
use crate::hir;

#[derive(Debug, Default)]
pub struct Analysis {}

pub fn analyze(_program: &hir::Program) -> (Analysis, Vec<Diagnostic>) {
    (Analysis::default(), Vec::new())
}
