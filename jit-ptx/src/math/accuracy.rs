//! The algorithms written in `Ops` (`inverse`, `power`), evaluated on the host with the
//! device's roundings (`Eval`) and compared with the host's functions (Rust's `f64`/`f32`
//! methods, which the host devices use): the worst error in ulp on random and edge-case
//! inputs, and the special values (NaN, infinities, signed zeros) exactly.
//!
//! `ACC_MATH_SAMPLES=N` sets the number of random inputs per function and precision (default
//! 100000): `ACC_MATH_SAMPLES=3000000 cargo test -p acc-jit-ptx --release accuracy --
//! --nocapture` measures on millions.

use super::ops::Eval;
use super::{inverse, power};

/// splitmix64: deterministic inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * 2f64.powi(-53)
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Any finite or special double, uniform over bit patterns.
    fn bits(&mut self) -> f64 {
        f64::from_bits(self.next())
    }

    /// `+-2^e` times a uniform mantissa, `e` uniform in `[lo, hi)`.
    fn log_uniform(&mut self, lo: i32, hi: i32) -> f64 {
        let e = lo + (self.next() % (hi - lo) as u64) as i32;
        let m = 1.0 + self.unit();
        let v =
            m * 2f64.powi(e.clamp(-1022, 1023)) * 2f64.powi((e - e.clamp(-1022, 1023)).max(-60));
        if self.next() & 1 == 1 {
            -v
        } else {
            v
        }
    }
}

fn samples() -> usize {
    std::env::var("ACC_MATH_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000)
}

/// Ordered integer of a double's bits: adjacent doubles differ by 1, `+-0` are both 0.
fn ordered64(v: f64) -> i128 {
    let b = v.to_bits();
    if b >> 63 == 1 {
        -((b & !(1 << 63)) as i128)
    } else {
        b as i128
    }
}

fn ordered32(v: f32) -> i128 {
    let b = v.to_bits();
    if b >> 31 == 1 {
        -((b & !(1 << 31)) as i128)
    } else {
        b as i128
    }
}

/// Whether `got` and `want` differ as special values: NaN or not, infinite or not, the sign
/// of a zero.
fn special_mismatch(got: f64, want: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() != want.is_nan();
    }
    if got.is_infinite() || want.is_infinite() {
        return got != want;
    }
    got == 0.0 && want == 0.0 && got.is_sign_negative() != want.is_sign_negative()
}

#[derive(Default)]
struct Worst {
    ulp: i128,
    at: Vec<f64>,
    got: f64,
    want: f64,
    special: Vec<String>,
    count: usize,
}

impl Worst {
    fn see(&mut self, args: &[f64], got: f64, want: f64, ulp: i128) {
        self.count += 1;
        if special_mismatch(got, want) {
            if self.special.len() < 8 {
                self.special
                    .push(format!("{args:?}: got {got:e}, host {want:e}"));
            }
            return;
        }
        if got.is_nan() {
            return;
        }
        if ulp > self.ulp {
            self.ulp = ulp;
            self.at = args.to_vec();
            self.got = got;
            self.want = want;
        }
    }

    fn report(&self, name: &str, bound: i128) -> Option<String> {
        println!(
            "{name}: {} inputs, worst {} ulp at {:?} (got {:e}, host {:e}), {} special mismatches",
            self.count,
            self.ulp,
            self.at,
            self.got,
            self.want,
            self.special.len()
        );
        if self.ulp > bound || !self.special.is_empty() {
            Some(format!(
                "{name}: worst {} ulp at {:?} (got {:e}, host {:e}); special: {:?}",
                self.ulp, self.at, self.got, self.want, self.special
            ))
        } else {
            None
        }
    }
}

const EDGES: [f64; 30] = [
    0.0,
    -0.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    3.0,
    -3.0,
    0.25,
    f64::MIN_POSITIVE,
    -f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    f64::MAX,
    -f64::MAX,
    1.0000000000000002,
    0.9999999999999999,
    -0.9999999999999999,
    1e-300,
    1e300,
    0.975,
    0.4375,
    2.4375,
    1e-10,
    -7.5,
];

/// Compares a one-argument function on `inputs` in both precisions.
fn check1(
    name: &str,
    f: impl Fn(f64) -> f64,
    host64: impl Fn(f64) -> f64,
    host32: impl Fn(f32) -> f32,
    inputs: &[f64],
    failures: &mut Vec<String>,
) {
    let (mut w64, mut w32) = (Worst::default(), Worst::default());
    for &x in inputs {
        let (got, want) = (f(x), host64(x));
        w64.see(&[x], got, want, (ordered64(got) - ordered64(want)).abs());
        let xf = x as f32;
        let (got, want) = (f(xf as f64) as f32, host32(xf));
        w32.see(
            &[xf as f64],
            got as f64,
            want as f64,
            (ordered32(got) - ordered32(want)).abs(),
        );
    }
    failures.extend(w64.report(&format!("{name} f64"), 2));
    failures.extend(w32.report(&format!("{name} f32"), 1));
}

fn check2(
    name: &str,
    f: impl Fn(f64, f64) -> f64,
    host64: impl Fn(f64, f64) -> f64,
    host32: impl Fn(f32, f32) -> f32,
    inputs: &[(f64, f64)],
    failures: &mut Vec<String>,
) {
    let (mut w64, mut w32) = (Worst::default(), Worst::default());
    for &(x, y) in inputs {
        let (got, want) = (f(x, y), host64(x, y));
        w64.see(&[x, y], got, want, (ordered64(got) - ordered64(want)).abs());
        let (xf, yf) = (x as f32, y as f32);
        let (got, want) = (f(xf as f64, yf as f64) as f32, host32(xf, yf));
        w32.see(
            &[xf as f64, yf as f64],
            got as f64,
            want as f64,
            (ordered32(got) - ordered32(want)).abs(),
        );
    }
    failures.extend(w64.report(&format!("{name} f64"), 2));
    failures.extend(w32.report(&format!("{name} f32"), 1));
}

fn unary_inputs(rng: &mut Rng, n: usize, gen: impl Fn(&mut Rng) -> f64) -> Vec<f64> {
    let mut v: Vec<f64> = EDGES.to_vec();
    for i in 0..n {
        v.push(match i % 3 {
            0 => rng.bits(),
            _ => gen(rng),
        });
    }
    v
}

#[test]
fn inverse_trigonometric_functions_are_within_bounds_of_the_host() {
    let mut rng = Rng(1);
    let n = samples();
    let mut failures = Vec::new();
    let wide = unary_inputs(&mut rng, n, |r| {
        if r.next() & 1 == 0 {
            r.uniform(-4.0, 4.0)
        } else {
            r.log_uniform(-80, 80)
        }
    });
    check1(
        "atan",
        |x| inverse::atan(&mut Eval, x),
        f64::atan,
        f32::atan,
        &wide,
        &mut failures,
    );
    let unit = unary_inputs(&mut rng, n, |r| match r.next() % 3 {
        0 => r.uniform(-1.0, 1.0),
        1 => (1.0 - 2f64.powi(-((r.next() % 53) as i32)) * r.unit()).copysign(r.uniform(-1.0, 1.0)),
        _ => r.log_uniform(-60, 0),
    });
    check1(
        "asin",
        |x| inverse::asin(&mut Eval, x),
        f64::asin,
        f32::asin,
        &unit,
        &mut failures,
    );
    check1(
        "acos",
        |x| inverse::acos(&mut Eval, x),
        f64::acos,
        f32::acos,
        &unit,
        &mut failures,
    );
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    for &a in &EDGES {
        for &b in &EDGES {
            pairs.push((a, b));
        }
    }
    for i in 0..n {
        pairs.push(match i % 3 {
            0 => (rng.bits(), rng.bits()),
            1 => (rng.uniform(-10.0, 10.0), rng.uniform(-10.0, 10.0)),
            _ => (rng.log_uniform(-1074, 1024), rng.log_uniform(-1074, 1024)),
        });
    }
    check2(
        "atan2",
        |y, x| inverse::atan2(&mut Eval, y, x),
        f64::atan2,
        f32::atan2,
        &pairs,
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn pow_and_cbrt_are_within_bounds_of_the_host() {
    let mut rng = Rng(2);
    let n = samples();
    let mut failures = Vec::new();
    let wide = unary_inputs(&mut rng, n, |r| r.log_uniform(-1074, 1024));
    check1(
        "cbrt",
        |x| power::cbrt(&mut Eval, x),
        f64::cbrt,
        f32::cbrt,
        &wide,
        &mut failures,
    );
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    let mut edges = EDGES.to_vec();
    edges.extend([
        0.5,
        4.0,
        -4.0,
        1e10,
        -1e10,
        2f64.powi(53) + 2.0,
        2f64.powi(53) - 1.0,
    ]);
    edges.extend([
        2f64.powi(31),
        2f64.powi(64),
        1.0 + 2f64.powi(-21),
        1.0 - 2f64.powi(-22),
    ]);
    for &a in &edges {
        for &b in &edges {
            pairs.push((a, b));
        }
    }
    for i in 0..n {
        pairs.push(match i % 6 {
            0 => (rng.bits(), rng.bits()),
            1 => (
                rng.log_uniform(-1074, 1024).abs(),
                rng.uniform(-100.0, 100.0),
            ),
            2 => (
                rng.uniform(-50.0, 50.0),
                (rng.next() % 2001) as f64 - 1000.0,
            ),
            3 => (
                1.0 + rng.uniform(-1.0, 1.0) * 2f64.powi(-((rng.next() % 50) as i32)),
                rng.log_uniform(0, 70),
            ),
            _ => {
                // Results near overflow and underflow: y log2(x) around 1024 and -1075.
                let x = rng.log_uniform(-20, 20).abs();
                let z = rng.uniform(-1080.0, 1030.0);
                (x, z / x.log2())
            }
        });
    }
    check2(
        "pow",
        |x, y| power::pow(&mut Eval, x, y),
        f64::powf,
        f32::powf,
        &pairs,
        &mut failures,
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn atan2_of_a_subnormal_quotient_is_the_quotient() {
    // Found by the GPU accuracy run: the quotient's correction, rounded to the subnormal grid,
    // took the result to -0.
    for (y, x) in [(-5e-324, 1.5707963267948966), (1e-310, 3.0), (5e-324, -0.5)] {
        let v = inverse::atan2(&mut Eval, y, x);
        assert_eq!(v.to_bits(), f64::atan2(y, x).to_bits(), "atan2({y:e}, {x})");
    }
}
