//! Loading globals once per loop instead of once per use.
//!
//! Top-level variables are globals, so a script's loops read arrays and scalars through
//! `ctx.globals` slots. Cranelift cannot tell that the loop's element stores leave the slots
//! alone, so it reloads each slot (and the array headers behind it) in every iteration. The
//! globals a loop reads and cannot change (`acc_lang::ir::uses`) are loaded before it, and the
//! loop uses those values: the array headers then become loop-invariant and their loads are
//! hoisted too.

use acc_lang::ir::{uses, Block, Expr, GlobalId};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData};

use super::{clif_type, Tx};
use crate::JitError;

impl Tx<'_, '_> {
    /// Load the globals that a loop (its per-iteration expressions and its body) reads and
    /// cannot change, before it; returns what to pass to `forget_globals` after the loop.
    pub(super) fn preload_globals(
        &mut self,
        exprs: &[&Expr],
        body: &Block,
    ) -> Result<Vec<GlobalId>, JitError> {
        let mut added = Vec::new();
        for (g, ty) in uses::invariant_globals(exprs, body) {
            if self.cached_globals.contains_key(&g) {
                continue;
            }
            let (base, offset) = self.global_addr(g)?;
            let v = self
                .b
                .ins()
                .load(clif_type(ty), MemFlagsData::trusted(), base, offset);
            self.cached_globals.insert(g, v);
            added.push(g);
        }
        Ok(added)
    }

    pub(super) fn forget_globals(&mut self, added: Vec<GlobalId>) {
        for g in added {
            self.cached_globals.remove(&g);
        }
    }
}
