//! Bounds checks hoisted out of counted loops, by loop versioning (as jit-host does): which
//! accesses qualify is `acc_lang::ir::bounds`, which loops hoist them and the versions that
//! follow are the plan's (`plan::versions`); this module generates them. Before the loop,
//! one predicate says whether every hoisted access is in bounds for the loop variable's whole
//! range; a copy of the code without those checks runs when it holds, the checked copy
//! otherwise: the whole loop for a sequential loop, each iteration's body in a loop shared
//! among threads (so a failing access still fails in its own iteration, at its own
//! site). The predicate is uniform wherever barriers matter: it depends only on the loop's
//! bounds, the arrays' extents and values the loop does not change, which threads that share
//! code (and so its barriers) hold alike.

use acc_lang::ir::bounds::{self, Hoisted, Index};
use acc_lang::ir::{Expr, ScalarType, SiteId};

use crate::fx::Fx;
use crate::plan::{Version, VersionId, Versions};
use crate::ptx::{Class, Reg};
use crate::Result;

/// A loop's versions (the plan's) as generated: with two, the predicate that chooses the
/// fast copy.
pub(crate) enum LoopVersions<'p, 'a> {
    One(&'p Version<'a>),
    Two {
        ok: Reg,
        fast: &'p Version<'a>,
        checked: &'p Version<'a>,
    },
}

impl<'p, 'a> LoopVersions<'p, 'a> {
    /// The copy that runs where the hoisted checks hold (the only one where there are none).
    pub(crate) fn fast(&self) -> &'p Version<'a> {
        match *self {
            LoopVersions::One(v) | LoopVersions::Two { fast: v, .. } => v,
        }
    }
}

impl Fx<'_, '_> {
    /// The site of an access's check, `None` where an enclosing loop's pre-check proved it.
    pub(crate) fn unproven(&self, indices: &[Expr], site: Option<SiteId>) -> Option<SiteId> {
        site.filter(|_| !self.is_proven(bounds::access_key(indices)))
    }

    /// Before a loop (variable of type `t` from `start`, its last iteration number `last`)
    /// whose versions are `plan`: the predicate that chooses between them, if there are two.
    pub(crate) fn loop_versions<'p, 'a>(
        &mut self,
        plan: &'p Versions<'a>,
        t: ScalarType,
        start: Reg,
        step: Reg,
        last: Reg,
    ) -> Result<LoopVersions<'p, 'a>> {
        Ok(match plan {
            Versions::One(one) => LoopVersions::One(one),
            Versions::Two {
                hoisted,
                fast,
                checked,
            } => {
                let (first, last_value) = self.range_i64(t, start, step, last);
                let ok = self.in_bounds_throughout(hoisted, t, first, last_value)?;
                LoopVersions::Two { ok, fast, checked }
            }
        })
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

    /// What `f` generates, as version `v` of the code.
    pub(crate) fn in_version<R>(&mut self, v: VersionId, f: impl FnOnce(&mut Self) -> R) -> R {
        let outer = self.set_version(v);
        let r = f(self);
        self.set_version(outer);
        r
    }

    /// A branch to `label` unless the predicate of `versions` holds (none with one version).
    pub(crate) fn unless_fast(&mut self, versions: &LoopVersions<'_, '_>, label: &str) {
        if let LoopVersions::Two { ok, .. } = versions {
            self.ins(format!("@!{ok} bra {label}"));
        }
    }

    /// Code that `emit` generates for each copy of `versions`, each as its version of the
    /// code: the copy without the hoisted checks first, chosen by the predicate.
    pub(crate) fn versioned(
        &mut self,
        versions: &LoopVersions<'_, '_>,
        mut emit: impl FnMut(&mut Self, &Version<'_>) -> Result<()>,
    ) -> Result<()> {
        let (ok, fast, checked) = match *versions {
            LoopVersions::One(one) => return self.in_version(one.id, |fx| emit(fx, one)),
            LoopVersions::Two { ok, fast, checked } => (ok, fast, checked),
        };
        let checked_label = self.label("checked");
        let join = self.label("versioned");
        self.ins(format!("@!{ok} bra {checked_label}"));
        self.in_version(fast.id, |fx| emit(fx, fast))?;
        self.ins(format!("bra {join}"));
        self.place(&checked_label);
        self.in_version(checked.id, |fx| emit(fx, checked))?;
        self.place(&join);
        Ok(())
    }
}
