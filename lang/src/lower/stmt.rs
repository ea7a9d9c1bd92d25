//! Statements: bindings and stores with their reference counts, control flow with the releases
//! that leaving a scope means, and the output statements.

use super::body::{reduction, Body, Context, ScopeKind};
use super::expr::{array_name, constant, convert_to, dummy, expr, Val};
use super::scan::{needs_stmts, Later};
use crate::builtins::{parse_format, Builtin, FormatPiece, FormatSpec};
use crate::hir::{self, CompoundOp, Const, PlaceKind, ScalarType, StmtKind, Type, UnOp, VarId};
use crate::ir::{self, ExprKind, LoopSchedule, PrintArg, Stmt, Ty};
use crate::span::Span;

impl Body<'_, '_> {
    pub fn stmt(&mut self, s: &hir::Stmt) {
        let top = std::mem::replace(&mut self.top_level, false);
        let mark = self.mark();
        match &s.kind {
            StmtKind::Let { var, init } => {
                self.let_stmt(*var, init, mark);
                return;
            }
            StmtKind::Assign { place, op, value } => self.assign(place, *op, value, s.span),
            StmtKind::Expr(e) => self.expr_stmt(e, top),
            StmtKind::If { cond, then, els } => {
                let cond = self.operand(cond);
                let then = self.nested(ScopeKind::Block, |b| b.stmts(&then.stmts));
                let els = match els {
                    Some(x) => {
                        self.open_block();
                        self.stmt(x);
                        self.close_block()
                    }
                    None => Vec::new(),
                };
                self.emit(Stmt::If { cond, then, els });
            }
            StmtKind::While { cond, body } => self.while_stmt(cond, body, s.span),
            StmtKind::For(f) => self.for_stmt(f, s.span),
            StmtKind::Break => {
                if self.leave_loop() {
                    self.emit(Stmt::Break);
                }
            }
            StmtKind::Continue => {
                if self.leave_loop() {
                    self.emit(Stmt::Continue);
                }
            }
            StmtKind::Return(value) => self.return_stmt(value.as_ref()),
            StmtKind::Block(b) => {
                self.push_scope(ScopeKind::Block);
                self.stmts(&b.stmts);
                self.pop_scope();
            }
            StmtKind::Directive(d) => self.directive(d),
        }
        self.flush(mark);
    }

    pub fn stmts(&mut self, stmts: &[hir::Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    /// `let v = init`: a fresh variable takes the value's reference (no release of an old one).
    fn let_stmt(&mut self, var: VarId, init: &hir::Expr, mark: super::body::Mark) {
        let v = self.expr(init);
        let x = self.owned_value(v);
        let array = x.ty.is_array();
        if self.cx.is_global(var) && self.context == Context::Main {
            self.emit(Stmt::SetGlobal(var, x));
            self.flush(mark);
            return;
        }
        let l = self.declare(var);
        self.emit(Stmt::Set(l, x));
        self.flush(mark);
        if array {
            self.own(l);
        }
    }

    fn assign(
        &mut self,
        place: &hir::Place,
        op: Option<CompoundOp>,
        value: &hir::Expr,
        span: Span,
    ) {
        match &place.kind {
            PlaceKind::Var(v) => {
                let is_array = self.cx.var_ty(*v).is_array();
                match op {
                    None if is_array => self.rebind_array(*v, value),
                    None => {
                        let x = self.operand(value);
                        let s = self.set(*v, x);
                        self.emit(s);
                    }
                    Some(cop) => {
                        let cur = self.read(*v);
                        let cur = if self.keeps(&cur, Later::of(value)) {
                            cur
                        } else {
                            self.spill(cur)
                        };
                        let rhs = self.operand(value);
                        let new = self.compound(cop, cur, rhs, place.ty, span);
                        let s = self.set(*v, new);
                        self.emit(s);
                    }
                }
            }
            PlaceKind::Index { base, indices } => {
                let what = array_name(self, base);
                let site = self.cx.site(place.span, what);
                let mut all: Vec<&hir::Expr> = vec![base];
                all.extend(indices.iter());
                match op {
                    None => {
                        all.push(value);
                        let mut xs = self.operands(&all, false);
                        let value = xs.pop().unwrap_or_else(|| dummy(place.ty));
                        let mut xs = xs.into_iter();
                        let array = xs.next().unwrap_or_else(|| dummy(base.ty));
                        self.emit(Stmt::Store {
                            array,
                            indices: xs.collect(),
                            value,
                            site: Some(site),
                        });
                    }
                    Some(cop) => {
                        // The place is evaluated once: what the value could change goes into
                        // temporaries, and the load checks the bounds for the store.
                        let xs = self.operands(&all, false);
                        let later = Later::of(value);
                        let mut xs = xs
                            .into_iter()
                            .map(|x| {
                                if self.evaluated_once(&x, later) {
                                    x
                                } else {
                                    self.spill(x)
                                }
                            })
                            .collect::<Vec<_>>()
                            .into_iter();
                        let array = xs.next().unwrap_or_else(|| dummy(base.ty));
                        let indices: Vec<ir::Expr> = xs.collect();
                        let rhs = self.operand(value);
                        let load = expr(
                            ExprKind::Load {
                                array: Box::new(array.clone()),
                                indices: indices.clone(),
                                site: Some(site),
                            },
                            super::ty(place.ty),
                        );
                        let new = self.compound(cop, load, rhs, place.ty, span);
                        self.emit(Stmt::Store {
                            array,
                            indices,
                            value: new,
                            site: None,
                        });
                    }
                }
            }
        }
    }

    /// `a = value` for an array variable: the new reference is owned before the old one is
    /// released (they may be the same array).
    fn rebind_array(&mut self, v: VarId, value: &hir::Expr) {
        let val = self.expr(value);
        let x = if val.owned {
            match val.e.kind {
                ExprKind::Local(l) if self.is_temp(l) => val.e,
                _ => {
                    let t = self.temp(val.e.ty);
                    self.emit(Stmt::Set(t, val.e));
                    self.local(t)
                }
            }
        } else {
            self.emit(Stmt::Retain(val.e.clone()));
            val.e
        };
        let old = self.read(v);
        self.emit(Stmt::Release(old));
        let s = self.set(v, x);
        self.emit(s);
    }

    /// Whether a part of a compound assignment's place may be evaluated twice (for the load
    /// and the store) with `later` evaluated in between: a constant or a variable that keeps its
    /// value; anything computed goes into a temporary.
    fn evaluated_once(&self, x: &ir::Expr, later: Later) -> bool {
        matches!(
            x.kind,
            ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Global(_)
        ) && self.keeps(x, later)
    }

    /// `cur op value` as a compound assignment computes it: in `cop.ty`, converted back to the
    /// place's type.
    pub fn compound(
        &mut self,
        cop: CompoundOp,
        cur: ir::Expr,
        rhs: ir::Expr,
        place_ty: Type,
        span: Span,
    ) -> ir::Expr {
        let a = convert_to(cur, cop.ty);
        let site = self.division_site(cop.op, a.ty, span);
        let result = expr(
            ExprKind::Binary(cop.op, Box::new(a), Box::new(rhs), site),
            Ty::Scalar(cop.ty),
        );
        match place_ty.scalar() {
            Some(s) => convert_to(result, s),
            None => result,
        }
    }

    /// An expression statement (at the REPL's top level, its value is printed).
    fn expr_stmt(&mut self, e: &hir::Expr, top: bool) {
        let printable = e.ty != Type::Void
            && !matches!(
                e.kind,
                hir::ExprKind::Builtin(Builtin::Print | Builtin::Printf | Builtin::Assert, _)
            );
        if top && printable && self.cx.options.print_values {
            self.show_value(e);
            return;
        }
        self.effect(e);
    }

    /// Evaluate `e` for its effect.
    pub fn effect(&mut self, e: &hir::Expr) {
        use hir::ExprKind as H;
        match &e.kind {
            H::Builtin(Builtin::Print, args) => self.print(e, args),
            H::Builtin(Builtin::Printf, args) => self.printf(e, args),
            H::Builtin(Builtin::Assert, args) => self.assert(args),
            H::If(c, a, b) if e.ty == Type::Void => {
                let cond = self.operand(c);
                let then = self.nested(ScopeKind::Block, |x| x.effect(a));
                let els = self.nested(ScopeKind::Block, |x| x.effect(b));
                self.emit(Stmt::If { cond, then, els });
            }
            H::Block(stmts, value) if e.ty == Type::Void => {
                self.push_scope(ScopeKind::Block);
                self.stmts(stmts);
                self.effect(value);
                self.pop_scope();
            }
            _ => {
                let v = self.expr(e);
                self.discard(v);
            }
        }
    }

    /// Drop a value: calls still run (an owned result is released by `Eval`), owned
    /// temporaries are released, checks still happen.
    fn discard(&mut self, v: Val) {
        match &v.e.kind {
            ExprKind::Call(..)
            | ExprKind::Builtin(..)
            | ExprKind::CheckedBuiltin(..)
            | ExprKind::ArrayLit(..) => self.emit(Stmt::Eval(v.e)),
            _ if v.e.ty.is_array() => {
                if v.owned {
                    self.emit(Stmt::Release(v.e));
                }
            }
            ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Global(_) => {}
            _ => self.emit(Stmt::Eval(v.e)),
        }
    }

    fn print(&mut self, call: &hir::Expr, args: &[hir::Expr]) {
        let values: Vec<&hir::Expr> = args.iter().filter(|a| !is_str(a)).collect();
        let mut xs = self.operands(&values, false).into_iter();
        let mut out = Vec::with_capacity(args.len());
        for a in args {
            match &a.kind {
                hir::ExprKind::Str(s) => out.push(PrintArg::Str(self.cx.string(s))),
                _ => out.extend(xs.next().map(PrintArg::Value)),
            }
        }
        let site = self.cx.site(call.span, "print");
        self.emit(Stmt::Print(out, site));
    }

    /// `printf`: string arguments are folded into the format (they are literals), so the
    /// format's conversions all take numbers.
    fn printf(&mut self, call: &hir::Expr, args: &[hir::Expr]) {
        let Some((fmt, rest)) = args.split_first() else {
            return;
        };
        let hir::ExprKind::Str(fmt) = &fmt.kind else {
            return;
        };
        let Ok(pieces) = parse_format(fmt) else {
            return;
        };
        let values: Vec<&hir::Expr> = rest.iter().filter(|a| !is_str(a)).collect();
        let xs = self.operands(&values, false);
        let mut out: Vec<FormatPiece> = Vec::new();
        let mut args = rest.iter();
        for piece in pieces {
            match piece {
                FormatPiece::Text(t) => push_text(&mut out, &t),
                FormatPiece::Spec(spec) => match args.next().map(|a| &a.kind) {
                    Some(hir::ExprKind::Str(s)) => push_text(&mut out, &format_str(&spec, s)),
                    _ => out.push(FormatPiece::Spec(spec)),
                },
            }
        }
        let id = self.cx.format(out);
        let site = self.cx.site(call.span, "printf");
        self.emit(Stmt::Printf(id, xs, site));
    }

    fn assert(&mut self, args: &[hir::Expr]) {
        let Some(c) = args.first() else {
            return;
        };
        let cond = self.operand(c);
        let message = match args.get(1).map(|m| &m.kind) {
            Some(hir::ExprKind::Str(s)) => Some(self.cx.string(s)),
            _ => None,
        };
        let site = self.cx.site(c.span, "");
        self.emit(Stmt::Assert {
            cond,
            message,
            site,
        });
    }

    fn while_stmt(&mut self, cond: &hir::Expr, body: &hir::Block, span: Span) {
        let site = self.cx.site(
            Span::new(span.start as usize, span.start as usize + 5),
            "while",
        );
        if !needs_stmts(cond) {
            let c = self.operand(cond);
            let body = self.nested(ScopeKind::Loop, |b| b.stmts(&body.stmts));
            self.emit(Stmt::While {
                cond: c,
                body,
                site,
            });
            return;
        }
        // The condition's statements run at the top of every iteration.
        let body = self.nested(ScopeKind::Loop, |b| {
            let mark = b.mark();
            let c = b.operand(cond);
            let t = b.temp(Ty::Scalar(ScalarType::Bool));
            b.emit(Stmt::Set(t, c));
            b.flush(mark);
            let not = expr(
                ExprKind::Unary(UnOp::Not, Box::new(b.local(t))),
                Ty::Scalar(ScalarType::Bool),
            );
            b.emit(Stmt::If {
                cond: not,
                then: vec![Stmt::Break],
                els: Vec::new(),
            });
            b.stmts(&body.stmts);
        });
        self.emit(Stmt::While {
            cond: constant(Const::Bool(true)),
            body,
            site,
        });
    }

    fn for_stmt(&mut self, f: &hir::ForLoop, span: Span) {
        let info = self.loop_info(span);
        let site = self.cx.site(
            Span::new(span.start as usize, span.start as usize + 3),
            "for",
        );
        let mut bounds: Vec<&hir::Expr> = vec![&f.start, &f.end];
        bounds.extend(f.step.as_ref());
        let mut xs = self.operands(&bounds, false).into_iter();
        let start = xs.next().unwrap_or_else(|| dummy(f.start.ty));
        let end = xs.next().unwrap_or_else(|| dummy(f.end.ty));
        let var = self.declare(f.var);
        let step = xs.next().unwrap_or_else(|| match self.local_ty(var) {
            Ty::Scalar(ScalarType::I32) => constant(Const::I32(1)),
            _ => constant(Const::I64(1)),
        });
        // A step the checker could not prove nonzero is checked before the first iteration,
        // at the step expression (LANGUAGE.md section 3).
        let step_site = match (&step.kind, &f.step) {
            (ExprKind::Const(Const::I32(s)), _) if *s != 0 => None,
            (ExprKind::Const(Const::I64(s)), _) if *s != 0 => None,
            (_, Some(s)) => Some(self.cx.site(s.span, "step")),
            (_, None) => None,
        };

        let mut schedule = LoopSchedule {
            collapse: 1,
            ..LoopSchedule::default()
        };
        let mut saved = Vec::new();
        let mut zeroed = Vec::new();
        if let Some(info) = info {
            if let crate::analysis::Schedule::Parallel(levels) = info.schedule {
                schedule.gang = levels.gang;
                schedule.worker = levels.worker;
                schedule.vector = levels.vector;
            }
            schedule.collapse = info.collapse.max(1);
            for r in &info.reductions {
                if let super::body::Storage::Local(l) = self.storage(r.var) {
                    schedule.reductions.push(reduction(l, r));
                }
            }
            // `private` scalars get their own local inside the loop (uninitialized in OpenACC;
            // zero here, so that every local is assigned before it is read); arrays the
            // region's per-gang parameter for them (`Pass::PrivateArray`; in a routine, where
            // there is none, the array stays shared).
            for &p in &info.private {
                let t = self.cx.var_ty(p);
                let l = match t {
                    Ty::Array { .. } => match self.private_arrays.get(&p) {
                        Some(&l) => l,
                        None => continue,
                    },
                    Ty::Scalar(s) => {
                        let l = self.new_local(self.cx.var_name(p), t);
                        zeroed.push((l, s));
                        l
                    }
                };
                saved.push((p, self.bind(p, Some(l))));
            }
        }
        let mut body = self.nested(ScopeKind::Loop, |b| b.stmts(&f.body.stmts));
        let inits = zeroed
            .into_iter()
            .map(|(l, s)| Stmt::Set(l, zero(s)))
            .collect();
        put_first(&mut body, schedule.collapse.saturating_sub(1), inits);
        for (p, old) in saved.into_iter().rev() {
            self.bind(p, old);
        }
        let id = self.new_loop_id();
        self.emit(Stmt::For(ir::ForLoop {
            id,
            var,
            start,
            end,
            step,
            step_site,
            inclusive: f.inclusive,
            body,
            schedule,
            site,
        }));
    }

    fn return_stmt(&mut self, value: Option<&hir::Expr>) {
        let Some(e) = value else {
            self.leave_all();
            self.emit(Stmt::Return(None));
            return;
        };
        let v = self.expr(e);
        // The caller owns an array result: a borrowed one is retained.
        let mut x = self.owned_value(v);
        let simple = matches!(
            x.kind,
            ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Global(_)
        );
        if self.return_needs_cleanup() && !simple {
            let t = self.temp(x.ty);
            self.emit(Stmt::Set(t, x));
            x = self.local(t);
        }
        self.leave_all();
        self.emit(Stmt::Return(Some(x)));
    }
}

/// Put `stmts` at the top of `body`, or of the innermost loop of a `collapse` nest `levels`
/// deep (whose loops must stay each other's only statement).
fn put_first(body: &mut ir::Block, levels: u32, stmts: Vec<Stmt>) {
    if stmts.is_empty() {
        return;
    }
    if levels > 0 {
        if let [Stmt::For(inner)] = body.as_mut_slice() {
            return put_first(&mut inner.body, levels - 1, stmts);
        }
    }
    body.splice(0..0, stmts);
}

fn zero(s: ScalarType) -> ir::Expr {
    constant(match s {
        ScalarType::Bool => Const::Bool(false),
        ScalarType::I32 => Const::I32(0),
        ScalarType::I64 => Const::I64(0),
        ScalarType::F32 => Const::F32(0.0),
        ScalarType::F64 => Const::F64(0.0),
    })
}

pub(super) fn is_str(e: &hir::Expr) -> bool {
    matches!(e.kind, hir::ExprKind::Str(_))
}

fn push_text(out: &mut Vec<FormatPiece>, text: &str) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(FormatPiece::Text(t)) => t.push_str(text),
        _ => out.push(FormatPiece::Text(text.to_string())),
    }
}

/// C's `%s` of a known string: precision truncates, width pads (on the right with `-`).
/// Counted in characters.
fn format_str(spec: &FormatSpec, s: &str) -> String {
    let mut text: String = match spec.precision {
        Some(p) => s.chars().take(p as usize).collect(),
        None => s.to_string(),
    };
    if let Some(w) = spec.width {
        let n = text.chars().count();
        if n < w as usize {
            let pad = " ".repeat(w as usize - n);
            if spec.flags.contains('-') {
                text.push_str(&pad);
            } else {
                text = pad + &text;
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(flags: &str, width: Option<u32>, precision: Option<u32>) -> FormatSpec {
        FormatSpec {
            flags: flags.into(),
            width,
            precision,
            conv: 's',
            start: 0,
            end: 2,
        }
    }

    #[test]
    fn string_conversions_are_formatted_at_compile_time() {
        assert_eq!(format_str(&spec("", None, None), "abc"), "abc");
        assert_eq!(format_str(&spec("", Some(5), None), "abc"), "  abc");
        assert_eq!(format_str(&spec("-", Some(5), None), "abc"), "abc  ");
        assert_eq!(format_str(&spec("", Some(2), Some(1)), "abc"), " a");
        assert_eq!(format_str(&spec("", None, Some(0)), "abc"), "");
    }
}
