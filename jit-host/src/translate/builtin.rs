//! Built-in functions: inline where Cranelift has an instruction, runtime calls otherwise.

use acc_lang::builtins::Builtin;
use acc_lang::hir::Const;
use acc_lang::ir::{Expr, ExprKind, PrintArg, ScalarType, SiteId, StringId, Ty};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};

use super::expr::scalar_of;
use super::{is_float, scalar_type, Tx, PTR};
use crate::JitError;

/// The element type code of `s` (`acc_abi::ElemType`), as an immediate.
pub(super) fn elem_code(s: ScalarType) -> i64 {
    i64::from(s.elem_type().code())
}

fn array_elem(t: Ty, what: &str) -> Result<ScalarType, JitError> {
    match t {
        Ty::Array { elem, .. } => Ok(elem),
        Ty::Scalar(_) => Err(JitError::Unsupported(format!("{what} of a scalar"))),
    }
}

fn arg(args: &[Expr], i: usize, b: Builtin) -> Result<&Expr, JitError> {
    args.get(i)
        .ok_or_else(|| JitError::Unsupported(format!("`{}` without argument {i}", b.name())))
}

impl Tx<'_, '_> {
    /// A built-in call; `site` (every built-in that calls into the library has one) is where
    /// its errors are reported: passed to the functions that take a site, and given by the
    /// check after the call to the errors of those that do not.
    pub(super) fn builtin(
        &mut self,
        b: Builtin,
        args: &[Expr],
        ty: Ty,
        site: Option<SiteId>,
    ) -> Result<Option<Value>, JitError> {
        match site {
            Some(at) => self.at_site(at, |x| x.builtin_call(b, args, ty, site)),
            None => self.builtin_call(b, args, ty, None),
        }
    }

    /// A function of the embedding program (`acc_rt_host_call`): its number, then its
    /// arguments in 8-byte stack slots (each stored with its own type), its result read back
    /// from a slot with the call's type.
    fn host_call(&mut self, args: &[Expr], ty: Ty) -> Result<Option<Value>, JitError> {
        let Some((number, values)) = args.split_first() else {
            return Err(JitError::Unsupported(
                "a host call without its number".into(),
            ));
        };
        let ExprKind::Const(Const::I64(number)) = number.kind else {
            return Err(JitError::Unsupported(
                "a host call's number is not a constant".into(),
            ));
        };
        let buf = self.stack_buffer(values.len());
        for (i, a) in values.iter().enumerate() {
            let v = self.expr(a)?;
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, buf, (i * 8) as i32);
        }
        let ret = self.stack_buffer(1);
        let number = self.iconst(types::I32, number);
        let n = self.iconst(types::I32, values.len() as i64);
        let ctx = self.ctx;
        self.call_rt("acc_rt_host_call", &[ctx, number, buf, n, ret])?;
        Ok(match ty {
            Ty::Scalar(s) => Some(self.b.ins().load(
                scalar_type(s),
                MemFlagsData::trusted(),
                ret,
                0,
            )),
            _ => None,
        })
    }

    /// `imshow`/`plot` (`acc_imshow`, `acc_plot`): the arrays (a null `x` for `plot(y)`),
    /// then the path's address and length (null and 0 without one).
    fn picture(&mut self, b: Builtin, args: &[Expr]) -> Result<Option<Value>, JitError> {
        let Some((path, arrays)) = args.split_last() else {
            return Err(JitError::Unsupported(format!(
                "`{}` without its path",
                b.name()
            )));
        };
        let (path, len) = match path.kind {
            ExprKind::Const(Const::I64(s)) if s >= 0 => self.string(StringId(s as u32))?,
            ExprKind::Const(Const::I64(_)) => (self.iconst(PTR, 0), self.iconst(types::I64, 0)),
            _ => {
                return Err(JitError::Unsupported(format!(
                    "the path of `{}` is not a constant",
                    b.name()
                )))
            }
        };
        let mut values = vec![self.ctx];
        if b == Builtin::Plot && arrays.len() == 1 {
            values.push(self.iconst(PTR, 0));
        }
        for a in arrays {
            values.push(self.expr(a)?);
        }
        values.extend([path, len]);
        let name = if b == Builtin::Imshow {
            "acc_imshow"
        } else {
            "acc_plot"
        };
        self.call_rt(name, &values)
    }

    fn builtin_call(
        &mut self,
        b: Builtin,
        args: &[Expr],
        ty: Ty,
        site: Option<SiteId>,
    ) -> Result<Option<Value>, JitError> {
        use Builtin::*;
        let ctx = self.ctx;
        let v = match b {
            Zeros | Ones | Random => {
                let name = match b {
                    Zeros => "acc_rt_array_new",
                    Ones => "acc_ones",
                    _ => "acc_random",
                };
                let elem = array_elem(ty, b.name())?;
                let code = self.iconst(types::I32, elem_code(elem));
                let (rank, dims) = self.dims(args)?;
                self.call_rt_value(name, &[ctx, code, rank, dims])?
            }
            Fill => {
                let value = arg(args, 0, b)?;
                let t = scalar_of(value, "`fill`")?;
                let v = self.expr(value)?;
                let (rank, dims) = self.dims(&args[1..])?;
                self.call_rt_value(&format!("acc_fill_{}", t.name()), &[ctx, v, rank, dims])?
            }
            Iota | Seed => {
                let n = self.expr(arg(args, 0, b)?)?;
                let name = if b == Iota { "acc_iota" } else { "acc_seed" };
                return self.call_rt(name, &[ctx, n]);
            }
            Linspace => {
                let mut v = vec![ctx];
                for i in 0..3 {
                    v.push(self.expr(arg(args, i, b)?)?);
                }
                self.call_rt_value("acc_linspace", &v)?
            }
            Len => {
                let a = self.expr(arg(args, 0, b)?)?;
                self.array_len(a)
            }
            Rank => {
                let a = self.expr(arg(args, 0, b)?)?;
                self.array_rank(a)
            }
            Size => {
                let a = self.expr(arg(args, 0, b)?)?;
                let d = self.expr(arg(args, 1, b)?)?;
                let site = self.site(site);
                self.call_rt_value("acc_rt_size", &[ctx, site, a, d])?
            }
            Copy => {
                let a = self.expr(arg(args, 0, b)?)?;
                self.call_rt_value("acc_copy", &[ctx, a])?
            }
            Reshape => {
                let a = self.expr(arg(args, 0, b)?)?;
                let (rank, dims) = self.dims(&args[1..])?;
                let site = self.site(site);
                self.call_rt_value("acc_reshape", &[ctx, site, a, rank, dims])?
            }
            Sum | Product | Maximum | Minimum => {
                let array = arg(args, 0, b)?;
                let elem = array_elem(array.ty, b.name())?;
                let a = self.expr(array)?;
                let name = format!("acc_{}_{}", b.name(), elem.name());
                if matches!(b, Sum | Product) {
                    self.call_rt_value(&name, &[ctx, a])?
                } else {
                    let site = self.site(site);
                    self.call_rt_value(&name, &[ctx, site, a])?
                }
            }
            Clock => self.call_rt_value("acc_clock", &[ctx])?,
            Exit => {
                let code = self.expr(arg(args, 0, b)?)?;
                return self.call_rt("acc_rt_exit", &[ctx, code]);
            }
            HostCall => return self.host_call(args, ty),
            Imshow | Plot => return self.picture(b, args),
            Print => {
                let args: Vec<_> = args.iter().cloned().map(PrintArg::Value).collect();
                self.print(&args)?;
                return Ok(None);
            }
            Printf | Assert | Param => {
                return Err(JitError::Unsupported(format!(
                    "`{}` as a call expression (the IR has a statement or expression for it)",
                    b.name()
                )))
            }
            _ if b.is_math() => return self.math(b, args, ty).map(Some),
            AccIsPresent | AccCopyin | AccCreate | AccCopyout | AccDelete | AccUpdateDevice
            | AccUpdateSelf => {
                use acc_runtime::device::ops::{ACTION_COPYIN, ACTION_PRESENT};
                // The routine says what it does; the record's action is only for errors.
                let action = if b == AccIsPresent {
                    ACTION_PRESENT
                } else {
                    ACTION_COPYIN
                };
                let op = self.routine_op(arg(args, 0, b)?, action, site)?;
                return self.call_rt(b.name(), &[ctx, op]);
            }
            MpiRank | MpiSize | MpiWtime => {
                self.call_rt_value(&format!("acc_{}", b.name()), &[ctx])?
            }
            MpiBarrier => {
                let site = self.site(site);
                return self.call_rt("acc_mpi_barrier", &[ctx, site]);
            }
            MpiAllreduce | MpiBcast => {
                let x = arg(args, 0, b)?;
                match x.ty {
                    Ty::Scalar(t) => {
                        let v = self.expr(x)?;
                        let second = self.expr(arg(args, 1, b)?)?;
                        let name = format!("acc_{}_{}", b.name(), t.name());
                        let site = self.site(site);
                        self.call_rt_value(&name, &[ctx, site, v, second])?
                    }
                    Ty::Array { .. } => {
                        use acc_runtime::device::ops::ACTION_PRESENT;
                        let op = self.routine_op(x, ACTION_PRESENT, site)?;
                        let second = self.expr(arg(args, 1, b)?)?;
                        let name = format!("acc_{}_array", b.name());
                        return self.call_rt(&name, &[ctx, op, second]);
                    }
                }
            }
            MpiSend | MpiRecv => {
                use acc_runtime::device::ops::ACTION_PRESENT;
                let op = self.routine_op(arg(args, 0, b)?, ACTION_PRESENT, site)?;
                let rank = self.expr(arg(args, 1, b)?)?;
                return self.call_rt(&format!("acc_{}", b.name()), &[ctx, op, rank]);
            }
            MpiSendrecv => {
                use acc_runtime::device::ops::ACTION_PRESENT;
                let send = self.routine_op(arg(args, 0, b)?, ACTION_PRESENT, site)?;
                let dest = self.expr(arg(args, 1, b)?)?;
                let recv = self.routine_op(arg(args, 2, b)?, ACTION_PRESENT, site)?;
                let src = self.expr(arg(args, 3, b)?)?;
                return self.call_rt("acc_mpi_sendrecv", &[ctx, send, dest, recv, src]);
            }
            _ if b.is_runtime_routine() => {
                let mut v = vec![ctx];
                for a in args {
                    v.push(self.expr(a)?);
                }
                return self.call_rt(b.name(), &v);
            }
            _ => return Err(JitError::Unsupported(format!("built-in `{}`", b.name()))),
        };
        Ok(Some(v))
    }

    /// Dimensions as `(rank: u32, dims: *const i64)` in a stack buffer.
    fn dims(&mut self, dims: &[Expr]) -> Result<(Value, Value), JitError> {
        let buf = self.stack_buffer(dims.len());
        for (i, d) in dims.iter().enumerate() {
            let v = self.expr(d)?;
            let v = match scalar_of(d, "a dimension")? {
                ScalarType::I32 => self.b.ins().sextend(types::I64, v),
                _ => v,
            };
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, buf, (i * 8) as i32);
        }
        let rank = self.iconst(types::I32, dims.len() as i64);
        Ok((rank, buf))
    }

    fn math(&mut self, b: Builtin, args: &[Expr], ty: Ty) -> Result<Value, JitError> {
        use Builtin::*;
        let mut v = Vec::with_capacity(args.len());
        for a in args {
            v.push(self.expr(a)?);
        }
        let operand = scalar_of(arg(args, 0, b)?, b.name())?;
        let x = v[0];
        let y = |i: usize| {
            v.get(i).copied().ok_or_else(|| {
                JitError::Unsupported(format!("`{}` with too few arguments", b.name()))
            })
        };
        let float = is_float(operand);
        Ok(match b {
            Abs if float => self.b.ins().fabs(x),
            Abs => {
                let neg = self.b.ins().ineg(x);
                let zero = self.zero(self.b.func.dfg.value_type(x));
                let is_neg = self.b.ins().icmp(IntCC::SignedLessThan, x, zero);
                self.b.ins().select(is_neg, neg, x)
            }
            Min | Fmin if float => self.c_fmin(x, y(1)?),
            Max | Fmax if float => self.c_fmax(x, y(1)?),
            Min => self.b.ins().smin(x, y(1)?),
            Max => self.b.ins().smax(x, y(1)?),
            Sqrt => self.b.ins().sqrt(x),
            Fabs => self.b.ins().fabs(x),
            Floor => self.b.ins().floor(x),
            Ceil => self.b.ins().ceil(x),
            Trunc => self.b.ins().trunc(x),
            Copysign => self.b.ins().fcopysign(x, y(1)?),
            Fma => self.b.ins().fma(x, y(1)?, y(2)?),
            Isnan => self.b.ins().fcmp(FloatCC::Unordered, x, x),
            Isinf | Isfinite => {
                let inf = match operand {
                    ScalarType::F32 => self.b.ins().f32const(f32::INFINITY),
                    _ => self.b.ins().f64const(f64::INFINITY),
                };
                let magnitude = self.b.ins().fabs(x);
                let cc = if b == Isinf {
                    FloatCC::Equal
                } else {
                    FloatCC::LessThan
                };
                self.b.ins().fcmp(cc, magnitude, inf)
            }
            _ => {
                let t = ty.scalar().filter(|&t| is_float(t)).unwrap_or(operand);
                let name = format!("acc_math_{}_{}", b.name(), t.name());
                self.call_rt_value(&name, &v)?
            }
        })
    }
}
