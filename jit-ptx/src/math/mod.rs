//! The device math library: the functions of LANGUAGE.md section 6 that PTX has no
//! instruction for, as `.func (.param .f64 r) acc_math_NAME (.param .f64 x[, .param .f64 y])`
//! helpers, generated into the module on first use. `f32` calls convert to `f64`, call the
//! helper and round the result (one rounding of a result within 1 ulp of `f64`).
//!
//! The algorithms (validated against 200-bit references, within 1 ulp on sampled inputs,
//! `tanh` within 2; `examples/math_ulp.rs` with `gpu/math_ulp.py` measures every function on a
//! GPU against the host):
//! - `exp`: `x = k ln2 + r` (Cody-Waite with a two-part `ln2`, by `fma`), `|r| <= ln2/2`,
//!   `e^r` by its Taylor polynomial to degree 13 (Horner with `fma`), scaled by `2^k` in two
//!   steps (so that subnormal and near-overflow results round once);
//! - `exp2`: `x = k + r`, `e^(r ln2)` with `r ln2` as a double-double;
//! - `expm1`: as `exp` (degree 18, `k = 0` for `|x| <= ln2`), then `2^k q + (2^k - 1)`;
//! - `log`, `log2`, `log10`: fdlibm's reduction `x = 2^k (1 + f)`, `s = f / (2 + f)` and its
//!   polynomial in `s^2` (`Lg1`..`Lg7`), with the `1/ln2`, `1/ln10` factors applied as
//!   double-doubles; `log1p`: `log(1 + x)` plus the rounding correction of `1 + x`;
//! - `sinh`: Taylor polynomial below 1, `expm1` below 22, `exp` above (halved before squaring
//!   near overflow); `cosh`: from `exp`; `tanh`: from `expm1` (fdlibm's formulas);
//! - `hypot`: both scaled by the larger's power of two, `sqrt(fma(a, a, b * b))`;
//! - `fmod` (and float `%`): exact, by subtracting `|y|` scaled to the remainder's exponent
//!   (each subtraction exact, Sterbenz) until the remainder is below `|y|`.
//!
//! - `sin`, `cos`, `tan`: `|x| = n pi/2 + y` with `y` as a double-double (`rem_pio2`): by
//!   `pi/2` in four parts (three of 33 bits, exact products) below 1.6e6, by Payne-Hanek (192
//!   bits of `2/pi` from a table times the 53-bit mantissa, in 64-bit integer arithmetic)
//!   above; then Taylor polynomials on `[-pi/4, pi/4]` with `y`'s tail as a correction, `tan`
//!   as their quotient.
//!
//! - `asin`, `acos`, `atan`, `atan2` (`inverse`) and `pow`, `cbrt` (`power`): fdlibm's
//!   algorithms, branch-free, with `pow`'s logarithm near 1 and `atan2`'s quotient made exact
//!   with `fma`. They are written once over `ops::Ops`, which both emits PTX and (in the tests,
//!   `accuracy`) evaluates them on the host with the same roundings: within 1 ulp of the
//!   host's functions on millions of inputs, in both precisions, with the same special values.

#[cfg(test)]
mod accuracy;
mod inverse;
mod ops;
mod power;

use acc_lang::builtins::Builtin;
use acc_lang::ir::ScalarType;

use crate::cx::Cx;
use crate::fx::{FnKind, Fx};
use crate::plan::{Mode, Plan};
use crate::ptx::{f64_literal, Class, Reg};
use crate::Result;

use ops::{Ops, OpsExt};

/// A function of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum MathFn {
    Exp,
    Exp2,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Sinh,
    Cosh,
    Tanh,
    Hypot,
    Fmod,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Pow,
    Cbrt,
    /// The reduction of `sin`, `cos`, `tan`: `|x| = n pi/2 + y` (not a built-in).
    RemPio2,
}

impl MathFn {
    pub(crate) fn of(b: Builtin) -> Option<MathFn> {
        Some(match b {
            Builtin::Exp => MathFn::Exp,
            Builtin::Exp2 => MathFn::Exp2,
            Builtin::Expm1 => MathFn::Expm1,
            Builtin::Log => MathFn::Log,
            Builtin::Log2 => MathFn::Log2,
            Builtin::Log10 => MathFn::Log10,
            Builtin::Log1p => MathFn::Log1p,
            Builtin::Sinh => MathFn::Sinh,
            Builtin::Cosh => MathFn::Cosh,
            Builtin::Tanh => MathFn::Tanh,
            Builtin::Hypot => MathFn::Hypot,
            Builtin::Fmod => MathFn::Fmod,
            Builtin::Sin => MathFn::Sin,
            Builtin::Cos => MathFn::Cos,
            Builtin::Tan => MathFn::Tan,
            Builtin::Asin => MathFn::Asin,
            Builtin::Acos => MathFn::Acos,
            Builtin::Atan => MathFn::Atan,
            Builtin::Atan2 => MathFn::Atan2,
            Builtin::Pow => MathFn::Pow,
            Builtin::Cbrt => MathFn::Cbrt,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::Expm1 => "expm1",
            MathFn::Log => "log",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Log1p => "log1p",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Tanh => "tanh",
            MathFn::Hypot => "hypot",
            MathFn::Fmod => "fmod",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Atan2 => "atan2",
            MathFn::Pow => "pow",
            MathFn::Cbrt => "cbrt",
            MathFn::RemPio2 => "rem_pio2",
        }
    }

    pub(crate) fn arity(self) -> usize {
        match self {
            MathFn::Hypot | MathFn::Fmod | MathFn::Atan2 | MathFn::Pow => 2,
            _ => 1,
        }
    }

    /// The helper's PTX name.
    pub(crate) fn symbol(self) -> String {
        format!("acc_math_{}", self.name())
    }

    fn header(self) -> String {
        if self == MathFn::RemPio2 {
            // n (u32) at 0, y0 at 8, y1 at 16.
            return format!(
                ".func (.param .align 8 .b8 r[24]) {} (.param .f64 x)",
                self.symbol()
            );
        }
        let params = if self.arity() == 2 {
            ".param .f64 x, .param .f64 y"
        } else {
            ".param .f64 x"
        };
        format!(".func (.param .f64 r) {} ({params})", self.symbol())
    }

    /// The helpers this one calls.
    fn calls(self) -> &'static [MathFn] {
        match self {
            MathFn::Log1p => &[MathFn::Log],
            MathFn::Sinh => &[MathFn::Expm1, MathFn::Exp],
            MathFn::Cosh => &[MathFn::Exp],
            MathFn::Tanh => &[MathFn::Expm1],
            MathFn::Sin | MathFn::Cos | MathFn::Tan => &[MathFn::RemPio2],
            MathFn::Atan2 => &[MathFn::Atan],
            _ => &[],
        }
    }
}

/// Constants.
const LOG2E: f64 = std::f64::consts::LOG2_E;
/// `ln 2` and `1/ln 2`, `1/ln 10`, `log10 2` as double-doubles (hi, lo).
const LN2: (f64, f64) = (std::f64::consts::LN_2, 2.3190468138462996e-17);
const INV_LN2: (f64, f64) = (std::f64::consts::LOG2_E, 2.0355273740931033e-17);
const INV_LN10: (f64, f64) = (std::f64::consts::LOG10_E, 1.098319650216765e-17);
const LOG10_2: (f64, f64) = (std::f64::consts::LOG10_2, -2.8037281277851704e-18);
/// fdlibm's `ln2_hi` (trailing zeros: `k * ln2_hi` is exact) and `ln2_lo`, by their bits.
const FDLIBM_LN2: (u64, u64) = (0x3fe62e42fee00000, 0x3dea39ef35793c76);
/// fdlibm's `log` polynomial `Lg1`..`Lg7`, by their bits (6.666666666666735130e-01, …).
const LG: [u64; 7] = [
    0x3fe5555555555593,
    0x3fd999999997fa04,
    0x3fd2492494229359,
    0x3fcc71c51d8e78af,
    0x3fc7466496cb03de,
    0x3fc39a09d078c69f,
    0x3fc2f112df3e5244,
];
/// Beyond these, `exp` overflows or underflows to 0.
const EXP_MAX: f64 = 709.782712893384;
const EXP_MIN: f64 = -745.1332191019412;

/// `pi/2` in four parts, the first three of 33 significant bits (so that `n * P` is exact for
/// `n < 2^20`), by their bits; `pi/2` as a double-double; `2/pi`; `pi/4`.
const PIO2_PARTS: [u64; 4] = [
    0x3ff921fb54400000,
    0x3dd0b4611a600000,
    0x3ba3198a2e000000,
    0x397b839a252049c1,
];
const PIO2: (u64, u64) = (0x3ff921fb54442d18, 0x3c91a62633145c07);
const INV_PIO2: u64 = 0x3fe45f306dc9c883;
const PIO4: u64 = 0x3fe921fb54442d18;
/// Below this, `|x|` is reduced with `PIO2_PARTS` (`n < 2^20`); above, by Payne-Hanek.
const MEDIUM_LIMIT: f64 = 1.6e6;
/// The bits of `2/pi` (after a word of zeros), for Payne-Hanek reduction.
const TWO_OVER_PI: [u64; 26] = [
    0x0000000000000000,
    0xa2f9836e4e441529,
    0xfc2757d1f534ddc0,
    0xdb6295993c439041,
    0xfe5163abdebbc561,
    0xb7246e3a424dd2e0,
    0x06492eea09d1921c,
    0xfe1deb1cb129a73e,
    0xe88235f52ebb4484,
    0xe99c7026b45f7e41,
    0x3991d639835339f4,
    0x9c845f8bbdf9283b,
    0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f,
    0x6d367ecf27cb09b7,
    0x4f463f669e5fea2d,
    0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea,
    0x6bfb5fb11f8d5d08,
    0x56033046fc7b6bab,
    0xf0cfbc209af4361d,
    0xa9e391615ee61b08,
    0x6599855f14a06840,
    0x8dffd8804d732731,
    0x06061556ca73a8c9,
    0x60e27bc08c6b47c4,
];

fn factorial(n: u32) -> f64 {
    (1..=n).map(f64::from).product()
}

impl Cx<'_> {
    /// The helper of `f` (and the helpers it calls), generated on first use: its name.
    pub(crate) fn math(&mut self, f: MathFn) -> Result<String> {
        if self.first_use(f.symbol()) {
            for &g in f.calls() {
                self.math(g)?;
            }
            let text = emit_helper(self, f)?;
            self.push_definition(format!("{};\n", f.header()), text);
        }
        Ok(f.symbol())
    }
}

fn emit_helper(cx: &mut Cx<'_>, f: MathFn) -> Result<String> {
    let mut fx = Fx::new(cx, FnKind::Routine, Plan::no_loops(Mode::Thread));
    let x = fx.fresh(Class::F64);
    fx.ins(format!("ld.param.f64 {x}, [x]"));
    let y = if f.arity() == 2 {
        let y = fx.fresh(Class::F64);
        fx.ins(format!("ld.param.f64 {y}, [y]"));
        y
    } else {
        x
    };
    if f == MathFn::RemPio2 {
        fx.m_rem_pio2(x);
        fx.ins("ret");
        let text = format!(
            "{} \n{{\n{}{}}}\n",
            f.header(),
            fx.declarations(),
            fx.take_code()
        );
        cx.globals.push(format!(
            ".global .align 8 .u64 acc_two_over_pi[{}] = {{{}}};\n",
            TWO_OVER_PI.len(),
            TWO_OVER_PI
                .iter()
                .map(|w| format!("0x{w:016X}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return Ok(text);
    }
    let r = match f {
        MathFn::Sin | MathFn::Cos | MathFn::Tan => fx.m_trig(x, f),
        MathFn::RemPio2 => unreachable!("generated above"),
        MathFn::Exp => fx.m_exp(x),
        MathFn::Exp2 => fx.m_exp2(x),
        MathFn::Expm1 => fx.m_expm1(x),
        MathFn::Log | MathFn::Log2 | MathFn::Log10 => fx.m_log(x, f),
        MathFn::Log1p => fx.m_log1p(x),
        MathFn::Sinh => fx.m_sinh(x),
        MathFn::Cosh => fx.m_cosh(x),
        MathFn::Tanh => fx.m_tanh(x),
        MathFn::Hypot => fx.m_hypot(x, y),
        MathFn::Fmod => fx.m_fmod(x, y),
        MathFn::Asin => inverse::asin(&mut fx, x),
        MathFn::Acos => inverse::acos(&mut fx, x),
        MathFn::Atan => inverse::atan(&mut fx, x),
        // The first argument is `y`: `atan2(y, x)`.
        MathFn::Atan2 => inverse::atan2(&mut fx, x, y),
        MathFn::Pow => power::pow(&mut fx, x, y),
        MathFn::Cbrt => power::cbrt(&mut fx, x),
    };
    fx.ins(format!("st.param.f64 [r], {r}"));
    fx.ins("ret");
    Ok(format!(
        "{} \n{{\n{}{}}}\n",
        f.header(),
        fx.declarations(),
        fx.take_code()
    ))
}

/// Arithmetic on `f64` registers, for the helpers' bodies.
impl Fx<'_, '_> {
    fn d(&mut self, v: f64) -> Reg {
        self.constant(ScalarType::F64, &f64_literal(v))
    }

    fn op(&mut self, inst: &str, args: &[Reg]) -> Reg {
        let d = self.fresh(Class::F64);
        let list: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        self.ins(format!("{inst} {d}, {}", list.join(", ")));
        d
    }

    fn cmp(&mut self, c: &str, a: Reg, b: Reg) -> Reg {
        let p = self.fresh(Class::Pred);
        self.ins(format!("setp.{c}.f64 {p}, {a}, {b}"));
        p
    }

    /// `2^k` for an integer `k` (s32) in `[-1022, 1023]`.
    fn pow2(&mut self, k: Reg) -> Reg {
        let e = self.fresh(Class::B32);
        self.ins(format!("add.s32 {e}, {k}, 1023"));
        let w = self.fresh(Class::B64);
        self.ins(format!("cvt.u64.u32 {w}, {e}"));
        self.ins(format!("shl.b64 {w}, {w}, 52"));
        let d = self.fresh(Class::F64);
        self.ins(format!("mov.b64 {d}, {w}"));
        d
    }

    /// `p * 2^k` for `k` (s32) in `[-2044, 2046]`, in two steps so that the result rounds
    /// once.
    fn scale(&mut self, p: Reg, k: Reg) -> Reg {
        let h = self.fresh(Class::B32);
        self.ins(format!("shr.s32 {h}, {k}, 1"));
        let rest = self.fresh(Class::B32);
        self.ins(format!("sub.s32 {rest}, {k}, {h}"));
        let a = self.pow2(h);
        let b = self.pow2(rest);
        let t = self.mul(p, a);
        self.mul(t, b)
    }

    /// An integral `f64` as an s32.
    fn integral_s32(&mut self, k: Reg) -> Reg {
        let i = self.fresh(Class::B32);
        self.ins(format!("cvt.rzi.s32.f64 {i}, {k}"));
        i
    }

    fn call_math(&mut self, f: MathFn, x: Reg) -> Reg {
        let d = self.fresh(Class::F64);
        self.open_scope();
        self.ins(".param .f64 m_x");
        self.ins(".param .f64 m_r");
        self.ins(format!("st.param.f64 [m_x], {x}"));
        self.ins(format!("call (m_r), {}, (m_x)", f.symbol()));
        self.ins(format!("ld.param.f64 {d}, [m_r]"));
        self.close_scope();
        d
    }

    /// `x - k ln2` for an integral `k`, by `fma` with the two parts of `ln2`.
    fn reduce_ln2(&mut self, x: Reg, k: Reg) -> Reg {
        let nk = self.neg(k);
        let hi = self.d(LN2.0);
        let lo = self.d(LN2.1);
        let r = self.fma(nk, hi, x);
        self.fma(nk, lo, r)
    }

    fn m_exp(&mut self, x: Reg) -> Reg {
        let log2e = self.d(LOG2E);
        let t = self.mul(x, log2e);
        let k = self.rint(t);
        let r = self.reduce_ln2(x, k);
        let c: Vec<f64> = (0..=13).map(|n| 1.0 / factorial(n)).collect();
        let p = self.horner(r, &c);
        let ki = self.integral_s32(k);
        let v = self.scale(p, ki);
        self.exp_limits(x, v, EXP_MAX, EXP_MIN)
    }

    /// `v`, except `inf` above `max`, 0 below `min`, and NaN for NaN.
    fn exp_limits(&mut self, x: Reg, v: Reg, max: f64, min: f64) -> Reg {
        let (mx, mn) = (self.d(max), self.d(min));
        let inf = self.d(f64::INFINITY);
        let zero = self.d(0.0);
        let over = self.cmp("gt", x, mx);
        let v = self.sel(over, inf, v);
        let under = self.cmp("lt", x, mn);
        let v = self.sel(under, zero, v);
        let nan = self.is_nan(x);
        self.sel(nan, x, v)
    }

    fn m_exp2(&mut self, x: Reg) -> Reg {
        let k = self.rint(x);
        let r = self.sub(x, k);
        let hi = self.d(LN2.0);
        let lo = self.d(LN2.1);
        let th = self.mul(r, hi);
        let nth = self.neg(th);
        let tl = self.fma(r, hi, nth);
        let tl = self.fma(r, lo, tl);
        let c: Vec<f64> = (0..=13).map(|n| 1.0 / factorial(n)).collect();
        let p = self.horner(th, &c);
        let p = self.fma(p, tl, p);
        let ki = self.integral_s32(k);
        let v = self.scale(p, ki);
        // From 1024 on the result overflows (above the largest double below 1024); below
        // -1075 it rounds to 0.
        let below_1024 = f64::from_bits(1024f64.to_bits() - 1);
        self.exp_limits(x, v, below_1024, -1075.0)
    }

    fn m_expm1(&mut self, x: Reg) -> Reg {
        let ax = self.abs(x);
        let ln2 = self.d(std::f64::consts::LN_2);
        let small = self.cmp("le", ax, ln2);
        let log2e = self.d(LOG2E);
        let t = self.mul(x, log2e);
        let k = self.rint(t);
        let zero = self.d(0.0);
        let k = self.sel(small, zero, k);
        let r = self.reduce_ln2(x, k);
        // q = r + r^2 (1/2! + r/3! + … + r^16/18!)
        let c: Vec<f64> = (2..=18).map(|n| 1.0 / factorial(n)).collect();
        let p = self.horner(r, &c);
        let pr = self.mul(p, r);
        let q = self.fma(pr, r, r);
        let ki = self.integral_s32(k);
        // 2^k (1 + q) - 1 = 2^k q + (2^k - 1), exact 2^k - 1 for the k here (<= 1023);
        // k = 1024 (just below overflow) scales 1 + q instead.
        let clamped = self.fresh(Class::B32);
        self.ins(format!("min.s32 {clamped}, {ki}, 1023"));
        let two_k = self.pow2(clamped);
        let one = self.d(1.0);
        let tm1 = self.sub(two_k, one);
        let mid = self.fma(two_k, q, tm1);
        let q1 = self.add(one, q);
        let big = self.scale(q1, ki);
        let is_big = self.fresh(Class::Pred);
        self.ins(format!("setp.gt.s32 {is_big}, {ki}, 1023"));
        let v = self.sel(is_big, big, mid);
        let is_zero = self.fresh(Class::Pred);
        self.ins(format!("setp.eq.s32 {is_zero}, {ki}, 0"));
        let v = self.sel(is_zero, q, v);
        let (mx, mn) = (self.d(EXP_MAX), self.d(-40.0));
        let inf = self.d(f64::INFINITY);
        let m1 = self.d(-1.0);
        let over = self.cmp("gt", x, mx);
        let v = self.sel(over, inf, v);
        let under = self.cmp("lt", x, mn);
        let v = self.sel(under, m1, v);
        let nan = self.is_nan(x);
        let v = self.sel(nan, x, v);
        // expm1(+-0) = +-0.
        let zero = self.d(0.0);
        let is_zero = self.cmp("eq", x, zero);
        self.sel(is_zero, x, v)
    }

    /// fdlibm's reduction of a positive finite `x = 2^k (1 + f)`, `sqrt(2)/2 <= 1 + f <
    /// sqrt(2)`: `(k, f, s, R, hfsq)` with `log(1 + f) = f - (hfsq - s (hfsq + R))`.
    fn log_parts(&mut self, x: Reg) -> (Reg, Reg, Reg, Reg, Reg) {
        let b = self.fresh(Class::B64);
        self.ins(format!("mov.b64 {b}, {x}"));
        // Subnormals: scaled by 2^54 first.
        let sub = self.fresh(Class::Pred);
        self.ins(format!("setp.lt.u64 {sub}, {b}, 4503599627370496"));
        let two54 = self.d(2f64.powi(54));
        let scaled = self.mul(x, two54);
        let xs = self.sel(sub, scaled, x);
        self.ins(format!("mov.b64 {b}, {xs}"));
        let e = self.fresh(Class::B64);
        self.ins(format!("shr.u64 {e}, {b}, 52"));
        let k = self.fresh(Class::B32);
        self.ins(format!("cvt.u32.u64 {k}, {e}"));
        self.ins(format!("sub.s32 {k}, {k}, 1023"));
        let adj = self.fresh(Class::B32);
        self.ins(format!("selp.b32 {adj}, 54, 0, {sub}"));
        self.ins(format!("sub.s32 {k}, {k}, {adj}"));
        let mb = self.fresh(Class::B64);
        self.ins(format!("and.b64 {mb}, {b}, 4503599627370495"));
        self.ins(format!("or.b64 {mb}, {mb}, 4607182418800017408"));
        let m = self.fresh(Class::F64);
        self.ins(format!("mov.b64 {m}, {mb}"));
        let sqrt2 = self.d(std::f64::consts::SQRT_2);
        let big = self.cmp("gt", m, sqrt2);
        let half = self.d(0.5);
        let mh = self.mul(m, half);
        let m = self.sel(big, mh, m);
        let inc = self.fresh(Class::B32);
        self.ins(format!("selp.b32 {inc}, 1, 0, {big}"));
        self.ins(format!("add.s32 {k}, {k}, {inc}"));
        let dk = self.fresh(Class::F64);
        self.ins(format!("cvt.rn.f64.s32 {dk}, {k}"));
        let one = self.d(1.0);
        let f = self.sub(m, one);
        let two = self.d(2.0);
        let tf = self.add(two, f);
        let s = self.div(f, tf);
        let z = self.mul(s, s);
        let w = self.mul(z, z);
        let lg: Vec<Reg> = LG.iter().map(|&c| self.d(f64::from_bits(c))).collect();
        // t1 = w (Lg2 + w (Lg4 + w Lg6)), t2 = z (Lg1 + w (Lg3 + w (Lg5 + w Lg7))),
        // in fdlibm's order (separate roundings).
        let a = self.mul(w, lg[5]);
        let a = self.add(lg[3], a);
        let a = self.mul(w, a);
        let a = self.add(lg[1], a);
        let t1 = self.mul(w, a);
        let b2 = self.mul(w, lg[6]);
        let b2 = self.add(lg[4], b2);
        let b2 = self.mul(w, b2);
        let b2 = self.add(lg[2], b2);
        let b2 = self.mul(w, b2);
        let b2 = self.add(lg[0], b2);
        let t2 = self.mul(z, b2);
        let r = self.add(t2, t1);
        let hf = self.mul(half, f);
        let hfsq = self.mul(hf, f);
        (dk, f, s, r, hfsq)
    }

    /// `v` for positive finite `x`; NaN below 0 and for NaN, `-inf` at 0, `inf` at `inf`.
    fn log_limits(&mut self, x: Reg, v: Reg) -> Reg {
        let zero = self.d(0.0);
        let inf = self.d(f64::INFINITY);
        let ninf = self.d(f64::NEG_INFINITY);
        let nan = self.d(f64::NAN);
        let at_inf = self.cmp("eq", x, inf);
        let v = self.sel(at_inf, inf, v);
        let at_zero = self.cmp("eq", x, zero);
        let v = self.sel(at_zero, ninf, v);
        // `ltu`: below zero, or NaN.
        let bad = self.cmp("ltu", x, zero);
        self.sel(bad, nan, v)
    }

    fn m_log(&mut self, x: Reg, f: MathFn) -> Reg {
        let (dk, fr, s, r, hfsq) = self.log_parts(x);
        let hr = self.add(hfsq, r);
        let shr = self.mul(s, hr);
        let v = match f {
            MathFn::Log => {
                // dk ln2_hi - ((hfsq - (s (hfsq + R) + dk ln2_lo)) - f)
                let hi = self.d(f64::from_bits(FDLIBM_LN2.0));
                let lo = self.d(f64::from_bits(FDLIBM_LN2.1));
                let klo = self.mul(dk, lo);
                let a = self.add(shr, klo);
                let a = self.sub(hfsq, a);
                let a = self.sub(a, fr);
                let khi = self.mul(dk, hi);
                self.sub(khi, a)
            }
            _ => {
                // log(1 + f) = f - c, times 1/ln2 or 1/ln10 as a double-double.
                let c = self.sub(hfsq, shr);
                let (inv, k_factor) = if f == MathFn::Log2 {
                    (INV_LN2, None)
                } else {
                    (INV_LN10, Some(LOG10_2))
                };
                let ih = self.d(inv.0);
                let il = self.d(inv.1);
                let t = self.mul(c, ih);
                let nt = self.neg(t);
                let y = self.fma(fr, ih, nt);
                let lm = self.sub(fr, c);
                let y = self.fma(lm, il, y);
                match k_factor {
                    None => self.add(dk, y),
                    Some((h, l)) => {
                        let (h, l) = (self.d(h), self.d(l));
                        let y = self.fma(dk, l, y);
                        self.fma(dk, h, y)
                    }
                }
            }
        };
        self.log_limits(x, v)
    }

    fn m_log1p(&mut self, x: Reg) -> Reg {
        let one = self.d(1.0);
        let u = self.add(one, x);
        let um1 = self.sub(u, one);
        let d = self.sub(x, um1);
        let c = self.div(d, u);
        let l = self.call_math(MathFn::Log, u);
        let v = self.add(l, c);
        let exact = self.cmp("eq", u, one);
        let v = self.sel(exact, x, v);
        let inf = self.d(f64::INFINITY);
        let at_inf = self.cmp("eq", x, inf);
        let v = self.sel(at_inf, inf, v);
        let m1 = self.d(-1.0);
        let ninf = self.d(f64::NEG_INFINITY);
        let at_m1 = self.cmp("eq", x, m1);
        let v = self.sel(at_m1, ninf, v);
        let nan = self.d(f64::NAN);
        let bad = self.cmp("ltu", x, m1);
        self.sel(bad, nan, v)
    }

    fn m_sinh(&mut self, x: Reg) -> Reg {
        let a = self.abs(x);
        let d = self.fresh(Class::F64);
        let done = self.label("sinh_done");
        let not_small = self.label("sinh_mid");
        let not_mid = self.label("sinh_big");
        let one = self.d(1.0);
        let small = self.cmp("lt", a, one);
        self.ins(format!("@!{small} bra {not_small}"));
        // Below 1: x + x^3 (1/3! + x^2/5! + … + x^16/17!).
        let z = self.mul(x, x);
        let c: Vec<f64> = (1..=8).map(|n| 1.0 / factorial(2 * n + 1)).collect();
        let p = self.horner(z, &c);
        let xz = self.mul(x, z);
        let v = self.fma(xz, p, x);
        self.ins(format!("mov.f64 {d}, {v}"));
        self.ins(format!("bra {done}"));
        self.place(&not_small);
        let lim = self.d(22.0);
        let mid = self.cmp("lt", a, lim);
        self.ins(format!("@!{mid} bra {not_mid}"));
        // Below 22: (e + e / (e + 1)) / 2, e = expm1(|x|).
        let e = self.call_math(MathFn::Expm1, a);
        let e1 = self.add(e, one);
        let q = self.div(e, e1);
        let s = self.add(e, q);
        let half = self.d(0.5);
        let h = self.mul(half, s);
        let v = self.copysign(h, x);
        self.ins(format!("mov.f64 {d}, {v}"));
        self.ins(format!("bra {done}"));
        self.place(&not_mid);
        let v = self.half_exp(a);
        let v = self.copysign(v, x);
        self.ins(format!("mov.f64 {d}, {v}"));
        self.place(&done);
        let nan = self.is_nan(x);
        self.sel(nan, x, d)
    }

    /// `e^a / 2` for `a >= 22`, without overflowing before the end.
    fn half_exp(&mut self, a: Reg) -> Reg {
        let half = self.d(0.5);
        let lim = self.d(EXP_MAX);
        let e = self.call_math(MathFn::Exp, a);
        let near = self.mul(half, e);
        let ha = self.mul(half, a);
        let w = self.call_math(MathFn::Exp, ha);
        let hw = self.mul(half, w);
        let far = self.mul(hw, w);
        let over = self.cmp("ge", a, lim);
        self.sel(over, far, near)
    }

    fn m_cosh(&mut self, x: Reg) -> Reg {
        let a = self.abs(x);
        let d = self.fresh(Class::F64);
        let done = self.label("cosh_done");
        let big = self.label("cosh_big");
        let lim = self.d(22.0);
        let small = self.cmp("lt", a, lim);
        self.ins(format!("@!{small} bra {big}"));
        let e = self.call_math(MathFn::Exp, a);
        let half = self.d(0.5);
        let he = self.mul(half, e);
        let inv = self.div(half, e);
        let v = self.add(he, inv);
        self.ins(format!("mov.f64 {d}, {v}"));
        self.ins(format!("bra {done}"));
        self.place(&big);
        let v = self.half_exp(a);
        self.ins(format!("mov.f64 {d}, {v}"));
        self.place(&done);
        let nan = self.is_nan(x);
        self.sel(nan, x, d)
    }

    fn m_tanh(&mut self, x: Reg) -> Reg {
        let a = self.abs(x);
        let one = self.d(1.0);
        let two = self.d(2.0);
        let ge1 = self.cmp("ge", a, one);
        // t = expm1(2|x|) from 1 on (z = 1 - 2/(t + 2)), expm1(-2|x|) below (z = -t/(t + 2)).
        let a2 = self.mul(two, a);
        let na2 = self.neg(a2);
        let arg = self.sel(ge1, a2, na2);
        let t = self.call_math(MathFn::Expm1, arg);
        let t2 = self.add(t, two);
        let q = self.div(two, t2);
        let big = self.sub(one, q);
        let nt = self.neg(t);
        let small = self.div(nt, t2);
        let z = self.sel(ge1, big, small);
        let lim = self.d(22.0);
        let sat = self.cmp("ge", a, lim);
        let z = self.sel(sat, one, z);
        let v = self.copysign(z, x);
        let tiny = self.d(2f64.powi(-55));
        let is_tiny = self.cmp("lt", a, tiny);
        let v = self.sel(is_tiny, x, v);
        let nan = self.is_nan(x);
        self.sel(nan, x, v)
    }

    fn m_hypot(&mut self, x: Reg, y: Reg) -> Reg {
        let ax = self.abs(x);
        let ay = self.abs(y);
        let m = self.op("max.f64", &[ax, ay]);
        // The larger's exponent e (at least -1022): both scaled by 2^-e.
        let b = self.fresh(Class::B64);
        self.ins(format!("mov.b64 {b}, {m}"));
        self.ins(format!("shr.u64 {b}, {b}, 52"));
        let e = self.fresh(Class::B32);
        self.ins(format!("cvt.u32.u64 {e}, {b}"));
        self.ins(format!("sub.s32 {e}, {e}, 1023"));
        self.ins(format!("max.s32 {e}, {e}, -1022"));
        let ne = self.fresh(Class::B32);
        self.ins(format!("neg.s32 {ne}, {e}"));
        let one = self.d(1.0);
        let sc = self.scale(one, ne);
        let a = self.mul(ax, sc);
        let bb = self.mul(ay, sc);
        let b2 = self.mul(bb, bb);
        let s = self.fma(a, a, b2);
        let r = self.op("sqrt.rn.f64", &[s]);
        let v = self.scale(r, e);
        let zero = self.d(0.0);
        let is_zero = self.cmp("eq", m, zero);
        let v = self.sel(is_zero, zero, v);
        // NaN unless the other is infinite: C's hypot(inf, nan) is inf.
        let nx = self.is_nan(x);
        let ny = self.is_nan(y);
        let any = self.fresh(Class::Pred);
        self.ins(format!("or.pred {any}, {nx}, {ny}"));
        let nan = self.d(f64::NAN);
        let v = self.sel(any, nan, v);
        let inf = self.d(f64::INFINITY);
        let ix = self.cmp("eq", ax, inf);
        let iy = self.cmp("eq", ay, inf);
        let either = self.fresh(Class::Pred);
        self.ins(format!("or.pred {either}, {ix}, {iy}"));
        self.sel(either, inf, v)
    }

    fn m_fmod(&mut self, x: Reg, y: Reg) -> Reg {
        let ax = self.abs(x);
        let ay = self.abs(y);
        let r = self.fresh(Class::F64);
        self.ins(format!("mov.f64 {r}, {ax}"));
        let top = self.label("fmod");
        let done = self.label("fmod_done");
        let slow = self.label("fmod_slow");
        let sub = self.label("fmod_sub");
        let t = self.fresh(Class::F64);
        // Only finite x and nonzero, non-NaN y loop (the others are selected at the end).
        let inf = self.d(f64::INFINITY);
        let zero = self.d(0.0);
        let x_ok = self.cmp("lt", ax, inf);
        let y_ok = self.cmp("gt", ay, zero);
        let y_fin = self.cmp("lt", ay, inf);
        let ok = self.fresh(Class::Pred);
        self.ins(format!("and.pred {ok}, {x_ok}, {y_ok}"));
        self.ins(format!("and.pred {ok}, {ok}, {y_fin}"));
        self.ins(format!("@!{ok} bra {done}"));
        let (br, by) = (self.fresh(Class::B64), self.fresh(Class::B64));
        let (er, ey) = (self.fresh(Class::B64), self.fresh(Class::B64));
        self.ins(format!("mov.b64 {by}, {ay}"));
        self.ins(format!("shr.u64 {ey}, {by}, 52"));
        self.place(&top);
        let below = self.cmp("lt", r, ay);
        self.ins(format!("@{below} bra {done}"));
        self.ins(format!("mov.b64 {br}, {r}"));
        self.ins(format!("shr.u64 {er}, {br}, 52"));
        let (zr, zy) = (self.fresh(Class::Pred), self.fresh(Class::Pred));
        self.ins(format!("setp.eq.u64 {zr}, {er}, 0"));
        self.ins(format!("setp.eq.u64 {zy}, {ey}, 0"));
        let z = self.fresh(Class::Pred);
        self.ins(format!("or.pred {z}, {zr}, {zy}"));
        self.ins(format!("@{z} bra {slow}"));
        // |y| with the remainder's exponent, halved if that exceeds the remainder.
        let tb = self.fresh(Class::B64);
        self.ins(format!("and.b64 {tb}, {by}, 4503599627370495"));
        let eb = self.fresh(Class::B64);
        self.ins(format!("shl.b64 {eb}, {er}, 52"));
        self.ins(format!("or.b64 {tb}, {tb}, {eb}"));
        self.ins(format!("mov.b64 {t}, {tb}"));
        let over = self.cmp("gt", t, r);
        let half = self.d(0.5);
        self.ins(format!("@{over} mul.rn.f64 {t}, {t}, {half}"));
        self.ins(format!("bra {sub}"));
        // Subnormals: double |y| while it stays within the remainder.
        self.place(&slow);
        self.ins(format!("mov.f64 {t}, {ay}"));
        let grow = self.label("fmod_grow");
        let grown = self.label("fmod_grown");
        self.place(&grow);
        let t2 = self.add(t, t);
        let le = self.cmp("le", t2, r);
        self.ins(format!("@!{le} bra {grown}"));
        self.ins(format!("mov.f64 {t}, {t2}"));
        self.ins(format!("bra {grow}"));
        self.place(&grown);
        self.place(&sub);
        self.ins(format!("sub.rn.f64 {r}, {r}, {t}"));
        self.ins(format!("bra {top}"));
        self.place(&done);
        let v = self.copysign(r, x);
        // NaN for NaN operands, infinite x or zero y; x for infinite y.
        let iy = self.cmp("eq", ay, inf);
        let v = self.sel(iy, x, v);
        let nan = self.d(f64::NAN);
        let bad_x = self.cmp("equ", ax, inf);
        let v = self.sel(bad_x, nan, v);
        let bad_y = self.cmp("equ", ay, zero);
        self.sel(bad_y, nan, v)
    }

    fn dbits(&mut self, b: u64) -> Reg {
        self.d(f64::from_bits(b))
    }

    /// `a + b` as a double-double `(s, err)` (Knuth's two-sum).
    fn two_sum(&mut self, a: Reg, b: Reg) -> (Reg, Reg) {
        let s = self.add(a, b);
        let bb = self.sub(s, a);
        let sb = self.sub(s, bb);
        let da = self.sub(a, sb);
        let db = self.sub(b, bb);
        (s, self.add(da, db))
    }

    /// `rem_pio2(a)` for `a = |x|`: `a = n pi/2 + y0 + y1`, `|y0| <= pi/4`, stored in the
    /// return parameter (`n mod 4` as u32, `y0`, `y1`).
    fn m_rem_pio2(&mut self, a: Reg) {
        let (n, y0, y1) = (
            self.fresh(Class::B32),
            self.fresh(Class::F64),
            self.fresh(Class::F64),
        );
        let done = self.label("rem_done");
        let large = self.label("rem_large");
        let zero = self.d(0.0);
        // Small: nothing to reduce.
        self.ins(format!("mov.u32 {n}, 0"));
        self.ins(format!("mov.f64 {y0}, {a}"));
        self.ins(format!("mov.f64 {y1}, {zero}"));
        let pio4 = self.dbits(PIO4);
        let small = self.cmp("le", a, pio4);
        self.ins(format!("@{small} bra {done}"));
        let lim = self.d(MEDIUM_LIMIT);
        let medium = self.cmp("lt", a, lim);
        self.ins(format!("@!{medium} bra {large}"));
        {
            // n = rint(a 2/pi); a - n (P1 + P2 + P3 + P4), the first three products exact.
            let inv = self.dbits(INV_PIO2);
            let t = self.mul(a, inv);
            let k = self.rint(t);
            let nk = self.neg(k);
            let p: Vec<Reg> = PIO2_PARTS.iter().map(|&b| self.dbits(b)).collect();
            let r1 = self.fma(nk, p[0], a);
            let q2 = self.mul(nk, p[1]);
            let (s, e) = self.two_sum(r1, q2);
            let q3 = self.mul(nk, p[2]);
            let (t, e2) = self.two_sum(s, q3);
            let q4 = self.mul(k, p[3]);
            let nq4 = self.neg(q4);
            let err4 = self.fma(k, p[3], nq4);
            let lo = self.add(e, e2);
            let lo = self.sub(lo, q4);
            let lo = self.sub(lo, err4);
            let v0 = self.add(t, lo);
            let dv = self.sub(v0, t);
            let v1 = self.sub(lo, dv);
            self.ins(format!("mov.f64 {y0}, {v0}"));
            self.ins(format!("mov.f64 {y1}, {v1}"));
            self.ins(format!("cvt.rzi.u32.f64 {n}, {k}"));
            self.ins(format!("bra {done}"));
        }
        self.place(&large);
        {
            // Payne-Hanek: a = m 2^(e-52); the 192 bits of 2/pi from weight 2^(53-e) on,
            // times m, modulo 2^192, are (a 2/pi mod 4) 2^190.
            let b = self.fresh(Class::B64);
            self.ins(format!("mov.b64 {b}, {a}"));
            let e = self.fresh(Class::B64);
            self.ins(format!("shr.u64 {e}, {b}, 52"));
            let m = self.fresh(Class::B64);
            self.ins(format!("and.b64 {m}, {b}, 4503599627370495"));
            self.ins(format!("or.b64 {m}, {m}, 4503599627370496"));
            // The bit position of 2/pi's bit e - 53 in the table: e - 1023 + 10.
            let pos = self.fresh(Class::B32);
            self.ins(format!("cvt.u32.u64 {pos}, {e}"));
            self.ins(format!("sub.u32 {pos}, {pos}, 1013"));
            let (q, sh, rsh) = (
                self.fresh(Class::B32),
                self.fresh(Class::B32),
                self.fresh(Class::B32),
            );
            self.ins(format!("shr.u32 {q}, {pos}, 6"));
            self.ins(format!("and.b32 {sh}, {pos}, 63"));
            self.ins(format!("sub.u32 {rsh}, 64, {sh}"));
            let base = self.fresh(Class::B64);
            self.ins(format!("mov.u64 {base}, acc_two_over_pi"));
            let off = self.fresh(Class::B64);
            self.ins(format!("mul.wide.u32 {off}, {q}, 8"));
            self.ins(format!("add.u64 {base}, {base}, {off}"));
            let t: Vec<Reg> = (0..4)
                .map(|j| {
                    let r = self.fresh(Class::B64);
                    self.ins(format!("ld.global.nc.u64 {r}, [{base}+{}]", 8 * j));
                    r
                })
                .collect();
            // Shifts of 64 give 0 in PTX, so a zero `sh` needs no special case.
            let w: Vec<Reg> = (0..3)
                .map(|j| {
                    let (x, y) = (self.fresh(Class::B64), self.fresh(Class::B64));
                    self.ins(format!("shl.b64 {x}, {}, {sh}", t[j]));
                    self.ins(format!("shr.u64 {y}, {}, {rsh}", t[j + 1]));
                    self.ins(format!("or.b64 {x}, {x}, {y}"));
                    x
                })
                .collect();
            let (lo2, hi2, lo1, hi1, lo0) = (
                self.fresh(Class::B64),
                self.fresh(Class::B64),
                self.fresh(Class::B64),
                self.fresh(Class::B64),
                self.fresh(Class::B64),
            );
            self.ins(format!("mul.lo.u64 {lo2}, {m}, {}", w[2]));
            self.ins(format!("mul.hi.u64 {hi2}, {m}, {}", w[2]));
            self.ins(format!("mul.lo.u64 {lo1}, {m}, {}", w[1]));
            self.ins(format!("mul.hi.u64 {hi1}, {m}, {}", w[1]));
            self.ins(format!("mul.lo.u64 {lo0}, {m}, {}", w[0]));
            let (r0, r1, r2) = (
                self.fresh(Class::B64),
                self.fresh(Class::B64),
                self.fresh(Class::B64),
            );
            self.ins(format!("mov.b64 {r2}, {lo2}"));
            self.ins(format!("add.cc.u64 {r1}, {lo1}, {hi2}"));
            self.ins(format!("addc.u64 {r0}, {lo0}, {hi1}"));
            // The quadrant is the top two bits; the fraction the other 190, taken in
            // [-1/2, 1/2) (a fraction from 1/2 on counts toward the next quadrant).
            let nq = self.fresh(Class::B64);
            self.ins(format!("shr.u64 {nq}, {r0}, 62"));
            self.ins(format!("cvt.u32.u64 {n}, {nq}"));
            self.ins(format!("and.b64 {r0}, {r0}, 4611686018427387903"));
            let half = self.fresh(Class::B64);
            self.ins(format!("shr.u64 {half}, {r0}, 61"));
            let neg = self.fresh(Class::Pred);
            self.ins(format!("setp.ne.u64 {neg}, {half}, 0"));
            let pos_frac = self.label("rem_posfrac");
            self.ins(format!("@!{neg} bra {pos_frac}"));
            self.ins(format!("add.u32 {n}, {n}, 1"));
            self.ins(format!("sub.cc.u64 {r2}, 0, {r2}"));
            self.ins(format!("subc.cc.u64 {r1}, 0, {r1}"));
            self.ins(format!("subc.u64 {r0}, 0, {r0}"));
            self.ins(format!("and.b64 {r0}, {r0}, 4611686018427387903"));
            self.place(&pos_frac);
            // The fraction's first 128 bits (weight 2^-1 at bit 63 of `hi`).
            let (hi, lo, x1) = (
                self.fresh(Class::B64),
                self.fresh(Class::B64),
                self.fresh(Class::B64),
            );
            self.ins(format!("shl.b64 {hi}, {r0}, 2"));
            self.ins(format!("shr.u64 {x1}, {r1}, 62"));
            self.ins(format!("or.b64 {hi}, {hi}, {x1}"));
            self.ins(format!("shl.b64 {lo}, {r1}, 2"));
            self.ins(format!("shr.u64 {x1}, {r2}, 62"));
            self.ins(format!("or.b64 {lo}, {lo}, {x1}"));
            let (top, bot) = (self.fresh(Class::B64), self.fresh(Class::B64));
            self.ins(format!("shr.u64 {top}, {hi}, 32"));
            self.ins(format!("and.b64 {bot}, {hi}, 4294967295"));
            let (ft, fb, fl) = (
                self.fresh(Class::F64),
                self.fresh(Class::F64),
                self.fresh(Class::F64),
            );
            self.ins(format!("cvt.rn.f64.u64 {ft}, {top}"));
            self.ins(format!("cvt.rn.f64.u64 {fb}, {bot}"));
            self.ins(format!("cvt.rn.f64.u64 {fl}, {lo}"));
            let (s32, s64, s128) = (
                self.d(2f64.powi(-32)),
                self.d(2f64.powi(-64)),
                self.d(2f64.powi(-128)),
            );
            let ft = self.mul(ft, s32);
            let fb = self.mul(fb, s64);
            let fl = self.mul(fl, s128);
            let (sum, err) = self.two_sum(ft, fb);
            let low = self.add(err, fl);
            // times pi/2 as a double-double.
            let (ph, pl) = (self.dbits(PIO2.0), self.dbits(PIO2.1));
            let z0 = self.mul(sum, ph);
            let nz0 = self.neg(z0);
            let e0 = self.fma(sum, ph, nz0);
            let a1 = self.mul(sum, pl);
            let a1 = self.fma(low, ph, a1);
            let z1 = self.add(e0, a1);
            let v0 = self.add(z0, z1);
            let dv = self.sub(v0, z0);
            let v1 = self.sub(z1, dv);
            let nv0 = self.neg(v0);
            let nv1 = self.neg(v1);
            let v0 = self.sel(neg, nv0, v0);
            let v1 = self.sel(neg, nv1, v1);
            self.ins(format!("mov.f64 {y0}, {v0}"));
            self.ins(format!("mov.f64 {y1}, {v1}"));
        }
        self.place(&done);
        self.ins(format!("and.b32 {n}, {n}, 3"));
        self.ins(format!("st.param.b32 [r], {n}"));
        self.ins(format!("st.param.f64 [r+8], {y0}"));
        self.ins(format!("st.param.f64 [r+16], {y1}"));
    }

    /// `sin(y0 + y1)` for `|y0| <= pi/4`, `y1` the tail: Taylor to degree 21.
    fn k_sin(&mut self, y0: Reg, y1: Reg) -> Reg {
        let z = self.mul(y0, y0);
        let c: Vec<f64> = (1..=10)
            .map(|k| {
                let sign = if k % 2 == 1 { -1.0 } else { 1.0 };
                sign / factorial(2 * k + 1)
            })
            .collect();
        let p = self.horner(z, &c);
        let yz = self.mul(y0, z);
        let yzp = self.mul(yz, p);
        let (mh, one) = (self.d(-0.5), self.d(1.0));
        let c1 = self.fma(mh, z, one);
        let corr = self.fma(y1, c1, yzp);
        self.add(y0, corr)
    }

    /// `cos(y0 + y1)` for `|y0| <= pi/4`: Taylor to degree 22, `1 - z/2` recovered exactly.
    fn k_cos(&mut self, y0: Reg, y1: Reg) -> Reg {
        let z = self.mul(y0, y0);
        let c: Vec<f64> = (2..=11)
            .map(|k| {
                let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
                sign / factorial(2 * k)
            })
            .collect();
        let q = self.horner(z, &c);
        let half = self.d(0.5);
        let one = self.d(1.0);
        let hz = self.mul(half, z);
        let w = self.sub(one, hz);
        let back = self.sub(one, w);
        let lost = self.sub(back, hz);
        let zz = self.mul(z, z);
        let zzq = self.mul(zz, q);
        let yy = self.mul(y0, y1);
        let tail = self.sub(zzq, yy);
        let tail = self.add(lost, tail);
        self.add(w, tail)
    }

    /// `sin`, `cos` or `tan` of `x`.
    fn m_trig(&mut self, x: Reg, f: MathFn) -> Reg {
        let a = self.abs(x);
        let (n, y0, y1) = (
            self.fresh(Class::B32),
            self.fresh(Class::F64),
            self.fresh(Class::F64),
        );
        self.open_scope();
        self.ins(".param .f64 m_x");
        self.ins(".param .align 8 .b8 m_r[24]");
        self.ins(format!("st.param.f64 [m_x], {a}"));
        self.ins(format!("call (m_r), {}, (m_x)", MathFn::RemPio2.symbol()));
        self.ins(format!("ld.param.b32 {n}, [m_r]"));
        self.ins(format!("ld.param.f64 {y0}, [m_r+8]"));
        self.ins(format!("ld.param.f64 {y1}, [m_r+16]"));
        self.close_scope();
        let s = self.k_sin(y0, y1);
        let c = self.k_cos(y0, y1);
        let (ns, nc) = (self.neg(s), self.neg(c));
        let quadrant = |fx: &mut Self, q: u32| {
            let p = fx.fresh(Class::Pred);
            fx.ins(format!("setp.eq.u32 {p}, {n}, {q}"));
            p
        };
        let (q1, q2, q3) = (quadrant(self, 1), quadrant(self, 2), quadrant(self, 3));
        let v = match f {
            MathFn::Sin => {
                let v = self.sel(q1, c, s);
                let v = self.sel(q2, ns, v);
                self.sel(q3, nc, v)
            }
            MathFn::Cos => {
                let v = self.sel(q1, ns, c);
                let v = self.sel(q2, nc, v);
                self.sel(q3, s, v)
            }
            _ => {
                // tan: s/c in even quadrants, -c/s in odd ones.
                let even = self.div(s, c);
                let odd = self.div(nc, s);
                let odd_q = self.fresh(Class::Pred);
                self.ins(format!("or.pred {odd_q}, {q1}, {q3}"));
                self.sel(odd_q, odd, even)
            }
        };
        // sin and tan are odd: the sign of x flips the result's (-0.0 included).
        let v = if f == MathFn::Cos {
            v
        } else {
            let (bv, bx) = (self.fresh(Class::B64), self.fresh(Class::B64));
            self.ins(format!("mov.b64 {bv}, {v}"));
            self.ins(format!("mov.b64 {bx}, {x}"));
            self.ins(format!("and.b64 {bx}, {bx}, 0x8000000000000000"));
            self.ins(format!("xor.b64 {bv}, {bv}, {bx}"));
            let r = self.fresh(Class::F64);
            self.ins(format!("mov.b64 {r}, {bv}"));
            r
        };
        // NaN for infinite or NaN x.
        let fin = self.fresh(Class::Pred);
        self.ins(format!("testp.finite.f64 {fin}, {x}"));
        let nan = self.d(f64::NAN);
        self.sel(fin, v, nan)
    }

    /// A call of the library's `f` on evaluated arguments of type `s` (`f32` through `f64`).
    pub(crate) fn math_call(&mut self, f: MathFn, args: &[Reg], s: ScalarType) -> Result<Reg> {
        let name = self.cx().math(f)?;
        let wide: Vec<Reg> = args
            .iter()
            .map(|&a| {
                if s == ScalarType::F32 {
                    let d = self.fresh(Class::F64);
                    self.ins(format!("cvt.f64.f32 {d}, {a}"));
                    d
                } else {
                    a
                }
            })
            .collect();
        let r = self.fresh(Class::F64);
        self.open_scope();
        self.ins(".param .f64 m_x");
        if wide.len() == 2 {
            self.ins(".param .f64 m_y");
        }
        self.ins(".param .f64 m_r");
        self.ins(format!("st.param.f64 [m_x], {}", wide[0]));
        let args = if wide.len() == 2 {
            self.ins(format!("st.param.f64 [m_y], {}", wide[1]));
            "m_x, m_y"
        } else {
            "m_x"
        };
        self.ins(format!("call (m_r), {name}, ({args})"));
        self.ins(format!("ld.param.f64 {r}, [m_r]"));
        self.close_scope();
        if s == ScalarType::F32 {
            let d = self.fresh(Class::F32);
            self.ins(format!("cvt.rn.f32.f64 {d}, {r}"));
            Ok(d)
        } else {
            Ok(r)
        }
    }
}
