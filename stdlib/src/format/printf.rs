//! `printf` conversions with C's semantics (checked against glibc in the tests).
//!
//! Deviations from C, all for values C cannot express the same way:
//! - `%s` and `%c` count width and precision in characters, not bytes (same for ASCII).
//! - `%c` prints its argument as a Unicode code point (U+FFFD when it is not one).
//! - A NaN prints as `nan` whatever its sign bit (glibc prints `-nan` for a negative NaN).
//! - `%u` and `%x` print the 64-bit two's-complement pattern of the argument (C's `%lu`/`%lx`):
//!   compiled code passes every integer sign-extended to 64 bits, so `%x` of an `i32` -1 is
//!   `ffffffffffffffff`, not C's `%x` of an int (`ffffffff`).

use std::fmt::Write;

use acc_lang::builtins::{FormatPiece, FormatSpec};

/// One argument of a conversion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg<'a> {
    Int(i64),
    Float(f64),
    Str(&'a str),
    /// A code point for `%c`.
    Char(i64),
}

/// The output of `printf(pieces, args…)`: each conversion takes the next argument; a
/// conversion without an argument prints nothing, extra arguments are ignored (the checker
/// makes them match).
pub fn printf(pieces: &[FormatPiece], args: &[Arg]) -> String {
    let mut out = String::new();
    let mut args = args.iter();
    for piece in pieces {
        match piece {
            FormatPiece::Text(t) => out.push_str(t),
            FormatPiece::Spec(spec) => {
                if let Some(&arg) = args.next() {
                    convert(&mut out, spec, arg);
                }
            }
        }
    }
    out
}

#[derive(Default)]
struct Flags {
    left: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
}

impl Flags {
    fn of(spec: &FormatSpec) -> Flags {
        let has = |c| spec.flags.contains(c);
        Flags {
            left: has('-'),
            plus: has('+'),
            space: has(' '),
            alt: has('#'),
            zero: has('0'),
        }
    }

    /// The sign a non-negative signed value shows.
    fn positive_sign(&self) -> &'static str {
        if self.plus {
            "+"
        } else if self.space {
            " "
        } else {
            ""
        }
    }
}

/// Appends one conversion. The argument's kind follows the conversion (`%d` of a float
/// argument converts the float, as the checker never lets that happen).
pub fn convert(out: &mut String, spec: &FormatSpec, arg: Arg) {
    let flags = Flags::of(spec);
    let width = spec.width.unwrap_or(0) as usize;
    match spec.conv {
        'd' | 'i' | 'u' | 'x' => {
            let v = match arg {
                Arg::Int(v) | Arg::Char(v) => v,
                Arg::Float(f) => f as i64,
                Arg::Str(_) => 0,
            };
            integer(out, spec.conv, v, &flags, width, spec.precision);
        }
        'f' | 'e' | 'g' => {
            let v = match arg {
                Arg::Float(f) => f,
                Arg::Int(v) | Arg::Char(v) => v as f64,
                Arg::Str(_) => 0.0,
            };
            float(out, spec.conv, v, &flags, width, spec.precision);
        }
        'c' => {
            let c = match arg {
                Arg::Int(v) | Arg::Char(v) => u32::try_from(v)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or(char::REPLACEMENT_CHARACTER),
                _ => char::REPLACEMENT_CHARACTER,
            };
            pad(
                out,
                "",
                c.encode_utf8(&mut [0; 4]),
                width,
                flags.left,
                false,
            );
        }
        _ => {
            let s = match arg {
                Arg::Str(s) => s,
                _ => "",
            };
            let s = match spec.precision {
                Some(p) => s.char_indices().nth(p as usize).map_or(s, |(i, _)| &s[..i]),
                None => s,
            };
            pad(out, "", s, width, flags.left, false);
        }
    }
}

/// Appends `prefix` (a sign, `0x`) and `body` padded to `width` characters: spaces on the
/// right (`left`), zeros between prefix and body (`zeros`), or spaces on the left.
fn pad(out: &mut String, prefix: &str, body: &str, width: usize, left: bool, zeros: bool) {
    let len = prefix.chars().count() + body.chars().count();
    let fill = width.saturating_sub(len);
    if left {
        out.push_str(prefix);
        out.push_str(body);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if zeros {
        out.push_str(prefix);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(body);
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(prefix);
        out.push_str(body);
    }
}

fn integer(
    out: &mut String,
    conv: char,
    v: i64,
    flags: &Flags,
    width: usize,
    precision: Option<u32>,
) {
    let (prefix, mut digits) = match conv {
        'u' => ("", (v as u64).to_string()),
        'x' => (
            if flags.alt && v != 0 { "0x" } else { "" },
            format!("{:x}", v as u64),
        ),
        _ => (
            if v < 0 { "-" } else { flags.positive_sign() },
            v.unsigned_abs().to_string(),
        ),
    };
    if let Some(p) = precision {
        // The precision is the minimum number of digits; zero digits for a zero value at
        // precision 0.
        if p == 0 && v == 0 {
            digits.clear();
        }
        let missing = (p as usize).saturating_sub(digits.len());
        digits.insert_str(0, &"0".repeat(missing));
    }
    let zeros = flags.zero && !flags.left && precision.is_none();
    pad(out, prefix, &digits, width, flags.left, zeros);
}

fn float(
    out: &mut String,
    conv: char,
    v: f64,
    flags: &Flags,
    width: usize,
    precision: Option<u32>,
) {
    let sign = if v.is_sign_negative() && !v.is_nan() {
        "-"
    } else {
        flags.positive_sign()
    };
    if !v.is_finite() {
        let body = if v.is_nan() { "nan" } else { "inf" };
        pad(out, sign, body, width, flags.left, false);
        return;
    }
    let p = precision.unwrap_or(6) as usize;
    let a = v.abs();
    let body = match conv {
        'f' => fixed(a, p, flags.alt),
        'e' => exponent(a, p, flags.alt),
        _ => general(a, p, flags.alt),
    };
    pad(
        out,
        sign,
        &body,
        width,
        flags.left,
        flags.zero && !flags.left,
    );
}

/// `%.pf` of a non-negative finite value. Rust's `{:.p}` rounds the exact binary value
/// correctly (ties to even), as glibc does.
fn fixed(a: f64, p: usize, alt: bool) -> String {
    let mut s = format!("{a:.p$}");
    if alt && p == 0 {
        s.push('.');
    }
    s
}

/// `%.pe`: Rust's `{:.pe}` gives `1.5e3`; C wants a signed exponent of at least two digits.
fn exponent(a: f64, p: usize, alt: bool) -> String {
    let s = format!("{a:.p$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut out = mantissa.to_string();
    if alt && p == 0 {
        out.push('.');
    }
    let sign = if exp < 0 { '-' } else { '+' };
    let _ = write!(out, "e{sign}{:02}", exp.unsigned_abs());
    out
}

/// `%.pg`: `P` significant digits (6 by default, at least 1) in `%e` style when the rounded
/// value's exponent `X` is below -4 or at least `P`, `%f` style with `P - 1 - X` decimals
/// otherwise; without `#`, trailing zeros and a trailing decimal point go.
fn general(a: f64, p: usize, alt: bool) -> String {
    let p = p.max(1);
    let x = if a == 0.0 {
        0
    } else {
        let e = format!("{a:.prec$e}", prec = p - 1);
        e.split_once('e')
            .and_then(|(_, x)| x.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let mut s = if x < -4 || x >= p as i64 {
        exponent(a, p - 1, alt)
    } else {
        fixed(a, (p as i64 - 1 - x) as usize, alt)
    };
    if alt {
        if !s.contains('.') {
            // `%#g` always shows the point; `%#.1g` of 5 is `5.`.
            let at = s.find('e').unwrap_or(s.len());
            s.insert(at, '.');
        }
    } else if let Some(dot) = s.find('.') {
        let end = s.find('e').unwrap_or(s.len());
        let digits = s[dot..end].trim_end_matches('0');
        let keep = if digits == "." { 0 } else { digits.len() };
        s.replace_range(dot + keep..end, "");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use acc_lang::builtins::parse_format;
    use Arg::{Char as C, Float as F, Int as I, Str as S};

    fn run(fmt: &str, arg: Arg) -> String {
        let pieces = parse_format(fmt).unwrap();
        printf(&pieces, &[arg])
    }

    /// The oracle: glibc's `snprintf` for every case (tests/printf_oracle.c generates it; its
    /// values are printed with 17 digits, hence the allowed lints).
    #[allow(clippy::excessive_precision, clippy::approx_constant)]
    const CASES: &[(&str, Arg, &str)] = include!("../../tests/printf_oracle.in");

    #[test]
    fn matches_c() {
        let mut failures = Vec::new();
        for &(fmt, arg, want) in CASES {
            if GLIBC_BUGS
                .iter()
                .any(|b| (b.0, b.1, b.2) == (fmt, arg, want))
            {
                continue;
            }
            let got = run(fmt, arg);
            if got != want {
                failures.push(format!("{fmt:?} {arg:?}: got {got:?}, C gives {want:?}"));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} cases differ:\n{}",
            failures.len(),
            CASES.len(),
            failures.join("\n")
        );
        assert!(CASES.len() > 1500);
    }

    /// Where glibc departs from the C standard, the standard wins: `%#g` keeps trailing zeros
    /// (C11 7.21.6.1), but glibc drops them when rounding carries into a new leading digit.
    const GLIBC_BUGS: &[(&str, Arg, &str, &str)] = &[("%#g", F(999999.5), "1.e+06", "1.00000e+06")];

    #[test]
    fn standard_over_glibc() {
        for &(fmt, arg, glibc, standard) in GLIBC_BUGS {
            assert!(
                CASES.contains(&(fmt, arg, glibc)),
                "{fmt} {arg:?} not in the oracle"
            );
            assert_eq!(run(fmt, arg), standard);
        }
        assert_eq!(run("%#g", F(9.9999999)), "10.0000");
        assert_eq!(run("%#.3g", F(99.99)), "100.");
        assert_eq!(run("%#.3g", F(999.9)), "1.00e+03");
    }

    #[test]
    fn mixed_format() {
        let pieces = parse_format("x=%5d, %0.6f%% [%s] %c%c\n").unwrap();
        let got = printf(&pieces, &[I(42), F(0.5), S("ok"), C('h' as i64), C(0x00e9)]);
        assert_eq!(got, "x=   42, 0.500000% [ok] hé\n");
    }

    #[test]
    fn missing_and_extra_arguments() {
        let pieces = parse_format("%d and %d").unwrap();
        assert_eq!(printf(&pieces, &[I(1)]), "1 and ");
        assert_eq!(printf(&pieces, &[]), " and ");
        assert_eq!(printf(&pieces, &[I(1), I(2), I(3)]), "1 and 2");
    }

    #[test]
    fn unicode_counts_characters() {
        assert_eq!(run("%6s|", S("héllo")), " héllo|");
        assert_eq!(run("%.2s|", S("héllo")), "hé|");
        assert_eq!(run("%-3c|", C(0x1F600)), "😀  |");
        assert_eq!(run("%c", C(-1)), "\u{FFFD}");
        assert_eq!(run("%c", C(0xD800)), "\u{FFFD}");
    }

    #[test]
    fn negative_nan_and_unsigned_of_negative() {
        assert_eq!(run("%f", F(-f64::NAN)), "nan");
        assert_eq!(run("%+g", F(-f64::NAN)), "+nan");
        assert_eq!(run("%u", I(-1)), "18446744073709551615");
        assert_eq!(run("%x", I(-1)), "ffffffffffffffff");
        assert_eq!(run("%ld %lld", I(7)), "7 ");
        assert_eq!(run("%lld", I(i64::MIN)), "-9223372036854775808");
    }

    #[test]
    fn float_argument_of_an_integer_conversion_converts() {
        assert_eq!(run("%d", F(2.9)), "2");
        assert_eq!(run("%.1f", I(3)), "3.0");
    }
}
