//! Random typed expressions.
//!
//! Every expression is well typed by construction: literals carry a type suffix, operands of a
//! binary operator have one type, and other types are reached through `as`. Expressions that
//! could fail at run time are guarded by frozen wrappers: a divisor is `(e | 1)` (odd, so never
//! zero), an index is `(e & 1023) % n` (never negative, always below the extent `n`), a shift
//! amount is `(e & 7)`. Element-wise results may be any float (each element is computed by one
//! thread in program order, so every device gives the same bits); reductions and atomics use
//! [`ExprGen::exact_float`], small multiples of 0.5 whose sums are exact in any order.

use crate::rng::Rng;
use crate::tree::{Expr, Ty};

/// An array the expression may read: name, element type and (constant) extents.
#[derive(Clone, Debug)]
pub struct ArrayVar {
    pub name: String,
    pub ty: Ty,
    pub dims: Vec<usize>,
}

/// A routine the expression may call: `name(int args…) -> ret`.
#[derive(Clone, Debug)]
pub struct RoutineSig {
    pub name: String,
    pub params: Vec<Ty>,
    pub ret: Ty,
}

/// What an expression may refer to.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub scalars: Vec<(String, Ty)>,
    pub arrays: Vec<ArrayVar>,
    pub routines: Vec<RoutineSig>,
}

impl Scope {
    pub fn with(&self, name: &str, ty: Ty) -> Scope {
        let mut s = self.clone();
        s.scalars.push((name.to_string(), ty));
        s
    }
}

/// Builds expressions, numbering them for the shrinker.
pub struct ExprGen<'a> {
    pub rng: &'a mut Rng,
    pub next_id: &'a mut u32,
}

impl ExprGen<'_> {
    fn id(&mut self) -> u32 {
        *self.next_id += 1;
        *self.next_id
    }

    pub fn atom(&mut self, text: impl Into<String>, ty: Ty) -> Expr {
        Expr {
            id: self.id(),
            ty,
            frozen: false,
            parts: vec![text.into()],
            kids: vec![],
        }
    }

    pub fn comp(&mut self, ty: Ty, parts: &[&str], kids: Vec<Expr>) -> Expr {
        let parts = parts.iter().map(|s| s.to_string()).collect();
        Expr {
            id: self.id(),
            ty,
            frozen: false,
            parts,
            kids,
        }
    }

    pub fn frozen(&mut self, ty: Ty, parts: &[&str], kids: Vec<Expr>) -> Expr {
        let mut e = self.comp(ty, parts, kids);
        e.frozen = true;
        e
    }

    /// `e` converted to `ty` (nothing when it has that type already).
    pub fn convert(&mut self, e: Expr, ty: Ty) -> Expr {
        if e.ty == ty {
            e
        } else {
            let cast = format!(" as {})", ty.name());
            self.comp(ty, &["(", &cast], vec![e])
        }
    }

    /// A literal of `ty`: mostly small, now and then at the edge of the type.
    pub fn literal(&mut self, ty: Ty) -> Expr {
        let text = match ty {
            Ty::Bool => self.rng.pick(&["true", "false"]).to_string(),
            Ty::I32 | Ty::I64 => {
                let v: i64 = match self.rng.below(12) {
                    0 if ty == Ty::I32 => 2147483647,
                    0 => 1 << 40,
                    1 => -(self.rng.below(50) as i64),
                    _ => self.rng.below(100) as i64,
                };
                if v < 0 {
                    format!("({v}{})", ty.name())
                } else {
                    format!("{v}{}", ty.name())
                }
            }
            Ty::F32 | Ty::F64 => {
                let v = self.rng.below(64) as f64 * 0.25 - 4.0;
                if v < 0.0 {
                    format!("({v:?}{})", ty.name())
                } else {
                    format!("{v:?}{}", ty.name())
                }
            }
        };
        self.atom(text, ty)
    }

    /// An index in `0..extent` computed from an integer expression.
    pub fn index(&mut self, scope: &Scope, extent: usize, depth: u32) -> Expr {
        let e = self.int(scope, Ty::I64, depth);
        let tail = format!(" & 1023) % {extent})");
        self.frozen(Ty::I64, &["((", &tail], vec![e])
    }

    fn leaf(&mut self, scope: &Scope, ty: Ty) -> Expr {
        let same: Vec<&(String, Ty)> = scope.scalars.iter().filter(|(_, t)| *t == ty).collect();
        let numeric: Vec<&(String, Ty)> = scope
            .scalars
            .iter()
            .filter(|(_, t)| *t != Ty::Bool)
            .collect();
        match self.rng.below(10) {
            0..=3 if !same.is_empty() => {
                let (n, t) = same[self.rng.below(same.len())].clone();
                self.atom(n, t)
            }
            4..=5 if !numeric.is_empty() && ty != Ty::Bool => {
                let (n, t) = numeric[self.rng.below(numeric.len())].clone();
                let a = self.atom(n, t);
                self.convert(a, ty)
            }
            _ => self.literal(ty),
        }
    }

    fn array_read(&mut self, scope: &Scope, ty: Ty, depth: u32) -> Option<Expr> {
        if scope.arrays.is_empty() {
            return None;
        }
        let a = scope.arrays[self.rng.below(scope.arrays.len())].clone();
        if (a.ty == Ty::Bool) != (ty == Ty::Bool) {
            return None;
        }
        let mut parts = vec![format!("{}[", a.name)];
        let mut kids = Vec::new();
        for (k, d) in a.dims.iter().enumerate() {
            kids.push(self.index(scope, *d, depth));
            parts.push(if k + 1 == a.dims.len() {
                "]".into()
            } else {
                ", ".into()
            });
        }
        let parts: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
        let read = self.frozen(a.ty, &parts, kids);
        Some(self.convert(read, ty))
    }

    fn call(&mut self, scope: &Scope, ty: Ty, depth: u32) -> Option<Expr> {
        let fits: Vec<RoutineSig> = scope
            .routines
            .iter()
            .filter(|r| r.ret.is_int() == ty.is_int())
            .cloned()
            .collect();
        if fits.is_empty() || ty == Ty::Bool {
            return None;
        }
        let r = fits[self.rng.below(fits.len())].clone();
        let mut parts = vec![format!("{}(", r.name)];
        let mut kids = Vec::new();
        for (k, p) in r.params.iter().enumerate() {
            kids.push(self.int(scope, *p, depth));
            parts.push(if k + 1 == r.params.len() {
                ")".into()
            } else {
                ", ".into()
            });
        }
        let parts: Vec<&str> = parts.iter().map(|s| s.as_str()).collect();
        let c = self.frozen(r.ret, &parts, kids);
        Some(self.convert(c, ty))
    }

    /// An integer expression of type `ty` (`I32` or `I64`).
    pub fn int(&mut self, scope: &Scope, ty: Ty, depth: u32) -> Expr {
        if depth == 0 || self.rng.below(4) == 0 {
            return self.leaf(scope, ty);
        }
        let d = depth - 1;
        match self.rng.below(16) {
            0..=5 => {
                let op = self.rng.pick(&[" + ", " - ", " * ", " & ", " | ", " ^ "]);
                let a = self.int(scope, ty, d);
                let b = self.int(scope, ty, d);
                self.comp(ty, &["(", op, ")"], vec![a, b])
            }
            6 => {
                let op = self.rng.pick(&[" / (", " % ("]);
                let a = self.int(scope, ty, d);
                let b = self.int(scope, ty, d);
                let guard = self.frozen(ty, &["", " | 1"], vec![b]);
                self.comp(ty, &["(", op, "))"], vec![a, guard])
            }
            7 => {
                let op = self.rng.pick(&[" << (", " >> ("]);
                let a = self.int(scope, ty, d);
                let b = self.int(scope, ty, d);
                let guard = self.frozen(ty, &["", " & 7"], vec![b]);
                self.comp(ty, &["(", op, "))"], vec![a, guard])
            }
            8 => {
                let f = self.rng.pick(&["min(", "max("]);
                let a = self.int(scope, ty, d);
                let b = self.int(scope, ty, d);
                self.comp(ty, &[f, ", ", ")"], vec![a, b])
            }
            9 => {
                let op = self.rng.pick(&["-", "~", "abs("]);
                let close = if op == "abs(" { ")" } else { "" };
                let a = self.int(scope, ty, d);
                let open = format!("({op}");
                let close = format!("{close})");
                self.comp(ty, &[&open, &close], vec![a])
            }
            10 => {
                let c = self.boolean(scope, d);
                let a = self.int(scope, ty, d);
                let b = self.int(scope, ty, d);
                self.comp(ty, &["(if ", " { ", " } else { ", " })"], vec![c, a, b])
            }
            11 => {
                let other = if ty == Ty::I32 { Ty::I64 } else { Ty::I32 };
                let a = self.int(scope, other, d);
                self.convert(a, ty)
            }
            12 | 13 => self
                .array_read(scope, ty, d)
                .unwrap_or_else(|| self.leaf(scope, ty)),
            14 => self
                .call(scope, ty, d)
                .unwrap_or_else(|| self.leaf(scope, ty)),
            _ => self.leaf(scope, ty),
        }
    }

    /// A condition.
    pub fn boolean(&mut self, scope: &Scope, depth: u32) -> Expr {
        if depth == 0 {
            return self.leaf(scope, Ty::Bool);
        }
        let d = depth - 1;
        match self.rng.below(8) {
            0..=3 => {
                let op = self
                    .rng
                    .pick(&[" < ", " <= ", " == ", " != ", " > ", " >= "]);
                let ty = self.rng.pick(&[Ty::I32, Ty::I64, Ty::I64]);
                let a = self.int(scope, ty, d);
                let b = self.int(scope, ty, d);
                self.comp(Ty::Bool, &["(", op, ")"], vec![a, b])
            }
            4 => {
                let op = self.rng.pick(&[" && ", " || "]);
                let a = self.boolean(scope, d);
                let b = self.boolean(scope, d);
                self.comp(Ty::Bool, &["(", op, ")"], vec![a, b])
            }
            5 => {
                let a = self.boolean(scope, d);
                self.comp(Ty::Bool, &["(!", ")"], vec![a])
            }
            6 => self
                .array_read(scope, Ty::Bool, d)
                .unwrap_or_else(|| self.leaf(scope, Ty::Bool)),
            _ => self.leaf(scope, Ty::Bool),
        }
    }

    /// Any float expression of type `ty` (only for results that one thread computes).
    pub fn float(&mut self, scope: &Scope, ty: Ty, depth: u32) -> Expr {
        if depth == 0 || self.rng.below(4) == 0 {
            return if self.rng.below(2) == 0 {
                let i = self.int(scope, Ty::I64, 1);
                self.convert(i, ty)
            } else {
                self.leaf(scope, ty)
            };
        }
        let d = depth - 1;
        match self.rng.below(10) {
            0..=4 => {
                let op = self.rng.pick(&[" + ", " - ", " * ", " / "]);
                let a = self.float(scope, ty, d);
                let b = self.float(scope, ty, d);
                self.comp(ty, &["(", op, ")"], vec![a, b])
            }
            5 => {
                let f = self.rng.pick(&["min(", "max("]);
                let a = self.float(scope, ty, d);
                let b = self.float(scope, ty, d);
                self.comp(ty, &[f, ", ", ")"], vec![a, b])
            }
            6 => {
                let f = self.rng.pick(&["abs(", "floor(", "sqrt(abs(", "-("]);
                let close = if f == "sqrt(abs(" { "))" } else { ")" };
                let a = self.float(scope, ty, d);
                self.comp(ty, &[f, close], vec![a])
            }
            7 => {
                let c = self.boolean(scope, d);
                let a = self.float(scope, ty, d);
                let b = self.float(scope, ty, d);
                self.comp(ty, &["(if ", " { ", " } else { ", " })"], vec![c, a, b])
            }
            8 => self
                .array_read(scope, ty, d)
                .unwrap_or_else(|| self.leaf(scope, ty)),
            _ => {
                let i = self.int(scope, Ty::I64, d);
                self.convert(i, ty)
            }
        }
    }

    /// A value of `ty`: any expression of that type.
    pub fn value(&mut self, scope: &Scope, ty: Ty, depth: u32) -> Expr {
        match ty {
            Ty::Bool => self.boolean(scope, depth),
            Ty::I32 | Ty::I64 => self.int(scope, ty, depth),
            Ty::F32 | Ty::F64 => self.float(scope, ty, depth),
        }
    }

    /// A float that is a multiple of 0.5 between -3.0 and 3.0: sums and products of such values
    /// (few enough of them) are exact, whatever order a reduction combines them in.
    pub fn exact_float(&mut self, scope: &Scope, ty: Ty, depth: u32) -> Expr {
        let i = self.int(scope, Ty::I64, depth);
        let tail = format!(" % 7i64) as {0} * 0.5{0})", ty.name());
        self.frozen(ty, &["((", &tail], vec![i])
    }

    /// A value for a reduction or atomic of `ty`: any integer, or an exact float.
    pub fn order_free(&mut self, scope: &Scope, ty: Ty, depth: u32) -> Expr {
        if ty.is_float() {
            self.exact_float(scope, ty, depth)
        } else {
            self.value(scope, ty, depth)
        }
    }
}
