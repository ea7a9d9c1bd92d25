//! `acc atomic` (LANGUAGE.md 7.8) in device code.

use acc_lang::ir::Stmt;

use crate::fx::{unsupported, Fx, Result};

impl Fx<'_, '_> {
    pub(crate) fn atomic(&mut self, _s: &Stmt) -> Result<()> {
        unsupported("`acc atomic` in device code")
    }
}
