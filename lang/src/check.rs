//! Names and types. (stub: being written)
use crate::ast;
use crate::diag::Diagnostic;
use crate::hir;

#[derive(Default)]
pub struct Checker {}

impl Checker {
    pub fn check(
        &mut self,
        _program: &ast::Program,
    ) -> Result<(hir::Program, Vec<Diagnostic>), Vec<Diagnostic>> {
        Ok((hir::Program::default(), Vec::new()))
    }
    /// Keep what the last `check` declared.
    pub fn commit(&mut self) {}
    /// Forget what the last `check` declared.
    pub fn rollback(&mut self) {}
}
