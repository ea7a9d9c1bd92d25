//! Bounds checks hoisted out of counted loops, by loop versioning (as jit-host does): which
//! accesses qualify is `acc_lang::ir::bounds`. Before a loop with a constant positive step,
//! one predicate says whether every such access is in bounds for the loop variable's whole
//! range; a copy of the code without those checks runs when it holds, the checked copy
//! otherwise: the whole loop for a sequential loop, each iteration's body in a loop shared
//! among threads (so a failing access still fails in its own iteration, at its own
//! site). The predicate is uniform wherever barriers matter: it depends only on the loop's
//! bounds, the arrays' extents and values the loop does not change, which threads that share
//! code (and so its barriers) hold alike.

use acc_lang::hir::Const;
use acc_lang::ir::bounds::{self, Hoisted, Index, MAX_VERSION_DEPTH};
use acc_lang::ir::{Expr, ExprKind, ForLoop, ScalarType, SiteId};

use crate::fx::Fx;
use crate::ptx::{Class, Reg};
use crate::Result;

/// A loop's versions: the predicate choosing the unchecked copy and the accesses it leaves
/// unchecked.
pub(crate) struct Versions {
    ok: Reg,
    keys: Vec<usize>,
}

impl Fx<'_, '_> {
    /// The site of an access's check, `None` where an enclosing loop's pre-check proved it.
    pub(crate) fn unproven(&self, indices: &[Expr], site: Option<SiteId>) -> Option<SiteId> {
        site.filter(|_| !self.is_proven(bounds::access_key(indices)))
    }

    /// Before loop `f` (variable of type `t` from `start`, its last iteration number `last`):
    /// the versions of its body, if it has accesses whose checks can be hoisted.
    pub(crate) fn versions(
        &mut self,
        f: &ForLoop,
        t: ScalarType,
        start: Reg,
        step: Reg,
        last: Reg,
    ) -> Result<Option<Versions>> {
        let positive = match f.step.kind {
            ExprKind::Const(Const::I32(v)) => v > 0,
            ExprKind::Const(Const::I64(v)) => v > 0,
            _ => false,
        };
        if !positive || self.unchecked() || self.version_depth() >= MAX_VERSION_DEPTH {
            return Ok(None);
        }
        let cells = self.cell_locals();
        let hoisted: Vec<Hoisted<'_>> = bounds::hoistable(f.var, &f.body, cells, &|_| false)
            .into_iter()
            .filter(|h| !self.is_proven(h.key))
            .collect();
        if hoisted.is_empty() {
            return Ok(None);
        }
        let (first, last_value) = self.range_i64(t, start, step, last);
        let ok = self.in_bounds_throughout(&hoisted, t, first, last_value)?;
        Ok(Some(Versions {
            ok,
            keys: hoisted.iter().map(|h| h.key).collect(),
        }))
    }

    /// The loop variable's first and last values, as `s64` registers.
    fn range_i64(&mut self, t: ScalarType, start: Reg, step: Reg, last: Reg) -> (Reg, Reg) {
        let (first, last_value) = (self.fresh(Class::B64), self.fresh(Class::B64));
        if t == ScalarType::I32 {
            let l = self.fresh(Class::B32);
            self.ins(format!("mad.lo.s32 {l}, {last}, {step}, {start}"));
            self.ins(format!("cvt.s64.s32 {first}, {start}"));
            self.ins(format!("cvt.s64.s32 {last_value}, {l}"));
        } else {
            self.ins(format!("mov.b64 {first}, {start}"));
            self.ins(format!("mad.lo.s64 {last_value}, {last}, {step}, {start}"));
        }
        (first, last_value)
    }

    /// Whether every access of `hoisted` is in bounds for the variable from `lo` to `hi`
    /// (`s64`, `lo <= hi` where the loop runs): no side effects, nothing that can fail.
    fn in_bounds_throughout(
        &mut self,
        hoisted: &[Hoisted<'_>],
        t: ScalarType,
        lo: Reg,
        hi: Reg,
    ) -> Result<Reg> {
        let ok = self.fresh(Class::Pred);
        let offsets = hoisted
            .iter()
            .flat_map(|h| &h.indices)
            .any(|i| matches!(i, Index::Affine(c) if *c != 0));
        if offsets {
            // Keep `var + c` exact in 64 bits (and, for an `i32` variable, within `i32`).
            let p = self.fresh(Class::Pred);
            self.ins(format!("setp.lt.s64 {ok}, {hi}, {}", 1i64 << 62));
            self.ins(format!("setp.gt.s64 {p}, {lo}, {}", -(1i64 << 62)));
            self.ins(format!("and.pred {ok}, {ok}, {p}"));
        } else {
            self.ins(format!("setp.eq.u32 {ok}, 0, 0"));
        }
        for h in bounds::distinct(hoisted) {
            let a = self.array(h.array)?;
            for (index, dim) in h.indices.iter().zip(a.dims.clone()) {
                let fits = self.fresh(Class::Pred);
                match index {
                    Index::Affine(c) => {
                        let (low, high) = if *c == 0 {
                            (lo, hi)
                        } else {
                            let (low, high) = (self.fresh(Class::B64), self.fresh(Class::B64));
                            self.ins(format!("add.s64 {low}, {lo}, {c}"));
                            self.ins(format!("add.s64 {high}, {hi}, {c}"));
                            (low, high)
                        };
                        self.ins(format!("setp.ge.s64 {fits}, {low}, 0"));
                        self.ins(format!("setp.lt.and.s64 {fits}, {high}, {dim}, {fits}"));
                        if t == ScalarType::I32 {
                            let max = i32::MAX;
                            self.ins(format!("setp.le.and.s64 {fits}, {high}, {max}, {fits}"));
                        }
                    }
                    Index::Invariant(e) => {
                        let v = self.index(e)?;
                        self.ins(format!("setp.lt.u64 {fits}, {v}, {dim}"));
                    }
                }
                self.ins(format!("and.pred {ok}, {ok}, {fits}"));
            }
        }
        Ok(ok)
    }

    /// What `f` does with the accesses whose checks `versions` hoists counted as proven.
    pub(crate) fn assuming_proven<R>(
        &mut self,
        versions: Option<&Versions>,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let keys = versions.map(|v| v.keys.as_slice()).unwrap_or_default();
        self.prove(keys);
        let r = f(self);
        self.unprove(keys);
        r
    }

    /// A branch to `label` unless `versions`' predicate holds (none without versions).
    pub(crate) fn unless_proven(&mut self, versions: Option<&Versions>, label: &str) {
        if let Some(v) = versions {
            self.ins(format!("@!{} bra {label}", v.ok));
        }
    }

    /// Code that `emit` generates: twice if `versions` says so (the copy without the hoisted
    /// checks first, chosen by the predicate), else once.
    pub(crate) fn versioned(
        &mut self,
        versions: Option<&Versions>,
        mut emit: impl FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let Some(v) = versions else {
            return emit(self);
        };
        let checked = self.label("checked");
        let join = self.label("versioned");
        self.ins(format!("@!{} bra {checked}", v.ok));
        self.enter_version();
        let fast = self.assuming_proven(Some(v), &mut emit);
        let slow = fast.and_then(|()| {
            self.ins(format!("bra {join}"));
            self.place(&checked);
            emit(self)
        });
        self.leave_version();
        slow?;
        self.place(&join);
        Ok(())
    }
}
