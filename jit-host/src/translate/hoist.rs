//! Loading globals once per loop instead of once per use.
//!
//! Top-level variables are globals, so a script's loops read arrays and scalars through
//! `ctx.globals` slots. Cranelift cannot tell that the loop's element stores leave the slots
//! alone, so it reloads each slot (and the array headers behind it) in every iteration. When
//! a loop neither writes a global nor calls anything that could (a user function, a region),
//! the globals it reads are loaded before it, and the loop uses those values: the array headers
//! then become loop-invariant and their loads are hoisted too.

use std::collections::HashSet;

use acc_lang::ir::{Block, Expr, ExprKind, GlobalId, PrintArg, Queue, Stmt};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData};

use super::{clif_type, Tx};
use crate::JitError;

/// The globals a loop reads, and whether it may write them.
#[derive(Default)]
struct Uses {
    read: HashSet<GlobalId>,
    /// The globals read, in order of first use, with their types.
    tys: Vec<(GlobalId, acc_lang::ir::Ty)>,
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
            Stmt::Atomic(_, s) => self.stmt(s),
            Stmt::Block(b) => self.block(b),
        }
    }

    fn data(&mut self, d: &acc_lang::ir::DataDirective) {
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

impl Tx<'_, '_> {
    /// Load the globals that a loop (its per-iteration expressions and its body) reads and
    /// cannot change, before it; returns what to pass to `forget_globals` after the loop.
    pub(super) fn preload_globals(
        &mut self,
        exprs: &[&Expr],
        body: &Block,
    ) -> Result<Vec<GlobalId>, JitError> {
        let mut uses = Uses::default();
        exprs.iter().for_each(|e| uses.expr(e));
        uses.block(body);
        if uses.calls {
            return Ok(Vec::new());
        }
        let mut added = Vec::new();
        for (g, ty) in uses.tys {
            if uses.written.contains(&g) || self.cached_globals.contains_key(&g) {
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
