//! `pow` and `cbrt`, branch-free:
//! - `pow(x, y)`: fdlibm's `e_pow.c` for `|x|^y = 2^(y log2 |x|)`: `log2 |x|` as a
//!   double-double `t1 + t2` (`|x| = 2^n m`, `m` near 1 or 1.5, `s = (m - b) / (m + b)` split
//!   in two, a polynomial in `s^2`; by `log(1 + t)`'s series for `|x|` within `2^-20` of 1
//!   when `|y| > 2^31`), times `y` split into a 21-bit head and its tail, then `2^z` by
//!   fdlibm's rational approximation of `e^r` on `|r| <= ln2/2`, scaled by `2^n` in two steps
//!   (one rounding for subnormal results). The C99 special cases are selected at the end:
//!   `pow(x, +-0) = 1` and `pow(1, y) = 1` even for NaN, negative `x` with integral `y` (the
//!   sign of odd `y`) and NaN for other `y`, zeros, infinities, `|y|` so large that the
//!   result over- or underflows, and the exact `y = +-1, 2, 1/2`.
//! - `cbrt`: fdlibm's (FreeBSD's) `s_cbrt.c`: an estimate from the exponent divided by 3 in
//!   integer arithmetic, a polynomial step to 23 bits, rounded away from zero to 23 bits, then
//!   one Newton step in `f64`.

use super::ops::{Ops, OpsExt};

/// fdlibm's constants of `pow`, by their bits.
const DP_H1: u64 = 0x3FE2B80340000000; // log2(1.5) head
const DP_L1: u64 = 0x3E4CFDEB43CFD006; // its tail
/// `L1..L6`: `(3/2) (log(x) - 2s - (2/3) s^3)` as a polynomial in `s^2`.
const L: [u64; 6] = [
    0x3FE3333333333303,
    0x3FDB6DB6DB6FABFF,
    0x3FD55555518F264D,
    0x3FD17460A91D4101,
    0x3FCD864A93C9DB65,
    0x3FCA7E284A454EEF,
];
/// `P1..P5`: the rational approximation of `e^r`.
const P: [u64; 5] = [
    0x3FC555555555553E,
    0xBF66C16C16BEBD93,
    0x3F11566AAF25DE2C,
    0xBEBBBD41C5D26BF1,
    0x3E66376972BEA4D0,
];
const LG2: u64 = 0x3FE62E42FEFA39EF;
const LG2_H: u64 = 0x3FE62E4300000000;
const LG2_L: u64 = 0xBE205C610CA86C39;
/// `2/(3 ln2)` and its 21-bit head and tail.
const CP: u64 = 0x3FEEC709DC3A03FD;
const CP_H: u64 = 0x3FEEC709E0000000;
const CP_L: u64 = 0xBE3E2FE0145B01F5;
/// `1/ln2` and the tail of its double.
const IVLN2: u64 = 0x3FF71547652B82FE;
const INV_LN2_TAIL: f64 = 2.0355273740931033e-17;

/// fdlibm's `cbrt` polynomial `P0..P4` (1.87595182427177009643, …).
const CBRT_P: [u64; 5] = [
    0x3FFE03E60F61E692,
    0xBFFE28E092F02420,
    0x3FF9F1604A49D6C2,
    0xBFE844CBBEE751D9,
    0x3FC2B000D4E4EDD7,
];

fn consts(bits: &[u64]) -> Vec<f64> {
    bits.iter().map(|&b| f64::from_bits(b)).collect()
}

/// `log2 |x|` as `(t1, t2)`, `t1` a 21-bit head, for finite nonzero `x`: fdlibm's general
/// path.
fn log2_general<O: Ops>(o: &mut O, ax: O::F) -> (O::F, O::F) {
    let sub = o.lt_k(ax, f64::MIN_POSITIVE);
    let two53 = o.k(2f64.powi(53));
    let scaled = o.mul(ax, two53);
    let ax = o.sel(sub, scaled, ax);
    let b = o.bits_of(ax);
    let e = o.ushr(b, 52);
    let mmask = o.uk(0x000F_FFFF_FFFF_FFFF);
    let m = o.uand(b, mmask);
    // The interval of the mantissa: [1, sqrt(3/2)] (k = 0), below sqrt(3) (k = 1, around
    // 1.5), or above (k = 0 and halved, n + 1).
    let lim0 = o.uk(0x3988F << 32);
    let lim1 = o.uk(0xBB67A << 32);
    let in0 = o.ult(m, lim0);
    let below1 = o.ult(m, lim1);
    let not0 = o.not(in0);
    let k1 = o.and(not0, below1);
    let halve = o.not(below1);
    let e_f = o.to_f(e);
    let bias = o.k(-1023.0);
    let n = o.add(e_f, bias);
    let m53 = o.k(-53.0);
    let n_sub = o.add(n, m53);
    let n = o.sel(sub, n_sub, n);
    let one = o.k(1.0);
    let n_up = o.add(n, one);
    let n = o.sel(halve, n_up, n);
    let (ex0, ex1) = (o.uk(0x3FF0_0000_0000_0000), o.uk(0x3FE0_0000_0000_0000));
    let ex = o.usel(halve, ex1, ex0);
    let mb = o.uor(m, ex);
    let ax = o.float_of(mb);
    let bp = o.sel_k(k1, 1.5, 1.0);
    let dp_h = o.sel_k(k1, f64::from_bits(DP_H1), 0.0);
    let dp_l = o.sel_k(k1, f64::from_bits(DP_L1), 0.0);
    // ss = s_h + s_l = (ax - bp) / (ax + bp).
    let u = o.sub(ax, bp);
    let d = o.add(ax, bp);
    let v = o.div(one, d);
    let ss = o.mul(u, v);
    let s_h = o.high_part(ss);
    // t_h: ax + bp with its low word cleared, from the high word of ax.
    let ix = o.ushr(mb, 32);
    let ix = o.ushr(ix, 1);
    let c = o.uk(0x2000_0000);
    let th = o.uor(ix, c);
    let c = o.uk(0x0008_0000);
    let th = o.uadd(th, c);
    let (kb1, kb0) = (o.uk(1 << 18), o.uk(0));
    let kb = o.usel(k1, kb1, kb0);
    let th = o.uadd(th, kb);
    let th = o.ushl(th, 32);
    let t_h = o.float_of(th);
    let tb = o.sub(t_h, bp);
    let t_l = o.sub(ax, tb);
    let a = o.mul(s_h, t_h);
    let a = o.sub(u, a);
    let b2 = o.mul(s_h, t_l);
    let a = o.sub(a, b2);
    let s_l = o.mul(v, a);
    // log(ax) in units of 2/(3 ln2).
    let s2 = o.mul(ss, ss);
    let poly = o.horner(s2, &consts(&L));
    let s4 = o.mul(s2, s2);
    let r = o.mul(s4, poly);
    let sh_ss = o.add(s_h, ss);
    let corr = o.mul(s_l, sh_ss);
    let r = o.add(r, corr);
    let s2 = o.mul(s_h, s_h);
    let three = o.k(3.0);
    let t = o.add(three, s2);
    let t = o.add(t, r);
    let t_h = o.high_part(t);
    let t = o.sub(t_h, three);
    let t = o.sub(t, s2);
    let t_l = o.sub(r, t);
    let u = o.mul(s_h, t_h);
    let v1 = o.mul(s_l, t_h);
    let v2 = o.mul(t_l, ss);
    let v = o.add(v1, v2);
    let p = o.add(u, v);
    let p_h = o.high_part(p);
    let pu = o.sub(p_h, u);
    let p_l = o.sub(v, pu);
    let (cp, cp_h, cp_l) = (o.kb(CP), o.kb(CP_H), o.kb(CP_L));
    let z_h = o.mul(cp_h, p_h);
    let z1 = o.mul(cp_l, p_h);
    let z2 = o.mul(p_l, cp);
    let z_l = o.add(z1, z2);
    let z_l = o.add(z_l, dp_l);
    // log2(ax) = n + dp_h + z_h + z_l.
    let t = o.add(z_h, z_l);
    let t = o.add(t, dp_h);
    let t = o.add(t, n);
    let t1 = o.high_part(t);
    let w = o.sub(t1, n);
    let w = o.sub(w, dp_h);
    let w = o.sub(w, z_h);
    let t2 = o.sub(z_l, w);
    (t1, t2)
}

/// `log2 |x|` as `(t1, t2)` for `|x|` within `2^-20` of 1, by `log(1 + t)`'s series.
fn log2_near_one<O: Ops>(o: &mut O, ax: O::F) -> (O::F, O::F) {
    let one = o.k(1.0);
    let t = o.sub(ax, one);
    let c = o.k(0.25);
    let a = o.mul(t, c);
    let third = o.kb(0x3FD5_5555_5555_5555);
    let a = o.sub(third, a);
    let a = o.mul(t, a);
    let half = o.k(0.5);
    let a = o.sub(half, a);
    let tt = o.mul(t, t);
    let w = o.mul(tt, a);
    // t / ln2 as u + (its rounding error, by fma) + t times the tail of 1/ln2: fdlibm's
    // 24-bit head of 1/ln2 leaves u inexact (errors of hundreds of ulp for |y| near 2^40).
    let (ivln2, ivln2_l) = (o.kb(IVLN2), o.k(INV_LN2_TAIL));
    let u = o.mul(t, ivln2);
    let nu = o.neg(u);
    let e = o.fma(t, ivln2, nu);
    let v1 = o.fma(t, ivln2_l, e);
    let v2 = o.mul(w, ivln2);
    let v = o.sub(v1, v2);
    let s = o.add(u, v);
    let t1 = o.high_part(s);
    let d = o.sub(t1, u);
    let t2 = o.sub(v, d);
    (t1, t2)
}

/// `2^(p_h + p_l)` for `|p_h + p_l| <= 1100`.
fn exp2_dd<O: Ops>(o: &mut O, p_h: O::F, p_l: O::F) -> O::F {
    let z = o.add(p_h, p_l);
    let n = o.rint(z);
    let p_h = o.sub(p_h, n);
    let s = o.add(p_l, p_h);
    let t = o.high_part(s);
    let (lg2, lg2_h, lg2_l) = (o.kb(LG2), o.kb(LG2_H), o.kb(LG2_L));
    let u = o.mul(t, lg2_h);
    let a = o.sub(t, p_h);
    let a = o.sub(p_l, a);
    let a = o.mul(a, lg2);
    let b = o.mul(t, lg2_l);
    let v = o.add(a, b);
    let z = o.add(u, v);
    let d = o.sub(z, u);
    let w = o.sub(v, d);
    let t = o.mul(z, z);
    let poly = o.horner(t, &consts(&P));
    let poly = o.mul(t, poly);
    let t1 = o.sub(z, poly);
    let num = o.mul(z, t1);
    let two = o.k(2.0);
    let den = o.sub(t1, two);
    let q = o.div(num, den);
    let zw = o.mul(z, w);
    let c = o.add(w, zw);
    let r = o.sub(q, c);
    let one = o.k(1.0);
    let rz = o.sub(r, z);
    let e = o.sub(one, rz);
    o.ldexp(e, n)
}

pub(crate) fn pow<O: Ops>(o: &mut O, x: O::F, y: O::F) -> O::F {
    let (ax, ay) = (o.abs(x), o.abs(y));
    let one = o.k(1.0);
    let zero = o.k(0.0);
    let inf = o.k(f64::INFINITY);
    let nan = o.k(f64::NAN);
    // y integral, odd.
    let ry = o.rint(y);
    let y_int = o.eq(ry, y);
    let half = o.k(0.5);
    let hy = o.mul(y, half);
    let rhy = o.rint(hy);
    let y_even = o.eq(rhy, hy);
    let not_even = o.not(y_even);
    let y_odd = o.and(y_int, not_even);
    let x_sign = o.sign_bit(x);
    let negate = o.and(x_sign, y_odd);
    let y_pos = o.lt(zero, y);
    // log2 |x|: the series near 1 for |y| > 2^31, else the general path.
    let (g1, g2) = log2_general(o, ax);
    let (n1, n2) = log2_near_one(o, ax);
    let b31 = o.kb(0x41E0_0001_0000_0000);
    let big_y = o.ge(ay, b31);
    let t1 = o.sel(big_y, n1, g1);
    let t2 = o.sel(big_y, n2, g2);
    // z = y (t1 + t2), y = y1 + (y - y1).
    let y1 = o.high_part(y);
    let dy = o.sub(y, y1);
    let a = o.mul(dy, t1);
    let b = o.mul(y, t2);
    let p_l = o.add(a, b);
    let p_h = o.mul(y1, t1);
    let z = o.add(p_l, p_h);
    let lim = o.k(1100.0);
    let over = o.lt(lim, z);
    let mlim = o.k(-1100.0);
    let under = o.lt(z, mlim);
    let inside = o.or(over, under);
    let inside = o.not(inside);
    let p_h = o.sel(inside, p_h, zero);
    let p_l = o.sel(inside, p_l, zero);
    let v = exp2_dd(o, p_h, p_l);
    let v = o.sel(over, inf, v);
    let v = o.sel(under, zero, v);
    // |y| so large that the result over- or underflows unless x is within 2^-20 of 1.
    let lo = o.kb(0x3FEF_FFFF_0000_0000);
    let hi = o.kb(0x3FF0_0001_0000_0000);
    let below = o.lt(ax, lo);
    let above = o.ge(ax, hi);
    let far = o.or(below, above);
    let far = o.and(big_y, far);
    let b64 = o.kb(0x43F0_0000_0000_0000);
    let huge_y = o.ge(ay, b64);
    let far = o.or(far, huge_y);
    // Growing: |x| > 1 and y > 0, or |x| < 1 and y < 0.
    let above_1 = o.lt(one, ax);
    let up = o.and(above_1, y_pos);
    let below_1 = o.lt(ax, one);
    let y_neg = o.lt(y, zero);
    let down = o.and(below_1, y_neg);
    let grows = o.or(up, down);
    let w = o.sel(grows, inf, zero);
    let v = o.sel(far, w, v);
    let nv = o.neg(v);
    let v = o.sel(negate, nv, v);
    // Exact cases: y = 1, -1, 2, and 1/2 for x >= +0.
    let is1 = o.eq_k(y, 1.0);
    let v = o.sel(is1, x, v);
    let inv = o.div(one, x);
    let is_m1 = o.eq_k(y, -1.0);
    let v = o.sel(is_m1, inv, v);
    let sq = o.mul(x, x);
    let is2 = o.eq_k(y, 2.0);
    let v = o.sel(is2, sq, v);
    let rt = o.sqrt(x);
    let is_half = o.eq_k(y, 0.5);
    let x_plus = o.not(x_sign);
    let is_half = o.and(is_half, x_plus);
    let v = o.sel(is_half, rt, v);
    // x = +-0, +-inf, +-1: |x|^y is |x| or 1/|x|, negated for negative x and odd y.
    let iax = o.div(one, ax);
    let w = o.sel(y_neg, iax, ax);
    let nw = o.neg(w);
    let w = o.sel(negate, nw, w);
    let x_zero = o.eq(ax, zero);
    let x_inf = o.eq(ax, inf);
    let x_one = o.eq(ax, one);
    let special = o.or(x_zero, x_inf);
    let special = o.or(special, x_one);
    let v = o.sel(special, w, v);
    // Negative finite x, y not integral: NaN.
    let x_neg = o.lt(x, zero);
    let x_fin = o.lt(ax, inf);
    let bad = o.and(x_neg, x_fin);
    let not_int = o.not(y_int);
    let bad = o.and(bad, not_int);
    let v = o.sel(bad, nan, v);
    // y = +-inf: 1 for x = -1, else 0 or inf as |x| is below or above 1.
    let y_inf = o.eq(ay, inf);
    let w = o.sel(grows, inf, zero);
    let w = o.sel(x_one, one, w);
    let v = o.sel(y_inf, w, v);
    // NaN operands give NaN, but x^0 = 1 and 1^y = 1.
    let nx = o.is_nan(x);
    let ny = o.is_nan(y);
    let n = o.or(nx, ny);
    let xy = o.add(x, y);
    let v = o.sel(n, xy, v);
    let y_zero = o.eq(ay, zero);
    let x_is_1 = o.eq(x, one);
    let trivial = o.or(y_zero, x_is_1);
    o.sel(trivial, one, v)
}

pub(crate) fn cbrt<O: Ops>(o: &mut O, x: O::F) -> O::F {
    let a = o.abs(x);
    // Subnormals: scaled by 2^54 (the estimate's exponent then 18 lower: B2 below).
    let sub = o.lt_k(a, f64::MIN_POSITIVE);
    let s54 = o.k(2f64.powi(54));
    let scaled = o.mul(a, s54);
    let a_s = o.sel(sub, scaled, a);
    let b = o.bits_of(a_s);
    let hx = o.ushr(b, 32);
    let three = o.uk(3);
    let third = o.udiv(hx, three);
    let (b1, b2) = (o.uk(715_094_163), o.uk(696_219_795));
    let bias = o.usel(sub, b2, b1);
    let th = o.uadd(third, bias);
    let th = o.ushl(th, 32);
    let t = o.float_of(th);
    // A polynomial step: t to about 23 bits.
    let tt = o.mul(t, t);
    let ta = o.div(t, a);
    let r = o.mul(tt, ta);
    let p = o.horner(r, &consts(&CBRT_P[..3]));
    let q = o.horner(r, &consts(&CBRT_P[3..]));
    let rr = o.mul(r, r);
    let rrr = o.mul(rr, r);
    let q = o.mul(rrr, q);
    let pq = o.add(p, q);
    let t = o.mul(t, pq);
    // Rounded away from zero to 23 bits: t^2 is then exact.
    let tb = o.bits_of(t);
    let c = o.uk(0x8000_0000);
    let tb = o.uadd(tb, c);
    let mask = o.uk(0xFFFF_FFFF_C000_0000);
    let tb = o.uand(tb, mask);
    let t = o.float_of(tb);
    // One Newton step: t + t (a/t^2 - t) / (2t + a/t^2).
    let s = o.mul(t, t);
    let r = o.div(a, s);
    let w = o.add(t, t);
    let num = o.sub(r, t);
    let den = o.add(w, r);
    let r = o.div(num, den);
    let v = o.fma(t, r, t);
    let v = o.copysign(v, x);
    // 0, inf and NaN are their own cube roots.
    let zero = o.eq_k(a, 0.0);
    let inf = o.eq_k(a, f64::INFINITY);
    let keep = o.or(zero, inf);
    let nan = o.is_nan(x);
    let keep = o.or(keep, nan);
    o.sel(keep, x, v)
}
