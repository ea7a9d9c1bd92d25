//! Untyped literals take the type their context needs (LANGUAGE.md section 2).
//!
//! Checking an expression made only of untyped literals and operators (`1`, `2.5`, `-1`,
//! `1 << 20`, `(1 + 2) * 3.0`) gives a `Checked::Flex`: the AST is kept and lowered only once the
//! context says which type it takes (`settle`). Contexts: the other operand of a binary operator
//! (`n - 1`, `2.0 * x[i]`), the target of an assignment, argument or return, a hint passed down
//! (`let k: i32 = 3`). With no context an integer literal is `i64` and a float literal `f64`.
//!
//! Rules when a flexible expression takes a type `T`:
//! - a float literal never becomes an integer: with an integer `T` it is `f64` and the context
//!   converts (or mixes to `f64`);
//! - a lone integer literal (`2`, `-1`) with a float `T` is that float constant; integer
//!   arithmetic on literals (`7 / 2`, `1 << 3`) stays integer arithmetic (`i64`) and is then
//!   converted, as in C;
//! - a float literal is rounded once from its decimal text to `T`;
//! - an integer literal that does not fit `T` is an error, except next to an operand of type
//!   `i32`, where it makes the operation `i64` (as C types `3000000000` as `long`).

use crate::ast::{self, ExprKind as A, ScalarType, UnOp};
use crate::diag::Diagnostic;
use crate::hir::{Const, Expr, ExprKind, Type};
use crate::span::Span;

use super::Cx;

/// An expression checked as far as it can be without knowing its context.
pub(super) enum Checked<'e> {
    Done(Expr),
    /// Untyped literals and operators, to be lowered once the type is known.
    Flex(&'e ast::Expr, FlexKind),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FlexKind {
    Int,
    Float,
}

impl FlexKind {
    pub(super) fn join(self, other: FlexKind) -> FlexKind {
        if self == FlexKind::Float || other == FlexKind::Float {
            FlexKind::Float
        } else {
            FlexKind::Int
        }
    }

    /// The type with no context.
    pub(super) fn default_type(self) -> ScalarType {
        match self {
            FlexKind::Int => ScalarType::I64,
            FlexKind::Float => ScalarType::F64,
        }
    }
}

impl Checked<'_> {
    /// The type, if already known.
    pub(super) fn ty(&self) -> Option<Type> {
        match self {
            Checked::Done(e) => Some(e.ty),
            Checked::Flex(..) => None,
        }
    }
}

/// The value of `2` or `-2` (a lone integer literal, possibly negated).
fn lone_int(e: &ast::Expr) -> Option<i128> {
    match &e.kind {
        A::Int(v, None) => Some(i128::from(*v)),
        A::Unary(UnOp::Neg, inner) => match inner.kind {
            A::Int(v, None) => Some(-i128::from(v)),
            _ => None,
        },
        _ => None,
    }
}

fn is_lone_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        A::Int(_, None) | A::Float(_, None) => true,
        A::Unary(UnOp::Neg, inner) => matches!(inner.kind, A::Int(_, None) | A::Float(_, None)),
        _ => false,
    }
}

fn has_float_literal(e: &ast::Expr) -> bool {
    match &e.kind {
        A::Float(..) => true,
        A::Unary(_, inner) => has_float_literal(inner),
        A::Binary(_, l, r) => has_float_literal(l) || has_float_literal(r),
        _ => false,
    }
}

fn fits(v: i128, t: ScalarType) -> bool {
    match t {
        ScalarType::I32 => i32::try_from(v).is_ok(),
        ScalarType::I64 => i64::try_from(v).is_ok(),
        _ => true,
    }
}

impl Cx<'_> {
    /// Give a checked expression its type: a flexible one takes `target` where it can (an
    /// integer literal any numeric type, a float literal a float type), its default otherwise.
    pub(super) fn settle(&mut self, c: Checked<'_>, target: Option<ScalarType>) -> Expr {
        match c {
            Checked::Done(e) => e,
            Checked::Flex(e, kind) => {
                let t = match (kind, target) {
                    (FlexKind::Int, Some(t)) if t.is_numeric() => t,
                    (FlexKind::Float, Some(t)) if t.is_float() => t,
                    _ => kind.default_type(),
                };
                self.lower_flex(e, t)
            }
        }
    }

    /// Settle a flexible operand next to an operand of type `peer` (a binary operator's other
    /// side, another argument of `max`): it takes the peer's type if it can.
    pub(super) fn settle_with_peer(&mut self, c: Checked<'_>, peer: Type) -> Expr {
        let Checked::Flex(e, kind) = c else {
            return self.settle(c, None);
        };
        let t = match (kind, peer.scalar()) {
            (FlexKind::Int, Some(t)) if t.is_int() => match lone_int(e) {
                Some(v) if !fits(v, t) => ScalarType::I64,
                _ => t,
            },
            (_, Some(t)) if t.is_float() => t,
            _ => kind.default_type(),
        };
        self.lower_flex(e, t)
    }

    /// Lower a flexible expression at type `t`.
    fn lower_flex(&mut self, e: &ast::Expr, t: ScalarType) -> Expr {
        if t.is_float() && !is_lone_literal(e) && !has_float_literal(e) {
            // Integer arithmetic on literals stays integer arithmetic, then converts (C).
            let int = self.lower_flex(e, ScalarType::I64);
            return convert(int, t, false);
        }
        let ty = Type::Scalar(t);
        let kind = match &e.kind {
            A::Int(v, None) => return self.int_const(i128::from(*v), t, e.span),
            A::Float(text, None) => return self.float_const(text, false, t, e.span),
            A::Unary(UnOp::Neg, inner) => match &inner.kind {
                A::Int(v, None) => return self.int_const(-i128::from(*v), t, e.span),
                A::Float(text, None) => return self.float_const(text, true, t, e.span),
                _ => ExprKind::Unary(UnOp::Neg, Box::new(self.lower_flex(inner, t))),
            },
            A::Unary(op, inner) => ExprKind::Unary(*op, Box::new(self.lower_flex(inner, t))),
            A::Binary(op, l, r) => {
                let l = self.lower_flex(l, t);
                let r = self.lower_flex(r, t);
                ExprKind::Binary(*op, Box::new(l), Box::new(r))
            }
            // Not a flexible expression: cannot happen (see `Cx::expr_any`).
            _ => return poison(e.span),
        };
        Expr {
            kind,
            ty,
            span: e.span,
        }
    }

    /// An integer literal (already negated if written `-v`) as a constant of type `t`.
    pub(super) fn int_const(&mut self, v: i128, t: ScalarType, span: Span) -> Expr {
        let c = match t {
            ScalarType::I32 => i32::try_from(v).ok().map(Const::I32),
            ScalarType::I64 => i64::try_from(v).ok().map(Const::I64),
            ScalarType::F32 => Some(Const::F32(v as f32)),
            ScalarType::F64 => Some(Const::F64(v as f64)),
            ScalarType::Bool => None,
        };
        match c {
            Some(c) => constant(c, span),
            None => {
                let (min, max) = match t {
                    ScalarType::I32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
                    _ => (i128::from(i64::MIN), i128::from(i64::MAX)),
                };
                let help = if t == ScalarType::I32 && fits(v, ScalarType::I64) {
                    format!("i32 holds {min} to {max}; use an i64 (`{v}i64`)")
                } else {
                    format!("{} holds {min} to {max}", t.name())
                };
                self.error(
                    Diagnostic::error(
                        format!("integer literal `{v}` does not fit in {}", t.name()),
                        span,
                        format!("out of range for {}", t.name()),
                    )
                    .with_help(help),
                );
                poison(span)
            }
        }
    }

    /// A float literal (negated if `neg`) rounded once from its decimal text to `t`.
    pub(super) fn float_const(&mut self, text: &str, neg: bool, t: ScalarType, span: Span) -> Expr {
        let sign = if neg { -1.0 } else { 1.0 };
        let c = match t {
            ScalarType::F32 => text
                .parse::<f32>()
                .ok()
                .map(|v| (v.is_finite(), Const::F32(sign as f32 * v))),
            _ => text
                .parse::<f64>()
                .ok()
                .map(|v| (v.is_finite(), Const::F64(sign * v))),
        };
        match c {
            Some((true, c)) => constant(c, span),
            Some((false, _)) => {
                let name = if t == ScalarType::F32 { "f32" } else { "f64" };
                self.error(
                    Diagnostic::error(
                        format!("float literal `{text}` is out of range for {name}"),
                        span,
                        format!("too large for {name}"),
                    )
                    .with_help(if name == "f32" {
                        "the largest f32 is about 3.4e38; use an f64 (`…f64`)"
                    } else {
                        "the largest f64 is about 1.8e308"
                    }),
                );
                poison(span)
            }
            None => {
                self.error(Diagnostic::error(
                    format!("invalid float literal `{text}`"),
                    span,
                    "not a number",
                ));
                poison(span)
            }
        }
    }
}

pub(super) fn constant(c: Const, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Const(c),
        ty: Type::Scalar(c.ty()),
        span,
    }
}

/// The expression of an error already reported.
pub(super) fn poison(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Error,
        ty: Type::Error,
        span,
    }
}

/// `e` converted to scalar type `t` (unchanged if it has that type already).
pub(super) fn convert(e: Expr, t: ScalarType, explicit: bool) -> Expr {
    if e.ty == Type::Scalar(t) || e.ty.is_error() {
        return e;
    }
    let span = e.span;
    Expr {
        kind: ExprKind::Convert {
            expr: Box::new(e),
            explicit,
        },
        ty: Type::Scalar(t),
        span,
    }
}
