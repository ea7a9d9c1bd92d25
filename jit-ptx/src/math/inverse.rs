//! The inverse trigonometric functions, after fdlibm (`s_atan.c`, `e_atan2.c`, `e_asin.c`,
//! `e_acos.c`), branch-free:
//! - `atan`: `|x|` reduced to `[0, 7/16]` by `atan(x) = atan(c) + atan((x - c) / (1 + c x))`
//!   for `c` in `{1/2, 1, 3/2, inf}` (one division: the numerator and denominator are
//!   selected), `atan(c)` as a double-double, and fdlibm's odd polynomial of degree 23;
//! - `atan2(y, x)`: `atan(|y| / |x|)` plus the rounding error of the quotient (recovered by
//!   `fma`) times the derivative `1 / (1 + q^2)`, placed in its quadrant with `pi` as a
//!   double-double; the IEEE special cases (signed zeros, infinities, NaN) selected at the end;
//! - `asin`, `acos`: fdlibm's rational approximation `R(z)` of `(asin(s) - s) / s^3`, on
//!   `z = x^2` below 1/2 and `z = (1 - |x|) / 2`, `s = sqrt(z)` above (`asin x = pi/2 -
//!   2 asin s`, with `s` split in two for the middle range).

use super::ops::{Ops, OpsExt};
use super::MathFn;

/// `atan(c)` for `c = 1/2, 1, 3/2, inf`, as double-doubles (fdlibm's `atanhi`, `atanlo`).
const ATAN_HI: [u64; 4] = [
    0x3FDDAC670561BB4F,
    0x3FE921FB54442D18,
    0x3FEF730BD281F69B,
    0x3FF921FB54442D18,
];
const ATAN_LO: [u64; 4] = [
    0x3C7A2B7F222F65E2,
    0x3C81A62633145C07,
    0x3C7007887AF0CBBD,
    0x3C91A62633145C07,
];
/// fdlibm's `aT[0..10]`: `atan(t) = t - t^3 (aT0 + aT1 t^2 + … + aT10 t^20)` on `[0, 7/16]`.
const AT: [u64; 11] = [
    0x3FD555555555550D,
    0xBFC999999998EBC4,
    0x3FC24924920083FF,
    0xBFBC71C6FE231671,
    0x3FB745CDC54C206E,
    0xBFB3B0F2AF749A6D,
    0x3FB10D66A0D03D51,
    0xBFADDE2D52DEFD9A,
    0x3FA97B4B24760DEB,
    0xBFA2B4442C6A6C2F,
    0x3F90AD3AE322DA11,
];
/// `pi/2` and `pi` as double-doubles.
const PIO2_HI: u64 = 0x3FF921FB54442D18;
const PIO2_LO: u64 = 0x3C91A62633145C07;
const PI_HI: u64 = 0x400921FB54442D18;
const PI_LO: u64 = 0x3CA1A62633145C07;
/// `pi/4` and `3 pi/4`, rounded.
const PIO4: u64 = 0x3FE921FB54442D18;
const PI3O4: u64 = 0x4002D97C7F3321D2;
/// fdlibm's `pS0..pS5`, `qS1..qS4`: `R(z) = z P(z) / Q(z)`.
const PS: [u64; 6] = [
    0x3FC5555555555555,
    0xBFD4D61203EB6F7D,
    0x3FC9C1550E884455,
    0xBFA48228B5688F3B,
    0x3F49EFE07501B288,
    0x3F023DE10DFDF709,
];
const QS: [u64; 4] = [
    0xC0033A271C8A2D4B,
    0x40002AE59C598AC8,
    0xBFE6066C1B8D0159,
    0x3FB3B8C5B12E9282,
];

fn consts(bits: &[u64]) -> Vec<f64> {
    bits.iter().map(|&b| f64::from_bits(b)).collect()
}

pub(crate) fn atan<O: Ops>(o: &mut O, x: O::F) -> O::F {
    let a = o.abs(x);
    // The interval: below 7/16, 11/16, 19/16, 39/16, or above.
    let c: Vec<O::P> = [0.4375, 0.6875, 1.1875, 2.4375]
        .iter()
        .map(|&b| o.lt_k(a, b))
        .collect();
    // t = num / den: a / 1, (2a - 1) / (2 + a), (a - 1) / (a + 1), (a - 1.5) / (1 + 1.5a), -1 / a.
    let (one, two, m1, m15, k15) = (o.k(1.0), o.k(2.0), o.k(-1.0), o.k(-1.5), o.k(1.5));
    let num2 = o.add(a, m15);
    let den2 = o.fma(k15, a, one);
    let num = o.sel(c[3], num2, m1);
    let den = o.sel(c[3], den2, a);
    let num1 = o.sub(a, one);
    let den1 = o.add(a, one);
    let num = o.sel(c[2], num1, num);
    let den = o.sel(c[2], den1, den);
    let num0 = o.fma(two, a, m1);
    let den0 = o.add(two, a);
    let num = o.sel(c[1], num0, num);
    let den = o.sel(c[1], den0, den);
    let num = o.sel(c[0], a, num);
    let den = o.sel(c[0], one, den);
    let t = o.div(num, den);
    let hi: Vec<f64> = consts(&ATAN_HI);
    let lo: Vec<f64> = consts(&ATAN_LO);
    let h = o.sel_k(c[3], hi[2], hi[3]);
    let h2 = o.k(hi[1]);
    let h = o.sel(c[2], h2, h);
    let h0 = o.k(hi[0]);
    let h = o.sel(c[1], h0, h);
    let l = o.sel_k(c[3], lo[2], lo[3]);
    let l2 = o.k(lo[1]);
    let l = o.sel(c[2], l2, l);
    let l0 = o.k(lo[0]);
    let l = o.sel(c[1], l0, l);
    // s = aT0 z + aT1 z^2 + … (fdlibm's odd and even halves, in w = z^2).
    let at = consts(&AT);
    let z = o.mul(t, t);
    let w = o.mul(z, z);
    let even: Vec<f64> = at.iter().step_by(2).copied().collect();
    let odd: Vec<f64> = at.iter().skip(1).step_by(2).copied().collect();
    let s1 = o.horner(w, &even);
    let s1 = o.mul(z, s1);
    let s2 = o.horner(w, &odd);
    let s2 = o.mul(w, s2);
    let s = o.add(s1, s2);
    let q = o.mul(t, s);
    // Below 7/16: t - t s; above: atan(c) + (t - t s), with atan(c)'s tail first.
    let small = o.sub(t, q);
    let big = o.sub(q, l);
    let big = o.sub(big, t);
    let big = o.sub(h, big);
    let v = o.sel(c[0], small, big);
    let v = o.copysign(v, x);
    let nan = o.is_nan(x);
    o.sel(nan, x, v)
}

/// `atan2(y, x)`.
pub(crate) fn atan2<O: Ops>(o: &mut O, y: O::F, x: O::F) -> O::F {
    let (ay, ax) = (o.abs(y), o.abs(x));
    // Both tiny: scaled up (exactly) so that the quotient's rounding error is representable.
    let m = o.add(ax, ay);
    let tiny = o.lt_k(m, 2f64.powi(-900));
    let up = o.k(2f64.powi(900));
    let (sy, sx) = (o.mul(ay, up), o.mul(ax, up));
    let ay = o.sel(tiny, sy, ay);
    let ax = o.sel(tiny, sx, ax);
    let q = o.div(ay, ax);
    // atan(q + e) = atan(q) + e / (1 + q^2), e = (ay - q ax) / ax.
    let nq = o.neg(q);
    let r = o.fma(nq, ax, ay);
    let e = o.div(r, ax);
    let one = o.k(1.0);
    let d = o.fma(q, q, one);
    let corr = o.div(e, d);
    // A subnormal quotient is already atan's value rounded, and its correction, rounded to
    // the subnormal grid, would only spoil it.
    let subnormal = o.lt_k(q, 2f64.powi(-1021));
    let zero = o.k(0.0);
    let corr = o.sel(subnormal, zero, corr);
    let at = o.call(MathFn::Atan, q);
    let z = o.add(at, corr);
    // Quadrant: x < 0 gives pi - z.
    let x_neg = o.sign_bit(x);
    let (pi_hi, pi_lo) = (o.kb(PI_HI), o.kb(PI_LO));
    let zl = o.sub(z, pi_lo);
    let left = o.sub(pi_hi, zl);
    let v = o.sel(x_neg, left, z);
    let v = o.copysign(v, y);
    // |y/x| above 2^64 (or y infinite): +-pi/2.
    let pio2 = o.kb(PIO2_HI);
    let pio2_y = o.copysign(pio2, y);
    let big_at = o.k(2f64.powi(64));
    let ax64 = o.mul(ax, big_at);
    let steep = o.lt(ax64, ay);
    let inf = o.k(f64::INFINITY);
    let y_inf = o.eq(ay, inf);
    let steep = o.or(steep, y_inf);
    let v = o.sel(steep, pio2_y, v);
    // x infinite: +-pi/4 or +-3pi/4 for infinite y, else +-0 or +-pi.
    let x_inf = o.eq(ax, inf);
    let diag = o.sel_k(x_neg, f64::from_bits(PI3O4), f64::from_bits(PIO4));
    let flat = o.sel_k(x_neg, f64::from_bits(PI_HI), 0.0);
    let w = o.sel(y_inf, diag, flat);
    let w = o.copysign(w, y);
    let v = o.sel(x_inf, w, v);
    // x = 0 (y not): +-pi/2; y = 0: +-0 for x >= +0, +-pi for x <= -0.
    let x_zero = o.eq_k(ax, 0.0);
    let v = o.sel(x_zero, pio2_y, v);
    let y_zero = o.eq_k(ay, 0.0);
    let pi = o.kb(PI_HI);
    let pi_y = o.copysign(pi, y);
    let w = o.sel(x_neg, pi_y, y);
    let v = o.sel(y_zero, w, v);
    let nx = o.is_nan(x);
    let ny = o.is_nan(y);
    let nan = o.or(nx, ny);
    let xy = o.add(x, y);
    o.sel(nan, xy, v)
}

/// fdlibm's `R(z) = z P(z) / Q(z)`.
fn rational<O: Ops>(o: &mut O, z: O::F) -> O::F {
    let p = o.horner(z, &consts(&PS));
    let p = o.mul(z, p);
    let mut qc = vec![1.0];
    qc.extend(consts(&QS));
    let q = o.horner(z, &qc);
    o.div(p, q)
}

/// `z` (`x^2` below 1/2, `(1 - |x|) / 2` above), `R(z)` and `sqrt(z)`.
fn asin_parts<O: Ops>(o: &mut O, x: O::F, small: O::P) -> (O::F, O::F, O::F) {
    let a = o.abs(x);
    let one = o.k(1.0);
    let half = o.k(0.5);
    let xx = o.mul(x, x);
    let d = o.sub(one, a);
    let zh = o.mul(d, half);
    let z = o.sel(small, xx, zh);
    let r = rational(o, z);
    let s = o.sqrt(z);
    (z, r, s)
}

/// NaN for `|x| > 1` and NaN `x`, else `v`.
fn domain<O: Ops>(o: &mut O, x: O::F, v: O::F) -> O::F {
    let a = o.abs(x);
    let one = o.k(1.0);
    let inside = o.le(a, one);
    let nan = o.k(f64::NAN);
    let v = o.sel(inside, v, nan);
    let is_nan = o.is_nan(x);
    o.sel(is_nan, x, v)
}

pub(crate) fn asin<O: Ops>(o: &mut O, x: O::F) -> O::F {
    let a = o.abs(x);
    let small = o.lt_k(a, 0.5);
    let (z, r, s) = asin_parts(o, x, small);
    let (pio2_hi, pio2_lo) = (o.kb(PIO2_HI), o.kb(PIO2_LO));
    // |x| < 1/2: |x| + |x| R.
    let v_small = o.fma(a, r, a);
    // |x| >= 0.975: pi/2 - (2 (s + s R) - pio2_lo).
    let ss = o.fma(s, r, s);
    let two = o.k(2.0);
    let t = o.mul(two, ss);
    let t = o.sub(t, pio2_lo);
    let v_high = o.sub(pio2_hi, t);
    // Between: s = f + c with f its high part, pi/4 - (2 s R - (pio2_lo - 2c) - (pi/4 - 2f)).
    let f = o.high_part(s);
    let ff = o.mul(f, f);
    let num = o.sub(z, ff);
    let sf = o.add(s, f);
    let c = o.div(num, sf);
    let half = o.k(0.5);
    let pio4_hi = o.mul(half, pio2_hi);
    let p = o.mul(two, s);
    let p = o.mul(p, r);
    let c2 = o.mul(two, c);
    let qq = o.sub(pio2_lo, c2);
    let f2 = o.mul(two, f);
    let qf = o.sub(pio4_hi, f2);
    let p = o.sub(p, qq);
    let p = o.sub(p, qf);
    let v_mid = o.sub(pio4_hi, p);
    let b975 = o.kb(0x3FEF333300000000);
    let high = o.ge(a, b975);
    let v = o.sel(high, v_high, v_mid);
    let v = o.sel(small, v_small, v);
    let one = o.eq_k(a, 1.0);
    let v = o.sel(one, pio2_hi, v);
    let v = o.copysign(v, x);
    domain(o, x, v)
}

pub(crate) fn acos<O: Ops>(o: &mut O, x: O::F) -> O::F {
    let a = o.abs(x);
    let small = o.lt_k(a, 0.5);
    let (z, r, s) = asin_parts(o, x, small);
    let (pio2_hi, pio2_lo) = (o.kb(PIO2_HI), o.kb(PIO2_LO));
    let two = o.k(2.0);
    // |x| < 1/2: pi/2 - (x - (pio2_lo - x R)).
    let xr = o.mul(x, r);
    let t = o.sub(pio2_lo, xr);
    let t = o.sub(x, t);
    let v_small = o.sub(pio2_hi, t);
    // x <= -1/2: 2 (pi/2 - (s + (R s - pio2_lo))).
    let rs = o.mul(r, s);
    let w = o.sub(rs, pio2_lo);
    let w = o.add(s, w);
    let w = o.sub(pio2_hi, w);
    let v_neg = o.mul(two, w);
    // x >= 1/2: 2 (f + (R s + c)), s = f + c with f its high part.
    let f = o.high_part(s);
    let ff = o.mul(f, f);
    let num = o.sub(z, ff);
    let sf = o.add(s, f);
    let c = o.div(num, sf);
    let w = o.add(rs, c);
    let w = o.add(f, w);
    let v_pos = o.mul(two, w);
    let neg = o.lt_k(x, 0.0);
    let v = o.sel(neg, v_neg, v_pos);
    let v = o.sel(small, v_small, v);
    let at_one = o.eq_k(x, 1.0);
    let zero = o.k(0.0);
    let v = o.sel(at_one, zero, v);
    let at_m1 = o.eq_k(x, -1.0);
    let pi = o.kb(PI_HI);
    let v = o.sel(at_m1, pi, v);
    domain(o, x, v)
}
