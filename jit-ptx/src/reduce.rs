//! Reductions (LANGUAGE.md 7.5): a loop's reduction variables start at the operator's
//! identity, accumulate the loop's iterations, and are combined with their value before the
//! loop afterwards, as on the host. A loop that divides its iterations among threads first
//! reduces the threads' copies (`group_reduce`), deterministically: within each warp by a
//! butterfly of `shfl.sync.bfly` (every lane ends with the same bits, floating-point `+` and
//! `*` being commutative), then the warps' results through shared memory in warp order; where
//! the threads do not make whole warps, every thread's copy through shared memory in thread
//! order. Every thread then holds the same result.
//!
//! The gang level (`RegionReduction`) is the kernel's: each block writes its partial result
//! to the `partials` buffer (`kernel`).

use acc_lang::hir::Const;
use acc_lang::ir::{LocalId, Reduction, ReductionOp, ScalarType};

use crate::fx::{Fx, Val};
use crate::plan::Group;
use crate::ptx::{arith, bits, f32_literal, f64_literal, int_literal, is_float, Class, Reg};
use crate::{unsupported, Result};

/// A reduction variable while its loop runs.
pub(crate) struct Saved {
    local: LocalId,
    reg: Reg,
    s: ScalarType,
    op: ReductionOp,
    /// The variable's value before the loop.
    before: Reg,
}

/// `bool` reductions run on 0/1 in 32-bit registers in shared memory and shuffles.
fn slot_domain(op: ReductionOp, s: ScalarType) -> (ReductionOp, ScalarType) {
    if s != ScalarType::Bool {
        return (op, s);
    }
    let op = match op {
        ReductionOp::And => ReductionOp::BitAnd,
        ReductionOp::Or => ReductionOp::BitOr,
        op => op,
    };
    (op, ScalarType::I32)
}

/// The memory-access suffix of a value of `s` in a scratch slot.
fn slot_type(s: ScalarType) -> &'static str {
    match s {
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
        ScalarType::I64 => "b64",
        _ => "b32",
    }
}

impl Fx<'_, '_> {
    /// The reduction's identity (`ir::Reduction::identity`), into `d`.
    pub(crate) fn set_identity(&mut self, d: Reg, identity: Const) {
        let (ty, value) = match identity {
            Const::Bool(b) => ("pred", u8::from(b).to_string()),
            Const::I32(v) => (
                bits(ScalarType::I32),
                int_literal(v.into(), ScalarType::I32),
            ),
            Const::I64(v) => (bits(ScalarType::I64), int_literal(v, ScalarType::I64)),
            Const::F32(v) => (bits(ScalarType::F32), f32_literal(v)),
            Const::F64(v) => (bits(ScalarType::F64), f64_literal(v)),
        };
        self.ins(format!("mov.{ty} {d}, {value}"));
    }

    /// `a op b` into a fresh register.
    pub(crate) fn combine(
        &mut self,
        op: ReductionOp,
        s: ScalarType,
        a: Reg,
        b: Reg,
    ) -> Result<Reg> {
        use ReductionOp::*;
        let d = self.fresh_of(s);
        let t = arith(s);
        let logic = if s == ScalarType::Bool {
            "pred"
        } else {
            bits(s)
        };
        let ins = match op {
            Add if is_float(s) => format!("add.rn.{t} {d}, {a}, {b}"),
            Mul if is_float(s) => format!("mul.rn.{t} {d}, {a}, {b}"),
            Add | Mul if s == ScalarType::Bool => {
                return unsupported(format!("a `{}` reduction of bool", op.as_str()))
            }
            Add => format!("add.{t} {d}, {a}, {b}"),
            Mul => format!("mul.lo.{t} {d}, {a}, {b}"),
            Max | Min if s == ScalarType::Bool => {
                return unsupported(format!("a `{}` reduction of bool", op.as_str()))
            }
            // PTX's float `max`/`min` ignore a NaN operand, as C's `fmax`/`fmin` do.
            Max => format!("max.{t} {d}, {a}, {b}"),
            Min => format!("min.{t} {d}, {a}, {b}"),
            _ if is_float(s) => {
                return unsupported(format!("a `{}` reduction of {}", op.as_str(), s.name()))
            }
            BitAnd | And => format!("and.{logic} {d}, {a}, {b}"),
            BitOr | Or => format!("or.{logic} {d}, {a}, {b}"),
            BitXor => format!("xor.{logic} {d}, {a}, {b}"),
        };
        self.ins(ins);
        Ok(d)
    }

    /// Save each variable's value and set it to its operator's identity.
    pub(crate) fn start_reductions(&mut self, reds: &[Reduction]) -> Result<Vec<Saved>> {
        let mut saved = Vec::with_capacity(reds.len());
        for red in reds {
            let (reg, s) = match self.local(red.var)? {
                Val::Scalar(r, s) => (r, s),
                Val::Array(_) => return unsupported("a reduction of an array"),
            };
            let before = self.fresh_of(s);
            let ty = if s == ScalarType::Bool {
                "pred"
            } else {
                bits(s)
            };
            self.ins(format!("mov.{ty} {before}, {reg}"));
            self.set_identity(reg, red.identity);
            saved.push(Saved {
                local: red.var,
                reg,
                s,
                op: red.op,
                before,
            });
        }
        Ok(saved)
    }

    /// After the loop: reduce each variable over its group (`group(variable)`: the threads
    /// the loop divided its work among, if any) and combine the result with the value before
    /// the loop.
    pub(crate) fn finish_reductions(
        &mut self,
        saved: Vec<Saved>,
        group: impl Fn(LocalId) -> Option<Group>,
    ) -> Result<()> {
        for r in saved {
            let partial = match group(r.local) {
                Some(g) => self.group_reduce(g, r.op, r.s, r.reg)?,
                None => r.reg,
            };
            let combined = self.combine(r.op, r.s, r.before, partial)?;
            let ty = if r.s == ScalarType::Bool {
                "pred"
            } else {
                bits(r.s)
            };
            self.ins(format!("mov.{ty} {}, {combined}", r.reg));
        }
        Ok(())
    }

    fn group_barrier(&mut self, g: Group) {
        match g {
            Group::Row => self.row_barrier(),
            Group::Block | Group::Rows => self.ins("bar.sync 0"),
        }
    }

    /// The `op`-reduction of every thread's `v` over `group`; every thread gets the result.
    pub(crate) fn group_reduce(
        &mut self,
        g: Group,
        op: ReductionOp,
        s: ScalarType,
        v: Reg,
    ) -> Result<Reg> {
        let (wop, ws) = slot_domain(op, s);
        let w = if s == ScalarType::Bool {
            let b = self.fresh(Class::B32);
            self.ins(format!("selp.b32 {b}, 1, 0, {v}"));
            b
        } else {
            v
        };
        let sp = self.sp();
        // This thread's lane in the group, the group's size and its first slot (u32).
        let (lane, size, base) = match g {
            Group::Block => {
                let zero = self.fresh(Class::B32);
                self.ins(format!("mov.u32 {zero}, 0"));
                (sp.tid, sp.nthreads, zero)
            }
            Group::Row => {
                let base = self.fresh(Class::B32);
                self.ins(format!("mul.lo.u32 {base}, {}, {}", sp.ty, sp.ntx));
                (sp.tx, sp.ntx, base)
            }
            Group::Rows => {
                let zero = self.fresh(Class::B32);
                self.ins(format!("mov.u32 {zero}, 0"));
                (sp.ty, sp.nty, zero)
            }
        };
        let acc = self.fresh_of(ws);
        let st = slot_type(ws);
        let generic = self.label("redslots");
        let done = self.label("reddone");
        self.comment(format!("reduce `{}` over the {g:?} group", op.as_str()));
        if g != Group::Rows {
            // Whole warps: a butterfly in each warp, then the warps' results in order.
            let m = self.fresh(Class::B32);
            self.ins(format!("and.b32 {m}, {size}, 31"));
            let partial = self.fresh(Class::Pred);
            self.ins(format!("setp.ne.u32 {partial}, {m}, 0"));
            self.ins(format!("@{partial} bra {generic}"));
            let mut x = w;
            for off in [16, 8, 4, 2, 1] {
                let o = self.shuffle_xor(x, ws, off);
                x = self.combine(wop, ws, x, o)?;
            }
            // A group of one warp is done: the butterfly left the result in every lane.
            let one_warp = self.fresh(Class::Pred);
            self.ins(format!("setp.eq.u32 {one_warp}, {size}, 32"));
            self.ins(format!("@{one_warp} mov.{} {acc}, {x}", bits(ws)));
            self.ins(format!("@{one_warp} bra {done}"));
            let li = self.fresh(Class::B32);
            self.ins(format!("and.b32 {li}, {lane}, 31"));
            let first = self.fresh(Class::Pred);
            self.ins(format!("setp.eq.u32 {first}, {li}, 0"));
            let si = self.fresh(Class::B32);
            self.ins(format!("add.u32 {si}, {base}, {lane}"));
            self.ins(format!("shr.u32 {si}, {si}, 5"));
            let addr = self.scratch_slot(si);
            self.ins(format!("@{first} st.shared.{st} [{addr}], {x}"));
            self.group_barrier(g);
            let (b0, n) = (self.fresh(Class::B32), self.fresh(Class::B32));
            self.ins(format!("shr.u32 {b0}, {base}, 5"));
            self.ins(format!("shr.u32 {n}, {size}, 5"));
            self.combine_slots(wop, ws, b0, n, acc)?;
            self.group_barrier(g);
            self.ins(format!("bra {done}"));
        }
        self.place(&generic);
        let si = self.fresh(Class::B32);
        self.ins(format!("add.u32 {si}, {base}, {lane}"));
        let addr = self.scratch_slot(si);
        if g == Group::Rows {
            self.ins(format!("@{} st.shared.{st} [{addr}], {w}", sp.lead_x));
        } else {
            self.ins(format!("st.shared.{st} [{addr}], {w}"));
        }
        self.group_barrier(g);
        self.combine_slots(wop, ws, base, size, acc)?;
        // The slots are reused: nobody may write them before everyone has read them.
        self.group_barrier(g);
        self.place(&done);
        if s == ScalarType::Bool {
            let p = self.fresh(Class::Pred);
            self.ins(format!("setp.ne.u32 {p}, {acc}, 0"));
            Ok(p)
        } else {
            Ok(acc)
        }
    }

    /// `acc = slot[start] op slot[start + 1] op … op slot[start + n - 1]`, in that order.
    fn combine_slots(
        &mut self,
        op: ReductionOp,
        s: ScalarType,
        start: Reg,
        n: Reg,
        acc: Reg,
    ) -> Result<()> {
        let st = slot_type(s);
        let addr = self.scratch_slot(start);
        self.ins(format!("ld.shared.{st} {acc}, [{addr}]"));
        let i = self.fresh(Class::B32);
        self.ins(format!("mov.u32 {i}, 1"));
        let top = self.label("slots");
        let end = self.label("slotsend");
        self.place(&top);
        let done = self.fresh(Class::Pred);
        self.ins(format!("setp.ge.u32 {done}, {i}, {n}"));
        self.ins(format!("@{done} bra {end}"));
        let idx = self.fresh(Class::B32);
        self.ins(format!("add.u32 {idx}, {start}, {i}"));
        let a = self.scratch_slot(idx);
        let x = self.fresh_of(s);
        self.ins(format!("ld.shared.{st} {x}, [{a}]"));
        let c = self.combine(op, s, acc, x)?;
        self.ins(format!("mov.{} {acc}, {c}", bits(s)));
        self.ins(format!("add.u32 {i}, {i}, 1"));
        self.ins(format!("bra {top}"));
        self.place(&end);
        Ok(())
    }

    /// The value of lane `lane ^ off` of this warp (all 32 lanes take part).
    fn shuffle_xor(&mut self, x: Reg, s: ScalarType, off: u32) -> Reg {
        let d = self.fresh_of(s);
        if matches!(s, ScalarType::I64 | ScalarType::F64) {
            let (lo, hi, lo2, hi2) = (
                self.fresh(Class::B32),
                self.fresh(Class::B32),
                self.fresh(Class::B32),
                self.fresh(Class::B32),
            );
            self.ins(format!("mov.b64 {{{lo}, {hi}}}, {x}"));
            self.ins(format!("shfl.sync.bfly.b32 {lo2}, {lo}, {off}, 31, -1"));
            self.ins(format!("shfl.sync.bfly.b32 {hi2}, {hi}, {off}, 31, -1"));
            self.ins(format!("mov.b64 {d}, {{{lo2}, {hi2}}}"));
        } else {
            self.ins(format!("shfl.sync.bfly.b32 {d}, {x}, {off}, 31, -1"));
        }
        d
    }
}
