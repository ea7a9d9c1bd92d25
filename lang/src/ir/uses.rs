//! Which globals a loop reads and cannot change: what a back end may load once before the
//! loop instead of once per use (jit-host's `hoist`).
//!
//! Top-level variables are globals, storage slots the engine owns. A loop that neither writes
//! a global nor calls anything that could (a user function, a region) leaves every global it
//! reads as it found it, so their values, and the array headers behind them, are
//! loop-invariant.

use std::collections::HashSet;

use super::{Block, DataDirective, Expr, ExprKind, GlobalId, PrintArg, Queue, Stmt, Ty};

/// The globals that a loop (its per-iteration expressions `exprs` and its `body`) reads and
/// nothing in it writes, in order of first use, with their types. None when the loop calls a
/// user function or launches a region, either of which may write any global.
pub fn invariant_globals(exprs: &[&Expr], body: &Block) -> Vec<(GlobalId, Ty)> {
    let mut uses = Uses::default();
    exprs.iter().for_each(|e| uses.expr(e));
    uses.block(body);
    if uses.calls {
        return Vec::new();
    }
    let written = uses.written;
    uses.tys.retain(|(g, _)| !written.contains(g));
    uses.tys
}

/// The globals a loop reads, and whether it may write them.
#[derive(Default)]
struct Uses {
    read: HashSet<GlobalId>,
    /// The globals read, in order of first use, with their types.
    tys: Vec<(GlobalId, Ty)>,
    written: HashSet<GlobalId>,
    /// Calls a user function or launches a region, either of which may write any global.
    calls: bool,
}

impl Uses {
    fn block(&mut self, b: &Block) {
        for s in b {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Set(_, e) | Stmt::Eval(e) | Stmt::Retain(e) | Stmt::Release(e) => self.expr(e),
            Stmt::SetGlobal(g, e) => {
                self.written.insert(*g);
                self.expr(e);
            }
            Stmt::Store {
                array,
                indices,
                value,
                ..
            } => {
                self.expr(array);
                indices.iter().for_each(|e| self.expr(e));
                self.expr(value);
            }
            Stmt::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                self.block(els);
            }
            Stmt::While { cond, body, .. } => {
                self.expr(cond);
                self.block(body);
            }
            Stmt::For(f) => {
                self.expr(&f.start);
                self.expr(&f.end);
                self.expr(&f.step);
                self.block(&f.body);
            }
            Stmt::Break | Stmt::Continue => {}
            Stmt::Return(e) => e.iter().for_each(|e| self.expr(e)),
            Stmt::Print(args, _) => {
                for a in args {
                    if let PrintArg::Value(e) = a {
                        self.expr(e);
                    }
                }
            }
            Stmt::Printf(_, args, _) => args.iter().for_each(|e| self.expr(e)),
            Stmt::Assert { cond, .. } => self.expr(cond),
            Stmt::Launch(_) => self.calls = true,
            Stmt::Data(d) => self.data(d),
            Stmt::DataRegion { enter, body, exit } => {
                self.data(enter);
                self.block(body);
                self.data(exit);
            }
            Stmt::Wait {
                queues,
                async_queue,
                ..
            } => {
                queues.iter().for_each(|e| self.expr(e));
                self.queue(async_queue.as_ref());
            }
            Stmt::Atomic(a) => self.stmt(&a.body),
            Stmt::Block(b) => self.block(b),
        }
    }

    fn data(&mut self, d: &DataDirective) {
        d.if_cond.iter().for_each(|e| self.expr(e));
        self.queue(d.async_queue.as_ref());
        d.wait.iter().flatten().for_each(|e| self.expr(e));
    }

    fn queue(&mut self, q: Option<&Queue>) {
        if let Some(Queue::Numbered(e)) = q {
            self.expr(e);
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Local(_) => {}
            ExprKind::Global(g) => {
                if self.read.insert(*g) {
                    self.tys.push((*g, e.ty));
                }
            }
            ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x, _) => self.expr(x),
            ExprKind::Binary(_, l, r, _) => {
                self.expr(l);
                self.expr(r);
            }
            ExprKind::Load { array, indices, .. } => {
                self.expr(array);
                indices.iter().for_each(|e| self.expr(e));
            }
            ExprKind::Call(_, args) => {
                self.calls = true;
                args.iter().for_each(|e| self.expr(e));
            }
            ExprKind::Builtin(_, args)
            | ExprKind::CheckedBuiltin(_, args, _)
            | ExprKind::ArrayLit(args, _) => args.iter().for_each(|e| self.expr(e)),
            ExprKind::Section { array, ranges } => {
                self.expr(array);
                for r in ranges {
                    r.start.iter().chain(&r.count).for_each(|e| self.expr(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ScalarType;
    use crate::span::SourceFile;

    /// The invariant globals of the first loop of `text`'s top level (its bounds are computed
    /// before it; a `while` loop's condition is read every iteration).
    fn first_loop(text: &str) -> Vec<(GlobalId, Ty)> {
        let m = crate::lower_source(&SourceFile::new("t.acc", text)).expect("valid source");
        let loop_uses = |s: &Stmt| match s {
            Stmt::For(f) => Some(invariant_globals(&[], &f.body)),
            Stmt::While { cond, body, .. } => Some(invariant_globals(&[cond], body)),
            _ => None,
        };
        m.main.body.iter().find_map(loop_uses).expect("a loop")
    }

    fn tys(uses: &[(GlobalId, Ty)]) -> Vec<Ty> {
        uses.iter().map(|&(_, t)| t).collect()
    }

    #[test]
    fn a_loop_that_only_stores_elements_leaves_its_globals_alone() {
        let uses = first_loop(
            "let a = zeros(10)\nlet b = zeros(10)\nlet k = 2.0\n\
             for i in 0..10 {\n  a[i] = k * b[i]\n}\n",
        );
        let arr = Ty::Array {
            elem: ScalarType::F64,
            rank: 1,
        };
        let f64 = Ty::Scalar(ScalarType::F64);
        assert_eq!(
            tys(&uses),
            [arr, f64, arr],
            "in order of first use: {uses:?}"
        );
    }

    #[test]
    fn a_global_the_loop_assigns_is_not_invariant() {
        let uses =
            first_loop("let a = zeros(10)\nlet s = 0.0\nfor i in 0..10 {\n  s = s + a[i]\n}\n");
        assert_eq!(uses.len(), 1, "only `a`: {uses:?}");
        assert!(uses[0].1.is_array());
    }

    #[test]
    fn a_while_condition_counts_as_part_of_the_loop() {
        let uses = first_loop("let n = 3\nlet i = 0\nwhile i < n {\n  i = i + 1\n}\n");
        assert_eq!(uses.len(), 1, "only `n`: {uses:?}");
        assert!(!uses[0].1.is_array());
    }

    #[test]
    fn a_call_may_write_any_global() {
        let uses = first_loop(
            "let a = zeros(10)\nfn f(x: f64) -> f64 {\n  return x\n}\n\
             for i in 0..10 {\n  a[i] = f(1.0)\n}\n",
        );
        assert!(uses.is_empty(), "{uses:?}");
    }
}
