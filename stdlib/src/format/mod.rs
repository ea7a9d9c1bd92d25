//! Text formatting for `print` and `printf` (LANGUAGE.md section 6), in safe Rust: the
//! `extern "C"` functions of `print` only unpack their arguments and call these.

mod array;
mod printf;

pub use array::{array, ArrayElems};
pub use printf::{convert, printf, Arg};

use std::fmt::Write;

/// `print` of an f64: the shortest text that reads back to `x`, with a decimal point or an
/// exponent; plain notation for 1e-4 <= |x| < 1e16, exponent notation otherwise.
pub fn f64_text(x: f64) -> String {
    let mut s = String::new();
    push_f64(&mut s, x);
    s
}

/// `print` of an f32: as `f64_text`, shortest among f32 values (`0.1f32` prints `0.1`).
pub fn f32_text(x: f32) -> String {
    let mut s = String::new();
    push_f32(&mut s, x);
    s
}

pub fn push_f64(out: &mut String, x: f64) {
    push_float(
        out,
        x.is_nan(),
        x.is_infinite(),
        x < 0.0,
        {
            let a = x.abs();
            a == 0.0 || (1e-4..1e16).contains(&a)
        },
        x,
    );
}

pub fn push_f32(out: &mut String, x: f32) {
    push_float(
        out,
        x.is_nan(),
        x.is_infinite(),
        x < 0.0,
        {
            let a = x.abs();
            a == 0.0 || (1e-4f32..1e16f32).contains(&a)
        },
        x,
    );
}

/// Rust's `Display` and `LowerExp` already give the shortest round-trip digits of the value's
/// own type; this picks the notation and adds the `.0` that plain integers lack.
fn push_float<T: std::fmt::Display + std::fmt::LowerExp>(
    out: &mut String,
    nan: bool,
    infinite: bool,
    negative: bool,
    plain: bool,
    x: T,
) {
    if nan {
        // The sign of a NaN is not shown (C would print `-nan` for 0.0 / 0.0 on x86).
        out.push_str("nan");
    } else if infinite {
        out.push_str(if negative { "-inf" } else { "inf" });
    } else if plain {
        let start = out.len();
        let _ = write!(out, "{x}");
        if !out[start..].contains('.') {
            out.push_str(".0");
        }
    } else {
        let _ = write!(out, "{x:e}");
    }
}

pub fn bool_text(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f64_plain_range() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-1.0, "-1.0"),
            (0.1, "0.1"),
            (0.3, "0.3"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1.5, "1.5"),
            (100.0, "100.0"),
            (16777216.0, "16777216.0"),
            (0.0001, "0.0001"),
            (-0.0001, "-0.0001"),
            (0.00012345, "0.00012345"),
            (123456.789, "123456.789"),
            (9999999999999998.0, "9999999999999998.0"),
            (1e15, "1000000000000000.0"),
            (2.0f64.powi(52), "4503599627370496.0"),
            (std::f64::consts::PI, "3.141592653589793"),
            (1.0 / 3.0, "0.3333333333333333"),
        ];
        for &(x, want) in cases {
            assert_eq!(f64_text(x), want, "{x:?}");
        }
    }

    #[test]
    fn f64_exponent_range() {
        let cases: &[(f64, &str)] = &[
            (1e16, "1e16"),
            (-1e16, "-1e16"),
            (1.5e16, "1.5e16"),
            (2.5e-7, "2.5e-7"),
            (1.5e300, "1.5e300"),
            (0.00009999, "9.999e-5"),
            (9.9999e-5, "9.9999e-5"),
            (1e-5, "1e-5"),
            (1e100, "1e100"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (123456789012345680000.0, "1.2345678901234568e20"),
        ];
        for &(x, want) in cases {
            assert_eq!(f64_text(x), want, "{x:?}");
        }
    }

    #[test]
    fn f64_specials() {
        assert_eq!(f64_text(f64::INFINITY), "inf");
        assert_eq!(f64_text(f64::NEG_INFINITY), "-inf");
        assert_eq!(f64_text(f64::NAN), "nan");
        assert_eq!(f64_text(-f64::NAN), "nan");
        let zero = std::hint::black_box(0.0f64);
        assert_eq!(f64_text(zero / zero), "nan");
    }

    #[test]
    fn f32_shortest_in_its_own_type() {
        let cases: &[(f32, &str)] = &[
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (16777216.0, "16777216.0"),
            (16777217.0, "16777216.0"),
            (1.0 / 3.0, "0.33333334"),
            (3.0e-5, "3e-5"),
            (0.0001, "0.0001"),
            (1e16, "1e16"),
            (9.999999e15, "9999999000000000.0"),
            (f32::MAX, "3.4028235e38"),
            (f32::MIN_POSITIVE, "1.1754944e-38"),
            (1e-45, "1e-45"),
            (f32::INFINITY, "inf"),
            (f32::NEG_INFINITY, "-inf"),
            (f32::NAN, "nan"),
            (2.5e-7, "2.5e-7"),
        ];
        for &(x, want) in cases {
            assert_eq!(f32_text(x), want, "{x:?}");
        }
    }

    #[test]
    fn round_trips() {
        // Shortest also means exact: every printed value reads back to itself.
        let mut x = 1.0e-310f64;
        while x < 1e300 {
            let t = f64_text(x);
            assert_eq!(t.parse::<f64>().unwrap(), x, "{t}");
            assert!(t.contains('.') || t.contains('e'), "{t}");
            x *= 1.37;
        }
        let mut y = 1.0e-40f32;
        while y < 1e38 {
            let t = f32_text(y);
            assert_eq!(t.parse::<f32>().unwrap(), y, "{t}");
            assert!(t.contains('.') || t.contains('e'), "{t}");
            y *= 1.37;
        }
    }

    #[test]
    fn bools() {
        assert_eq!(bool_text(true), "true");
        assert_eq!(bool_text(false), "false");
    }
}
