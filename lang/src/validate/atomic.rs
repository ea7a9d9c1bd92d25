//! The statement forms `acc atomic` accepts (LANGUAGE.md 7.8):
//! update `x op= e`, `x = x op e`, `x = e op x`, `x = max(x, e)`, `x = min(x, e)`;
//! read `v = x`; write `x = e`; capture `{ v = x; <update of x> }` in either order (or
//! `{ v = x; x = e }`). `x` and `v` are scalar variables or array elements, and `e` may not
//! mention `x`. Types are the checker's business.

use super::nest::any_subexpr;
use crate::ast::{AtomicKind, BinOp, Expr, ExprKind, Stmt, StmtKind};
use crate::diag::Diagnostic;

const OPS: [BinOp; 7] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::BitAnd,
    BinOp::BitOr,
    BinOp::BitXor,
];

const UPDATE_FORMS: &str = "`x op= e`, `x = x op e`, `x = e op x`, `x = max(x, e)` or `x = min(x, e)`, with op one of + - * / & | ^";

pub(super) fn check(kind: AtomicKind, body: &Stmt, diags: &mut Vec<Diagnostic>) {
    let result = match kind {
        AtomicKind::Update => update_form(body).map(|_| ()),
        AtomicKind::Read => read_form(body).map(|_| ()),
        AtomicKind::Write => write_form(body).map(|_| ()),
        AtomicKind::Capture => capture_form(body),
    };
    if let Err(reason) = result {
        let (message, help) = match kind {
            AtomicKind::Update => ("`acc atomic update` needs an update statement", format!("write {UPDATE_FORMS}")),
            AtomicKind::Read => ("`acc atomic read` needs a statement `v = x`", "read one scalar variable or array element into another: `v = x`".to_string()),
            AtomicKind::Write => ("`acc atomic write` needs a statement `x = e`", "`e` may not mention `x`".to_string()),
            AtomicKind::Capture => (
                "`acc atomic capture` needs a capture block",
                format!("write `{{ v = x; x += e }}` or `{{ x += e; v = x }}`: a read of `x` and an update of `x` ({UPDATE_FORMS})"),
            ),
        };
        diags.push(Diagnostic::error(message, reason.span, reason.label).with_help(help));
    }
}

/// Why a statement is not the form wanted, and where.
struct Reason {
    span: crate::span::Span,
    label: String,
}

fn reason(span: crate::span::Span, label: impl Into<String>) -> Reason {
    Reason {
        span,
        label: label.into(),
    }
}

/// A scalar variable or an array element (no sections).
fn is_location(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Name(_) => true,
        ExprKind::Index(base, idx) => {
            matches!(base.kind, ExprKind::Name(_))
                && !idx.iter().any(|i| matches!(i.kind, ExprKind::Section(..)))
        }
        _ => false,
    }
}

fn mentions(e: &Expr, x: &Expr) -> bool {
    any_subexpr(e, &mut |sub| same_expr(sub, x))
}

/// `x = e` / `x op= e` as its parts.
fn assignment(s: &Stmt) -> Result<(&Expr, Option<BinOp>, &Expr), Reason> {
    match &s.kind {
        StmtKind::Assign { target, op, value } => Ok((target, *op, value)),
        _ => Err(reason(s.span, "not an assignment")),
    }
}

fn location(target: &Expr) -> Result<(), Reason> {
    if is_location(target) {
        Ok(())
    } else {
        Err(reason(
            target.span,
            "not a scalar variable or array element",
        ))
    }
}

/// Returns the updated location `x`.
fn update_form(s: &Stmt) -> Result<&Expr, Reason> {
    let (x, op, value) = assignment(s)?;
    location(x)?;
    let operand_ok = |e: &Expr| -> Result<(), Reason> {
        if mentions(e, x) {
            Err(reason(
                e.span,
                "the other operand may not use the updated location",
            ))
        } else {
            Ok(())
        }
    };
    if let Some(op) = op {
        if !OPS.contains(&op) {
            return Err(reason(
                s.span,
                format!("`{}=` is not an atomic operation", op.as_str()),
            ));
        }
        operand_ok(value)?;
        return Ok(x);
    }
    match &value.kind {
        ExprKind::Binary(op, l, r) => {
            if !OPS.contains(op) {
                return Err(reason(
                    value.span,
                    format!("`{}` is not an atomic operation", op.as_str()),
                ));
            }
            if same_expr(l, x) {
                operand_ok(r)?;
            } else if same_expr(r, x) {
                operand_ok(l)?;
            } else {
                return Err(reason(
                    value.span,
                    "neither operand is the assigned location",
                ));
            }
            Ok(x)
        }
        ExprKind::Call(f, args) if matches!(f.name.as_str(), "max" | "min" | "fmax" | "fmin") => {
            match args.as_slice() {
                [a, b] if same_expr(a, x) => operand_ok(b)?,
                [a, b] if same_expr(b, x) => operand_ok(a)?,
                _ => {
                    return Err(reason(
                        value.span,
                        format!("`{}` does not take the assigned location", f.name),
                    ))
                }
            }
            Ok(x)
        }
        _ => Err(reason(value.span, "not an update of the assigned location")),
    }
}

/// Returns `(v, x)`.
fn read_form(s: &Stmt) -> Result<(&Expr, &Expr), Reason> {
    let (v, op, x) = assignment(s)?;
    if op.is_some() {
        return Err(reason(s.span, "a read is a plain assignment `v = x`"));
    }
    location(v)?;
    if !is_location(x) {
        return Err(reason(x.span, "not a scalar variable or array element"));
    }
    if same_expr(v, x) {
        return Err(reason(s.span, "reads a location into itself"));
    }
    Ok((v, x))
}

/// Returns the written location `x`.
fn write_form(s: &Stmt) -> Result<&Expr, Reason> {
    let (x, op, e) = assignment(s)?;
    if op.is_some() {
        return Err(reason(s.span, "a write is a plain assignment `x = e`"));
    }
    location(x)?;
    if mentions(e, x) {
        return Err(reason(
            e.span,
            "the written value may not use the written location",
        ));
    }
    Ok(x)
}

fn capture_form(body: &Stmt) -> Result<(), Reason> {
    let StmtKind::Block(block) = &body.kind else {
        return Err(reason(body.span, "not a `{ … }` block of two statements"));
    };
    let [first, second] = block.stmts.as_slice() else {
        return Err(reason(
            block.span,
            format!(
                "a capture block has 2 statements, this one has {}",
                block.stmts.len()
            ),
        ));
    };
    // `{ v = x; update x }` or `{ v = x; x = e }`
    if let Ok((_, x)) = read_form(first) {
        let updated = update_form(second).or_else(|_| write_form(second));
        return match updated {
            Ok(y) if same_expr(x, y) => Ok(()),
            Ok(y) => Err(reason(
                y.span,
                "updates a different location than the one read",
            )),
            Err(r) => Err(r),
        };
    }
    // `{ update x; v = x }`
    let x = update_form(first)?;
    match read_form(second) {
        Ok((_, y)) if same_expr(x, y) => Ok(()),
        Ok((_, y)) => Err(reason(
            y.span,
            "reads a different location than the one updated",
        )),
        Err(r) => Err(r),
    }
}

/// Structural equality ignoring spans: `a[i + 1]` written twice is the same location.
pub(super) fn same_expr(a: &Expr, b: &Expr) -> bool {
    use ExprKind::*;
    let all = |xs: &[Expr], ys: &[Expr]| {
        xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| same_expr(x, y))
    };
    let opt = |x: &Option<Box<Expr>>, y: &Option<Box<Expr>>| match (x, y) {
        (Some(x), Some(y)) => same_expr(x, y),
        (None, None) => true,
        _ => false,
    };
    match (&a.kind, &b.kind) {
        (Int(x, sx), Int(y, sy)) => x == y && sx == sy,
        (Float(x, sx), Float(y, sy)) => x == y && sx == sy,
        (Bool(x), Bool(y)) => x == y,
        (Str(x), Str(y)) => x == y,
        (Name(x), Name(y)) => x.name == y.name,
        (Unary(o, x), Unary(p, y)) => o == p && same_expr(x, y),
        (Binary(o, x1, x2), Binary(p, y1, y2)) => o == p && same_expr(x1, y1) && same_expr(x2, y2),
        (Cast(x, t), Cast(y, u)) => t.elem == u.elem && t.rank == u.rank && same_expr(x, y),
        (Call(f, xs), Call(g, ys)) => f.name == g.name && all(xs, ys),
        (Index(x, xs), Index(y, ys)) => same_expr(x, y) && all(xs, ys),
        (Section(x1, x2), Section(y1, y2)) => opt(x1, y1) && opt(x2, y2),
        (ArrayLit(xs), ArrayLit(ys)) => all(xs, ys),
        (If(c, t, f), If(d, u, g)) => same_expr(c, d) && same_expr(t, u) && same_expr(f, g),
        // Blocks hold statements; two are never treated as the same location.
        _ => false,
    }
}
