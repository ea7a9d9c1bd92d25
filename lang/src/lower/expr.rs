//! Expressions: flattening, array ownership, left-to-right order, run-time checks.

use super::body::{Body, ScopeKind};
use super::scan::{self, Later};
use super::stmt::is_str;
use super::ty;
use crate::builtins::Builtin;
use crate::hir::{self, BinOp, Const, ScalarType, Type};
use crate::ir::{self, ExprKind, Stmt, Ty};

/// A lowered expression; for arrays, whether the reference is owned (a new array, or a
/// temporary holding one) rather than borrowed (a variable's).
pub(super) struct Val {
    pub e: ir::Expr,
    pub owned: bool,
}

impl Val {
    fn plain(e: ir::Expr) -> Val {
        Val { e, owned: false }
    }
}

pub(super) fn expr(kind: ExprKind, ty: Ty) -> ir::Expr {
    ir::Expr { kind, ty }
}

pub(super) fn constant(c: Const) -> ir::Expr {
    expr(ExprKind::Const(c), Ty::Scalar(c.ty()))
}

/// A placeholder for what a checked program never has (a string value, an error).
pub(super) fn dummy(t: Type) -> ir::Expr {
    expr(ExprKind::Const(Const::Bool(false)), ty(t))
}

/// `x` converted to `to` (nothing when it already has that type).
pub(super) fn convert_to(x: ir::Expr, to: ScalarType) -> ir::Expr {
    if x.ty == Ty::Scalar(to) {
        x
    } else {
        expr(ExprKind::Convert(Box::new(x)), Ty::Scalar(to))
    }
}

/// The built-ins that call into the library, and so name a site (`ir::ExprKind::
/// CheckedBuiltin`): any of them can fail, by an error of its own (`size` of a missing
/// dimension) or an internal one (a panic in the library, issue 14), and either names the
/// call. The math functions and `len`/`rank` are computed in place.
pub(super) fn calls_library(b: Builtin) -> bool {
    !(b.is_math() || matches!(b, Builtin::Len | Builtin::Rank))
}

/// The name a bounds check reports for an indexed expression.
pub(super) fn array_name(body: &Body, base: &hir::Expr) -> String {
    match base.as_var() {
        Some(v) => body.cx.var_name(v),
        None => "array".into(),
    }
}

impl Body<'_, '_> {
    /// Lower `e` as a value. (Each kind is lowered by its own function: expressions nest as
    /// deep as the front end allows, and small frames keep the recursion within a thread's
    /// stack in debug builds too.)
    pub fn expr(&mut self, e: &hir::Expr) -> Val {
        use hir::ExprKind as H;
        match &e.kind {
            H::Const(c) => Val::plain(constant(*c)),
            H::Var(v) => Val::plain(self.read(*v)),
            H::Unary(op, x) => Val::plain(self.unary(e, *op, x)),
            H::Binary(op, l, r) => Val::plain(self.binary(e, *op, l, r)),
            H::Convert { expr: x, .. } => Val::plain(self.convert(e, x)),
            H::Call(f, args) => self.call(e, *f, args),
            H::Builtin(b, args) => self.builtin(e, *b, args),
            H::Index { base, indices } => Val::plain(self.index(e, base, indices)),
            H::Section { base, ranges } => Val::plain(self.section(base, ranges)),
            H::ArrayLit(elems) => self.array_lit(e, elems),
            H::If(c, a, b) => self.if_expr(e, c, a, b),
            H::Block(stmts, value) => self.block_expr(e, stmts, value),
            H::Str(_) | H::Error => Val::plain(dummy(e.ty)),
        }
    }

    #[inline(never)]
    fn unary(&mut self, e: &hir::Expr, op: hir::UnOp, x: &hir::Expr) -> ir::Expr {
        let x = self.operand(x);
        expr(ExprKind::Unary(op, Box::new(x)), ty(e.ty))
    }

    #[inline(never)]
    fn convert(&mut self, e: &hir::Expr, x: &hir::Expr) -> ir::Expr {
        let x = self.operand(x);
        match e.ty.scalar() {
            Some(s) => convert_to(x, s),
            None => x,
        }
    }

    #[inline(never)]
    fn call(&mut self, e: &hir::Expr, f: hir::FnId, args: &[hir::Expr]) -> Val {
        let t = ty(e.ty);
        let args: Vec<&hir::Expr> = args.iter().collect();
        let xs = self.operands(&args, true);
        Val {
            e: expr(ExprKind::Call(f, xs), t),
            owned: t.is_array(),
        }
    }

    #[inline(never)]
    fn index(&mut self, e: &hir::Expr, base: &hir::Expr, indices: &[hir::Expr]) -> ir::Expr {
        let mut all: Vec<&hir::Expr> = vec![base];
        all.extend(indices.iter());
        let mut xs = self.operands(&all, false).into_iter();
        let array = xs.next().unwrap_or_else(|| dummy(base.ty));
        let what = array_name(self, base);
        let site = self.cx.site(e.span, what);
        expr(
            ExprKind::Load {
                array: Box::new(array),
                indices: xs.collect(),
                site: Some(site),
            },
            ty(e.ty),
        )
    }

    #[inline(never)]
    fn array_lit(&mut self, e: &hir::Expr, elems: &[hir::Expr]) -> Val {
        let elems: Vec<&hir::Expr> = elems.iter().collect();
        let xs = self.operands(&elems, false);
        let site = self.cx.site(e.span, "array literal");
        Val {
            e: expr(ExprKind::ArrayLit(xs, site), ty(e.ty)),
            owned: true,
        }
    }

    /// Lower `e` for a use that borrows it: an owned array goes into a temporary released when
    /// the statement ends.
    pub fn operand(&mut self, e: &hir::Expr) -> ir::Expr {
        let v = self.expr(e);
        self.borrow(v)
    }

    pub fn borrow(&mut self, v: Val) -> ir::Expr {
        if !v.owned {
            return v.e;
        }
        let t = match v.e.kind {
            ExprKind::Local(l) if self.is_temp(l) => l,
            _ => {
                let t = self.temp(v.e.ty);
                self.emit(Stmt::Set(t, v.e));
                t
            }
        };
        self.own(t);
        self.local(t)
    }

    /// An owned reference to the value, for a store that keeps it: a borrowed array is
    /// retained. (Scalars are returned as they are.)
    pub fn owned_value(&mut self, v: Val) -> ir::Expr {
        if v.e.ty.is_array() && !v.owned {
            self.emit(Stmt::Retain(v.e.clone()));
        }
        v.e
    }

    /// Operands evaluated left to right. Statements that a later operand needs (flattened `if`s,
    /// temporaries) run before the earlier operands are evaluated, so an earlier operand those
    /// statements could change is spilled to a temporary first (`keeps`). `user_call`: the
    /// operands are a user function's arguments (the call itself runs user code after them).
    pub fn operands(&mut self, es: &[&hir::Expr], user_call: bool) -> Vec<ir::Expr> {
        let n = es.len();
        let mut later = vec![Later::default(); n];
        let mut acc = Later {
            calls: user_call,
            ..Later::default()
        };
        for i in (0..n).rev() {
            later[i] = acc;
            acc = acc.and(es[i]);
        }
        let mut out = Vec::with_capacity(n);
        for (i, e) in es.iter().enumerate() {
            let x = self.operand(e);
            let x = if self.keeps(&x, later[i]) {
                x
            } else {
                self.spill(x)
            };
            out.push(x);
        }
        out
    }

    /// Whether `x` still means the same when evaluated after what `later` does: a local
    /// changes only by the program's statements (in value blocks), a global or a loaded element
    /// also by calls whose statements run first, and a borrowed global array may be freed by a
    /// call that runs after it is read, if some function rebinds that global.
    pub fn keeps(&self, x: &ir::Expr, later: Later) -> bool {
        match &x.kind {
            ExprKind::Const(_) | ExprKind::Section { .. } => true,
            ExprKind::Local(l) => self.is_temp(*l) || !later.blocks,
            ExprKind::Global(g) => {
                let rebound = x.ty.is_array() && self.cx.rebound.contains(g);
                !(later.effects || rebound && later.calls)
            }
            _ => !later.effects,
        }
    }

    /// Keep the value of `x` as it is now: scalars in a temporary, a borrowed array retained
    /// in one (released when the statement ends). Constants and temporaries already are.
    pub fn spill(&mut self, x: ir::Expr) -> ir::Expr {
        match &x.kind {
            ExprKind::Const(_) | ExprKind::Section { .. } => x,
            ExprKind::Local(l) if self.is_temp(*l) => x,
            _ => {
                let t = self.temp(x.ty);
                let array = x.ty.is_array();
                self.emit(Stmt::Set(t, x));
                if array {
                    self.emit(Stmt::Retain(self.local(t)));
                    self.own(t);
                }
                self.local(t)
            }
        }
    }

    #[inline(never)]
    fn binary(&mut self, e: &hir::Expr, op: BinOp, l: &hir::Expr, r: &hir::Expr) -> ir::Expr {
        if matches!(op, BinOp::And | BinOp::Or) && scan::needs_stmts(r) {
            return self.short_circuit(e, op, l, r);
        }
        let mut xs = self.operands(&[l, r], false).into_iter();
        let a = xs.next().unwrap_or_else(|| dummy(l.ty));
        let b = xs.next().unwrap_or_else(|| dummy(r.ty));
        let site = self.division_site(op, a.ty, e.span);
        expr(
            ExprKind::Binary(op, Box::new(a), Box::new(b), site),
            ty(e.ty),
        )
    }

    /// `l && r` with statements in `r`: they may only run when `l` does not decide.
    #[inline(never)]
    fn short_circuit(
        &mut self,
        e: &hir::Expr,
        op: BinOp,
        l: &hir::Expr,
        r: &hir::Expr,
    ) -> ir::Expr {
        let t = ty(e.ty);
        {
            let lv = self.operand(l);
            let result = self.temp(t);
            self.emit(Stmt::Set(result, lv));
            let rhs = self.nested(ScopeKind::Block, |b| {
                let rv = b.operand(r);
                b.emit(Stmt::Set(result, rv));
            });
            let (then, els) = if op == BinOp::And {
                (rhs, Vec::new())
            } else {
                (Vec::new(), rhs)
            };
            let cond = self.local(result);
            self.emit(Stmt::If { cond, then, els });
            self.local(result)
        }
    }

    /// The site of an integer division or remainder (division by zero).
    pub fn division_site(
        &mut self,
        op: BinOp,
        operand: Ty,
        span: crate::span::Span,
    ) -> Option<ir::SiteId> {
        let int = operand.scalar().is_some_and(ScalarType::is_int);
        (matches!(op, BinOp::Div | BinOp::Rem) && int).then(|| self.cx.site(span, ""))
    }

    #[inline(never)]
    fn builtin(&mut self, e: &hir::Expr, b: Builtin, args: &[hir::Expr]) -> Val {
        let t = ty(e.ty);
        match b {
            Builtin::Print | Builtin::Printf | Builtin::Assert => {
                self.effect(e);
                Val::plain(dummy(e.ty))
            }
            Builtin::Imshow | Builtin::Plot => Val::plain(self.picture(e, b, args)),
            Builtin::Param => {
                let name = match args.first().map(|a| &a.kind) {
                    Some(hir::ExprKind::Str(s)) => s.as_str(),
                    _ => "",
                };
                let name = self.cx.string(name);
                let default = match args.get(1) {
                    Some(d) => self.operand(d),
                    None => dummy(e.ty),
                };
                // A `--set` value that is not of the type is an error at the call.
                let site = self.cx.site(e.span, "param");
                Val::plain(expr(ExprKind::Param(name, Box::new(default), site), t))
            }
            _ => {
                let args: Vec<&hir::Expr> = args.iter().collect();
                let xs = self.operands(&args, false);
                let kind = if calls_library(b) {
                    // A data routine's errors name its array (`a` is not present on …).
                    let what = match args.first().map(|a| &a.kind) {
                        Some(hir::ExprKind::Section { base, .. }) => match base.kind {
                            hir::ExprKind::Var(v) if b.is_runtime_routine() => self.cx.var_name(v),
                            _ => b.name().to_string(),
                        },
                        Some(hir::ExprKind::Var(v)) if b.is_runtime_routine() => {
                            self.cx.var_name(*v)
                        }
                        _ => b.name().to_string(),
                    };
                    let site = self.cx.site(e.span, what);
                    ExprKind::CheckedBuiltin(b, xs, site)
                } else {
                    ExprKind::Builtin(b, xs)
                };
                Val {
                    e: expr(kind, t),
                    owned: t.is_array(),
                }
            }
        }
    }

    /// `imshow`/`plot`: the arrays, then the path as the constant `StringId` of its literal
    /// (`NO_PATH` without one), with the call's site for the library's errors.
    #[inline(never)]
    fn picture(&mut self, e: &hir::Expr, b: Builtin, args: &[hir::Expr]) -> ir::Expr {
        let arrays: Vec<&hir::Expr> = args.iter().filter(|a| !is_str(a)).collect();
        let mut xs = self.operands(&arrays, false);
        let path = match args.iter().find_map(|a| match &a.kind {
            hir::ExprKind::Str(s) => Some(s),
            _ => None,
        }) {
            Some(s) => i64::from(self.cx.string(s).0),
            None => crate::builtins::NO_PATH,
        };
        xs.push(expr(
            ExprKind::Const(Const::I64(path)),
            Ty::Scalar(ScalarType::I64),
        ));
        let site = self.cx.site(e.span, b.name());
        expr(ExprKind::CheckedBuiltin(b, xs, site), ty(e.ty))
    }

    #[inline(never)]
    fn section(&mut self, base: &hir::Expr, ranges: &[hir::SectionRange]) -> ir::Expr {
        let array = self.operand(base);
        let t = array.ty;
        let ranges = self.ranges(ranges);
        expr(
            ExprKind::Section {
                array: Box::new(array),
                ranges,
            },
            t,
        )
    }

    pub fn ranges(&mut self, ranges: &[hir::SectionRange]) -> Vec<ir::SectionRange> {
        ranges
            .iter()
            .map(|r| ir::SectionRange {
                start: r.start.as_ref().map(|x| self.operand(x)),
                count: r.count.as_ref().map(|x| self.operand(x)),
            })
            .collect()
    }

    /// `if c { a } else { b }` as a value: a temporary set in both branches.
    #[inline(never)]
    fn if_expr(&mut self, e: &hir::Expr, c: &hir::Expr, a: &hir::Expr, b: &hir::Expr) -> Val {
        if e.ty == Type::Void {
            self.effect(e);
            return Val::plain(dummy(e.ty));
        }
        let t = ty(e.ty);
        let cond = self.operand(c);
        let result = self.temp(t);
        let then = self.nested(ScopeKind::Block, |x| x.set_result(a, result));
        let els = self.nested(ScopeKind::Block, |x| x.set_result(b, result));
        self.emit(Stmt::If { cond, then, els });
        Val {
            e: self.local(result),
            owned: t.is_array(),
        }
    }

    /// `result = e`, the result owning an array.
    fn set_result(&mut self, e: &hir::Expr, result: ir::LocalId) {
        let v = self.expr(e);
        let x = self.owned_value(v);
        self.emit(Stmt::Set(result, x));
    }

    /// `{ stmts; value }`: the block's arrays are released once its value is safe in a
    /// temporary.
    #[inline(never)]
    fn block_expr(&mut self, e: &hir::Expr, stmts: &[hir::Stmt], value: &hir::Expr) -> Val {
        if e.ty == Type::Void {
            self.effect(e);
            return Val::plain(dummy(e.ty));
        }
        self.push_scope(ScopeKind::Block);
        for s in stmts {
            self.stmt(s);
        }
        let v = self.expr(value);
        if !self.scope_owns_anything() {
            self.pop_scope();
            return v;
        }
        let t = v.e.ty;
        let result = self.temp(t);
        let x = self.owned_value(v);
        self.emit(Stmt::Set(result, x));
        self.pop_scope();
        Val {
            e: self.local(result),
            owned: t.is_array(),
        }
    }
}
