//! `clock()` and `param(name, default)`.

use std::sync::OnceLock;
use std::time::Instant;

use acc_runtime::abi::{string_arg, Ctx};
use acc_runtime::host::{fail, guarded, host_state};
use acc_runtime::RunErrorKind;

use crate::arrays::symbol_list;

/// `clock()`: seconds from a monotonic clock (counted from the first call in the process;
/// only differences mean anything).
///
/// # Safety
/// `ctx` is a live context (only a panic, a runtime bug, is recorded in it).
pub unsafe extern "C" fn acc_clock(ctx: *mut Ctx) -> f64 {
    guarded(ctx, None, || {
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_secs_f64()
    })
}

/// The text of an integer parameter as an i64: decimal, `0x` hexadecimal or `0b` binary,
/// with an optional sign and `_` separators, as integer literals are written.
pub fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (radix, digits) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, h)
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        (2, b)
    } else {
        (10, t)
    };
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = i128::from(u64::from_str_radix(&digits, radix).ok()?);
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// The text of a float parameter: anything Rust's float parser takes (`1e-6`, `100`, `.5`,
/// `inf`, `nan`), with `_` separators allowed.
fn float_text(text: &str) -> String {
    text.trim().chars().filter(|&c| c != '_').collect()
}

pub fn parse_f64(text: &str) -> Option<f64> {
    float_text(text).parse().ok()
}

/// Parsed directly as f32, so that the value is correctly rounded once.
pub fn parse_f32(text: &str) -> Option<f32> {
    float_text(text).parse().ok()
}

pub fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// `param(name, default)`: the `--set` value converted by `parse`, the default when there is
/// none, and a run-time error naming the parameter when the value is not a `ty`.
unsafe fn param<T>(
    ctx: *mut Ctx,
    name: *const u8,
    name_len: usize,
    default: T,
    ty: &'static str,
    parse: impl Fn(&str) -> Option<T>,
) -> T {
    let name = string_arg(name, name_len);
    let Some(text) = host_state(ctx).param(&name) else {
        return default;
    };
    match parse(text) {
        Some(v) => v,
        None => {
            let kind = RunErrorKind::BadParam {
                name: name.into_owned(),
                value: text.to_string(),
                ty,
            };
            fail(ctx, kind, None);
            default
        }
    }
}

/// # Safety
/// `ctx` is a live context; `name` points at `name_len` bytes (so for every `acc_param_*`).
pub unsafe extern "C" fn acc_param_bool(ctx: *mut Ctx, name: *const u8, len: usize, d: u8) -> u8 {
    guarded(ctx, None, || {
        u8::from(param(
            ctx,
            name,
            len,
            d != 0,
            "bool (`true` or `false`)",
            parse_bool,
        ))
    })
}

/// # Safety
/// As `acc_param_bool`.
pub unsafe extern "C" fn acc_param_i32(ctx: *mut Ctx, name: *const u8, len: usize, d: i32) -> i32 {
    guarded(ctx, None, || {
        param(ctx, name, len, d, "an i32", |t| {
            parse_int(t).and_then(|v| i32::try_from(v).ok())
        })
    })
}

/// # Safety
/// As `acc_param_bool`.
pub unsafe extern "C" fn acc_param_i64(ctx: *mut Ctx, name: *const u8, len: usize, d: i64) -> i64 {
    guarded(ctx, None, || param(ctx, name, len, d, "an i64", parse_int))
}

/// # Safety
/// As `acc_param_bool`.
pub unsafe extern "C" fn acc_param_f32(ctx: *mut Ctx, name: *const u8, len: usize, d: f32) -> f32 {
    guarded(ctx, None, || param(ctx, name, len, d, "an f32", parse_f32))
}

/// # Safety
/// As `acc_param_bool`.
pub unsafe extern "C" fn acc_param_f64(ctx: *mut Ctx, name: *const u8, len: usize, d: f64) -> f64 {
    guarded(ctx, None, || param(ctx, name, len, d, "an f64", parse_f64))
}

pub fn symbols() -> Vec<(&'static str, *const u8)> {
    symbol_list![acc_clock acc_param_bool acc_param_i32 acc_param_i64 acc_param_f32 acc_param_f64]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestCtx;

    #[test]
    fn clock_is_monotonic() {
        unsafe {
            let a = acc_clock(std::ptr::null_mut());
            std::thread::sleep(std::time::Duration::from_millis(5));
            let b = acc_clock(std::ptr::null_mut());
            assert!(b - a >= 0.004, "{a} {b}");
            assert!(a >= 0.0);
        }
    }

    #[test]
    fn integers() {
        assert_eq!(parse_int("100"), Some(100));
        assert_eq!(parse_int(" -42 "), Some(-42));
        assert_eq!(parse_int("+7"), Some(7));
        assert_eq!(parse_int("1_000_000"), Some(1_000_000));
        assert_eq!(parse_int("0x1f"), Some(31));
        assert_eq!(parse_int("-0b101"), Some(-5));
        assert_eq!(parse_int("9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int("-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_int("9223372036854775808"), None);
        for bad in [
            "", "-", "1e6", "1.0", "abc", "0x", "--1", "+-1", "12a", "0xg",
        ] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn floats_and_bools() {
        assert_eq!(parse_f64("1e-6"), Some(1e-6));
        assert_eq!(parse_f64("100"), Some(100.0));
        assert_eq!(parse_f64("-.5"), Some(-0.5));
        assert_eq!(parse_f64("1_000.5"), Some(1000.5));
        assert_eq!(parse_f64("inf"), Some(f64::INFINITY));
        assert!(parse_f64("nan").unwrap().is_nan());
        assert_eq!(parse_f64("abc"), None);
        assert_eq!(parse_f64(""), None);
        // Rounded once, to f32: not the f64 value rounded again.
        assert_eq!(parse_f32("0.1"), Some(0.1f32));
        assert_eq!(parse_f32("16777217"), Some(16777216.0));
        assert_eq!(parse_bool("true"), Some(true));
        assert_eq!(parse_bool("false"), Some(false));
        assert_eq!(parse_bool("1"), None);
        assert_eq!(parse_bool("True"), None);
    }

    unsafe fn get<T>(
        t: &TestCtx,
        f: unsafe extern "C" fn(*mut Ctx, *const u8, usize, T) -> T,
        name: &str,
        d: T,
    ) -> T {
        f(t.ptr(), name.as_ptr(), name.len(), d)
    }

    #[test]
    fn params_from_set() {
        let mut t = TestCtx::new();
        let h = t.context.host();
        h.set_param("n", "100");
        h.set_param("tol", "1e-6");
        h.set_param("verbose", "true");
        h.set_param("big", "3000000000");
        unsafe {
            assert_eq!(get(&t, acc_param_i64, "n", 5), 100);
            assert_eq!(get(&t, acc_param_i32, "n", 5), 100);
            assert_eq!(get(&t, acc_param_i64, "m", 5), 5);
            assert_eq!(get(&t, acc_param_f64, "tol", 0.5), 1e-6);
            assert_eq!(get(&t, acc_param_f32, "tol", 0.5), 1e-6f32);
            assert_eq!(get(&t, acc_param_f64, "n", 0.5), 100.0);
            assert_eq!(get(&t, acc_param_f64, "x", 0.5), 0.5);
            assert_eq!(get(&t, acc_param_bool, "verbose", 0), 1);
            assert_eq!(get(&t, acc_param_bool, "quiet", 0), 0);
            assert_eq!(get(&t, acc_param_i64, "big", 0), 3_000_000_000);
        }
        t.assert_ok();
        unsafe { assert_eq!(get(&t, acc_param_i32, "big", 7), 7) };
        assert_eq!(
            t.error(),
            (
                RunErrorKind::BadParam {
                    name: "big".into(),
                    value: "3000000000".into(),
                    ty: "an i32"
                },
                None
            )
        );
        unsafe { get(&t, acc_param_i64, "tol", 0) };
        let (kind, _) = t.error();
        assert_eq!(
            kind.to_string(),
            "parameter `tol` expects an i64, found `1e-6`"
        );
        unsafe { get(&t, acc_param_bool, "n", 0) };
        let (kind, _) = t.error();
        assert_eq!(
            kind.to_string(),
            "parameter `n` expects bool (`true` or `false`), found `100`"
        );
        unsafe { get(&t, acc_param_f64, "verbose", 0.0) };
        assert!(matches!(t.error().0, RunErrorKind::BadParam { .. }));
    }
}
