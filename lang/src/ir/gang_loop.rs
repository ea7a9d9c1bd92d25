//! A region's outermost gang loop as a formula of the region's parameters
//! (`acc_abi::gang_loop`), for the GPU device to size its grid by the loop's trip count.

use std::collections::HashSet;

use acc_abi::gang_loop::{Counted, GangLoop, TripExpr};

use super::{bounds, BinOp, Expr, ExprKind, ForLoop, LocalId, Pass, Region, Stmt};
use crate::builtins::Builtin;
use crate::hir::Const;

/// The first gang loop at the top of the region's body, when its step is a positive constant
/// and its bounds are formulas of parameters that the code before it leaves alone; with the
/// vector loop that is its whole body, when that loop's bounds are such formulas too and
/// nothing in the gang loop assigns them.
pub fn gang_loop(r: &Region) -> Option<GangLoop> {
    let (at, f) = r.body.iter().enumerate().find_map(|(i, s)| match s {
        Stmt::For(f) if f.schedule.gang => Some((i, f)),
        _ => None,
    })?;
    if f.schedule.collapse > 1 {
        return None;
    }
    let mut assigned = HashSet::new();
    bounds::assigned(&r.body[..at], &mut assigned);
    let mut formula = Formula { r, assigned };
    let counted = formula.counted(f)?;
    let inner = match f.body.as_slice() {
        [Stmt::For(v)] if v.schedule.vector && v.schedule.collapse <= 1 => {
            bounds::assigned(&f.body, &mut formula.assigned);
            formula.counted(v)
        }
        _ => None,
    };
    Some(GangLoop {
        counted,
        worker: f.schedule.worker,
        vector: f.schedule.vector,
        inner,
    })
}

/// The bounds of the loop `r.body[at]` as formulas (the split loop of `devices(…)`, before it is
/// cut), when its step is a positive constant and nothing before it assigns what they read.
pub fn counted_at(r: &Region, at: usize) -> Option<Counted> {
    let Some(Stmt::For(f)) = r.body.get(at) else {
        return None;
    };
    let mut assigned = HashSet::new();
    bounds::assigned(&r.body[..at], &mut assigned);
    Formula { r, assigned }.counted(f)
}

struct Formula<'r> {
    r: &'r Region,
    assigned: HashSet<LocalId>,
}

impl Formula<'_> {
    /// Loop `f`'s bounds as formulas, when its step is a positive constant.
    fn counted(&self, f: &ForLoop) -> Option<Counted> {
        let step = match f.step.kind {
            ExprKind::Const(Const::I32(v)) => i64::from(v),
            ExprKind::Const(Const::I64(v)) => v,
            _ => return None,
        };
        Some(Counted {
            start: self.expr(&f.start)?,
            end: self.expr(&f.end)?,
            step: (step > 0).then_some(step)?,
            inclusive: f.inclusive,
        })
    }

    /// Parameter `l`'s index, if `l` is a parameter passed as `pass` that nothing assigned.
    fn param(&self, e: &Expr, pass: Pass) -> Option<usize> {
        let ExprKind::Local(l) = e.kind else {
            return None;
        };
        let i = l.0 as usize;
        let p = self.r.params.get(i)?;
        (p.pass == pass && !self.assigned.contains(&l)).then_some(i)
    }

    fn expr(&self, e: &Expr) -> Option<TripExpr> {
        let two = |a: &Expr, b: &Expr| Some((Box::new(self.expr(a)?), Box::new(self.expr(b)?)));
        Some(match &e.kind {
            ExprKind::Const(Const::I32(v)) => TripExpr::Const(i64::from(*v)),
            ExprKind::Const(Const::I64(v)) => TripExpr::Const(*v),
            ExprKind::Local(_) => TripExpr::Arg(self.param(e, Pass::Value)?),
            ExprKind::Convert(x) => self.expr(x)?,
            ExprKind::Builtin(Builtin::Len, args) => match args.as_slice() {
                [a] => TripExpr::Len(self.param(a, Pass::Array)?),
                _ => return None,
            },
            ExprKind::CheckedBuiltin(Builtin::Size, args, _) => match args.as_slice() {
                [a, d] => match d.kind {
                    ExprKind::Const(Const::I32(d)) => {
                        TripExpr::Dim(self.param(a, Pass::Array)?, usize::try_from(d).ok()?)
                    }
                    ExprKind::Const(Const::I64(d)) => {
                        TripExpr::Dim(self.param(a, Pass::Array)?, usize::try_from(d).ok()?)
                    }
                    _ => return None,
                },
                _ => return None,
            },
            ExprKind::Binary(BinOp::Add, a, b, None) => {
                let (a, b) = two(a, b)?;
                TripExpr::Add(a, b)
            }
            ExprKind::Binary(BinOp::Sub, a, b, None) => {
                let (a, b) = two(a, b)?;
                TripExpr::Sub(a, b)
            }
            ExprKind::Binary(BinOp::Mul, a, b, None) => {
                let (a, b) = two(a, b)?;
                TripExpr::Mul(a, b)
            }
            ExprKind::Builtin(Builtin::Min, args) if e.ty.scalar().is_some_and(|t| t.is_int()) => {
                match args.as_slice() {
                    [a, b] => {
                        let (a, b) = two(a, b)?;
                        TripExpr::Min(a, b)
                    }
                    _ => return None,
                }
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::SourceFile;

    fn first_region_loop(text: &str) -> Option<GangLoop> {
        let m = crate::lower_source(&SourceFile::new("t.acc", text)).expect("valid source");
        gang_loop(&m.regions[0])
    }

    #[test]
    fn a_gang_loop_over_an_array_is_a_formula_of_its_length() {
        let g = first_region_loop(
            "let y = zeros(10)\nacc parallel loop\nfor i in 0..len(y) {\n  y[i] = 1.0\n}\n",
        )
        .expect("a formula");
        assert_eq!(g.counted.start, TripExpr::Const(0));
        assert!(matches!(g.counted.end, TripExpr::Len(_)), "{g:?}");
        assert_eq!(
            (g.counted.step, g.counted.inclusive, g.worker, g.vector),
            (1, false, false, true)
        );
        assert_eq!(g.inner, None);
    }

    #[test]
    fn bounds_from_scalars_and_arithmetic() {
        let g = first_region_loop(
            "let n = 10\nlet a = zeros(n, n)\nacc parallel loop gang\nfor j in 1..=n - 2 {\n  \
             acc loop vector\n  for i in 0..n {\n    a[j, i] = 1.0\n  }\n}\n",
        )
        .expect("a formula");
        assert!(matches!(g.counted.end, TripExpr::Sub(..)), "{g:?}");
        assert!(g.counted.inclusive && !g.worker && !g.vector);
        let inner = g.inner.expect("the vector loop's bounds");
        assert_eq!((&inner.start, inner.step), (&TripExpr::Const(0), 1));
        assert!(matches!(inner.end, TripExpr::Arg(_)), "{inner:?}");
    }

    #[test]
    fn a_vector_loop_over_the_gang_variable_has_no_formula() {
        let g = first_region_loop(
            "let n = 10\nlet a = zeros(n, n)\nacc parallel loop gang\nfor j in 0..n {\n  \
             acc loop vector\n  for i in 0..j {\n    a[j, i] = 1.0\n  }\n}\n",
        )
        .expect("a formula");
        assert_eq!(g.inner, None);
    }

    #[test]
    fn bounds_the_region_computes_are_not_a_formula() {
        let text = "let a = zeros(10)\nacc parallel {\n  let m = 5\n  acc loop gang\n  \
                    for i in 0..m {\n    a[i] = 1.0\n  }\n}\n";
        assert_eq!(first_region_loop(text), None);
    }

    /// A loop cut for `devices(…)` is still a formula, of the block parameters: a grid sizes
    /// to the block.
    #[test]
    fn a_cut_loop_is_a_formula_of_its_block() {
        /// The parameters' values by name: `n = 20`, the block `[3, 8)`.
        struct Args(Vec<String>);
        impl acc_abi::gang_loop::Arguments for Args {
            fn scalar(&self, i: usize) -> Option<i64> {
                match self.0.get(i)?.as_str() {
                    "n" => Some(20),
                    "split_lo" => Some(3),
                    "split_hi" => Some(8),
                    _ => None,
                }
            }
            fn len(&self, _: usize) -> Option<i64> {
                None
            }
            fn extent(&self, _: usize, _: usize) -> Option<i64> {
                None
            }
        }
        let text = "let n = 20\nlet a = zeros(n)\nacc parallel loop devices(all)\n\
                    for j in 1..n - 1 {\n  a[j] = 1.0\n}\n";
        let m = crate::lower_source(&SourceFile::new("t.acc", text)).expect("valid source");
        let r = &m.regions[0];
        assert_eq!(r.params.len(), 4, "{:?}", r.params);
        let args = Args(r.params.iter().map(|p| p.name.clone()).collect());
        let g = gang_loop(r).expect("a formula");
        assert!(matches!(g.counted.end, TripExpr::Add(..)), "{g:?}");
        assert_eq!(g.counted.trip_count(&args), Some(5));
        let plan = r.split.clone().expect("a plan").split.expect("split");
        // The plan keeps the loop as written: 1..19, 18 iterations.
        assert_eq!(plan.counted.trip_count(&args), Some(18));
    }
}
