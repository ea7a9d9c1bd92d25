//! Statements (LANGUAGE.md section 3) and function bodies (section 5).

use rustc_hash::FxHashMap;
use std::sync::Arc;

use crate::ast::{self, BinOp, ExprKind as A, ScalarType};
use crate::diag::Diagnostic;
use crate::hir::{
    self, Block, CompoundOp, Expr, ExprKind, FnId, Place, PlaceKind, Stmt, StmtKind, Type, VarKind,
};

use super::exprs::{string_misplaced, Target};
use super::literals::{convert, poison, Checked, FlexKind};
use super::{Cx, FnCx};

impl Cx<'_> {
    /// Check a statement. `None` when it produces nothing (an error, a misplaced `fn`).
    pub(super) fn stmt(&mut self, s: &ast::Stmt) -> Option<Stmt> {
        let kind = match &s.kind {
            ast::StmtKind::Let { name, ty, init } => self.let_stmt(name, ty.as_ref(), init),
            ast::StmtKind::Assign { target, op, value } => self.assign(target, *op, value)?,
            ast::StmtKind::Expr(e) => {
                let c = self.expr_any(e, None);
                let x = self.settle(c, None);
                if x.ty == Type::Str {
                    self.error(string_misplaced(x.span));
                }
                StmtKind::Expr(x)
            }
            ast::StmtKind::If { cond, then, els } => {
                let cond = self.condition(cond, "an `if` condition");
                let then = self.block(then);
                let els = els.as_deref().and_then(|e| self.stmt(e)).map(Box::new);
                StmtKind::If { cond, then, els }
            }
            ast::StmtKind::While { cond, body } => {
                let cond = self.condition(cond, "a `while` condition");
                self.loop_depth += 1;
                let body = self.block(body);
                self.loop_depth -= 1;
                StmtKind::While { cond, body }
            }
            ast::StmtKind::For(f) => StmtKind::For(Box::new(self.for_loop(f))),
            ast::StmtKind::Break | ast::StmtKind::Continue => {
                let word = if matches!(s.kind, ast::StmtKind::Break) {
                    "break"
                } else {
                    "continue"
                };
                if self.loop_depth == 0 {
                    self.error(Diagnostic::error(
                        format!("`{word}` outside a loop"),
                        s.span,
                        "not inside `for` or `while`",
                    ));
                    return None;
                }
                if word == "break" {
                    StmtKind::Break
                } else {
                    StmtKind::Continue
                }
            }
            ast::StmtKind::Return(value) => self.return_stmt(s, value.as_ref()),
            ast::StmtKind::Block(b) => StmtKind::Block(self.block(b)),
            ast::StmtKind::Fn(def) => {
                self.error(
                    Diagnostic::error(
                        format!("function `{}` is defined inside a block", def.name.name),
                        def.sig_span,
                        "not at the top level",
                    )
                    .with_help("define functions at the top level of the script"),
                );
                return None;
            }
            ast::StmtKind::Directive(d) => StmtKind::Directive(self.directive(d)?),
            ast::StmtKind::Error => return None,
        };
        Some(Stmt { kind, span: s.span })
    }

    /// A block with its own scope.
    pub(super) fn block(&mut self, b: &ast::Block) -> Block {
        self.scopes.push(FxHashMap::default());
        let stmts = self.stmts(&b.stmts);
        self.scopes.pop();
        Block {
            stmts,
            span: b.span,
        }
    }

    /// Statements in a vector of their number (collecting those `stmt` keeps would grow one
    /// with room to spare: a fifth of a large program's typed tree).
    pub(super) fn stmts(&mut self, stmts: &[ast::Stmt]) -> Vec<Stmt> {
        let mut checked = Vec::with_capacity(stmts.len());
        checked.extend(stmts.iter().filter_map(|s| self.stmt(s)));
        checked
    }

    fn let_stmt(
        &mut self,
        name: &ast::Ident,
        ty: Option<&ast::TypeExpr>,
        init: &ast::Expr,
    ) -> StmtKind {
        let (init, ty) = match ty {
            Some(t) => {
                let ty = self.type_expr(t);
                let init = self.coerce(
                    init,
                    ty,
                    Target::Var {
                        name: &name.name,
                        decl: Some(t.span),
                        declaring: true,
                    },
                );
                (init, ty)
            }
            None => {
                let init = self.value(init, None);
                let ty = init.ty;
                (init, ty)
            }
        };
        let kind = if self.at_top_level() {
            VarKind::Global
        } else {
            VarKind::Local
        };
        let var = self.declare(name, ty, kind);
        StmtKind::Let { var, init }
    }

    fn assign(
        &mut self,
        target: &ast::Expr,
        op: Option<BinOp>,
        value: &ast::Expr,
    ) -> Option<StmtKind> {
        let Some(place) = self.place(target, op, value) else {
            // Still check the value for its own errors.
            let _ = self.value(value, None);
            return None;
        };
        let (op, value) = match op {
            None => {
                let x = match &place.kind {
                    PlaceKind::Var(v) => {
                        let name = self.var(*v).name.clone();
                        let decl = self.is_new_var(*v).then(|| self.var(*v).span);
                        let to = Target::Var {
                            name: &name,
                            decl,
                            declaring: false,
                        };
                        self.coerce(value, place.ty, to)
                    }
                    PlaceKind::Index { .. } => self.coerce(value, place.ty, Target::Elem),
                };
                (None, x)
            }
            Some(op) => {
                let (cop, x) = self.compound(&place, op, value)?;
                (Some(cop), x)
            }
        };
        Some(StmtKind::Assign { place, op, value })
    }

    /// `place op= value`: the operation's type and the converted value.
    fn compound(
        &mut self,
        place: &Place,
        op: BinOp,
        value: &ast::Expr,
    ) -> Option<(CompoundOp, Expr)> {
        let c = self.expr(value, Some(place.ty).filter(|t| t.is_scalar()));
        let x = match c {
            c @ Checked::Flex(_, FlexKind::Int) if matches!(op, BinOp::Shl | BinOp::Shr) => {
                self.settle(c, place.ty.scalar())
            }
            c => self.settle_with_peer(c, place.ty),
        };
        if place.ty.is_error() || x.ty.is_error() {
            return None;
        }
        // Type the operation as `place op value` would be, then keep only its types.
        let probe = self.binary_typed(
            place.span.to(x.span),
            op,
            Expr {
                kind: ExprKind::Error,
                ty: place.ty,
                span: place.span,
            },
            x.clone(),
        );
        if probe.ty.is_error() {
            return None;
        }
        let ty = match &probe.kind {
            ExprKind::Binary(_, l, _) => l.ty.scalar()?,
            _ => return None,
        };
        Some((CompoundOp { op, ty }, convert(x, ty, false)))
    }

    /// An assignment target: a variable or an element. `op` and `value` are the rest of the
    /// assignment, for the help when the variable was never declared.
    fn place(&mut self, target: &ast::Expr, op: Option<BinOp>, value: &ast::Expr) -> Option<Place> {
        match &target.kind {
            A::Name(id) => {
                let Some(v) = self.resolve_var(&id.name) else {
                    if crate::builtins::BuiltinConst::from_name(&id.name).is_some() {
                        self.error(Diagnostic::error(
                            format!("cannot assign to the constant `{}`", id.name),
                            id.span,
                            "a built-in constant",
                        ));
                    } else {
                        let help = declare_help(&id.name, op, value);
                        self.unknown_var(id, Some(help));
                    }
                    return None;
                };
                let info = self.var(v);
                if info.kind == VarKind::LoopVar {
                    let decl = self.is_new_var(v).then_some(info.span);
                    let mut d = Diagnostic::error(
                        format!("cannot assign to the loop variable `{}`", id.name),
                        target.span,
                        "assigned here",
                    )
                    .with_help(format!(
                        "a `for` loop's variable is read-only; copy it: `let j = {}`, or use \
                         a `while` loop",
                        id.name
                    ));
                    if let Some(decl) = decl {
                        d = d.with_label(decl, "the loop variable");
                    }
                    self.error(d);
                    return None;
                }
                Some(Place {
                    kind: PlaceKind::Var(v),
                    ty: info.ty,
                    span: target.span,
                })
            }
            A::Index(base, indices) => {
                let b = self.value(base, None);
                let (b, indices, elem) = self.indexed(b, base, indices, target.span)?;
                Some(Place {
                    kind: PlaceKind::Index {
                        base: Box::new(b),
                        indices,
                    },
                    ty: Type::Scalar(elem),
                    span: target.span,
                })
            }
            A::Error => None,
            _ => {
                self.error(
                    Diagnostic::error(
                        "cannot assign to this expression",
                        target.span,
                        "not a variable or element",
                    )
                    .with_help("assign to a variable (`x = …`) or an element (`a[i] = …`)"),
                );
                None
            }
        }
    }

    fn for_loop(&mut self, f: &ast::ForLoop) -> hir::ForLoop {
        let start = self.expr(&f.start, None);
        let end = self.expr(&f.end, None);
        // i32 when a bound is i32 and the other one is too or is an untyped literal.
        let is_i32 = |c: &Checked| c.ty() == Some(Type::I32);
        let fits_i32 = |c: &Checked| matches!(c, Checked::Flex(_, FlexKind::Int)) || is_i32(c);
        let t = if (is_i32(&start) || is_i32(&end)) && fits_i32(&start) && fits_i32(&end) {
            ScalarType::I32
        } else {
            ScalarType::I64
        };
        let start = self.loop_bound(start, t, "the start of a `for` range");
        let end = self.loop_bound(end, t, "the end of a `for` range");
        let step = f.step.as_ref().map(|s| {
            let c = self.expr(s, Some(Type::Scalar(t)));
            let x = self.loop_bound(c, t, "a `for` step");
            if x.as_const().and_then(|c| c.as_i64()) == Some(0) {
                self.error(
                    Diagnostic::error(
                        "the step of a `for` loop must not be zero",
                        x.span,
                        "zero step",
                    )
                    .with_help("use a positive step to count up, a negative one to count down"),
                );
            }
            x
        });
        // The variable lives in a scope around the body's, so a `let` in the body may shadow it.
        self.scopes.push(FxHashMap::default());
        let var = self.declare(&f.var, Type::Scalar(t), VarKind::LoopVar);
        self.loop_depth += 1;
        let body = self.block(&f.body);
        self.loop_depth -= 1;
        self.scopes.pop();
        hir::ForLoop {
            var,
            start,
            end,
            inclusive: f.inclusive,
            step,
            body,
        }
    }

    /// A bound or step of a `for` loop: an integer, converted to the loop variable's type.
    fn loop_bound(&mut self, c: Checked<'_>, t: ScalarType, what: &str) -> Expr {
        let x = self.settle(c, Some(t));
        if x.ty.is_error() {
            return x;
        }
        if !x.ty.is_int() {
            let mut d = Diagnostic::error(
                format!("{what} must be an integer, found {}", x.ty),
                x.span,
                format!("this is {}", x.ty),
            );
            if x.ty.is_float() {
                d = d.with_help("`for` counts in integers; convert with `as i64`, or use `while`");
            }
            self.error(d);
            return poison(x.span);
        }
        convert(x, t, false)
    }

    fn return_stmt(&mut self, s: &ast::Stmt, value: Option<&ast::Expr>) -> StmtKind {
        let Some(f) = &self.func else {
            self.error(
                Diagnostic::error("`return` outside a function", s.span, "at the top level")
                    .with_help("to end the script early, call `exit(code)`"),
            );
            if let Some(v) = value {
                let _ = self.value(v, None);
            }
            return StmtKind::Return(None);
        };
        let (name, ret, sig_span) = (f.name.clone(), f.ret, f.sig_span);
        match (value, ret) {
            (None, Type::Void) => StmtKind::Return(None),
            (None, ret) => {
                self.error(
                    Diagnostic::error(
                        format!("missing return value: `{name}` returns {ret}"),
                        s.span,
                        format!("expected a value of type {ret}"),
                    )
                    .with_label(sig_span, format!("returns {ret}")),
                );
                StmtKind::Return(None)
            }
            (Some(v), Type::Void) => {
                let x = self.value(v, None);
                if !x.ty.is_error() {
                    self.error(
                        Diagnostic::error(
                            format!("`{name}` has no return type, but returns a value"),
                            x.span,
                            format!("this is {}", x.ty),
                        )
                        .with_label(sig_span, "declared without `-> T`")
                        .with_help(format!("declare the return type: `-> {}`", x.ty)),
                    );
                }
                StmtKind::Return(None)
            }
            (Some(v), ret) => {
                let x = self.coerce(
                    v,
                    ret,
                    Target::Return {
                        func: &name,
                        sig: sig_span,
                    },
                );
                StmtKind::Return(Some(x))
            }
        }
    }

    /// Check a function's body (at the position of its definition) and record it.
    pub(super) fn function(&mut self, def: &ast::FnDef, id: FnId) {
        let sig = self.sig(id).clone();
        let outer_scopes = std::mem::take(&mut self.scopes);
        let outer_loops = std::mem::replace(&mut self.loop_depth, 0);
        self.func = Some(FnCx {
            id,
            name: sig.name.clone(),
            ret: sig.ret,
            sig_span: sig.sig_span,
        });
        self.scopes.push(FxHashMap::default());
        let params = def
            .params
            .iter()
            .zip(&sig.params)
            .map(|(p, ps)| self.declare(&p.name, ps.ty, VarKind::Param))
            .collect();
        let body = self.block(&def.body);
        if sig.ret != Type::Void && !sig.ret.is_error() && !block_diverges(&body) {
            self.error(
                Diagnostic::error(
                    format!("`{}` can reach its end without returning a value", sig.name),
                    closing_brace(body.span),
                    "the end of the function",
                )
                .with_label(sig.sig_span, format!("returns {}", sig.ret))
                .with_help(format!(
                    "every path must end with `return …` (of type {})",
                    sig.ret
                )),
            );
        }
        self.func = None;
        self.scopes = outer_scopes;
        self.loop_depth = outer_loops;
        let function = hir::Function {
            id,
            name: sig.name,
            name_span: sig.name_span,
            params,
            ret: sig.ret,
            body,
            sig_span: sig.sig_span,
            span: sig.span,
            routine: sig.routine,
        };
        if let Some(entry) = self.ck.fns.get_mut(id.index()) {
            entry.def = Some(Arc::new(function));
        }
    }
}

/// "declare it first: `let count = 0`" for `count = 0` with `count` never declared.
fn declare_help(name: &str, op: Option<BinOp>, value: &ast::Expr) -> String {
    match (op, super::source_text(value)) {
        (None, Some(v)) => format!("declare it first: `let {name} = {v}`"),
        (None, None) => format!("declare it first: `let {name} = …`"),
        // `count += 1`: it needs a starting value.
        (Some(_), _) => {
            let zero = if super::mentions_float(value) {
                "0.0"
            } else {
                "0"
            };
            format!("declare it first with a starting value: `let {name} = {zero}`")
        }
    }
}

/// The last character of a block's span (its `}`).
fn closing_brace(block: crate::span::Span) -> crate::span::Span {
    if block.is_empty() {
        block
    } else {
        crate::span::Span::new(block.end as usize - 1, block.end as usize)
    }
}

/// Whether running the block always ends in `return` or `exit` (a simple, conservative test:
/// the last statements of every branch, and `while true` loops without `break`).
fn block_diverges(b: &Block) -> bool {
    b.stmts.iter().any(stmt_diverges)
}

fn stmt_diverges(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::Expr(e) => matches!(e.kind, ExprKind::Builtin(crate::builtins::Builtin::Exit, _)),
        StmtKind::If {
            then,
            els: Some(els),
            ..
        } => block_diverges(then) && stmt_diverges(els),
        StmtKind::Block(b) => block_diverges(b),
        StmtKind::While { cond, body } => {
            matches!(cond.kind, ExprKind::Const(hir::Const::Bool(true))) && !block_breaks(body)
        }
        StmtKind::Directive(d) => d.body.as_deref().is_some_and(stmt_diverges),
        _ => false,
    }
}

/// Whether a `break` in the block leaves the loop whose body it is.
fn block_breaks(b: &Block) -> bool {
    b.stmts.iter().any(stmt_breaks)
}

fn stmt_breaks(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::Break => true,
        StmtKind::If { then, els, .. } => {
            block_breaks(then) || els.as_deref().is_some_and(stmt_breaks)
        }
        StmtKind::Block(b) => block_breaks(b),
        StmtKind::Directive(d) => d.body.as_deref().is_some_and(stmt_breaks),
        // A `break` inside a nested loop leaves that loop only.
        _ => false,
    }
}
