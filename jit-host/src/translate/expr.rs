//! Expressions: constants, variables, operators, conversions, calls.

use acc_lang::hir::{Const, FnId};
use acc_lang::ir::{BinOp, Expr, ExprKind, ScalarType, SiteId, Ty, UnOp};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, MemFlagsData, Type, Value};

use super::{is_float, scalar_type, Callee, Tx, PTR};
use crate::JitError;

/// The scalar type of an expression, or an error naming what needed one.
pub(super) fn scalar_of(e: &Expr, what: &str) -> Result<ScalarType, JitError> {
    e.ty.scalar()
        .ok_or_else(|| JitError::Unsupported(format!("{what} of an array")))
}

impl Tx<'_, '_> {
    /// An expression that has a value.
    pub(super) fn expr(&mut self, e: &Expr) -> Result<Value, JitError> {
        self.expr_opt(e)?
            .ok_or_else(|| JitError::Unsupported("a call without a result used as a value".into()))
    }

    /// An expression; `None` for calls of functions without a result.
    pub(super) fn expr_opt(&mut self, e: &Expr) -> Result<Option<Value>, JitError> {
        let v = match &e.kind {
            ExprKind::Const(c) => self.constant(*c),
            ExprKind::Local(l) => self.read_local(*l)?,
            ExprKind::Global(g) if self.cached_globals.contains_key(g) => self.cached_globals[g],
            ExprKind::Global(g) => {
                let (base, offset) = self.global_addr(*g)?;
                let t = super::clif_type(e.ty);
                self.b.ins().load(t, MemFlagsData::trusted(), base, offset)
            }
            ExprKind::Unary(op, x) => self.unary(*op, x)?,
            ExprKind::Binary(op, l, r, site) => self.binary(*op, l, r, *site)?,
            ExprKind::Convert(x) => {
                let v = self.expr(x)?;
                let from = scalar_of(x, "conversion")?;
                let to = scalar_of(e, "conversion")?;
                self.convert(v, from, to)
            }
            ExprKind::Load {
                array,
                indices,
                site,
            } => {
                let site = self.unproven(indices, *site);
                let (addr, elem) = self.element_addr(array, indices, site)?;
                self.b
                    .ins()
                    .load(scalar_type(elem), MemFlagsData::trusted(), addr, 0)
            }
            ExprKind::Call(id, args) => return self.call_user(*id, args),
            ExprKind::Builtin(b, args) => return self.builtin(*b, args, e.ty, None),
            ExprKind::CheckedBuiltin(b, args, site) => {
                return self.builtin(*b, args, e.ty, Some(*site))
            }
            ExprKind::Param(name, default, site) => {
                let t = scalar_of(e, "`param`")?;
                let (p, l) = self.string(*name)?;
                let d = self.expr(default)?;
                let f = format!("acc_param_{}", t.name());
                // `acc_param_*` takes no site: the failure path gives its error this one.
                self.at_site(*site, |x| x.call_rt_value(&f, &[x.ctx, p, l, d]))?
            }
            // Sections only reach the data routines, which ignore them on the host.
            ExprKind::Section { array, .. } => self.expr(array)?,
            ExprKind::ArrayLit(elems, site) => {
                self.at_site(*site, |x| x.array_literal(elems, e.ty))?
            }
        };
        Ok(Some(v))
    }

    fn unary(&mut self, op: UnOp, x: &Expr) -> Result<Value, JitError> {
        let t = scalar_of(x, "an operator")?;
        let v = self.expr(x)?;
        Ok(self.unary_value(op, t, v))
    }

    /// A unary operator on an operand of type `t`.
    pub(super) fn unary_value(&mut self, op: UnOp, t: ScalarType, v: Value) -> Value {
        match op {
            UnOp::Neg if is_float(t) => self.b.ins().fneg(v),
            UnOp::Neg => self.b.ins().ineg(v),
            UnOp::Not => {
                let one = self.iconst(types::I8, 1);
                self.b.ins().bxor(v, one)
            }
            UnOp::BitNot => self.b.ins().bnot(v),
        }
    }

    fn binary(
        &mut self,
        op: BinOp,
        l: &Expr,
        r: &Expr,
        site: Option<SiteId>,
    ) -> Result<Value, JitError> {
        if matches!(op, BinOp::And | BinOp::Or) {
            return self.short_circuit(op, l, r);
        }
        let t = scalar_of(l, "an operator")?;
        let a = self.expr(l)?;
        let c = self.expr(r)?;
        self.binary_values(op, t, a, c, r, site)
    }

    /// A binary operator (not `&&` or `||`) on operands of type `t`, evaluated: `a op c`.
    /// `divisor` is the right operand's expression (a constant divisor needs no check).
    pub(super) fn binary_values(
        &mut self,
        op: BinOp,
        t: ScalarType,
        a: Value,
        c: Value,
        divisor: &Expr,
        site: Option<SiteId>,
    ) -> Result<Value, JitError> {
        if is_float(t) {
            return self.float_binary(op, a, c, t);
        }
        let ins = self.b.ins();
        Ok(match op {
            BinOp::Add => ins.iadd(a, c),
            BinOp::Sub => ins.isub(a, c),
            BinOp::Mul => ins.imul(a, c),
            BinOp::Div | BinOp::Rem => return self.int_division(op, a, c, divisor, site),
            BinOp::BitAnd => ins.band(a, c),
            BinOp::BitOr => ins.bor(a, c),
            BinOp::BitXor => ins.bxor(a, c),
            // Cranelift takes the count modulo the bit width, whatever the count's type.
            BinOp::Shl => ins.ishl(a, c),
            BinOp::Shr => ins.sshr(a, c),
            BinOp::Eq => ins.icmp(IntCC::Equal, a, c),
            BinOp::Ne => ins.icmp(IntCC::NotEqual, a, c),
            BinOp::Lt => ins.icmp(IntCC::SignedLessThan, a, c),
            BinOp::Le => ins.icmp(IntCC::SignedLessThanOrEqual, a, c),
            BinOp::Gt => ins.icmp(IntCC::SignedGreaterThan, a, c),
            BinOp::Ge => ins.icmp(IntCC::SignedGreaterThanOrEqual, a, c),
            BinOp::And | BinOp::Or => {
                return Err(JitError::Unsupported(format!(
                    "`{}` on evaluated operands",
                    op.as_str()
                )))
            }
        })
    }

    fn float_binary(
        &mut self,
        op: BinOp,
        a: Value,
        c: Value,
        t: ScalarType,
    ) -> Result<Value, JitError> {
        let ins = self.b.ins();
        Ok(match op {
            BinOp::Add => ins.fadd(a, c),
            BinOp::Sub => ins.fsub(a, c),
            BinOp::Mul => ins.fmul(a, c),
            BinOp::Div => ins.fdiv(a, c),
            BinOp::Rem => {
                let f = format!("acc_math_fmod_{}", t.name());
                return self.call_rt_value(&f, &[a, c]);
            }
            BinOp::Eq => ins.fcmp(FloatCC::Equal, a, c),
            // Unordered or unequal: `nan != nan` is true, as in C.
            BinOp::Ne => ins.fcmp(FloatCC::NotEqual, a, c),
            BinOp::Lt => ins.fcmp(FloatCC::LessThan, a, c),
            BinOp::Le => ins.fcmp(FloatCC::LessThanOrEqual, a, c),
            BinOp::Gt => ins.fcmp(FloatCC::GreaterThan, a, c),
            BinOp::Ge => ins.fcmp(FloatCC::GreaterThanOrEqual, a, c),
            _ => {
                return Err(JitError::Unsupported(format!(
                    "`{}` on {}",
                    op.as_str(),
                    t.name()
                )))
            }
        })
    }

    /// C's truncating `/` and `%`: a zero divisor is a run-time error; `MIN / -1` wraps to
    /// `MIN` and `MIN % -1` is 0 instead of trapping as the hardware would.
    fn int_division(
        &mut self,
        op: BinOp,
        a: Value,
        c: Value,
        divisor: &Expr,
        site: Option<SiteId>,
    ) -> Result<Value, JitError> {
        let ty = self.b.func.dfg.value_type(a);
        let constant = match divisor.kind {
            ExprKind::Const(Const::I32(v)) => Some(v as i64),
            ExprKind::Const(Const::I64(v)) => Some(v),
            _ => None,
        };
        match constant {
            Some(-1) if op == BinOp::Div => return Ok(self.b.ins().ineg(a)),
            Some(-1) => return Ok(self.zero(ty)),
            Some(d) if d != 0 => {
                return Ok(match op {
                    BinOp::Div => self.b.ins().sdiv(a, c),
                    _ => self.b.ins().srem(a, c),
                })
            }
            _ => {}
        }
        let zero = self.zero(ty);
        let is_zero = self.b.ins().icmp(IntCC::Equal, c, zero);
        let error = self.b.create_block();
        let ok = self.b.create_block();
        self.b.set_cold_block(error);
        self.b.ins().brif(is_zero, error, &[], ok, &[]);
        self.b.switch_to_block(error);
        let site = self.site(site);
        self.call_rt_and_fail("acc_rt_div_zero", &[self.ctx, site])?;
        self.b.switch_to_block(ok);
        let minus_one = self.iconst(ty, -1);
        let one = self.iconst(ty, 1);
        let is_minus_one = self.b.ins().icmp(IntCC::Equal, c, minus_one);
        let safe = self.b.ins().select(is_minus_one, one, c);
        Ok(match op {
            BinOp::Div => {
                let q = self.b.ins().sdiv(a, safe);
                let neg = self.b.ins().ineg(a);
                self.b.ins().select(is_minus_one, neg, q)
            }
            // `x % 1` is 0, as `x % -1` must be.
            _ => self.b.ins().srem(a, safe),
        })
    }

    /// `&&` and `||`: the right operand runs only when the left does not decide.
    fn short_circuit(&mut self, op: BinOp, l: &Expr, r: &Expr) -> Result<Value, JitError> {
        let a = self.expr(l)?;
        let right = self.b.create_block();
        let done = self.b.create_block();
        let result = self.b.append_block_param(done, types::I8);
        let decided = [BlockArg::Value(a)];
        if op == BinOp::And {
            self.b.ins().brif(a, right, &[], done, &decided);
        } else {
            self.b.ins().brif(a, done, &decided, right, &[]);
        }
        self.b.switch_to_block(right);
        let c = self.expr(r)?;
        self.b.ins().jump(done, &[BlockArg::Value(c)]);
        self.b.switch_to_block(done);
        Ok(result)
    }

    /// A numeric conversion (C's, except that float to integer saturates and NaN gives 0).
    pub(super) fn convert(&mut self, v: Value, from: ScalarType, to: ScalarType) -> Value {
        use ScalarType::*;
        let target: Type = scalar_type(to);
        let ins = self.b.ins();
        match (from, to) {
            _ if from == to => v,
            (Bool, I32 | I64) => ins.uextend(target, v),
            (I32, I64) => ins.sextend(target, v),
            (I64, I32) => ins.ireduce(target, v),
            (I32 | I64, F32 | F64) => ins.fcvt_from_sint(target, v),
            (Bool, F32 | F64) => {
                let wide = ins.uextend(types::I32, v);
                self.b.ins().fcvt_from_sint(target, wide)
            }
            (F32 | F64, I32 | I64) => ins.fcvt_to_sint_sat(target, v),
            (F32, F64) => ins.fpromote(target, v),
            (F64, F32) => ins.fdemote(target, v),
            (I32 | I64, Bool) => {
                let zero = self.zero(scalar_type(from));
                self.b.ins().icmp(IntCC::NotEqual, v, zero)
            }
            (F32 | F64, Bool) => {
                let zero = self.zero(scalar_type(from));
                self.b.ins().fcmp(FloatCC::NotEqual, v, zero)
            }
            _ => unreachable!("all pairs covered"),
        }
    }

    /// A call of a user function; leaves when it failed.
    fn call_user(&mut self, id: FnId, args: &[Expr]) -> Result<Option<Value>, JitError> {
        // `env` outlives the translator's borrow: the callee can be held across the
        // argument translation.
        let env = self.env;
        let callee = env.callee(id).ok_or(JitError::UnknownFunction(id))?;
        let depth = self.b.ins().iadd_imm_u(self.depth, 1);
        let mut values = vec![self.ctx, depth];
        for a in args {
            values.push(self.expr(a)?);
        }
        if let Some(f) = self.inline_candidate(id) {
            return self.inline_call(f, &values[2..]);
        }
        if self.env.is_gang_routine(id) {
            // Outside regions and gang routines, the caller is the only gang.
            match self.gang {
                Some(g) => values.extend([g.gang, g.num_gangs]),
                None => {
                    let zero = self.iconst(types::I64, 0);
                    let one = self.iconst(types::I64, 1);
                    values.extend([zero, one]);
                }
            }
        }
        let call = match callee {
            Callee::Local(fid) => {
                let f = self.user_func(fid);
                self.b.ins().call(f, &values)
            }
            Callee::Earlier(defined) => {
                self.env.calls_into.borrow_mut().insert(defined.unit);
                let sig = self.b.import_signature(defined.signature.clone());
                let address = self.iconst(PTR, defined.address as i64);
                self.b.ins().call_indirect(sig, address, &values)
            }
        };
        let result = self.b.inst_results(call).first().copied();
        self.check_status();
        Ok(result)
    }

    /// `[e0, e1, …]`: the elements in a stack buffer, copied by the runtime.
    fn array_literal(&mut self, elems: &[Expr], ty: Ty) -> Result<Value, JitError> {
        let Ty::Array { elem, .. } = ty else {
            return Err(JitError::Unsupported("array literal of scalar type".into()));
        };
        let buf = self.stack_buffer(elems.len());
        let size = super::array::elem_size(elem);
        for (i, e) in elems.iter().enumerate() {
            let v = self.expr(e)?;
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, buf, (i as i64 * size) as i32);
        }
        let n = self.iconst(types::I64, elems.len() as i64);
        let f = format!("acc_array_lit_{}", elem.name());
        self.call_rt_value(&f, &[self.ctx, buf, n])
    }
}
