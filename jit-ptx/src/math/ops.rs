//! The operations the library's newer functions (`inverse`, `power`) are written in, so that
//! one text of each algorithm both emits PTX ([`Fx`]) and, in the tests, runs on the host in
//! plain `f64` arithmetic with the same roundings (`Eval`), where its error can be measured on
//! millions of inputs.
//!
//! The algorithms are branch-free: every path is computed and the result selected, so the
//! host evaluation follows the device's steps one for one.

use crate::fx::Fx;
use crate::ptx::{Class, Reg};

use super::MathFn;

/// `f64` arithmetic (`F`), 64-bit integer arithmetic on bit patterns (`U`) and predicates
/// (`P`). Floating-point operations round to nearest, ties to even; comparisons are ordered
/// (false when an operand is NaN).
pub(crate) trait Ops {
    type F: Copy;
    type U: Copy;
    type P: Copy;

    fn k(&mut self, v: f64) -> Self::F;
    fn add(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn sub(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn mul(&mut self, a: Self::F, b: Self::F) -> Self::F;
    fn div(&mut self, a: Self::F, b: Self::F) -> Self::F;
    /// `a * b + c`, rounded once.
    fn fma(&mut self, a: Self::F, b: Self::F, c: Self::F) -> Self::F;
    fn neg(&mut self, a: Self::F) -> Self::F;
    fn abs(&mut self, a: Self::F) -> Self::F;
    fn sqrt(&mut self, a: Self::F) -> Self::F;
    /// Round to an integer, ties to even.
    fn rint(&mut self, a: Self::F) -> Self::F;
    fn floor(&mut self, a: Self::F) -> Self::F;
    /// `mag`'s magnitude with `sign`'s sign.
    fn copysign(&mut self, mag: Self::F, sign: Self::F) -> Self::F;

    fn lt(&mut self, a: Self::F, b: Self::F) -> Self::P;
    fn le(&mut self, a: Self::F, b: Self::F) -> Self::P;
    fn eq(&mut self, a: Self::F, b: Self::F) -> Self::P;
    fn is_nan(&mut self, a: Self::F) -> Self::P;
    /// The sign bit (set for `-0.0`).
    fn sign_bit(&mut self, a: Self::F) -> Self::P;
    fn and(&mut self, a: Self::P, b: Self::P) -> Self::P;
    fn or(&mut self, a: Self::P, b: Self::P) -> Self::P;
    fn not(&mut self, a: Self::P) -> Self::P;
    /// `p ? a : b`.
    fn sel(&mut self, p: Self::P, a: Self::F, b: Self::F) -> Self::F;

    fn bits_of(&mut self, a: Self::F) -> Self::U;
    fn float_of(&mut self, a: Self::U) -> Self::F;
    fn uk(&mut self, v: u64) -> Self::U;
    fn uand(&mut self, a: Self::U, b: Self::U) -> Self::U;
    fn uor(&mut self, a: Self::U, b: Self::U) -> Self::U;
    /// Wrapping.
    fn uadd(&mut self, a: Self::U, b: Self::U) -> Self::U;
    fn ushr(&mut self, a: Self::U, n: u32) -> Self::U;
    fn ushl(&mut self, a: Self::U, n: u32) -> Self::U;
    /// Unsigned division.
    fn udiv(&mut self, a: Self::U, b: Self::U) -> Self::U;
    /// Unsigned `a < b`.
    fn ult(&mut self, a: Self::U, b: Self::U) -> Self::P;
    fn usel(&mut self, p: Self::P, a: Self::U, b: Self::U) -> Self::U;
    /// The signed integer `a` as a float.
    fn to_f(&mut self, a: Self::U) -> Self::F;
    /// An integral float (within the `i64` range) as a signed integer.
    fn to_u(&mut self, a: Self::F) -> Self::U;

    /// Another function of the library, of one argument.
    fn call(&mut self, f: MathFn, x: Self::F) -> Self::F;
}

/// Derived operations.
pub(crate) trait OpsExt: Ops {
    fn kb(&mut self, bits: u64) -> Self::F {
        self.k(f64::from_bits(bits))
    }

    fn ge(&mut self, a: Self::F, b: Self::F) -> Self::P {
        self.le(b, a)
    }

    /// `a < c` for a constant `c`.
    fn lt_k(&mut self, a: Self::F, c: f64) -> Self::P {
        let c = self.k(c);
        self.lt(a, c)
    }

    fn eq_k(&mut self, a: Self::F, c: f64) -> Self::P {
        let c = self.k(c);
        self.eq(a, c)
    }

    /// Selects between two constants.
    fn sel_k(&mut self, p: Self::P, a: f64, b: f64) -> Self::F {
        let (a, b) = (self.k(a), self.k(b));
        self.sel(p, a, b)
    }

    /// `a` with the low 32 bits of its representation cleared (fdlibm's `SET_LOW_WORD(a, 0)`):
    /// a value of 21 significant bits, whose products with another such value are exact.
    fn high_part(&mut self, a: Self::F) -> Self::F {
        let b = self.bits_of(a);
        let m = self.uk(0xffff_ffff_0000_0000);
        let h = self.uand(b, m);
        self.float_of(h)
    }

    /// `c[n] x^n + … + c[0]` by Horner's rule with `fma`.
    fn horner(&mut self, x: Self::F, c: &[f64]) -> Self::F {
        let mut p = self.k(c[c.len() - 1]);
        for &ck in c[..c.len() - 1].iter().rev() {
            let ck = self.k(ck);
            p = self.fma(p, x, ck);
        }
        p
    }

    /// `2^n` for an integral `n` in `[-1022, 1023]`.
    fn exp2i(&mut self, n: Self::F) -> Self::F {
        let bias = self.k(1023.0);
        let e = self.add(n, bias);
        let e = self.to_u(e);
        let b = self.ushl(e, 52);
        self.float_of(b)
    }

    /// `p 2^n` for an integral `n` in `[-2044, 2046]`, in two steps (`2^floor(n/2)`, then the
    /// rest) so that a subnormal or overflowing result rounds once.
    fn ldexp(&mut self, p: Self::F, n: Self::F) -> Self::F {
        let half = self.k(0.5);
        let h = self.mul(n, half);
        let h = self.floor(h);
        let rest = self.sub(n, h);
        let a = self.exp2i(h);
        let b = self.exp2i(rest);
        let t = self.mul(p, a);
        self.mul(t, b)
    }
}

impl<O: Ops + ?Sized> OpsExt for O {}

impl Ops for Fx<'_, '_> {
    type F = Reg;
    type U = Reg;
    type P = Reg;

    fn k(&mut self, v: f64) -> Reg {
        self.d(v)
    }
    fn add(&mut self, a: Reg, b: Reg) -> Reg {
        self.op("add.rn.f64", &[a, b])
    }
    fn sub(&mut self, a: Reg, b: Reg) -> Reg {
        self.op("sub.rn.f64", &[a, b])
    }
    fn mul(&mut self, a: Reg, b: Reg) -> Reg {
        self.op("mul.rn.f64", &[a, b])
    }
    fn div(&mut self, a: Reg, b: Reg) -> Reg {
        self.op("div.rn.f64", &[a, b])
    }
    fn fma(&mut self, a: Reg, b: Reg, c: Reg) -> Reg {
        self.op("fma.rn.f64", &[a, b, c])
    }
    fn neg(&mut self, a: Reg) -> Reg {
        self.op("neg.f64", &[a])
    }
    fn abs(&mut self, a: Reg) -> Reg {
        self.op("abs.f64", &[a])
    }
    fn sqrt(&mut self, a: Reg) -> Reg {
        self.op("sqrt.rn.f64", &[a])
    }
    fn rint(&mut self, a: Reg) -> Reg {
        self.op("cvt.rni.f64.f64", &[a])
    }
    fn floor(&mut self, a: Reg) -> Reg {
        self.op("cvt.rmi.f64.f64", &[a])
    }
    fn copysign(&mut self, mag: Reg, sign: Reg) -> Reg {
        // PTX's `copysign d, a, b` gives `b`'s magnitude with `a`'s sign.
        self.op("copysign.f64", &[sign, mag])
    }

    fn lt(&mut self, a: Reg, b: Reg) -> Reg {
        self.cmp("lt", a, b)
    }
    fn le(&mut self, a: Reg, b: Reg) -> Reg {
        self.cmp("le", a, b)
    }
    fn eq(&mut self, a: Reg, b: Reg) -> Reg {
        self.cmp("eq", a, b)
    }
    fn is_nan(&mut self, a: Reg) -> Reg {
        let p = self.fresh(Class::Pred);
        self.ins(format!("testp.notanumber.f64 {p}, {a}"));
        p
    }
    fn sign_bit(&mut self, a: Reg) -> Reg {
        let b = Ops::bits_of(self, a);
        let p = self.fresh(Class::Pred);
        self.ins(format!("setp.lt.s64 {p}, {b}, 0"));
        p
    }
    fn and(&mut self, a: Reg, b: Reg) -> Reg {
        self.pred_op("and.pred", &[a, b])
    }
    fn or(&mut self, a: Reg, b: Reg) -> Reg {
        self.pred_op("or.pred", &[a, b])
    }
    fn not(&mut self, a: Reg) -> Reg {
        self.pred_op("not.pred", &[a])
    }
    fn sel(&mut self, p: Reg, a: Reg, b: Reg) -> Reg {
        let d = self.fresh(Class::F64);
        self.ins(format!("selp.f64 {d}, {a}, {b}, {p}"));
        d
    }

    fn bits_of(&mut self, a: Reg) -> Reg {
        self.int_op("mov.b64", &[a])
    }
    fn float_of(&mut self, a: Reg) -> Reg {
        let d = self.fresh(Class::F64);
        self.ins(format!("mov.b64 {d}, {a}"));
        d
    }
    fn uk(&mut self, v: u64) -> Reg {
        let d = self.fresh(Class::B64);
        self.ins(format!("mov.b64 {d}, 0x{v:016X}"));
        d
    }
    fn uand(&mut self, a: Reg, b: Reg) -> Reg {
        self.int_op("and.b64", &[a, b])
    }
    fn uor(&mut self, a: Reg, b: Reg) -> Reg {
        self.int_op("or.b64", &[a, b])
    }
    fn uadd(&mut self, a: Reg, b: Reg) -> Reg {
        self.int_op("add.u64", &[a, b])
    }
    fn ushr(&mut self, a: Reg, n: u32) -> Reg {
        let d = self.fresh(Class::B64);
        self.ins(format!("shr.u64 {d}, {a}, {n}"));
        d
    }
    fn ushl(&mut self, a: Reg, n: u32) -> Reg {
        let d = self.fresh(Class::B64);
        self.ins(format!("shl.b64 {d}, {a}, {n}"));
        d
    }
    fn udiv(&mut self, a: Reg, b: Reg) -> Reg {
        self.int_op("div.u64", &[a, b])
    }
    fn ult(&mut self, a: Reg, b: Reg) -> Reg {
        let p = self.fresh(Class::Pred);
        self.ins(format!("setp.lo.u64 {p}, {a}, {b}"));
        p
    }
    fn usel(&mut self, p: Reg, a: Reg, b: Reg) -> Reg {
        let d = self.fresh(Class::B64);
        self.ins(format!("selp.b64 {d}, {a}, {b}, {p}"));
        d
    }
    fn to_f(&mut self, a: Reg) -> Reg {
        self.op("cvt.rn.f64.s64", &[a])
    }
    fn to_u(&mut self, a: Reg) -> Reg {
        self.int_op("cvt.rzi.s64.f64", &[a])
    }

    fn call(&mut self, f: MathFn, x: Reg) -> Reg {
        self.call_math(f, x)
    }
}

impl Fx<'_, '_> {
    fn pred_op(&mut self, inst: &str, args: &[Reg]) -> Reg {
        let d = self.fresh(Class::Pred);
        let list: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        self.ins(format!("{inst} {d}, {}", list.join(", ")));
        d
    }

    fn int_op(&mut self, inst: &str, args: &[Reg]) -> Reg {
        let d = self.fresh(Class::B64);
        let list: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        self.ins(format!("{inst} {d}, {}", list.join(", ")));
        d
    }
}

/// The operations on the host, in `f64` with the device's roundings (tests).
#[cfg(test)]
pub(crate) struct Eval;

#[cfg(test)]
impl Ops for Eval {
    type F = f64;
    type U = u64;
    type P = bool;

    fn k(&mut self, v: f64) -> f64 {
        v
    }
    fn add(&mut self, a: f64, b: f64) -> f64 {
        a + b
    }
    fn sub(&mut self, a: f64, b: f64) -> f64 {
        a - b
    }
    fn mul(&mut self, a: f64, b: f64) -> f64 {
        a * b
    }
    fn div(&mut self, a: f64, b: f64) -> f64 {
        a / b
    }
    fn fma(&mut self, a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    fn neg(&mut self, a: f64) -> f64 {
        -a
    }
    fn abs(&mut self, a: f64) -> f64 {
        a.abs()
    }
    fn sqrt(&mut self, a: f64) -> f64 {
        a.sqrt()
    }
    fn rint(&mut self, a: f64) -> f64 {
        a.round_ties_even()
    }
    fn floor(&mut self, a: f64) -> f64 {
        a.floor()
    }
    fn copysign(&mut self, mag: f64, sign: f64) -> f64 {
        mag.copysign(sign)
    }
    fn lt(&mut self, a: f64, b: f64) -> bool {
        a < b
    }
    fn le(&mut self, a: f64, b: f64) -> bool {
        a <= b
    }
    fn eq(&mut self, a: f64, b: f64) -> bool {
        a == b
    }
    fn is_nan(&mut self, a: f64) -> bool {
        a.is_nan()
    }
    fn sign_bit(&mut self, a: f64) -> bool {
        a.is_sign_negative()
    }
    fn and(&mut self, a: bool, b: bool) -> bool {
        a && b
    }
    fn or(&mut self, a: bool, b: bool) -> bool {
        a || b
    }
    fn not(&mut self, a: bool) -> bool {
        !a
    }
    fn sel(&mut self, p: bool, a: f64, b: f64) -> f64 {
        if p {
            a
        } else {
            b
        }
    }
    fn bits_of(&mut self, a: f64) -> u64 {
        a.to_bits()
    }
    fn float_of(&mut self, a: u64) -> f64 {
        f64::from_bits(a)
    }
    fn uk(&mut self, v: u64) -> u64 {
        v
    }
    fn uand(&mut self, a: u64, b: u64) -> u64 {
        a & b
    }
    fn uor(&mut self, a: u64, b: u64) -> u64 {
        a | b
    }
    fn uadd(&mut self, a: u64, b: u64) -> u64 {
        a.wrapping_add(b)
    }
    fn ushr(&mut self, a: u64, n: u32) -> u64 {
        a >> n
    }
    fn ushl(&mut self, a: u64, n: u32) -> u64 {
        a << n
    }
    fn udiv(&mut self, a: u64, b: u64) -> u64 {
        a / b
    }
    fn ult(&mut self, a: u64, b: u64) -> bool {
        a < b
    }
    fn usel(&mut self, p: bool, a: u64, b: u64) -> u64 {
        if p {
            a
        } else {
            b
        }
    }
    fn to_f(&mut self, a: u64) -> f64 {
        a as i64 as f64
    }
    fn to_u(&mut self, a: f64) -> u64 {
        a as i64 as u64
    }
    fn call(&mut self, f: MathFn, x: f64) -> f64 {
        match f {
            MathFn::Atan => super::inverse::atan(self, x),
            _ => unreachable!("{f:?} is not written in `Ops`"),
        }
    }
}
