//! Unrolled sequential loops. A sequential loop (an inner loop of a thread, or of a serial
//! region) whose body is straight-line code runs `UNROLL` iterations per trip as one block of
//! code without branches, so that ptxas can issue the loads of later iterations before the
//! arithmetic of earlier ones waits for its data: a gather such as SpMV's
//! `sum += vals[j] * x[cols[j]]` then has `UNROLL` iterations' loads in flight instead of one
//! (what NVVM's unrolling gives CUDA C). Bounds checks that the loop's pre-check did not prove
//! stay, but are decided at the end of the copies: a load that would be out of bounds reads a
//! harmless address instead, and the first failing access in program order is reported, with
//! its own site and index, before anything after the copies runs.

use acc_lang::ir::bounds;
use acc_lang::ir::{Block, Expr, ExprKind, LocalId, Stmt};

use crate::fx::{FailKind, Fx};
use crate::ptx::{Class, Reg};

/// Iterations per trip of an unrolled loop.
pub(crate) const UNROLL: u32 = 4;

/// A failed-check branch held back until the end of an unrolled trip (`Fx::fail_if`'s
/// arguments).
pub(crate) struct LaterCheck {
    pub cond: Reg,
    pub kind: FailKind,
    pub site: u32,
    pub dim: Option<Reg>,
    pub index: Option<Reg>,
    pub shape: Vec<Reg>,
    pub prelude: Vec<String>,
}

/// Whether a body is straight-line: assignments of locals in registers and stores whose
/// checks are proven, of expressions without calls or checks other than loads' bounds.
struct Straight<'a> {
    proven: &'a dyn Fn(&[Expr]) -> bool,
    cell: &'a dyn Fn(LocalId) -> bool,
}

impl Straight<'_> {
    fn block(&self, body: &Block) -> bool {
        body.iter().all(|s| match s {
            Stmt::Set(l, e) => !(self.cell)(*l) && self.expr(e),
            Stmt::Store {
                array,
                indices,
                value,
                site,
            } => {
                self.expr(array)
                    && indices.iter().all(|e| self.expr(e))
                    && self.expr(value)
                    && (site.is_none() || (self.proven)(indices))
            }
            _ => false,
        })
    }

    fn expr(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Local(_) => true,
            ExprKind::Unary(_, x) | ExprKind::Convert(x) => self.expr(x),
            ExprKind::Binary(_, l, r, site) => site.is_none() && self.expr(l) && self.expr(r),
            ExprKind::Builtin(b, args) => b.is_math() && args.iter().all(|a| self.expr(a)),
            ExprKind::Load { array, indices, .. } => {
                self.expr(array) && indices.iter().all(|e| self.expr(e))
            }
            _ => false,
        }
    }
}

impl Fx<'_, '_> {
    /// Whether a sequential loop's `body` can run unrolled.
    pub(crate) fn unrollable(&self, body: &Block) -> bool {
        let unchecked = self.cx.options.unchecked;
        let proven =
            |indices: &[Expr]| unchecked || self.proven.contains(&bounds::access_key(indices));
        let cell = |l: LocalId| self.cell(l).is_some();
        Straight {
            proven: &proven,
            cell: &cell,
        }
        .block(body)
    }

    /// A copy of `v` in a register of its own (a failure reported later must show the value
    /// the access had, not the register's value by then).
    pub(crate) fn keep(&mut self, v: Reg) -> Reg {
        let kept = self.fresh(v.class);
        let ty = match v.class {
            Class::Pred => "pred",
            Class::B32 => "b32",
            Class::B64 => "b64",
            Class::F32 => "f32",
            Class::F64 => "f64",
        };
        self.ins(format!("mov.{ty} {kept}, {v}"));
        kept
    }

    /// The unrolled trips of a sequential loop, placed before its ordinary loop: while at
    /// least `UNROLL` iterations remain (`k` counts iterations from 0 up to `last`, `v` is
    /// the variable's next value), `emit_iteration` is generated `UNROLL` times in a row,
    /// each followed by `advance` (which moves `k` and `v` on by one iteration); the
    /// deferred checks of the trip come at its end. Leaves to `exit` when no iteration
    /// remains, and to the ordinary loop for the last few.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn unrolled_trips(
        &mut self,
        ty: &str,
        k: Reg,
        last: Reg,
        exit: &str,
        rolled: &str,
        mut emit_iteration: impl FnMut(&mut Self) -> crate::fx::Result<()>,
        mut advance: impl FnMut(&mut Self),
    ) -> crate::fx::Result<()> {
        let top = self.label("unrolled");
        let u = if ty == "s32" { "u32" } else { "u64" };
        self.place(&top);
        let done = self.fresh(Class::Pred);
        self.ins(format!("setp.gt.{u} {done}, {k}, {last}"));
        self.ins(format!("@{done} bra {exit}"));
        let left = self.fresh(if u == "u32" { Class::B32 } else { Class::B64 });
        self.ins(format!("sub.{u} {left}, {last}, {k}"));
        let few = self.fresh(Class::Pred);
        self.ins(format!("setp.lt.{u} {few}, {left}, {}", UNROLL - 1));
        self.ins(format!("@{few} bra {rolled}"));
        self.later = Some(Vec::new());
        let mut result = Ok(());
        for _ in 0..UNROLL {
            result = emit_iteration(self);
            if result.is_err() {
                break;
            }
            advance(self);
        }
        let checks = self.later.take().unwrap_or_default();
        result?;
        for c in checks {
            self.fail_if(c.cond, c.kind, c.site, c.dim, c.index, &c.shape, c.prelude);
        }
        self.ins(format!("bra {top}"));
        Ok(())
    }
}
