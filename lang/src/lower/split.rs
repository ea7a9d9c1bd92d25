//! `devices(…)` (LANGUAGE.md 7.11): the split loop cut to a block, and the plan the runtime
//! cuts launches by (`ir::Region::split`, `acc_abi::split`).
//!
//! The analysis decided the split (`analysis::split`); here the region's split loop
//! `for j in start..end step s` (or `..=end`) becomes
//! `for j in start + lo*s .. start + min(hi*s, end' - start) step s`, with `end'` one past an
//! inclusive end and `lo`, `hi` the region's two hidden `i64` parameters: it runs exactly the
//! original iterations with normalized index `k` in `lo <= k < min(hi, trip)`. Computed in
//! `i64` (an `i32` loop converts its bounds), so that no block bound overflows where the
//! original loop does not; `hi` up to `i64::MAX / s` runs the whole loop. The cut bounds are
//! still formulas of the parameters (`ir::gang_loop`), so a GPU grid sizes to the block.

use acc_abi::split::{ArraySplit, LoopSplit, SplitPlan};

use crate::analysis::split::{SplitInfo, SplitLoop};
use crate::builtins::Builtin;
use crate::hir::{BinOp, Const, ScalarType, VarId};
use crate::ir::{gang_loop, Expr, ExprKind, LocalId, Pass, Region, Stmt, Ty};

/// The `var` of the hidden parameters (they stand for no host variable).
pub(super) const HIDDEN: VarId = VarId(u32::MAX);

/// The plan of region `r` for its `devices` clause; when the analysis split it, `hidden` are
/// the block parameters (added by the caller) and `r`'s split loop is cut here.
pub(super) fn cut(r: &mut Region, info: &SplitInfo, hidden: Option<(usize, usize)>) -> SplitPlan {
    let split = match (&info.verdict, hidden) {
        (Ok(l), Some((lo, hi))) => cut_loop(r, l, lo, hi),
        (Err(why), _) => Err(why.clone()),
        (Ok(_), None) => Err("the region has no block parameters".into()),
    };
    SplitPlan {
        devices: info.devices.clone(),
        split,
    }
}

fn cut_loop(r: &mut Region, l: &SplitLoop, lo: usize, hi: usize) -> Result<LoopSplit, String> {
    let at = r
        .body
        .iter()
        .position(|s| matches!(s, Stmt::For(f) if f.schedule.gang))
        .ok_or_else(|| {
            format!(
                "loop `{}` is not at the top of the region's code after lowering",
                l.var_name
            )
        })?;
    let counted = gang_loop::counted_at(r, at).ok_or_else(|| {
        format!(
            "loop `{}`'s bounds are not formulas of the region's arguments",
            l.var_name
        )
    })?;
    let Some(Stmt::For(f)) = r.body.get_mut(at) else {
        return Err("the split loop moved".into());
    };
    let i64t = Ty::Scalar(ScalarType::I64);
    let loop_ty = f.start.ty;
    let wide = |e: Expr| convert(e, i64t);
    let param = |i: usize| Expr {
        kind: ExprKind::Local(LocalId(i as u32)),
        ty: i64t,
    };
    let step = int(counted.step);
    let start = wide(f.start.clone());
    let mut end = wide(f.end.clone());
    if f.inclusive {
        end = binary(BinOp::Add, end, int(1));
    }
    let first = binary(
        BinOp::Add,
        start.clone(),
        binary(BinOp::Mul, param(lo), step.clone()),
    );
    let most = binary(BinOp::Sub, end, start.clone());
    let taken = Expr {
        kind: ExprKind::Builtin(
            Builtin::Min,
            vec![binary(BinOp::Mul, param(hi), step), most],
        ),
        ty: i64t,
    };
    f.start = convert(first, loop_ty);
    f.end = convert(binary(BinOp::Add, start, taken), loop_ty);
    f.inclusive = false;

    let arrays = l
        .arrays
        .iter()
        .filter_map(|a| {
            let param = r
                .params
                .iter()
                .position(|p| p.var == a.var && p.pass == Pass::Array)?;
            Some(ArraySplit {
                param,
                reads: a.reads.clone(),
                writes: a.writes.clone(),
            })
        })
        .collect();
    Ok(LoopSplit {
        lo_param: lo,
        hi_param: hi,
        counted,
        arrays,
        ordered: prints_or_calls(&r.body),
    })
}

/// Whether a body prints or calls a function (which may print): then the order of its
/// iterations can be seen (`LoopSplit::ordered`).
fn prints_or_calls(body: &crate::ir::Block) -> bool {
    use crate::ir::visit::{walk_expr, walk_stmt, Visitor};
    struct Finder(bool);
    impl<'a> Visitor<'a> for Finder {
        fn stmt(&mut self, s: &'a Stmt) {
            self.0 |= matches!(s, Stmt::Print(..) | Stmt::Printf(..));
            if !self.0 {
                walk_stmt(self, s);
            }
        }
        fn expr(&mut self, e: &'a Expr) {
            self.0 |= matches!(e.kind, ExprKind::Call(..));
            if !self.0 {
                walk_expr(self, e);
            }
        }
    }
    let mut finder = Finder(false);
    finder.block(body);
    finder.0
}

fn int(v: i64) -> Expr {
    Expr {
        kind: ExprKind::Const(Const::I64(v)),
        ty: Ty::Scalar(ScalarType::I64),
    }
}

fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
    let ty = a.ty;
    Expr {
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b), None),
        ty,
    }
}

fn convert(e: Expr, ty: Ty) -> Expr {
    if e.ty == ty {
        return e;
    }
    Expr {
        kind: ExprKind::Convert(Box::new(e)),
        ty,
    }
}
