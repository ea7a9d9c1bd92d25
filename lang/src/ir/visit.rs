//! A read-only walk over the IR, for the analyses that look at every statement and expression
//! of a body: implement [`Visitor`], override the hooks for what matters, and call
//! [`walk_stmt`] / [`walk_expr`] from them to keep descending.
//!
//! The default walk enters every nested block (`if`, `while`, `for`, data regions, blocks,
//! atomics) and every expression of a statement, in evaluation order. It does not enter the
//! operands of directives (`Launch` arguments and data ops, `Data`): those are host-side
//! records, not code of the body.

use super::{Block, Expr, ExprKind, PrintArg, Stmt};

pub trait Visitor<'a> {
    fn block(&mut self, b: &'a Block) {
        for s in b {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &'a Stmt) {
        walk_stmt(self, s);
    }

    fn expr(&mut self, e: &'a Expr) {
        walk_expr(self, e);
    }
}

/// Visits the statement's expressions and blocks.
pub fn walk_stmt<'a, V: Visitor<'a> + ?Sized>(v: &mut V, s: &'a Stmt) {
    match s {
        Stmt::Set(_, e)
        | Stmt::SetGlobal(_, e)
        | Stmt::Eval(e)
        | Stmt::Retain(e)
        | Stmt::Release(e)
        | Stmt::Return(Some(e))
        | Stmt::Assert { cond: e, .. } => v.expr(e),
        Stmt::Store {
            array,
            indices,
            value,
            ..
        } => {
            v.expr(array);
            indices.iter().for_each(|i| v.expr(i));
            v.expr(value);
        }
        Stmt::If { cond, then, els } => {
            v.expr(cond);
            v.block(then);
            v.block(els);
        }
        Stmt::While { cond, body, .. } => {
            v.expr(cond);
            v.block(body);
        }
        Stmt::For(f) => {
            v.expr(&f.start);
            v.expr(&f.end);
            v.expr(&f.step);
            v.block(&f.body);
        }
        Stmt::Print(args, _) => {
            for a in args {
                if let PrintArg::Value(e) = a {
                    v.expr(e);
                }
            }
        }
        Stmt::Printf(_, args, _) => args.iter().for_each(|a| v.expr(a)),
        Stmt::Atomic(a) => v.stmt(&a.body),
        Stmt::Block(b) | Stmt::DataRegion { body: b, .. } => v.block(b),
        Stmt::Wait { queues, .. } => queues.iter().for_each(|q| v.expr(q)),
        Stmt::Break | Stmt::Continue | Stmt::Return(None) | Stmt::Launch(_) | Stmt::Data(_) => {}
    }
}

/// Visits the expression's operands.
pub fn walk_expr<'a, V: Visitor<'a> + ?Sized>(v: &mut V, e: &'a Expr) {
    match &e.kind {
        ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x, _) => v.expr(x),
        ExprKind::Binary(_, a, b, _) => {
            v.expr(a);
            v.expr(b);
        }
        ExprKind::Load { array, indices, .. } => {
            v.expr(array);
            indices.iter().for_each(|i| v.expr(i));
        }
        ExprKind::Call(_, args)
        | ExprKind::Builtin(_, args)
        | ExprKind::CheckedBuiltin(_, args, _)
        | ExprKind::ArrayLit(args, _) => args.iter().for_each(|a| v.expr(a)),
        ExprKind::Section { array, ranges } => {
            v.expr(array);
            for r in ranges {
                r.start.iter().chain(&r.count).for_each(|x| v.expr(x));
            }
        }
        ExprKind::Const(_) | ExprKind::Global(_) | ExprKind::Local(_) => {}
    }
}

/// Whether a block holds a loop anywhere (in an `if`, a block, a data region, …).
pub fn has_loop(b: &Block) -> bool {
    struct Finder(bool);
    impl<'a> Visitor<'a> for Finder {
        fn stmt(&mut self, s: &'a Stmt) {
            if matches!(s, Stmt::For(_) | Stmt::While { .. }) {
                self.0 = true;
            } else if !self.0 {
                walk_stmt(self, s);
            }
        }
    }
    let mut finder = Finder(false);
    finder.block(b);
    finder.0
}
