//! Questions about checked expressions that decide how they are lowered: does lowering one
//! emit statements, may evaluating it run user code or assign variables, and which variables
//! a body rebinds (a global array a call can free, a parameter the function must own).

use std::collections::HashSet;

use crate::builtins::Builtin;
use crate::hir::{self, ExprKind as H, PlaceKind, StmtKind, VarId, VarKind};

/// Whether `f` holds for `e` or a subexpression: `f` answers for a node (`Some`) or lets the
/// walk go on into its operands (`None`).
fn any(e: &hir::Expr, f: &mut impl FnMut(&hir::Expr) -> Option<bool>) -> bool {
    if let Some(answer) = f(e) {
        return answer;
    }
    match &e.kind {
        H::Call(_, xs) | H::Builtin(_, xs) | H::ArrayLit(xs) => xs.iter().any(|x| any(x, f)),
        H::Unary(_, x) | H::Convert { expr: x, .. } | H::Block(_, x) => any(x, f),
        H::Binary(_, l, r) => any(l, f) || any(r, f),
        H::If(c, a, b) => any(c, f) || any(a, f) || any(b, f),
        H::Index { base, indices } => any(base, f) || indices.iter().any(|x| any(x, f)),
        H::Section { base, ranges } => {
            any(base, f)
                || ranges.iter().any(|r| {
                    r.start.as_ref().is_some_and(|x| any(x, f))
                        || r.count.as_ref().is_some_and(|x| any(x, f))
                })
        }
        H::Const(_) | H::Str(_) | H::Var(_) | H::Error => false,
    }
}

/// Whether lowering `e` as an operand emits statements: flattened `if`s and `&&`/`||` over
/// them, and owned arrays (bound to temporaries).
pub(super) fn needs_stmts(e: &hir::Expr) -> bool {
    any(e, &mut |x| match &x.kind {
        H::If(..) | H::Block(..) | H::ArrayLit(_) => Some(true),
        H::Call(..) if x.ty.is_array() => Some(true),
        H::Builtin(b, _)
            if x.ty.is_array()
                || matches!(b, Builtin::Print | Builtin::Printf | Builtin::Assert) =>
        {
            Some(true)
        }
        _ => None,
    })
}

/// Whether evaluating `e` may run user code: a call, or the statements of a value block.
pub(super) fn may_call(e: &hir::Expr) -> bool {
    any(e, &mut |x| match &x.kind {
        H::Call(..) => Some(true),
        H::Block(stmts, _) if !stmts.is_empty() => Some(true),
        _ => None,
    })
}

/// Whether `e` holds statements of the program (which may assign any variable).
pub(super) fn has_statements(e: &hir::Expr) -> bool {
    any(e, &mut |x| match &x.kind {
        H::Block(stmts, _) if !stmts.is_empty() => Some(true),
        _ => None,
    })
}

/// Whether the statements lowering `e` hoists (flattened `if`s; owned arrays bound to
/// temporaries, evaluated with their arguments) may run user code.
fn hoists_effects(e: &hir::Expr) -> bool {
    any(e, &mut |x| match &x.kind {
        H::If(..) | H::Block(..) => Some(may_call(x)),
        H::Call(..) | H::Builtin(..) | H::ArrayLit(_) if x.ty.is_array() => Some(may_call(x)),
        _ => None,
    })
}

/// What evaluating some operands may do, for the operands before them.
#[derive(Clone, Copy, Default)]
pub(super) struct Later {
    /// Statements run first (hoisted) that may call user code or assign variables.
    pub effects: bool,
    /// User statements (in flattened value blocks) that may assign locals.
    pub blocks: bool,
    /// User code runs (a call, hoisted or not).
    pub calls: bool,
}

impl Later {
    pub fn of(e: &hir::Expr) -> Later {
        Later::default().and(e)
    }

    pub fn and(self, e: &hir::Expr) -> Later {
        Later {
            effects: self.effects || hoists_effects(e),
            blocks: self.blocks || has_statements(e),
            calls: self.calls || may_call(e),
        }
    }
}

/// The global arrays some function rebinds (`g = …`): only those can be freed by a call while
/// a caller holds a borrowed reference to them.
pub(super) fn rebound_globals(program: &hir::Program) -> HashSet<VarId> {
    let is_global_array = |v: &VarId| {
        program
            .vars
            .get(v.index())
            .is_some_and(|i| i.kind == VarKind::Global && i.ty.is_array())
    };
    let mut out = HashSet::new();
    for f in &program.functions {
        out.extend(rebound(&f.body.stmts).into_iter().filter(is_global_array));
    }
    out
}

/// The variables `list` assigns as a whole (`v = …`, not `v[i] = …`).
pub(super) fn rebound(list: &[hir::Stmt]) -> HashSet<VarId> {
    let mut out = HashSet::new();
    stmts(list, &mut |s| {
        if let StmtKind::Assign {
            place:
                hir::Place {
                    kind: PlaceKind::Var(v),
                    ..
                },
            ..
        } = &s.kind
        {
            out.insert(*v);
        }
    });
    out
}

/// Visit every statement, those inside nested blocks and value blocks included.
fn stmts(list: &[hir::Stmt], f: &mut dyn FnMut(&hir::Stmt)) {
    for s in list {
        stmt(s, f);
    }
}

fn stmt(s: &hir::Stmt, f: &mut dyn FnMut(&hir::Stmt)) {
    f(s);
    let expr = |e: &hir::Expr, f: &mut dyn FnMut(&hir::Stmt)| {
        any(e, &mut |x| {
            if let H::Block(inner, _) = &x.kind {
                stmts(inner, f);
            }
            None
        });
    };
    match &s.kind {
        StmtKind::Let { init: e, .. } | StmtKind::Expr(e) | StmtKind::Return(Some(e)) => expr(e, f),
        StmtKind::Assign { place, value, .. } => {
            if let PlaceKind::Index { base, indices } = &place.kind {
                expr(base, f);
                for i in indices {
                    expr(i, f);
                }
            }
            expr(value, f);
        }
        StmtKind::If { cond, then, els } => {
            expr(cond, f);
            stmts(&then.stmts, f);
            if let Some(e) = els {
                stmt(e, f);
            }
        }
        StmtKind::While { cond, body } => {
            expr(cond, f);
            stmts(&body.stmts, f);
        }
        StmtKind::For(l) => {
            for e in [Some(&l.start), Some(&l.end), l.step.as_ref()]
                .into_iter()
                .flatten()
            {
                expr(e, f);
            }
            stmts(&l.body.stmts, f);
        }
        StmtKind::Block(b) => stmts(&b.stmts, f),
        StmtKind::Directive(d) => {
            if let Some(body) = &d.body {
                stmt(body, f);
            }
        }
        StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) => {}
    }
}

/// Structural equality of side-effect-free expressions (the location of an atomic).
pub(super) fn same(a: &hir::Expr, b: &hir::Expr) -> bool {
    match (&a.kind, &b.kind) {
        (H::Var(x), H::Var(y)) => x == y,
        (H::Const(x), H::Const(y)) => x == y,
        (
            H::Index {
                base: b1,
                indices: i1,
            },
            H::Index {
                base: b2,
                indices: i2,
            },
        ) => same(b1, b2) && i1.len() == i2.len() && i1.iter().zip(i2).all(|(x, y)| same(x, y)),
        (H::Unary(o1, x), H::Unary(o2, y)) => o1 == o2 && same(x, y),
        (H::Binary(o1, l1, r1), H::Binary(o2, l2, r2)) => o1 == o2 && same(l1, l2) && same(r1, r2),
        (H::Convert { expr: x, .. }, H::Convert { expr: y, .. }) => a.ty == b.ty && same(x, y),
        _ => false,
    }
}
