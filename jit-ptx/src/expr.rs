//! Expressions: constants, locals, operators with C's semantics, conversions, array elements,
//! and the built-ins that device code may call.
//!
//! The semantics are those of jit-host (its module doc): integers wrap; `/` and `%` truncate,
//! a zero divisor fails at the expression's site, `MIN / -1` is `MIN` and `MIN % -1` is 0;
//! shift counts are taken modulo the width; float to integer truncates and saturates (NaN is
//! 0); floats are never contracted (every `add`, `mul` is rounded on its own: `.rn`).

use acc_lang::builtins::{Builtin, BuiltinConst};
use acc_lang::hir::Const;
use acc_lang::ir::{BinOp, Expr, ExprKind, ScalarType, SiteId, Ty, UnOp};

use crate::address::Address;
use crate::fx::{ArrayVal, FailKind, Failure, Fx, Val};
use crate::math::MathFn;
use crate::ptx::{arith, bits, elem_size, f32_literal, f64_literal, int_literal, is_float, mem};
use crate::ptx::{Class, Reg};
use crate::{unsupported, Result};

fn scalar_ty(e: &Expr) -> Result<ScalarType> {
    match e.ty {
        Ty::Scalar(s) => Ok(s),
        Ty::Array { .. } => unsupported("an array where a scalar is expected"),
    }
}

/// A float constant of type `s` (`f32` or `f64`).
pub(crate) fn float_literal(v: f64, s: ScalarType) -> String {
    match s {
        ScalarType::F32 => f32_literal(v as f32),
        _ => f64_literal(v),
    }
}

impl Fx<'_, '_> {
    /// An expression that has a value.
    pub(crate) fn expr(&mut self, e: &Expr) -> Result<Val> {
        match self.expr_opt(e)? {
            Some(v) => Ok(v),
            None => unsupported("a call without a result used as a value"),
        }
    }

    /// A scalar expression's register and type.
    pub(crate) fn scalar(&mut self, e: &Expr) -> Result<(Reg, ScalarType)> {
        match self.expr(e)? {
            Val::Scalar(r, s) => Ok((r, s)),
            Val::Array(_) => unsupported("an array where a scalar is expected"),
        }
    }

    /// A condition (`bool`) as a predicate register.
    pub(crate) fn pred(&mut self, e: &Expr) -> Result<Reg> {
        match self.scalar(e)? {
            (r, ScalarType::Bool) => Ok(r),
            _ => unsupported("a condition that is not a bool"),
        }
    }

    /// An array expression (a local holding an array).
    pub(crate) fn array(&mut self, e: &Expr) -> Result<ArrayVal> {
        match self.expr(e)? {
            Val::Array(a) => Ok(a),
            Val::Scalar(..) => unsupported("indexing a scalar"),
        }
    }

    /// An index as an `i64` register.
    pub(crate) fn index(&mut self, e: &Expr) -> Result<Reg> {
        match self.scalar(e)? {
            (r, ScalarType::I64) => Ok(r),
            (r, ScalarType::I32) => {
                let d = self.fresh(Class::B64);
                self.ins(format!("cvt.s64.s32 {d}, {r}"));
                Ok(d)
            }
            (_, t) => unsupported(format!("an index of type {}", t.name())),
        }
    }

    /// An expression; `None` for a call of a routine without a result.
    pub(crate) fn expr_opt(&mut self, e: &Expr) -> Result<Option<Val>> {
        let v = match &e.kind {
            ExprKind::Const(c) => Val::Scalar(self.const_value(*c), c.ty()),
            ExprKind::Local(l) => self.read_local(*l)?,
            ExprKind::Global(g) if e.ty.is_array() => match self.global_array(*g) {
                Some(a) => Val::Array(a.clone()),
                None => return unsupported("a global array that the function was not given"),
            },
            ExprKind::Global(g) => {
                let Some(bits) = self.global(*g) else {
                    return unsupported("a global variable that the function was not given");
                };
                let s = scalar_ty(e)?;
                let d = self.fresh_of(s);
                self.unslot_bits(d, bits, s);
                Val::Scalar(d, s)
            }
            ExprKind::Unary(op, x) => self.unary(*op, x)?,
            ExprKind::Binary(op, l, r, site) => self.binary(*op, l, r, *site)?,
            ExprKind::Convert(x) => {
                let (v, from) = self.scalar(x)?;
                let to = scalar_ty(e)?;
                Val::Scalar(self.convert(v, from, to), to)
            }
            ExprKind::Load {
                array,
                indices,
                site,
            } => {
                let a = self.array(array)?;
                if let Some(stored) = self.forwarded(array, indices) {
                    // A `bool` waits as the 0 or 1 its store writes.
                    let v = if a.elem == ScalarType::Bool {
                        let p = self.fresh(Class::Pred);
                        self.ins(format!("setp.ne.u32 {p}, {stored}, 0"));
                        p
                    } else {
                        stored
                    };
                    return Ok(Some(Val::Scalar(v, a.elem)));
                }
                let addr = match self.checked_site(indices, *site) {
                    None => self.unchecked_address(array, &a, indices)?,
                    Some(site) => {
                        let mut idx = Vec::with_capacity(indices.len());
                        for i in indices {
                            idx.push(self.index(i)?);
                        }
                        self.element_addr(&a, &idx, Some(site))?.into()
                    }
                };
                Val::Scalar(self.load_element(addr, a.elem), a.elem)
            }
            ExprKind::Call(id, args) => return self.call(*id, args),
            ExprKind::Builtin(b, args) => return self.builtin(*b, args, e.ty, None),
            ExprKind::CheckedBuiltin(b, args, site) => {
                return self.builtin(*b, args, e.ty, Some(*site))
            }
            ExprKind::Param(..) => return unsupported("`param` in device code"),
            ExprKind::Section { .. } => return unsupported("an array section in device code"),
            ExprKind::ArrayLit(..) => return unsupported("an array literal in device code"),
        };
        Ok(Some(v))
    }

    pub(crate) fn const_value(&mut self, c: Const) -> Reg {
        match c {
            Const::Bool(b) => self.const_bool(b),
            Const::I32(v) => self.const_i32(v),
            Const::I64(v) => self.const_i64(v),
            Const::F32(v) => self.constant(ScalarType::F32, &f32_literal(v)),
            Const::F64(v) => self.constant(ScalarType::F64, &f64_literal(v)),
        }
    }

    /// Load an element of type `s` from `addr`.
    pub(crate) fn load_element(&mut self, addr: impl Into<Address>, s: ScalarType) -> Reg {
        let addr = addr.into();
        if s == ScalarType::Bool {
            let byte = self.fresh(Class::B32);
            self.ins(format!("ld.global.u8 {byte}, [{addr}]"));
            let p = self.fresh(Class::Pred);
            self.ins(format!("setp.ne.u32 {p}, {byte}, 0"));
            p
        } else {
            let d = self.fresh_of(s);
            self.ins(format!("ld.global.{} {d}, [{addr}]", mem(s)));
            d
        }
    }

    /// A value of type `s` as the register a memory instruction of `mem(s)` takes (`bool`
    /// as a 0/1 byte in a 32-bit register).
    pub(crate) fn storable(&mut self, v: Reg, s: ScalarType) -> Reg {
        if s == ScalarType::Bool {
            let b = self.fresh(Class::B32);
            self.ins(format!("selp.b32 {b}, 1, 0, {v}"));
            b
        } else {
            v
        }
    }

    /// The address of `a[idx]`, bounds-checked when there is a site (unless `--unchecked`):
    /// each index against its extent as one unsigned compare, one branch per access, the cold
    /// path working out which dimension failed first.
    pub(crate) fn element_addr(
        &mut self,
        a: &ArrayVal,
        idx: &[Reg],
        site: Option<SiteId>,
    ) -> Result<Reg> {
        crate::address::indices_fit(a, idx.len())?;
        let mut failed = None;
        if let (Some(site), false) = (site, self.unchecked()) {
            // A check decided later reports the index it had here.
            let kept: Vec<Reg>;
            let idx = if self.holding_checks() {
                kept = idx.iter().map(|&r| self.keep(r)).collect();
                &kept[..]
            } else {
                idx
            };
            let mut outs = Vec::with_capacity(idx.len());
            for (i, d) in idx.iter().zip(&a.dims) {
                let p = self.fresh(Class::Pred);
                self.ins(format!("setp.ge.u64 {p}, {i}, {d}"));
                outs.push(p);
            }
            let mut any = outs[0];
            for &o in &outs[1..] {
                let p = self.fresh(Class::Pred);
                self.ins(format!("or.pred {p}, {any}, {o}"));
                any = p;
            }
            // The first failing dimension and its index, worked out on the failure path only
            // (scanning from the last so that earlier dimensions win).
            let dim = self.fresh(Class::B32);
            let index = self.fresh(Class::B64);
            let mut prelude = vec![
                format!("mov.u32 {dim}, 0"),
                format!("mov.b64 {index}, {}", idx[0]),
            ];
            for k in (0..idx.len()).rev() {
                let o = outs[k];
                prelude.push(format!("selp.b32 {dim}, {k}, {dim}, {o}"));
                prelude.push(format!("selp.b64 {index}, {}, {index}, {o}", idx[k]));
            }
            let site = self.site(Some(site));
            failed = Some(any);
            let failure = Failure {
                dim: Some(dim),
                index: Some(index),
                shape: a.dims.clone(),
                prelude,
                ..Failure::at(FailKind::Bounds, site)
            };
            self.fail_if(any, failure);
        }
        let mut linear = idx[0];
        for (i, d) in idx.iter().zip(&a.dims).skip(1) {
            let l = self.fresh(Class::B64);
            self.ins(format!("mad.lo.s64 {l}, {linear}, {d}, {i}"));
            linear = l;
        }
        let addr = self.fresh(Class::B64);
        let size = elem_size(a.elem);
        if size == 1 {
            self.ins(format!("add.s64 {addr}, {}, {linear}", a.data));
        } else {
            self.ins(format!("mad.lo.s64 {addr}, {linear}, {size}, {}", a.data));
        }
        match failed {
            Some(any) if self.holding_checks() => {
                // Until the check is decided, a failing access reads the error record: an
                // address that is always there.
                let safe = self.fresh(Class::B64);
                self.ins(format!("selp.b64 {safe}, {}, {addr}, {any}", self.sp().err));
                Ok(safe)
            }
            _ => Ok(addr),
        }
    }

    fn unary(&mut self, op: UnOp, x: &Expr) -> Result<Val> {
        let (v, s) = self.scalar(x)?;
        Ok(Val::Scalar(self.unary_value(op, v, s)?, s))
    }

    /// `op v` on evaluated operands.
    pub(crate) fn unary_value(&mut self, op: UnOp, v: Reg, s: ScalarType) -> Result<Reg> {
        let d = self.fresh_of(s);
        match (op, s) {
            (UnOp::Not, ScalarType::Bool) | (UnOp::BitNot, ScalarType::Bool) => {
                self.ins(format!("not.pred {d}, {v}"))
            }
            (UnOp::Neg, ScalarType::Bool) | (UnOp::Not, _) => {
                return unsupported(format!("`{op:?}` on {}", s.name()))
            }
            (UnOp::Neg, ScalarType::I32 | ScalarType::I64) => {
                // `-v` as `~v + 1` (the same bits, wrap-around included): ptxas 13.0 fuses
                // two `min`s of negated `not`/`and`/`xor` results into one three-way min
                // (`VIMNMX3`) and drops one operand's negation (`min(r, -(~i))` in an unrolled
                // reduction gave -99 for 1; docs/GPU-RESULTS.md, session 8). Without a `neg`
                // it folds the `+ 1` into the min (`VIADDMNMX`) instead.
                let t = self.fresh_of(s);
                self.ins(format!("not.{} {t}, {v}", bits(s)));
                self.ins(format!("add.{} {d}, {t}, 1", arith(s)));
            }
            (UnOp::Neg, _) => self.ins(format!("neg.{} {d}, {v}", arith(s))),
            (UnOp::BitNot, ScalarType::F32 | ScalarType::F64) => {
                return unsupported(format!("`~` on {}", s.name()))
            }
            (UnOp::BitNot, _) => self.ins(format!("not.{} {d}, {v}", bits(s))),
        }
        Ok(d)
    }

    fn binary(&mut self, op: BinOp, l: &Expr, r: &Expr, site: Option<SiteId>) -> Result<Val> {
        if matches!(op, BinOp::And | BinOp::Or) {
            return self.short_circuit(op, l, r);
        }
        let (a, s) = self.scalar(l)?;
        let (c, t) = self.scalar(r)?;
        if op == BinOp::Sub && s == t && is_bitwise(r) {
            if let ScalarType::I32 | ScalarType::I64 = s {
                // `a - (x & y)` as `a + (~(x & y) + 1)`: ptxas 13.0 drops the negation of a
                // bitwise result in a fused three-way min (see `unary`'s `Neg`).
                let (n, d) = (self.fresh_of(s), self.fresh_of(s));
                self.ins(format!("not.{} {n}, {c}", bits(s)));
                self.ins(format!("add.{} {n}, {n}, 1", arith(s)));
                self.ins(format!("add.{} {d}, {a}, {n}", arith(s)));
                return Ok(Val::Scalar(d, s));
            }
        }
        self.binary_values(op, a, s, c, t, r, site)
    }

    /// `a op c` on evaluated operands; `divisor` is the right operand's expression (a
    /// constant divisor needs no zero check).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn binary_values(
        &mut self,
        op: BinOp,
        a: Reg,
        s: ScalarType,
        c: Reg,
        t: ScalarType,
        divisor: &Expr,
        site: Option<SiteId>,
    ) -> Result<Val> {
        if s != t {
            return unsupported(format!(
                "`{}` on {} and {}",
                op.as_str(),
                s.name(),
                t.name()
            ));
        }
        if let Some(cmp) = compare(op) {
            return Ok(Val::Scalar(self.compare(cmp, a, c, s)?, ScalarType::Bool));
        }
        if s == ScalarType::Bool {
            let logic = match op {
                BinOp::BitAnd => "and",
                BinOp::BitOr => "or",
                BinOp::BitXor => "xor",
                _ => return unsupported(format!("`{}` on bool", op.as_str())),
            };
            let d = self.fresh_of(s);
            self.ins(format!("{logic}.pred {d}, {a}, {c}"));
            return Ok(Val::Scalar(d, s));
        }
        if is_float(s) {
            return Ok(Val::Scalar(self.float_binary(op, a, c, s)?, s));
        }
        let d = self.fresh_of(s);
        let ty = arith(s);
        let b = bits(s);
        match op {
            BinOp::Add => self.ins(format!("add.{ty} {d}, {a}, {c}")),
            BinOp::Sub => self.ins(format!("sub.{ty} {d}, {a}, {c}")),
            BinOp::Mul => self.ins(format!("mul.lo.{ty} {d}, {a}, {c}")),
            BinOp::Div | BinOp::Rem => {
                return Ok(Val::Scalar(
                    self.int_division(op, a, c, s, divisor, site),
                    s,
                ))
            }
            BinOp::BitAnd => self.ins(format!("and.{b} {d}, {a}, {c}")),
            BinOp::BitOr => self.ins(format!("or.{b} {d}, {a}, {c}")),
            BinOp::BitXor => self.ins(format!("xor.{b} {d}, {a}, {c}")),
            BinOp::Shl | BinOp::Shr => {
                let count = self.shift_count(c, s);
                let inst = if op == BinOp::Shl {
                    format!("shl.{b}")
                } else {
                    format!("shr.{ty}")
                };
                self.ins(format!("{inst} {d}, {a}, {count}"));
            }
            _ => return unsupported(format!("`{}` on {}", op.as_str(), s.name())),
        }
        Ok(Val::Scalar(d, s))
    }

    /// A shift count modulo the width of the shifted type, as the u32 PTX shifts take.
    fn shift_count(&mut self, c: Reg, s: ScalarType) -> Reg {
        let n = self.fresh(Class::B32);
        if s == ScalarType::I64 {
            let m = self.fresh(Class::B64);
            self.ins(format!("and.b64 {m}, {c}, 63"));
            self.ins(format!("cvt.u32.u64 {n}, {m}"));
        } else {
            self.ins(format!("and.b32 {n}, {c}, 31"));
        }
        n
    }

    fn float_binary(&mut self, op: BinOp, a: Reg, c: Reg, s: ScalarType) -> Result<Reg> {
        let d = self.fresh_of(s);
        let ty = arith(s);
        match op {
            BinOp::Add => self.ins(format!("add.rn.{ty} {d}, {a}, {c}")),
            BinOp::Sub => self.ins(format!("sub.rn.{ty} {d}, {a}, {c}")),
            BinOp::Mul => self.ins(format!("mul.rn.{ty} {d}, {a}, {c}")),
            BinOp::Div => self.ins(format!("div.rn.{ty} {d}, {a}, {c}")),
            BinOp::Rem => return self.math_call(MathFn::Fmod, &[a, c], s),
            _ => return unsupported(format!("`{}` on {}", op.as_str(), s.name())),
        }
        Ok(d)
    }

    /// A comparison into a predicate. Floats compare ordered, except `!=`, which is true
    /// when either operand is NaN (C's `nan != nan`).
    pub(crate) fn compare(&mut self, op: BinOp, a: Reg, c: Reg, s: ScalarType) -> Result<Reg> {
        let d = self.fresh(Class::Pred);
        if s == ScalarType::Bool {
            match op {
                BinOp::Eq => {
                    let x = self.fresh(Class::Pred);
                    self.ins(format!("xor.pred {x}, {a}, {c}"));
                    self.ins(format!("not.pred {d}, {x}"));
                }
                BinOp::Ne => self.ins(format!("xor.pred {d}, {a}, {c}")),
                _ => return unsupported(format!("`{}` on bool", op.as_str())),
            }
            return Ok(d);
        }
        let cmp = match (op, is_float(s)) {
            (BinOp::Eq, _) => "eq",
            (BinOp::Ne, true) => "neu",
            (BinOp::Ne, false) => "ne",
            (BinOp::Lt, _) => "lt",
            (BinOp::Le, _) => "le",
            (BinOp::Gt, _) => "gt",
            (BinOp::Ge, _) => "ge",
            _ => return unsupported(format!("`{}` as a comparison", op.as_str())),
        };
        self.ins(format!("setp.{cmp}.{} {d}, {a}, {c}", arith(s)));
        Ok(d)
    }

    /// C's truncating `/` and `%` on integers.
    fn int_division(
        &mut self,
        op: BinOp,
        a: Reg,
        c: Reg,
        s: ScalarType,
        divisor: &Expr,
        site: Option<SiteId>,
    ) -> Reg {
        let ty = arith(s);
        let inst = if op == BinOp::Div { "div" } else { "rem" };
        let constant = match divisor.kind {
            ExprKind::Const(Const::I32(v)) => Some(v as i64),
            ExprKind::Const(Const::I64(v)) => Some(v),
            _ => None,
        };
        let d = self.fresh_of(s);
        match constant {
            Some(-1) if op == BinOp::Div => {
                self.ins(format!("neg.{ty} {d}, {a}"));
                return d;
            }
            Some(-1) => {
                self.set_zero(d, s);
                return d;
            }
            Some(v) if v != 0 => {
                self.ins(format!("{inst}.{ty} {d}, {a}, {c}"));
                return d;
            }
            _ => {}
        }
        let zero = self.fresh(Class::Pred);
        self.ins(format!("setp.eq.{ty} {zero}, {c}, 0"));
        let site = self.site(site);
        self.fail_if(zero, Failure::at(FailKind::DivZero, site));
        // `MIN / -1` overflows: divide by 1 instead and negate (wrapping) for `/`; `x % 1` is
        // 0 as `x % -1` must be.
        let minus_one = self.fresh(Class::Pred);
        self.ins(format!(
            "setp.eq.{ty} {minus_one}, {c}, {}",
            int_literal(-1, s)
        ));
        let safe = self.fresh_of(s);
        self.ins(format!("selp.{} {safe}, 1, {c}, {minus_one}", bits(s)));
        if op == BinOp::Div {
            let q = self.fresh_of(s);
            self.ins(format!("div.{ty} {q}, {a}, {safe}"));
            let neg = self.fresh_of(s);
            self.ins(format!("neg.{ty} {neg}, {a}"));
            self.ins(format!("selp.{} {d}, {neg}, {q}, {minus_one}", bits(s)));
        } else {
            self.ins(format!("rem.{ty} {d}, {a}, {safe}"));
        }
        d
    }

    /// `&&` and `||`: the right operand is evaluated only when the left does not decide.
    fn short_circuit(&mut self, op: BinOp, l: &Expr, r: &Expr) -> Result<Val> {
        let a = self.pred(l)?;
        let d = self.fresh(Class::Pred);
        self.ins(format!("mov.pred {d}, {a}"));
        let done = self.label("sc");
        if op == BinOp::And {
            self.ins(format!("@!{a} bra {done}"));
        } else {
            self.ins(format!("@{a} bra {done}"));
        }
        let b = self.pred(r)?;
        self.ins(format!("mov.pred {d}, {b}"));
        self.place(&done);
        Ok(Val::Scalar(d, ScalarType::Bool))
    }

    /// A numeric conversion (C's, with float to integer truncating, saturating, NaN to 0).
    pub(crate) fn convert(&mut self, v: Reg, from: ScalarType, to: ScalarType) -> Reg {
        use ScalarType::*;
        if from == to {
            return v;
        }
        let d = self.fresh_of(to);
        let ins = match (from, to) {
            (Bool, I32 | I64) => format!("selp.{} {d}, 1, 0, {v}", bits(to)),
            (Bool, F32 | F64) => format!(
                "selp.{} {d}, {}, {}, {v}",
                arith(to),
                float_literal(1.0, to),
                float_literal(0.0, to)
            ),
            (I32, I64) => format!("cvt.s64.s32 {d}, {v}"),
            (I64, I32) => format!("cvt.u32.u64 {d}, {v}"),
            (I32 | I64, F32 | F64) => format!("cvt.rn.{}.{} {d}, {v}", arith(to), arith(from)),
            (F32 | F64, I32 | I64) => return self.float_to_int(v, from, to),
            (F32, F64) => format!("cvt.f64.f32 {d}, {v}"),
            (F64, F32) => format!("cvt.rn.f32.f64 {d}, {v}"),
            (I32 | I64, Bool) => format!("setp.ne.{} {d}, {v}, 0", arith(from)),
            (F32 | F64, Bool) => format!(
                "setp.neu.{} {d}, {v}, {}",
                arith(from),
                float_literal(0.0, from)
            ),
            _ => unreachable!("every pair of different types is listed"),
        };
        self.ins(ins);
        d
    }

    /// Float to integer: truncated toward zero, saturated at the type's range, NaN to 0
    /// (spelled out: the hardware conversion gives other values for NaN and at the ends).
    fn float_to_int(&mut self, v: Reg, from: ScalarType, to: ScalarType) -> Reg {
        let (f, i) = (arith(from), arith(to));
        let d = self.fresh_of(to);
        self.ins(format!("cvt.rzi.{i}.{f} {d}, {v}"));
        let width = if to == ScalarType::I32 { 31 } else { 63 };
        let limit = 2f64.powi(width);
        let (hi, lo, nan) = (
            self.fresh(Class::Pred),
            self.fresh(Class::Pred),
            self.fresh(Class::Pred),
        );
        self.ins(format!(
            "setp.ge.{f} {hi}, {v}, {}",
            float_literal(limit, from)
        ));
        self.ins(format!(
            "setp.le.{f} {lo}, {v}, {}",
            float_literal(-limit, from)
        ));
        self.ins(format!("testp.notanumber.{f} {nan}, {v}"));
        let (max, min) = if to == ScalarType::I32 {
            (i32::MAX as i64, i32::MIN as i64)
        } else {
            (i64::MAX, i64::MIN)
        };
        let b = bits(to);
        self.ins(format!("selp.{b} {d}, {}, {d}, {hi}", int_literal(max, to)));
        self.ins(format!("selp.{b} {d}, {}, {d}, {lo}", int_literal(min, to)));
        self.ins(format!("selp.{b} {d}, 0, {d}, {nan}"));
        d
    }

    /// A built-in call in device code: array shape queries, `acc_on_device`, and the math
    /// functions PTX has instructions for.
    fn builtin(
        &mut self,
        b: Builtin,
        args: &[Expr],
        ty: Ty,
        site: Option<SiteId>,
    ) -> Result<Option<Val>> {
        use Builtin::*;
        let arg = |i: usize| match args.get(i) {
            Some(a) => Ok(a),
            None => unsupported(format!("`{}` without argument {i}", b.name())),
        };
        let v = match b {
            Len => {
                let a = self.array(arg(0)?)?;
                let mut n = a.dims[0];
                for d in &a.dims[1..] {
                    let m = self.fresh(Class::B64);
                    self.ins(format!("mul.lo.s64 {m}, {n}, {d}"));
                    n = m;
                }
                Val::Scalar(n, ScalarType::I64)
            }
            Rank => {
                let a = self.array(arg(0)?)?;
                Val::Scalar(self.const_i64(a.dims.len() as i64), ScalarType::I64)
            }
            Size => {
                let a = self.array(arg(0)?)?;
                let d = self.index(arg(1)?)?;
                Val::Scalar(self.size(&a, d, site), ScalarType::I64)
            }
            AccOnDevice => {
                let (t, _) = self.scalar(arg(0)?)?;
                let nvidia = self.fresh(Class::Pred);
                let not_host = self.fresh(Class::Pred);
                let d = self.fresh(Class::Pred);
                let nv = BuiltinConst::DeviceNvidia.value();
                let nh = BuiltinConst::DeviceNotHost.value();
                self.ins(format!("setp.eq.s32 {nvidia}, {t}, {nv}"));
                self.ins(format!("setp.eq.s32 {not_host}, {t}, {nh}"));
                self.ins(format!("or.pred {d}, {nvidia}, {not_host}"));
                Val::Scalar(d, ScalarType::Bool)
            }
            Print => {
                self.print_values(args)?;
                return Ok(None);
            }
            _ if b.is_math() => self.math(b, args, ty)?,
            _ => return unsupported(format!("`{}` in device code", b.name())),
        };
        Ok(Some(v))
    }

    /// `size(a, d)`: the extent of dimension `d`, which must be in `0..rank`.
    fn size(&mut self, a: &ArrayVal, d: Reg, site: Option<SiteId>) -> Reg {
        let rank = a.dims.len();
        let bad = self.fresh(Class::Pred);
        self.ins(format!("setp.ge.u64 {bad}, {d}, {rank}"));
        let dim = self.fresh(Class::B32);
        self.ins(format!("mov.u32 {dim}, {rank}"));
        let site = self.site(site);
        let failure = Failure {
            dim: Some(dim),
            index: Some(d),
            ..Failure::at(FailKind::BadDimension, site)
        };
        self.fail_if(bad, failure);
        let r = self.fresh(Class::B64);
        self.ins(format!("mov.b64 {r}, {}", a.dims[rank - 1]));
        for k in (0..rank - 1).rev() {
            let p = self.fresh(Class::Pred);
            self.ins(format!("setp.eq.u64 {p}, {d}, {k}"));
            self.ins(format!("selp.b64 {r}, {}, {r}, {p}", a.dims[k]));
        }
        r
    }

    fn math(&mut self, b: Builtin, args: &[Expr], ty: Ty) -> Result<Val> {
        use Builtin::*;
        let mut v = Vec::with_capacity(args.len());
        for a in args {
            v.push(self.scalar(a)?);
        }
        let Some(&(x, s)) = v.first() else {
            return unsupported(format!("`{}` without arguments", b.name()));
        };
        let y = |i: usize| match v.get(i) {
            Some(&(r, _)) => Ok(r),
            None => unsupported(format!("`{}` with too few arguments", b.name())),
        };
        let t = arith(s);
        let float = is_float(s);
        let result = ty.scalar().unwrap_or(s);
        let d = self.fresh_of(result);
        match b {
            Abs | Fabs => self.ins(format!("abs.{t} {d}, {x}")),
            Min | Fmin => self.ins(format!("min.{t} {d}, {x}, {}", y(1)?)),
            Max | Fmax => self.ins(format!("max.{t} {d}, {x}, {}", y(1)?)),
            Sqrt if float => self.ins(format!("sqrt.rn.{t} {d}, {x}")),
            Floor if float => self.ins(format!("cvt.rmi.{t}.{t} {d}, {x}")),
            Ceil if float => self.ins(format!("cvt.rpi.{t}.{t} {d}, {x}")),
            Trunc if float => self.ins(format!("cvt.rzi.{t}.{t} {d}, {x}")),
            Round if float => return Ok(Val::Scalar(self.round(x, s), s)),
            // PTX's `copysign d, a, b` gives `b`'s magnitude with `a`'s sign.
            Copysign if float => self.ins(format!("copysign.{t} {d}, {}, {x}", y(1)?)),
            Fma if float => self.ins(format!("fma.rn.{t} {d}, {x}, {}, {}", y(1)?, y(2)?)),
            Isnan if float => self.ins(format!("testp.notanumber.{t} {d}, {x}")),
            Isinf if float => self.ins(format!("testp.infinite.{t} {d}, {x}")),
            Isfinite if float => self.ins(format!("testp.finite.{t} {d}, {x}")),
            _ => match MathFn::of(b) {
                Some(f) if float && v.len() == f.arity() && result == s => {
                    let regs: Vec<Reg> = v.iter().map(|&(r, _)| r).collect();
                    return Ok(Val::Scalar(self.math_call(f, &regs, s)?, s));
                }
                _ => {
                    return unsupported(format!(
                        "`{}` on {} on the device (not in the device math library yet)",
                        b.name(),
                        s.name()
                    ))
                }
            },
        }
        Ok(Val::Scalar(d, result))
    }

    /// C's `round`: halves away from zero. `x - trunc(x)` is exact, so the test is too.
    fn round(&mut self, x: Reg, s: ScalarType) -> Reg {
        let t = arith(s);
        let whole = self.fresh_of(s);
        self.ins(format!("cvt.rzi.{t}.{t} {whole}, {x}"));
        let frac = self.fresh_of(s);
        self.ins(format!("sub.rn.{t} {frac}, {x}, {whole}"));
        self.ins(format!("abs.{t} {frac}, {frac}"));
        let up = self.fresh(Class::Pred);
        self.ins(format!(
            "setp.ge.{t} {up}, {frac}, {}",
            float_literal(0.5, s)
        ));
        let one = self.fresh_of(s);
        let one_literal = float_literal(1.0, s);
        self.ins(format!("mov.{t} {one}, {one_literal}"));
        self.ins(format!("copysign.{t} {one}, {x}, {one}"));
        let away = self.fresh_of(s);
        self.ins(format!("add.rn.{t} {away}, {whole}, {one}"));
        let d = self.fresh_of(s);
        self.ins(format!("selp.{t} {d}, {away}, {whole}, {up}"));
        d
    }
}

/// `op` if it is a comparison.
fn compare(op: BinOp) -> Option<BinOp> {
    matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    )
    .then_some(op)
}

/// Whether `e` is computed by a bitwise operation (`& | ^ ~`), which ptxas turns into a `LOP3`.
fn is_bitwise(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Binary(BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor, ..)
            | ExprKind::Unary(UnOp::BitNot, _)
    )
}
