//! Expressions: names, operators with C's usual arithmetic conversions, casts, indexing, array
//! literals, `if` and block expressions, and the implicit conversions of assignment, argument
//! passing and `return`.

use crate::ast::{self, BinOp, ExprKind as A, ScalarType, UnOp};
use crate::builtins::{BuiltinConst, Shape};
use crate::diag::Diagnostic;
use crate::hir::{Const, Expr, ExprKind, Type};
use crate::span::Span;

use super::literals::{constant, convert, poison, Checked, FlexKind};
use super::Cx;

/// Where a value is going, for the message when it cannot be converted to the target type.
pub(super) enum Target<'a> {
    /// `let x: T = …` (`declaring`) or `x = …`; `decl` is the declaration (this compile's
    /// only).
    Var {
        name: &'a str,
        decl: Option<Span>,
        declaring: bool,
    },
    /// `a[i] = …`
    Elem,
    /// An argument of a user function.
    Arg {
        func: &'a str,
        param: &'a str,
        decl: Option<Span>,
    },
    /// `return …` in function `func`.
    Return { func: &'a str, sig: Span },
    /// Anything else: "expected T, found U" with this label.
    Other(&'a str),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum OpClass {
    Arith,
    Bitwise,
    Shift,
    Equality,
    Ordering,
    Logic,
}

fn class(op: BinOp) -> OpClass {
    use BinOp::*;
    match op {
        Add | Sub | Mul | Div | Rem => OpClass::Arith,
        BitAnd | BitOr | BitXor => OpClass::Bitwise,
        Shl | Shr => OpClass::Shift,
        Eq | Ne => OpClass::Equality,
        Lt | Le | Gt | Ge => OpClass::Ordering,
        And | Or => OpClass::Logic,
    }
}

/// The numeric hint a hint type gives to operands (`None` for bool, arrays, …).
fn numeric(hint: Option<Type>) -> Option<Type> {
    hint.filter(|t| t.is_numeric())
}

impl Cx<'_> {
    /// Check an expression that must be a value: not `void`, not a string.
    pub(super) fn expr<'e>(&mut self, e: &'e ast::Expr, hint: Option<Type>) -> Checked<'e> {
        let c = self.expr_any(e, hint);
        match &c {
            Checked::Done(x) if x.ty == Type::Str => {
                self.error(string_misplaced(x.span));
                Checked::Done(poison(e.span))
            }
            Checked::Done(x) if x.ty == Type::Void => {
                self.error(
                    Diagnostic::error("this call has no value", x.span, "returns nothing")
                        .with_help("only a function declared with `-> T` gives a value"),
                );
                Checked::Done(poison(e.span))
            }
            _ => c,
        }
    }

    /// Check an expression and give it a concrete type (`hint` for untyped literals).
    pub(super) fn value(&mut self, e: &ast::Expr, hint: Option<Type>) -> Expr {
        let c = self.expr(e, hint);
        self.settle(c, hint.and_then(Type::scalar))
    }

    /// Check `e` as a value going to `target` and convert it there (numeric conversions,
    /// narrowing included); anything else must match exactly.
    pub(super) fn coerce(&mut self, e: &ast::Expr, target: Type, to: Target<'_>) -> Expr {
        let x = self.value(e, Some(target));
        if target.is_int() {
            if let Some(lit) = float_literal(e) {
                self.error(float_literal_to_int(&lit, target, &to, e.span));
                return poison(x.span);
            }
        }
        self.convert_to(x, target, to)
    }

    pub(super) fn convert_to(&mut self, x: Expr, target: Type, to: Target<'_>) -> Expr {
        if x.ty == target || x.ty.is_error() || target.is_error() {
            return x;
        }
        if let (Some(from), Some(t)) = (x.ty.scalar(), target.scalar()) {
            if from.is_numeric() && t.is_numeric() {
                return convert(x, t, false);
            }
        }
        let found = x.ty;
        let help = self.conversion_help(&x, target, &to);
        let mut d = match to {
            Target::Var { name, decl, .. } => {
                let d = Diagnostic::error(
                    format!("cannot assign {found} to `{name}` of type {target}"),
                    x.span,
                    format!("this is {found}"),
                );
                match decl {
                    Some(s) => d.with_label(s, format!("`{name}` is {target}")),
                    None => d,
                }
            }
            Target::Elem => Diagnostic::error(
                format!("cannot store {found} in an element of type {target}"),
                x.span,
                format!("this is {found}"),
            ),
            Target::Arg { func, param, decl } => {
                let d = Diagnostic::error(
                    format!("argument `{param}` of `{func}` must be {target}, found {found}"),
                    x.span,
                    format!("expected {target}"),
                );
                match decl {
                    Some(s) => d.with_label(s, "parameter declared here"),
                    None => d,
                }
            }
            Target::Return { func, sig } => Diagnostic::error(
                format!("`{func}` returns {target}, but this is {found}"),
                x.span,
                format!("expected {target}"),
            )
            .with_label(sig, format!("returns {target}")),
            Target::Other(label) => {
                Diagnostic::error(format!("expected {target}, found {found}"), x.span, label)
            }
        };
        if let Some(help) = help {
            d = d.with_help(help);
        }
        self.error(d);
        poison(x.span)
    }

    /// A hint for a failed conversion of `x` to `target`.
    fn conversion_help(&self, x: &Expr, target: Type, to: &Target<'_>) -> Option<String> {
        match (x.ty, target) {
            (Type::Scalar(ScalarType::Bool), t) if t.is_numeric() => {
                Some(self.bool_as_number(x, t))
            }
            (f, Type::Scalar(ScalarType::Bool)) if f.is_numeric() => Some(self.compare_help(x)),
            (Type::Array { elem: a, rank: r }, Type::Array { elem: b, rank: s })
                if r == s && a != b =>
            {
                Some(format!(
                    "arrays are not converted; create one with element type {0}: `zeros({0}, …)`",
                    b.name()
                ))
            }
            (Type::Array { rank: r, .. }, Type::Array { rank: s, .. }) if r != s => Some(format!(
                "the ranks differ ({r} and {s}); `reshape(a, d0, …)` gives the same data another \
                 shape"
            )),
            (Type::Array { .. }, t) if t.is_scalar() => Some(match self.text_of(x) {
                Some(a) => format!("index the array to get an element: `{a}[i]`"),
                None => "index the array to get an element: `a[i]`".into(),
            }),
            (f, Type::Array { rank, .. }) if f.is_scalar() => {
                let v = self.text_of(x).unwrap_or_else(|| "v".into());
                Some(match to {
                    Target::Var {
                        name,
                        declaring: false,
                        ..
                    } => fill_help(name, &v, rank),
                    _ => format!(
                        "a scalar is not an array; `fill({v}, n)` makes an array of n copies"
                    ),
                })
            }
            _ => None,
        }
    }

    /// "`bool` does not mix with numbers: …" for a bool given where a number of type `t` goes.
    pub(super) fn bool_as_number(&self, x: &Expr, t: Type) -> String {
        let lead = "`bool` does not mix with numbers";
        match (x.as_const(), self.text_of(x)) {
            (Some(Const::Bool(b)), _) => {
                let n = if b { 1 } else { 0 };
                format!("{lead}: write `{n}` instead of `{b}`")
            }
            (_, Some(b)) => format!("{lead}: convert it with `{b} as {t}`"),
            (_, None) => format!("{lead}: convert it with `as {t}`"),
        }
    }

    /// Check a condition: it must be `bool`.
    pub(super) fn condition(&mut self, e: &ast::Expr, what: &str) -> Expr {
        let x = self.value(e, Some(Type::BOOL));
        if x.ty == Type::BOOL || x.ty.is_error() {
            return x;
        }
        let mut d = Diagnostic::error(
            format!("{what} must be bool, found {}", x.ty),
            x.span,
            format!("this is {}", x.ty),
        );
        if x.ty.is_numeric() {
            d = d.with_help(self.compare_help(&x));
        }
        self.error(d);
        poison(x.span)
    }

    /// "compare explicitly: `n != 0`", with the value's text when it is simple.
    fn compare_help(&self, x: &Expr) -> String {
        let zero = if x.ty.is_float() { "0.0" } else { "0" };
        match self.text_of(x) {
            Some(t) => format!("compare explicitly: `{t} != {zero}`"),
            None => format!("compare explicitly with `!= {zero}`"),
        }
    }

    /// The text of a simple expression (`n`, `a[i]`, `len(a)`, `2.5`), for help lines that
    /// show code; `None` when it is not simple enough to repeat.
    pub(super) fn text_of(&self, x: &Expr) -> Option<String> {
        let list = |xs: &[Expr]| -> Option<String> {
            let texts: Option<Vec<String>> = xs.iter().map(|x| self.text_of(x)).collect();
            texts.map(|t| t.join(", "))
        };
        let text = match &x.kind {
            ExprKind::Var(v) => self.var(*v).name.clone(),
            ExprKind::Const(c) => const_text(*c),
            // An implicit conversion is not written.
            ExprKind::Convert {
                expr,
                explicit: false,
            } => return self.text_of(expr),
            ExprKind::Index { base, indices } => {
                format!("{}[{}]", self.text_of(base)?, list(indices)?)
            }
            // Type arguments (`zeros(f32, n)`) are not kept: leave those out.
            ExprKind::Builtin(b, args) if !matches!(b.shape(), Shape::ArrayOfType) => {
                format!("{}({})", b.name(), list(args)?)
            }
            ExprKind::Call(f, args) => format!("{}({})", self.sig(*f).name, list(args)?),
            _ => return None,
        };
        (text.chars().count() <= 30).then_some(text)
    }

    /// Check an integer-valued expression (index, dimension, clause argument): any integer type.
    /// With `to` set, it is converted to that type.
    pub(super) fn integer(&mut self, e: &ast::Expr, what: &str, to: Option<ScalarType>) -> Expr {
        let x = self.value(e, to.map(Type::Scalar));
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
                d = d.with_help(match self.text_of(&x) {
                    Some(t) => {
                        format!("convert it explicitly: `{t} as i64` (truncates toward zero)")
                    }
                    None => "convert it explicitly with `as i64` (truncates toward zero)".into(),
                });
            }
            self.error(d);
            return poison(x.span);
        }
        match to {
            Some(t) => convert(x, t, false),
            None => x,
        }
    }

    /// Check an expression: a flexible result for untyped literals, `Done` otherwise. Strings
    /// and `void` calls are allowed here (see `expr`).
    pub(super) fn expr_any<'e>(&mut self, e: &'e ast::Expr, hint: Option<Type>) -> Checked<'e> {
        let done = |kind, ty| {
            Checked::Done(Expr {
                kind,
                ty,
                span: e.span,
            })
        };
        match &e.kind {
            A::Int(_, None) => Checked::Flex(e, FlexKind::Int),
            A::Float(_, None) => Checked::Flex(e, FlexKind::Float),
            A::Int(v, Some(s)) => {
                Checked::Done(self.int_const(i128::from(*v), int_type(*s), e.span))
            }
            A::Float(text, Some(s)) => {
                Checked::Done(self.float_const(text, false, float_type(*s), e.span))
            }
            A::Bool(b) => Checked::Done(constant(Const::Bool(*b), e.span)),
            A::Str(s) => done(ExprKind::Str(s.clone()), Type::Str),
            A::Name(id) => Checked::Done(self.name(id)),
            A::Unary(op, inner) => self.unary(e, *op, inner, hint),
            A::Binary(op, l, r) => self.binary(e, *op, l, r, hint),
            A::Cast(inner, t) => Checked::Done(self.cast(e.span, inner, t)),
            A::Call(name, args) => Checked::Done(self.call(e.span, name, args, hint)),
            A::Index(base, indices) => Checked::Done(self.index(e.span, base, indices)),
            A::Section(..) => {
                self.error(section_misplaced(e.span));
                Checked::Done(poison(e.span))
            }
            A::ArrayLit(elems) => Checked::Done(self.array_lit(e.span, elems, hint)),
            A::If(c, t, f) => Checked::Done(self.if_expr(e.span, c, t, f, hint)),
            // `{ 0 }`: the branch of an `if` expression is its value, still free to take the
            // other branch's type.
            A::Block(stmts, last) if stmts.is_empty() => self.expr(last, hint),
            A::Block(stmts, last) => Checked::Done(self.block_expr(e.span, stmts, last, hint)),
            A::Error => Checked::Done(poison(e.span)),
        }
    }

    /// A variable, or a built-in constant.
    fn name(&mut self, id: &ast::Ident) -> Expr {
        if let Some(v) = self.resolve_var(&id.name) {
            return Expr {
                kind: ExprKind::Var(v),
                ty: self.var(v).ty,
                span: id.span,
            };
        }
        if let Some(c) = BuiltinConst::from_name(&id.name) {
            if c.is_device_type() {
                self.device_type_names.push(id.span);
            }
            return constant(Const::I32(c.value()), id.span);
        }
        self.unknown_var(id, None);
        poison(id.span)
    }

    fn unary<'e>(
        &mut self,
        e: &'e ast::Expr,
        op: UnOp,
        inner: &'e ast::Expr,
        hint: Option<Type>,
    ) -> Checked<'e> {
        // `-2147483648i32`, `-1.5f32`: fold the sign into the constant.
        if op == UnOp::Neg {
            match &inner.kind {
                A::Int(v, Some(s)) => {
                    return Checked::Done(self.int_const(-i128::from(*v), int_type(*s), e.span))
                }
                A::Float(text, Some(s)) => {
                    return Checked::Done(self.float_const(text, true, float_type(*s), e.span))
                }
                _ => {}
            }
        }
        let hint = match op {
            UnOp::Not => Some(Type::BOOL),
            _ => numeric(hint),
        };
        let c = self.expr(inner, hint);
        match (op, &c) {
            (UnOp::Neg, Checked::Flex(_, k)) => return Checked::Flex(e, *k),
            (UnOp::BitNot, Checked::Flex(_, FlexKind::Int)) => {
                return Checked::Flex(e, FlexKind::Int)
            }
            _ => {}
        }
        let x = self.settle(c, None);
        let ok = match op {
            UnOp::Neg => x.ty.is_numeric(),
            UnOp::Not => x.ty == Type::BOOL,
            UnOp::BitNot => x.ty.is_int(),
        };
        if x.ty.is_error() {
            return Checked::Done(poison(e.span));
        }
        if !ok {
            let (sym, needs, help) = match op {
                UnOp::Neg => ("-", "a number", None),
                UnOp::Not => ("!", "a bool", x.ty.is_int().then(|| self.not_help(&x))),
                UnOp::BitNot => (
                    "~",
                    "an integer",
                    (x.ty == Type::BOOL).then(|| "for a logical not use `!`".to_string()),
                ),
            };
            let mut d = Diagnostic::error(
                format!("`{sym}` needs {needs}, found {}", x.ty),
                x.span,
                format!("this is {}", x.ty),
            );
            if let Some(h) = help {
                d = d.with_help(h);
            }
            self.error(d);
            return Checked::Done(poison(e.span));
        }
        let ty = x.ty;
        Checked::Done(Expr {
            kind: ExprKind::Unary(op, Box::new(x)),
            ty,
            span: e.span,
        })
    }

    /// The help for `!` on an integer.
    fn not_help(&self, x: &Expr) -> String {
        let lead = "for a bitwise not use `~`";
        match self.text_of(x) {
            Some(t) => format!("{lead}; to test for zero write `{t} == 0`"),
            None => format!("{lead}; to test for zero compare with `== 0`"),
        }
    }

    fn binary<'e>(
        &mut self,
        e: &'e ast::Expr,
        op: BinOp,
        l: &'e ast::Expr,
        r: &'e ast::Expr,
        hint: Option<Type>,
    ) -> Checked<'e> {
        let cls = class(op);
        let operand_hint = match cls {
            OpClass::Logic => Some(Type::BOOL),
            OpClass::Equality | OpClass::Ordering => None,
            _ => numeric(hint),
        };
        let lc = self.expr(l, operand_hint);
        let r_hint = match lc.ty() {
            Some(t) if t.is_scalar() => Some(t),
            _ => operand_hint,
        };
        let rc = self.expr(r, r_hint);
        let (lx, rx) = match (lc, rc) {
            (Checked::Flex(_, lk), Checked::Flex(_, rk)) => {
                let kind = lk.join(rk);
                match cls {
                    OpClass::Arith => return Checked::Flex(e, kind),
                    OpClass::Bitwise | OpClass::Shift if kind == FlexKind::Int => {
                        return Checked::Flex(e, kind)
                    }
                    _ => {
                        // Comparisons compare in the common type; the rest is an error
                        // `binary_typed` reports with each literal's own type.
                        let t = matches!(cls, OpClass::Equality | OpClass::Ordering)
                            .then(|| kind.default_type());
                        (
                            self.settle(Checked::Flex(l, lk), t),
                            self.settle(Checked::Flex(r, rk), t),
                        )
                    }
                }
            }
            (lc @ Checked::Flex(..), Checked::Done(rx)) => (self.settle_with_peer(lc, rx.ty), rx),
            (Checked::Done(lx), rc) => {
                let rx = self.settle_with_peer(rc, lx.ty);
                (lx, rx)
            }
        };
        Checked::Done(self.binary_typed(e.span, op, lx, rx))
    }

    /// A binary operation on typed operands: the usual arithmetic conversions.
    pub(super) fn binary_typed(&mut self, span: Span, op: BinOp, l: Expr, r: Expr) -> Expr {
        if l.ty.is_error() || r.ty.is_error() {
            return poison(span);
        }
        let cls = class(op);
        let (ls, rs) = (l.ty.scalar(), r.ty.scalar());
        let both_numeric = l.ty.is_numeric() && r.ty.is_numeric();
        let both_bool = l.ty == Type::BOOL && r.ty == Type::BOOL;
        let both_int = l.ty.is_int() && r.ty.is_int();
        // The type both operands are converted to.
        let operand = match (cls, ls, rs) {
            (OpClass::Arith | OpClass::Ordering, Some(a), Some(b)) if both_numeric => {
                Some(a.max(b))
            }
            (OpClass::Equality, Some(a), Some(b)) if both_numeric || both_bool => Some(a.max(b)),
            (OpClass::Bitwise, Some(a), Some(b)) if both_int || both_bool => Some(a.max(b)),
            (OpClass::Shift, Some(a), Some(_)) if both_int => Some(a),
            (OpClass::Logic, Some(_), Some(_)) if both_bool => Some(ScalarType::Bool),
            _ => None,
        };
        let Some(operand) = operand else {
            self.binary_error(span, op, &l, &r);
            return poison(span);
        };
        let result = match cls {
            OpClass::Equality | OpClass::Ordering | OpClass::Logic => ScalarType::Bool,
            _ => operand,
        };
        Expr {
            kind: ExprKind::Binary(
                op,
                Box::new(convert(l, operand, false)),
                Box::new(convert(r, operand, false)),
            ),
            ty: Type::Scalar(result),
            span,
        }
    }

    fn binary_error(&mut self, span: Span, op: BinOp, l: &Expr, r: &Expr) {
        let sym = op.as_str();
        let cls = class(op);
        let (lt, rt) = (l.ty, r.ty);
        let message = format!("`{sym}` cannot be applied to {lt} and {rt}");
        // Point at the operand that is wrong, if only one is.
        let acceptable = |t: Type| match cls {
            OpClass::Arith | OpClass::Ordering => t.is_numeric(),
            OpClass::Shift => t.is_int(),
            OpClass::Bitwise => t.is_int() || t == Type::BOOL,
            OpClass::Equality => t.is_scalar(),
            OpClass::Logic => t == Type::BOOL,
        };
        let (primary, label) = match (acceptable(lt), acceptable(rt)) {
            (true, false) => (r.span, format!("this is {rt}")),
            (false, true) => (l.span, format!("this is {lt}")),
            _ => (span, format!("{lt} {sym} {rt}")),
        };
        let mut d = Diagnostic::error(message, primary, label);
        if primary != span {
            d = d.with_label(span, "in this operation");
        }
        // The bool operand, when the other one is a number.
        let bool_side = match (lt == Type::BOOL, rt == Type::BOOL) {
            (true, false) if rt.is_numeric() => Some((l, r)),
            (false, true) if lt.is_numeric() => Some((r, l)),
            _ => None,
        };
        let help = if lt.is_array() || rt.is_array() {
            Some("arrays have no element-wise operators: write a loop over the elements".into())
        } else if cls == OpClass::Logic {
            let number = if lt == Type::BOOL { r } else { l };
            Some(format!(
                "`{sym}` needs bool operands; {}",
                self.compare_help(number)
            ))
        } else if let (Some((b, _)), OpClass::Equality) = (bool_side, cls) {
            Some(match self.text_of(b).filter(|_| b.as_var().is_some()) {
                Some(b) => format!(
                    "compare with `true` or `false`, or test the bool itself: `if {b} {{ … }}`"
                ),
                None => "compare with `true` or `false`".into(),
            })
        } else if let Some((b, n)) = bool_side {
            Some(self.bool_as_number(b, n.ty))
        } else if cls == OpClass::Shift || cls == OpClass::Bitwise {
            Some(format!(
                "`{sym}` needs integer operands; convert with `as i64`"
            ))
        } else {
            None
        };
        if let Some(h) = help {
            d = d.with_help(h);
        }
        self.error(d);
    }

    /// `e as T`: numeric to numeric, and bool to a number.
    fn cast(&mut self, span: Span, inner: &ast::Expr, t: &ast::TypeExpr) -> Expr {
        let x = self.value(inner, None);
        if t.rank != 0 {
            self.error(
                Diagnostic::error("`as` converts scalars only", t.span, "an array type").with_help(
                    "create an array of another element type with `zeros(T, …)` and a loop",
                ),
            );
            return poison(span);
        }
        if x.ty.is_error() {
            return poison(span);
        }
        let target = t.elem;
        let ok = match x.ty.scalar() {
            Some(s) if s == target => {
                return Expr { span, ..x };
            }
            Some(s) => target.is_numeric() && (s.is_numeric() || s == ScalarType::Bool),
            None => false,
        };
        if !ok {
            let mut d = Diagnostic::error(
                format!("cannot convert {} to {} with `as`", x.ty, target.name()),
                x.span,
                format!("this is {}", x.ty),
            );
            if target == ScalarType::Bool && x.ty.is_numeric() {
                d = d.with_help(self.compare_help(&x));
            }
            self.error(d);
            return poison(span);
        }
        Expr {
            span,
            ..convert(x, target, true)
        }
    }

    /// `base[i, j]` read as a value.
    fn index(&mut self, span: Span, base: &ast::Expr, indices: &[ast::Expr]) -> Expr {
        let b = self.value(base, None);
        match self.indexed(b, base, indices, span) {
            Some((b, idx, elem)) => Expr {
                kind: ExprKind::Index {
                    base: Box::new(b),
                    indices: idx,
                },
                ty: Type::Scalar(elem),
                span,
            },
            None => poison(span),
        }
    }

    /// Check an element access: the base must be an array, with one integer index per
    /// dimension. Returns the base, the indices and the element type.
    pub(super) fn indexed(
        &mut self,
        b: Expr,
        base: &ast::Expr,
        indices: &[ast::Expr],
        span: Span,
    ) -> Option<(Expr, Vec<Expr>, ScalarType)> {
        let mut idx = Vec::with_capacity(indices.len());
        let mut ok = true;
        for i in indices {
            if let A::Section(..) = i.kind {
                self.error(section_misplaced(i.span));
                ok = false;
                continue;
            }
            let x = self.integer(i, "an array index", None);
            ok &= !x.ty.is_error();
            idx.push(x);
        }
        let Type::Array { elem, rank } = b.ty else {
            if !b.ty.is_error() {
                let what = match &base.kind {
                    A::Name(id) => format!("`{}` is not an array", id.name),
                    _ => "this is not an array".to_string(),
                };
                self.error(Diagnostic::error(
                    format!("{what}; it has type {}", b.ty),
                    base.span,
                    "indexed here",
                ));
            }
            return None;
        };
        if indices.len() != usize::from(rank) {
            let name = match &base.kind {
                A::Name(id) => format!("`{}`", id.name),
                _ => "this array".to_string(),
            };
            let example: Vec<&str> = ["i", "j", "k", "l", "m", "n"]
                .into_iter()
                .take(usize::from(rank))
                .collect();
            self.error(
                Diagnostic::error(
                    format!(
                        "{name} has rank {rank} but {} {} given",
                        indices.len(),
                        if indices.len() == 1 {
                            "index was"
                        } else {
                            "indices were"
                        }
                    ),
                    span,
                    format!(
                        "expected {rank} {}",
                        if rank == 1 { "index" } else { "indices" }
                    ),
                )
                .with_help(format!(
                    "index every dimension: `{}[{}]`",
                    match &base.kind {
                        A::Name(id) => id.name.as_str(),
                        _ => "a",
                    },
                    example.join(", ")
                )),
            );
            return None;
        }
        ok.then_some((b, idx, elem))
    }

    /// `[e0, e1, …]`: a rank-1 array of the elements' common type.
    fn array_lit(&mut self, span: Span, elems: &[ast::Expr], hint: Option<Type>) -> Expr {
        let hint_elem = match hint {
            Some(Type::Array { elem, rank: 1 }) => Some(elem),
            _ => None,
        };
        if elems.is_empty() {
            return match hint_elem {
                Some(elem) => Expr {
                    kind: ExprKind::ArrayLit(Vec::new()),
                    ty: Type::Array { elem, rank: 1 },
                    span,
                },
                None => {
                    self.error(
                        Diagnostic::error("empty array literal", span, "element type unknown")
                            .with_help("write `zeros(T, 0)` for an empty array of type T[]"),
                    );
                    poison(span)
                }
            };
        }
        let mut ok = true;
        let mut checked = Vec::with_capacity(elems.len());
        for e in elems {
            let c = self.expr(e, hint_elem.map(Type::Scalar));
            if let Checked::Done(x) = &c {
                if !x.ty.is_scalar() {
                    ok = false;
                    if !x.ty.is_error() {
                        self.error(
                            Diagnostic::error(
                                format!("array literal elements must be scalars, found {}", x.ty),
                                x.span,
                                format!("this is {}", x.ty),
                            )
                            .with_help("arrays of arrays do not exist: use a rank-2 array"),
                        );
                    }
                }
            }
            checked.push(c);
        }
        if !ok {
            return poison(span);
        }
        let (out, elem) = self.unify(checked, hint_elem);
        let Some(elem) = elem else {
            self.error(
                Diagnostic::error(
                    "array literal mixes bool and numbers",
                    span,
                    "mixed element types",
                )
                .with_help("`bool` does not mix with numbers"),
            );
            return poison(span);
        };
        Expr {
            kind: ExprKind::ArrayLit(out),
            ty: Type::Array { elem, rank: 1 },
            span,
        }
    }

    fn if_expr(
        &mut self,
        span: Span,
        cond: &ast::Expr,
        then: &ast::Expr,
        els: &ast::Expr,
        hint: Option<Type>,
    ) -> Expr {
        let c = self.condition(cond, "an `if` condition");
        let tc = self.expr(then, hint);
        let ec = self.expr(els, hint);
        let (t, e) = match (tc, ec) {
            (tc @ Checked::Flex(_, tk), ec @ Checked::Flex(_, ek)) => {
                let target = match hint.and_then(Type::scalar) {
                    Some(h) if h.is_numeric() => Some(h),
                    _ => Some(tk.join(ek).default_type()),
                };
                (self.settle(tc, target), self.settle(ec, target))
            }
            (tc @ Checked::Flex(..), Checked::Done(e)) => (self.settle_with_peer(tc, e.ty), e),
            (Checked::Done(t), ec) => {
                let e = self.settle_with_peer(ec, t.ty);
                (t, e)
            }
        };
        if c.ty.is_error() || t.ty.is_error() || e.ty.is_error() {
            return poison(span);
        }
        let ty = if t.ty == e.ty {
            t.ty
        } else if t.ty.is_numeric() && e.ty.is_numeric() {
            t.ty.scalar()
                .max(e.ty.scalar())
                .map_or(Type::Error, Type::Scalar)
        } else {
            self.error(
                Diagnostic::error(
                    format!("`if` branches have different types: {} and {}", t.ty, e.ty),
                    e.span,
                    format!("this is {}", e.ty),
                )
                .with_label(t.span, format!("this is {}", t.ty)),
            );
            return poison(span);
        };
        let (t, e) = match ty.scalar() {
            Some(s) => (convert(t, s, false), convert(e, s, false)),
            None => (t, e),
        };
        Expr {
            kind: ExprKind::If(Box::new(c), Box::new(t), Box::new(e)),
            ty,
            span,
        }
    }

    fn block_expr(
        &mut self,
        span: Span,
        stmts: &[ast::Stmt],
        last: &ast::Expr,
        hint: Option<Type>,
    ) -> Expr {
        self.scopes.push(Default::default());
        let body = self.stmts(stmts);
        let value = self.value(last, hint);
        self.scopes.pop();
        let ty = value.ty;
        Expr {
            kind: ExprKind::Block(body, Box::new(value)),
            ty,
            span,
        }
    }
}

pub(super) fn int_type(s: crate::token::IntSuffix) -> ScalarType {
    match s {
        crate::token::IntSuffix::I32 => ScalarType::I32,
        crate::token::IntSuffix::I64 => ScalarType::I64,
    }
}

pub(super) fn float_type(s: crate::token::FloatSuffix) -> ScalarType {
    match s {
        crate::token::FloatSuffix::F32 => ScalarType::F32,
        crate::token::FloatSuffix::F64 => ScalarType::F64,
    }
}

pub(super) fn string_misplaced(span: Span) -> Diagnostic {
    Diagnostic::error(
        "a string can only be an argument of `print`, `printf` or `assert`",
        span,
        "string used as a value",
    )
}

pub(super) fn section_misplaced(span: Span) -> Diagnostic {
    Diagnostic::error("an array section is not allowed here", span, "section").with_help(
        "sections `a[start:count]` are allowed in data clauses and in runtime routines such as \
         `acc_copyin(a[0:n])`; to read one element write `a[i]`",
    )
}

/// `let k: i32 = 1.5`: a float literal never becomes an integer (LANGUAGE.md section 2).
fn float_literal_to_int(
    lit: &FloatLiteral,
    target: Type,
    to: &Target<'_>,
    span: Span,
) -> Diagnostic {
    let text = &lit.text;
    let float = lit.ty.name();
    // `2.0` is most likely meant as the integer `2`; `1.5` needs a decision.
    let fix = match lit.integral {
        Some(v) => format!("write the integer `{v}`"),
        None => format!("write `{text} as {target}` to truncate toward zero"),
    };
    let (what, decl, other) = match to {
        Target::Var { name, decl, .. } => (
            format!("{target} `{name}`"),
            decl.map(|s| (s, format!("`{name}` is {target}"))),
            Some(format!("declare `{name}: {float}`")),
        ),
        Target::Elem => (format!("an element of type {target}"), None, None),
        Target::Arg { func, param, decl } => (
            format!("argument `{param}` of `{func}`, of type {target}"),
            decl.map(|s| (s, "parameter declared here".to_string())),
            Some(format!("declare the parameter `{param}: {float}`")),
        ),
        Target::Return { func, sig } => (
            format!("{target}, the return type of `{func}`"),
            Some((*sig, format!("returns {target}"))),
            Some(format!("declare `-> {float}`")),
        ),
        Target::Other(_) => (target.to_string(), None, None),
    };
    let mut d = Diagnostic::error(
        format!("float literal `{text}` cannot become {what}"),
        span,
        "a float literal",
    );
    if let Some((s, label)) = decl {
        d = d.with_label(s, label);
    }
    d.with_help(match other {
        Some(other) => format!("{fix}, or {other}"),
        None => fix,
    })
}

/// A float literal as written: `1.5`, `-2.0`, `3.5f32`.
struct FloatLiteral {
    text: String,
    ty: ScalarType,
    /// The value, when it is a whole number (`2.0`).
    integral: Option<i64>,
}

/// `e` if it is a lone float literal, possibly negated.
fn float_literal(e: &ast::Expr) -> Option<FloatLiteral> {
    let (neg, inner) = match &e.kind {
        A::Unary(UnOp::Neg, inner) => (true, inner.as_ref()),
        _ => (false, e),
    };
    let A::Float(digits, suffix) = &inner.kind else {
        return None;
    };
    let sign = if neg { "-" } else { "" };
    let suffix_text = suffix.map_or("", |s| float_type(s).name());
    let value = digits.parse::<f64>().ok().map(|v| if neg { -v } else { v });
    let integral = value
        .filter(|v| v.fract() == 0.0 && v.abs() < 1e15)
        .map(|v| v as i64);
    Some(FloatLiteral {
        text: format!("{sign}{digits}{suffix_text}"),
        ty: suffix.map_or(ScalarType::F64, float_type),
        integral,
    })
}

/// `fill` help for `a = 0.0` with `a` an array.
fn fill_help(name: &str, v: &str, rank: u8) -> String {
    if rank == 1 {
        format!(
            "to set every element write a loop: `for i in 0..len({name}) {{ {name}[i] = {v} }}`, \
             or make a new array: `{name} = fill({v}, len({name}))`"
        )
    } else {
        let dims: Vec<String> = (0..rank).map(|d| format!("size({name}, {d})")).collect();
        format!(
            "to set every element write a loop over each dimension, or make a new array: \
             `{name} = fill({v}, {})`",
            dims.join(", ")
        )
    }
}

/// A constant as it would be written.
fn const_text(c: Const) -> String {
    let text = match c {
        Const::Bool(b) => return b.to_string(),
        Const::I32(v) => v.to_string(),
        Const::I64(v) => v.to_string(),
        Const::F32(v) => format!("{v:?}"),
        Const::F64(v) => format!("{v:?}"),
    };
    if text.starts_with('-') {
        format!("({text})")
    } else {
        text
    }
}
