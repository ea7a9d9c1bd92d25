//! The device math library's accuracy test, host side: writes, for `jit-ptx/gpu/math_ulp.py`
//! (which runs the kernels on a GPU with CuPy and reports the worst ulp error per function):
//!
//! - `math_ulp.ptx`: one kernel per function and precision, `y[i] = f(x[i])` or
//!   `y[i] = f(x[i], z[i])`, compiled from acc source like any region;
//! - `manifest.json`: per function and precision its kernel, its ulp bound and how its inputs
//!   are made: explicit edge cases (in `NAME_TY.edges`), then segments of random inputs that
//!   the script regenerates from the recipe and seed given here (counter-based splitmix64 and
//!   integer arithmetic on bit patterns only, so both sides make the same inputs; a checksum of
//!   the inputs' bits catches a difference);
//! - `NAME_TY.host`: the host's result for every input (Rust's `f64`/`f32` methods, the
//!   functions `stdlib/src/math.rs` calls), as a 16-bit key: the class (finite, `-0`, `inf`,
//!   NaN) and the low 14 bits of the result's ordered bit pattern, from which the script gets
//!   the exact ulp distance of a device result up to 8191 ulp;
//! - `NAME_f32.cr`: for `f32`, the inputs where the correctly rounded result (the host's `f64`
//!   function rounded to `f32`) differs from the host's `f32` function: `u32` indices, then the
//!   keys.
//!
//! `cargo run -p acc-jit-ptx --example math_ulp -- OUT [--n N] [--seed S]`: `N` inputs per
//! function and precision (default 524288: about 50 MiB in all), `S` varies the random inputs.

use std::fmt::Write as _;

use acc_jit_ptx::{emit_module, PtxOptions};
use acc_lang::span::SourceFile;

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Draw `i` of the stream `seed`.
fn draw(seed: u64, i: u64) -> u64 {
    mix(seed.wrapping_add(i.wrapping_add(1).wrapping_mul(GOLDEN)))
}

fn unit(r: u64) -> f64 {
    (r >> 11) as f64 * 2f64.powi(-53)
}

/// How random inputs are made (mirrored by `math_ulp.py`'s `generate`).
#[derive(Clone, Copy, Debug)]
enum Gen {
    /// Any double, uniform over bit patterns.
    Bits,
    /// Any float (as a double), uniform over bit patterns.
    Bits32,
    Uniform(f64, f64),
    /// `2^e` times a random mantissa, `e` uniform in `[lo, hi)` (subnormal below -1022),
    /// random sign when signed.
    LogU(i64, i64, bool),
    /// Within `spread` representable doubles of `center`, either side.
    Near(f64, u64),
    /// The same in floats.
    Near32(f32, u64),
    /// Within `spread` doubles of `k pi/2`, `k` in `1..=kmax`.
    Pio2(u64, u64),
    /// The same in floats.
    Pio2f(u64, u64),
    /// An integer in `[lo, hi]`.
    Int(i64, i64),
    /// `pow`'s results near overflow and underflow: `x = 2^e (1 + m)`, `e` in `1..=emax`, and
    /// `y = t / e` with `t` uniform in `[lo, hi)` (both arguments from one stream).
    PowEdge(u64, f64, f64),
}

impl Gen {
    fn draws(self) -> u64 {
        match self {
            Gen::LogU(..) | Gen::Pio2(..) | Gen::Pio2f(..) => 2,
            Gen::PowEdge(..) => 3,
            _ => 1,
        }
    }

    /// Element `i` (and the second argument, for `PowEdge`).
    fn make(self, seed: u64, i: u64) -> (f64, f64) {
        let d = self.draws();
        let r = |j: u64| draw(seed, i * d + j);
        let v = match self {
            Gen::Bits => f64::from_bits(r(0)),
            Gen::Bits32 => f32::from_bits((r(0) >> 32) as u32) as f64,
            Gen::Uniform(lo, hi) => lo + (hi - lo) * unit(r(0)),
            Gen::LogU(lo, hi, signed) => {
                let (r1, r2) = (r(0), r(1));
                let e = lo + ((r1 >> 1) % (hi - lo) as u64) as i64;
                let m = r2 >> 12;
                let mut bits = if e >= -1022 {
                    (((e + 1023) as u64) << 52) | m
                } else {
                    ((1u64 << 52) | m) >> (-1022 - e)
                };
                if signed && r1 & 1 == 1 {
                    bits |= 1 << 63;
                }
                f64::from_bits(bits)
            }
            Gen::Near(c, spread) => f64::from_bits(nudge(c.to_bits(), r(0), spread)),
            Gen::Near32(c, spread) => {
                f32::from_bits(nudge(c.to_bits() as u64, r(0), spread) as u32) as f64
            }
            Gen::Pio2(kmax, spread) => {
                let v = (1 + r(0) % kmax) as f64 * std::f64::consts::FRAC_PI_2;
                f64::from_bits(nudge(v.to_bits(), r(1), spread))
            }
            Gen::Pio2f(kmax, spread) => {
                let v = ((1 + r(0) % kmax) as f64 * std::f64::consts::FRAC_PI_2) as f32;
                f32::from_bits(nudge(v.to_bits() as u64, r(1), spread) as u32) as f64
            }
            Gen::Int(lo, hi) => (lo + (r(0) % (hi - lo + 1) as u64) as i64) as f64,
            Gen::PowEdge(emax, lo, hi) => {
                let e = 1 + r(0) % emax;
                let x = f64::from_bits(((e + 1023) << 52) | (r(1) >> 12));
                let y = (lo + (hi - lo) * unit(r(2))) / e as f64;
                return (x, y);
            }
        };
        (v, 0.0)
    }

    fn json(self) -> String {
        let (kind, args): (&str, Vec<String>) = match self {
            Gen::Bits => ("bits", vec![]),
            Gen::Bits32 => ("bits32", vec![]),
            Gen::Uniform(a, b) => ("uniform", vec![num(a), num(b)]),
            Gen::LogU(a, b, s) => ("logu", vec![a.to_string(), b.to_string(), s.to_string()]),
            Gen::Near(c, s) => ("near", vec![num(c), s.to_string()]),
            Gen::Near32(c, s) => ("near32", vec![num(c as f64), s.to_string()]),
            Gen::Pio2(k, s) => ("pio2", vec![k.to_string(), s.to_string()]),
            Gen::Pio2f(k, s) => ("pio2f", vec![k.to_string(), s.to_string()]),
            Gen::Int(a, b) => ("int", vec![a.to_string(), b.to_string()]),
            Gen::PowEdge(e, a, b) => ("powedge", vec![e.to_string(), num(a), num(b)]),
        };
        format!("{{\"kind\": \"{kind}\", \"args\": [{}]}}", args.join(", "))
    }
}

/// `bits` moved by up to `spread - 1` steps, up or down as `r`'s low bit says.
fn nudge(bits: u64, r: u64, spread: u64) -> u64 {
    let delta = (r >> 1) % spread;
    if r & 1 == 0 {
        bits.wrapping_add(delta)
    } else {
        bits.wrapping_sub(delta)
    }
}

/// A JSON number that reads back as the same double.
fn num(v: f64) -> String {
    format!("{v:?}")
}

type Host64 = fn(f64, f64) -> f64;
type Host32 = fn(f32, f32) -> f32;

/// A function of LANGUAGE.md section 6 that the device computes with more than one rounding.
struct Fun {
    name: &'static str,
    arity: usize,
    /// The bound in ulp.
    bound: u32,
    host64: Host64,
    host32: Host32,
    /// Extra edge cases of the first argument.
    edges: &'static [f64],
}

macro_rules! unary {
    ($name:literal, $f:ident, $edges:expr) => {
        Fun {
            name: $name,
            arity: 1,
            bound: 2,
            host64: |x, _| x.$f(),
            host32: |x, _| x.$f(),
            edges: $edges,
        }
    };
}

const PIO2: f64 = std::f64::consts::FRAC_PI_2;

fn functions() -> Vec<Fun> {
    let mut v = vec![
        Fun {
            bound: 1,
            ..unary!("sqrt", sqrt, &[4.0, 1e-310])
        },
        unary!(
            "exp",
            exp,
            &[
                709.782712893384,
                709.79,
                -745.1332191019412,
                -745.14,
                -708.4
            ]
        ),
        unary!(
            "exp2",
            exp2,
            &[1023.99, 1024.0, -1074.0, -1075.0, -1022.5, 0.5]
        ),
        unary!(
            "expm1",
            exp_m1,
            &[709.78, 1e-20, -40.0, std::f64::consts::LN_2, -37.5]
        ),
        unary!(
            "log",
            ln,
            &[1e-310, 0.9999999999999999, 1.0000000000000002, 10.0]
        ),
        unary!("log2", log2, &[1e-310, 1024.0, 0.9999999999999999, 8.0]),
        unary!("log10", log10, &[1e-310, 1000.0, 1e22, 0.9999999999999999]),
        unary!("log1p", ln_1p, &[-0.9999999999999999, 1e-20, -1e-20, 1e300]),
        unary!(
            "sin",
            sin,
            &[
                PIO2,
                std::f64::consts::PI,
                1e22,
                6381956970095103.0 * 2.0e240,
                355.0
            ]
        ),
        unary!(
            "cos",
            cos,
            &[PIO2, std::f64::consts::PI, 1e22, 1.5e300, 103993.0]
        ),
        unary!(
            "tan",
            tan,
            &[
                PIO2,
                std::f64::consts::PI,
                1e22,
                1.5e300,
                std::f64::consts::FRAC_PI_4
            ]
        ),
        unary!(
            "asin",
            asin,
            &[0.975, 0.9999999999999999, 1e-300, 0.5000000000000001]
        ),
        unary!(
            "acos",
            acos,
            &[0.975, 0.9999999999999999, -0.9999999999999999, 1e-300]
        ),
        unary!(
            "atan",
            atan,
            &[0.4375, 0.6875, 1.1875, 2.4375, 7.378697629483821e19]
        ),
        unary!(
            "sinh",
            sinh,
            &[710.4758600739439, 710.48, 22.0, 1e-300, 0.9999999999999999]
        ),
        unary!("cosh", cosh, &[710.4758600739439, 710.48, 22.0, 1e-300]),
        unary!("tanh", tanh, &[22.0, 19.0, 1e-300, 2.7755575615628914e-17]),
        unary!("cbrt", cbrt, &[27.0, 1e-310, 8e300, -64.0]),
    ];
    let binary = |name, bound, host64: Host64, host32: Host32| Fun {
        name,
        arity: 2,
        bound,
        host64,
        host32,
        edges: &[],
    };
    v.push(binary("hypot", 2, |x, y| x.hypot(y), |x, y| x.hypot(y)));
    v.push(binary("fmod", 2, |x, y| x % y, |x, y| x % y));
    v.push(binary("atan2", 2, |y, x| y.atan2(x), |y, x| y.atan2(x)));
    v.push(binary("pow", 2, |x, y| x.powf(y), |x, y| x.powf(y)));
    v
}

/// The random input segments of `f` in precision `f32` (weights out of 16).
fn segments(f: &str, f32: bool) -> Vec<(u32, Gen, Gen)> {
    use Gen::*;
    let bits = if f32 { Bits32 } else { Bits };
    let (emin, emax) = if f32 { (-149, 128) } else { (-1074, 1024) };
    let near1 = if f32 {
        Near32(1.0, 1 << 16)
    } else {
        Near(1.0, 1 << 40)
    };
    let one = |g: Gen| (16 - 4, g, Int(0, 0));
    let mut s: Vec<(u32, Gen, Gen)> = vec![(4, bits, bits)];
    let pick = |a: f64, b: f64| if f32 { b } else { a };
    match f {
        "sqrt" | "cbrt" => s.push(one(LogU(emin, emax, f == "cbrt"))),
        "exp" | "exp2" | "expm1" | "sinh" | "cosh" | "tanh" => {
            let (lo, hi) = match f {
                "exp" => (pick(-750.0, -104.0), pick(712.0, 89.0)),
                "exp2" => (pick(-1080.0, -151.0), pick(1030.0, 129.0)),
                "expm1" => (pick(-40.0, -18.0), pick(712.0, 89.0)),
                "tanh" => (pick(-25.0, -10.0), pick(25.0, 10.0)),
                _ => (pick(-712.0, -90.0), pick(712.0, 90.0)),
            };
            s.push((6, Uniform(lo, hi), Int(0, 0)));
            s.push((3, Uniform(-1.0, 1.0), Int(0, 0)));
            s.push((3, LogU(-60, 4, true), Int(0, 0)));
        }
        "log" | "log2" | "log10" => {
            s.push((6, LogU(emin, emax, false), Int(0, 0)));
            s.push((3, near1, Int(0, 0)));
            s.push((3, Uniform(0.5, 2.0), Int(0, 0)));
        }
        "log1p" => {
            s.push((4, Uniform(-1.0, 3.0), Int(0, 0)));
            s.push((4, LogU(-60, emax, false), Int(0, 0)));
            s.push((4, LogU(-60, -1, true), Int(0, 0)));
        }
        "sin" | "cos" | "tan" => {
            s.push((3, Uniform(-10.0, 10.0), Int(0, 0)));
            s.push((3, LogU(-30, 30, true), Int(0, 0)));
            let p = if f32 {
                Pio2f(10_000, 16)
            } else {
                Pio2(1_000_000, 64)
            };
            s.push((3, p, Int(0, 0)));
            s.push((3, LogU(20, emax, true), Int(0, 0)));
        }
        "asin" | "acos" => {
            s.push((5, Uniform(-1.0, 1.0), Int(0, 0)));
            let n = if f32 {
                Near32(1.0, 1 << 12)
            } else {
                Near(1.0, 1 << 30)
            };
            s.push((3, n, Int(0, 0)));
            s.push((2, Uniform(0.45, 0.55), Int(0, 0)));
            s.push((2, LogU(-60, 0, true), Int(0, 0)));
        }
        "atan" => {
            s.push((6, Uniform(-4.0, 4.0), Int(0, 0)));
            s.push((6, LogU(-60, 70, true), Int(0, 0)));
        }
        "hypot" | "fmod" | "atan2" => {
            let wide = LogU(emin, emax, true);
            s.push((4, wide, wide));
            s.push((4, Uniform(-10.0, 10.0), Uniform(-10.0, 10.0)));
            let (a, b) = match f {
                "fmod" => (LogU(0, pick(300.0, 60.0) as i64, true), LogU(-5, 5, true)),
                "hypot" => {
                    let e = pick(600.0, 70.0) as i64;
                    (LogU(-e, e, true), LogU(-e, e, true))
                }
                _ => (LogU(-60, 60, true), LogU(-60, 60, true)),
            };
            s.push((4, a, b));
        }
        "pow" => {
            s.push((2, LogU(emin, emax, false), Uniform(-100.0, 100.0)));
            s.push((2, Uniform(-50.0, 50.0), Int(-1000, 1000)));
            let y = if f32 {
                LogU(0, 30, true)
            } else {
                LogU(0, 70, true)
            };
            s.push((2, near1, y));
            let edge = if f32 {
                PowEdge(32, -155.0, 130.0)
            } else {
                PowEdge(64, -1080.0, 1030.0)
            };
            s.push((3, edge, Int(0, 0)));
            s.push((2, LogU(-20, 20, true), Int(-200, 200)));
            s.push((1, Uniform(0.0, 4.0), Uniform(-4.0, 4.0)));
        }
        _ => unreachable!("no inputs for {f}"),
    }
    s
}

fn edge_values(f32: bool) -> Vec<f64> {
    let mut v = vec![
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
        10.0,
        -7.5,
        1e-10,
        PIO2,
        -PIO2,
    ];
    if f32 {
        v.extend([
            f32::MIN_POSITIVE as f64,
            -(f32::MIN_POSITIVE as f64),
            1e-45,
            -1e-45,
            f32::MAX as f64,
            -(f32::MAX as f64),
            1.0000001192092896,
            0.9999999403953552,
            -0.9999999403953552,
            88.72283935546875,
            -103.97,
        ]);
    } else {
        v.extend([
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
        ]);
    }
    v
}

/// The 16-bit key of a result: class in the top two bits (0 finite, 1 `-0`, 2 infinite with
/// the sign in bit 0, 3 NaN), and for finite results the low 14 bits of the ordered pattern.
fn key(ordered: i64, nan: bool, inf: bool, neg_zero: bool, negative: bool) -> u16 {
    if nan {
        0xC000
    } else if inf {
        0x8000 | negative as u16
    } else if neg_zero {
        0x4000
    } else {
        (ordered as u64 & 0x3FFF) as u16
    }
}

fn key64(v: f64) -> u16 {
    let b = v.to_bits();
    let ordered = if b >> 63 == 1 {
        -((b & !(1 << 63)) as i64)
    } else {
        b as i64
    };
    key(
        ordered,
        v.is_nan(),
        v.is_infinite(),
        v == 0.0 && v.is_sign_negative(),
        v < 0.0,
    )
}

fn key32(v: f32) -> u16 {
    let b = v.to_bits();
    let ordered = if b >> 31 == 1 {
        -((b & !(1 << 31)) as i64)
    } else {
        b as i64
    };
    key(
        ordered,
        v.is_nan(),
        v.is_infinite(),
        v == 0.0 && v.is_sign_negative(),
        v < 0.0,
    )
}

fn u16_bytes(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|k| k.to_le_bytes()).collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(out) = args.get(1).filter(|a| !a.starts_with("--")) else {
        eprintln!("usage: math_ulp OUT_DIR [--n N] [--seed S]");
        std::process::exit(2);
    };
    let opt = |name: &str, default: u64| -> u64 {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.parse().expect("a number"))
            .unwrap_or(default)
    };
    let n = opt("--n", 1 << 19) as usize;
    let seed = opt("--seed", 1);
    std::fs::create_dir_all(out).expect("output directory");

    // The kernels: one region per function and precision, in this order.
    let funs = functions();
    let mut source = String::new();
    for t in ["64", "32"] {
        let ty = if t == "32" { "f32, " } else { "" };
        for a in ["x", "z", "y"] {
            let _ = writeln!(source, "let {a}{t} = zeros({ty}1)");
        }
    }
    let mut entries = Vec::new();
    for t in ["64", "32"] {
        for f in &funs {
            let (ins, call) = if f.arity == 2 {
                (
                    format!("x{t}, z{t}"),
                    format!("{}(x{t}[i], z{t}[i])", f.name),
                )
            } else {
                (format!("x{t}"), format!("{}(x{t}[i])", f.name))
            };
            let _ = writeln!(
                source,
                "acc parallel loop copyin({ins}) copy(y{t})\nfor i in 0..len(y{t}) {{\n    y{t}[i] = {call}\n}}"
            );
            entries.push((f, t == "32"));
        }
    }
    let file = SourceFile::new("math_ulp.acc", source.as_str());
    let module = match acc_lang::lower_source(&file) {
        Ok(m) => m,
        Err(d) => {
            eprintln!("math_ulp.acc: {} compile errors", d.len());
            std::process::exit(1);
        }
    };
    let ptx = emit_module(&module, &PtxOptions::default());
    if !ptx.unsupported.is_empty() || ptx.kernels.len() != entries.len() {
        eprintln!(
            "not every function compiles for the device: {:?}",
            ptx.unsupported
        );
        std::process::exit(1);
    }
    std::fs::write(format!("{out}/math_ulp.ptx"), &ptx.text).expect("write");
    std::fs::write(format!("{out}/math_ulp.acc"), &source).expect("write");

    let mut manifest = Vec::new();
    let mut total_bytes = 0usize;
    for (k, (f, is32)) in entries.iter().enumerate() {
        let kernel = &ptx.kernels[k];
        let region = module
            .regions
            .iter()
            .find(|r| r.id == kernel.region)
            .expect("the kernel's region");
        let params: Vec<String> = region
            .params
            .iter()
            .map(|p| format!("\"{}\"", p.name))
            .collect();
        let ty = if *is32 { "f32" } else { "f64" };
        let tag = format!("{}_{ty}", f.name);
        // Edge cases: the common values and the function's own; every pair for two arguments.
        let mut edges = edge_values(*is32);
        edges.extend(f.edges.iter().copied());
        if *is32 {
            edges = edges.iter().map(|&v| v as f32 as f64).collect();
        }
        let (mut xs, mut ys): (Vec<f64>, Vec<f64>) = if f.arity == 2 {
            edges
                .iter()
                .flat_map(|&a| edges.iter().map(move |&b| (a, b)))
                .unzip()
        } else {
            (edges.clone(), vec![0.0; edges.len()])
        };
        let n_edges = xs.len();
        let mut bytes: Vec<u8> = xs.iter().flat_map(|v| v.to_le_bytes()).collect();
        if f.arity == 2 {
            bytes.extend(ys.iter().flat_map(|v| v.to_le_bytes()));
        }
        std::fs::write(format!("{out}/{tag}.edges"), &bytes).expect("write");
        total_bytes += bytes.len();
        // Random segments.
        let segs = segments(f.name, *is32);
        let weights: u32 = segs.iter().map(|s| s.0).sum();
        let random = n.saturating_sub(n_edges);
        let mut seg_json = Vec::new();
        let mut given = 0usize;
        for (j, &(w, gx, gy)) in segs.iter().enumerate() {
            let count = if j + 1 == segs.len() {
                random - given
            } else {
                random * w as usize / weights as usize
            };
            given += count;
            let sx = mix(seed ^ mix((k as u64) << 8 | j as u64));
            let sy = mix(sx ^ GOLDEN);
            for i in 0..count as u64 {
                let (a, paired) = gx.make(sx, i);
                let b = if matches!(gx, Gen::PowEdge(..)) {
                    paired
                } else {
                    gy.make(sy, i).0
                };
                let (a, b) = if *is32 {
                    (a as f32 as f64, b as f32 as f64)
                } else {
                    (a, b)
                };
                xs.push(a);
                ys.push(b);
            }
            seg_json.push(format!(
                "{{\"count\": {count}, \"x\": {}, \"y\": {}, \"seed_x\": {sx}, \"seed_y\": {sy}}}",
                gx.json(),
                gy.json()
            ));
        }
        // The host's results, and for f32 the correctly rounded ones where they differ.
        let mut host = Vec::with_capacity(xs.len());
        let mut cr_at = Vec::new();
        let mut cr_key = Vec::new();
        for (i, (&a, &b)) in xs.iter().zip(&ys).enumerate() {
            if *is32 {
                let h = key32((f.host32)(a as f32, b as f32));
                let c = key32((f.host64)(a, b) as f32);
                if c != h {
                    cr_at.push(i as u32);
                    cr_key.push(c);
                }
                host.push(h);
            } else {
                host.push(key64((f.host64)(a, b)));
            }
        }
        let bytes = u16_bytes(&host);
        total_bytes += bytes.len();
        std::fs::write(format!("{out}/{tag}.host"), &bytes).expect("write");
        if *is32 {
            let mut bytes: Vec<u8> = cr_at.iter().flat_map(|i| i.to_le_bytes()).collect();
            bytes.extend(u16_bytes(&cr_key));
            total_bytes += bytes.len();
            std::fs::write(format!("{out}/{tag}.cr"), &bytes).expect("write");
        }
        let sum_x = xs.iter().fold(0u64, |s, v| s.wrapping_add(v.to_bits()));
        let sum_y = ys.iter().fold(0u64, |s, v| s.wrapping_add(v.to_bits()));
        manifest.push(format!(
            "{{\"fn\": \"{}\", \"ty\": \"{ty}\", \"arity\": {}, \"bound\": {}, \"kernel\": \"{}\", \
             \"params\": [{}], \"count\": {}, \"edges\": {n_edges}, \"cr_diffs\": {}, \
             \"sum_x\": {sum_x}, \"sum_y\": {sum_y}, \"segments\": [{}]}}",
            f.name,
            f.arity,
            f.bound,
            kernel.name,
            params.join(", "),
            xs.len(),
            cr_at.len(),
            seg_json.join(", ")
        ));
        eprintln!("{tag}: {} inputs ({n_edges} edge cases)", xs.len());
    }
    std::fs::write(
        format!("{out}/manifest.json"),
        format!("{{\"functions\": [\n{}\n]}}\n", manifest.join(",\n")),
    )
    .expect("write");
    eprintln!(
        "{} kernels, {:.1} MiB of inputs and host results in {out}",
        entries.len(),
        (total_bytes + ptx.text.len()) as f64 / (1 << 20) as f64
    );
}
