//! Bounds checks hoisted out of counted loops, by loop versioning: which accesses qualify is
//! `acc_lang::ir::bounds` (shared with the PTX back end); here is the pre-check before a loop
//! whose fast copy leaves those accesses' checks out.

use acc_lang::ir::bounds::{self, Hoisted, Index};
use acc_lang::ir::{Block, LocalId, ScalarType};
use acc_runtime::abi::ARRAY_DIMS_OFFSET;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type, Value};

use super::expr::scalar_of;
use super::Tx;
use crate::JitError;

impl Tx<'_, '_> {
    /// The accesses of a loop body over `var` whose checks can be hoisted (those already
    /// proven by an enclosing loop are left out). Other gangs may change a shared cell during
    /// the loop: never an invariant.
    pub(super) fn hoistable<'a>(&self, var: LocalId, body: &'a Block) -> Vec<Hoisted<'a>> {
        let cached = |g: &acc_lang::ir::GlobalId| self.cached_globals.contains_key(g);
        bounds::hoistable(var, body, self.cells.iter().copied(), &cached)
            .into_iter()
            .filter(|h| !self.proven.contains(&h.key))
            .collect()
    }

    /// The locals a loop body reads and never assigns, other than `var`. Their values before
    /// the loop are theirs in every iteration; redefining them at the top of the body keeps
    /// the SSA builder from threading them through the loop header as block parameters, which
    /// Cranelift would not see as loop-invariant.
    pub(super) fn invariant_locals(&self, var: LocalId, body: &Block) -> Vec<LocalId> {
        bounds::invariant_locals(var, body)
    }

    /// Whether every access of `hoisted` is in bounds for `var` from `first` to `last` (of type
    /// `t`, `first <= last`): evaluated before the loop, with no side effects.
    pub(super) fn in_bounds_throughout(
        &mut self,
        hoisted: &[Hoisted<'_>],
        t: Type,
        first: Value,
        last: Value,
    ) -> Result<Value, JitError> {
        let wide = |tx: &mut Self, v: Value| {
            if tx.b.func.dfg.value_type(v) == types::I64 {
                v
            } else {
                tx.b.ins().sextend(types::I64, v)
            }
        };
        let lo = wide(self, first);
        let hi = wide(self, last);
        // Keep `var + c` exact in 64 bits (and, for an `i32` index, within `i32`).
        let limit = self.iconst(types::I64, 1 << 62);
        let neg_limit = self.iconst(types::I64, -(1 << 62));
        let a = self.b.ins().icmp(IntCC::SignedLessThan, hi, limit);
        let b = self.b.ins().icmp(IntCC::SignedGreaterThan, lo, neg_limit);
        let mut ok = self.b.ins().band(a, b);
        for h in bounds::distinct(hoisted) {
            let handle = self.expr(h.array)?;
            for (k, index) in h.indices.iter().enumerate() {
                let offset = ARRAY_DIMS_OFFSET + 8 * k as i32;
                let dim = self.b.ins().load(
                    types::I64,
                    MemFlagsData::trusted().with_readonly().with_can_move(),
                    handle,
                    offset,
                );
                let fits = match index {
                    Index::Affine(c) => {
                        let c = self.iconst(types::I64, *c);
                        let low = self.b.ins().iadd(lo, c);
                        let high = self.b.ins().iadd(hi, c);
                        let zero = self.iconst(types::I64, 0);
                        let nonneg = self
                            .b
                            .ins()
                            .icmp(IntCC::SignedGreaterThanOrEqual, low, zero);
                        let below = self.b.ins().icmp(IntCC::SignedLessThan, high, dim);
                        let mut fits = self.b.ins().band(nonneg, below);
                        if t != types::I64 {
                            let max = self.iconst(types::I64, i32::MAX as i64);
                            let narrow = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, high, max);
                            fits = self.b.ins().band(fits, narrow);
                        }
                        fits
                    }
                    Index::Invariant(e) => {
                        let v = self.expr(e)?;
                        let v = match scalar_of(e, "an index")? {
                            ScalarType::I32 => self.b.ins().sextend(types::I64, v),
                            _ => v,
                        };
                        self.b.ins().icmp(IntCC::UnsignedLessThan, v, dim)
                    }
                };
                ok = self.b.ins().band(ok, fits);
            }
        }
        Ok(ok)
    }
}
