//! A read-only walk over the typed tree: each pass overrides the nodes it cares about and calls
//! the matching `walk_*` function to keep descending.

use crate::hir::{
    Block, Clause, DataRef, Directive, Expr, ExprKind, Place, PlaceKind, Stmt, StmtKind, VarId,
};

pub(super) trait Visitor {
    fn stmt(&mut self, s: &Stmt) {
        walk_stmt(self, s);
    }

    fn expr(&mut self, e: &Expr) {
        walk_expr(self, e);
    }

    /// An assignment target; `compound` for `op=` (which also reads it).
    fn place(&mut self, p: &Place, compound: bool) {
        let _ = compound;
        walk_place(self, p);
    }

    fn directive(&mut self, d: &Directive, s: &Stmt) {
        let _ = s;
        walk_directive(self, d);
    }

    /// A variable or section named in a clause.
    fn data_ref(&mut self, r: &DataRef) {
        walk_data_ref(self, r);
    }
}

/// Whether the statement `s` uses the variable `v`: reads it or assigns it.
pub(super) fn stmt_mentions(s: &Stmt, v: VarId) -> bool {
    let mut m = Mentions {
        var: v,
        found: false,
    };
    m.stmt(s);
    m.found
}

struct Mentions {
    var: VarId,
    found: bool,
}

impl Visitor for Mentions {
    fn expr(&mut self, e: &Expr) {
        self.found |= e.as_var() == Some(self.var);
        walk_expr(self, e);
    }

    fn place(&mut self, p: &Place, _compound: bool) {
        self.found |= matches!(p.kind, PlaceKind::Var(w) if w == self.var);
        walk_place(self, p);
    }
}

pub(super) fn walk_block<V: Visitor + ?Sized>(v: &mut V, b: &Block) {
    for s in &b.stmts {
        v.stmt(s);
    }
}

pub(super) fn walk_stmt<V: Visitor + ?Sized>(v: &mut V, s: &Stmt) {
    match &s.kind {
        StmtKind::Let { init, .. } => v.expr(init),
        StmtKind::Assign { place, op, value } => {
            v.place(place, op.is_some());
            v.expr(value);
        }
        StmtKind::Expr(e) => v.expr(e),
        StmtKind::If { cond, then, els } => {
            v.expr(cond);
            walk_block(v, then);
            if let Some(els) = els {
                v.stmt(els);
            }
        }
        StmtKind::While { cond, body } => {
            v.expr(cond);
            walk_block(v, body);
        }
        StmtKind::For(f) => {
            v.expr(&f.start);
            v.expr(&f.end);
            if let Some(step) = &f.step {
                v.expr(step);
            }
            walk_block(v, &f.body);
        }
        StmtKind::Return(Some(e)) => v.expr(e),
        StmtKind::Block(b) => walk_block(v, b),
        StmtKind::Directive(d) => v.directive(d, s),
        StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue => {}
    }
}

pub(super) fn walk_place<V: Visitor + ?Sized>(v: &mut V, p: &Place) {
    if let PlaceKind::Index { base, indices } = &p.kind {
        v.expr(base);
        for i in indices {
            v.expr(i);
        }
    }
}

pub(super) fn walk_expr<V: Visitor + ?Sized>(v: &mut V, e: &Expr) {
    match &e.kind {
        ExprKind::Unary(_, a) => v.expr(a),
        ExprKind::Convert { expr, .. } => v.expr(expr),
        ExprKind::Binary(_, a, b) => {
            v.expr(a);
            v.expr(b);
        }
        ExprKind::Call(_, args) | ExprKind::Builtin(_, args) | ExprKind::ArrayLit(args) => {
            for a in args {
                v.expr(a);
            }
        }
        ExprKind::Index { base, indices } => {
            v.expr(base);
            for i in indices {
                v.expr(i);
            }
        }
        ExprKind::Section { base, ranges } => {
            v.expr(base);
            for r in ranges {
                if let Some(s) = &r.start {
                    v.expr(s);
                }
                if let Some(c) = &r.count {
                    v.expr(c);
                }
            }
        }
        ExprKind::If(c, a, b) => {
            v.expr(c);
            v.expr(a);
            v.expr(b);
        }
        ExprKind::Block(stmts, last) => {
            for s in stmts {
                v.stmt(s);
            }
            v.expr(last);
        }
        ExprKind::Const(_) | ExprKind::Str(_) | ExprKind::Var(_) | ExprKind::Error => {}
    }
}

/// Clause arguments, then the body.
pub(super) fn walk_directive<V: Visitor + ?Sized>(v: &mut V, d: &Directive) {
    for c in &d.clauses {
        walk_clause(v, c);
    }
    if let Some(body) = &d.body {
        v.stmt(body);
    }
}

pub(super) fn walk_clause<V: Visitor + ?Sized>(v: &mut V, c: &Clause) {
    for e in c.kind.exprs() {
        v.expr(e);
    }
    for r in c.kind.vars() {
        v.data_ref(r);
    }
}

pub(super) fn walk_data_ref<V: Visitor + ?Sized>(v: &mut V, r: &DataRef) {
    for range in r.sections.iter().flatten() {
        if let Some(s) = &range.start {
            v.expr(s);
        }
        if let Some(c) = &range.count {
            v.expr(c);
        }
    }
}
