//! `print` and `printf`: values go to the context's output sink. Compiled code calls one
//! `acc_print_*` per value with `acc_print_space` between them and `acc_print_newline` at the
//! end.

use std::fmt::Write;

use acc_lang::builtins::{parse_format, FormatArg, FormatPiece};
use acc_runtime::abi::{
    string_arg, ArrayHeader, Ctx, StrRef, ELEM_BOOL, ELEM_F32, ELEM_F64, ELEM_I32, ELEM_I64,
};
use acc_runtime::array::{elements, shape, Element};
use acc_runtime::host::{fail, host_state};
use acc_runtime::RunErrorKind;

use crate::format::{self, Arg, ArrayElems};

/// # Safety
/// `ctx` is a live context (so for every function of this module).
pub unsafe extern "C" fn acc_print_bool(ctx: *mut Ctx, v: u8) {
    host_state(ctx).write_str(format::bool_text(v != 0));
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_i32(ctx: *mut Ctx, v: i32) {
    host_state(ctx).write_str(&v.to_string());
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_i64(ctx: *mut Ctx, v: i64) {
    host_state(ctx).write_str(&v.to_string());
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_f32(ctx: *mut Ctx, v: f32) {
    host_state(ctx).write_str(&format::f32_text(v));
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_f64(ctx: *mut Ctx, v: f64) {
    host_state(ctx).write_str(&format::f64_text(v));
}

/// # Safety
/// As `acc_print_bool`; `ptr` points at `len` bytes.
pub unsafe extern "C" fn acc_print_str(ctx: *mut Ctx, ptr: *const u8, len: usize) {
    if len > 0 {
        host_state(ctx).write(std::slice::from_raw_parts(ptr, len));
    }
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_space(ctx: *mut Ctx) {
    host_state(ctx).write(b" ");
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_newline(ctx: *mut Ctx) {
    host_state(ctx).write(b"\n");
}

/// # Safety
/// As `acc_print_bool`; `a` is a live array.
pub unsafe extern "C" fn acc_print_array(ctx: *mut Ctx, a: *mut ArrayHeader) {
    match array_text(a) {
        Some(text) => host_state(ctx).write_str(&text),
        None => fail(
            ctx,
            RunErrorKind::Internal {
                message: format!("print of an array with element code {}", (*a).elem),
            },
            None,
        ),
    }
}

/// The text of an array, `None` for an unknown element code.
///
/// # Safety
/// `a` is a live array.
pub unsafe fn array_text(a: *const ArrayHeader) -> Option<String> {
    unsafe fn text<T: Element>(a: *const ArrayHeader, item: fn(&mut String, T)) -> String {
        let values = elements::<T>(a);
        let dims: Vec<usize> = shape(a).iter().map(|&d| d as usize).collect();
        let write = |out: &mut String, i: usize| item(out, values[i]);
        format::array(&ArrayElems {
            shape: &dims,
            write: &write,
        })
    }
    Some(match (*a).elem {
        ELEM_BOOL => text::<u8>(a, |o, v| o.push_str(format::bool_text(v != 0))),
        ELEM_I32 => text::<i32>(a, |o, v| {
            let _ = write!(o, "{v}");
        }),
        ELEM_I64 => text::<i64>(a, |o, v| {
            let _ = write!(o, "{v}");
        }),
        ELEM_F32 => text::<f32>(a, format::push_f32),
        ELEM_F64 => text::<f64>(a, format::push_f64),
        _ => return None,
    })
}

/// C's `printf`. `args` holds one slot per conversion: integers sign-extended to i64, floats
/// as f64 bits, `%s` the address of a `StrRef`, `%c` a code point.
///
/// # Safety
/// As `acc_print_bool`; `fmt` points at `fmt_len` bytes, `args` at `nargs` slots, and every
/// `%s` slot at a live `StrRef`.
pub unsafe extern "C" fn acc_printf(
    ctx: *mut Ctx,
    fmt: *const u8,
    fmt_len: usize,
    args: *const u64,
    nargs: u32,
) {
    let fmt = string_arg(fmt, fmt_len);
    let pieces = match parse_format(&fmt) {
        Ok(p) => p,
        Err(e) => {
            // The checker accepted this format, so this is a compiler bug.
            let message = format!("printf format {fmt:?}: {}", e.message);
            fail(ctx, RunErrorKind::Internal { message }, None);
            return;
        }
    };
    let slots: &[u64] = if nargs == 0 || args.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(args, nargs as usize)
    };
    let specs = pieces.iter().filter_map(|p| match p {
        FormatPiece::Spec(s) => Some(s),
        FormatPiece::Text(_) => None,
    });
    let mut strings = Vec::new();
    let mut converted = Vec::with_capacity(slots.len());
    for (spec, &slot) in specs.zip(slots) {
        converted.push(match spec.arg() {
            FormatArg::Int => Arg::Int(slot as i64),
            FormatArg::Char => Arg::Char(slot as i64),
            FormatArg::Float => Arg::Float(f64::from_bits(slot)),
            FormatArg::Str => {
                let s = slot as usize as *const StrRef;
                let text = if s.is_null() {
                    "".into()
                } else {
                    string_arg((*s).ptr, (*s).len)
                };
                strings.push(text);
                Arg::Str("")
            }
        });
    }
    // Point the `%s` arguments at their (possibly repaired) text.
    let mut texts = strings.iter();
    for arg in converted.iter_mut() {
        if let Arg::Str(s) = arg {
            *s = texts.next().map_or("", |t| t.as_ref());
        }
    }
    host_state(ctx).write_str(&format::printf(&pieces, &converted));
}

pub fn symbols() -> Vec<(&'static str, *const u8)> {
    vec![
        ("acc_print_bool", acc_print_bool as *const u8),
        ("acc_print_i32", acc_print_i32 as *const u8),
        ("acc_print_i64", acc_print_i64 as *const u8),
        ("acc_print_f32", acc_print_f32 as *const u8),
        ("acc_print_f64", acc_print_f64 as *const u8),
        ("acc_print_str", acc_print_str as *const u8),
        ("acc_print_array", acc_print_array as *const u8),
        ("acc_print_space", acc_print_space as *const u8),
        ("acc_print_newline", acc_print_newline as *const u8),
        ("acc_printf", acc_printf as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestCtx;
    use acc_runtime::array::{from_elements, release};

    #[test]
    fn scalars_separators_and_strings() {
        let mut t = TestCtx::new();
        let s = "x =";
        unsafe {
            acc_print_str(t.ptr(), s.as_ptr(), s.len());
            acc_print_space(t.ptr());
            acc_print_i32(t.ptr(), -7);
            acc_print_space(t.ptr());
            acc_print_i64(t.ptr(), i64::MIN);
            acc_print_space(t.ptr());
            acc_print_bool(t.ptr(), 1);
            acc_print_space(t.ptr());
            acc_print_bool(t.ptr(), 0);
            acc_print_space(t.ptr());
            acc_print_f32(t.ptr(), 0.1);
            acc_print_space(t.ptr());
            acc_print_f64(t.ptr(), 0.1f32 as f64);
            acc_print_space(t.ptr());
            acc_print_f64(t.ptr(), 1e16);
            acc_print_str(t.ptr(), std::ptr::null(), 0);
            acc_print_newline(t.ptr());
        }
        assert_eq!(
            t.output(),
            "x = -7 -9223372036854775808 true false 0.1 0.10000000149011612 1e16\n"
        );
        t.assert_ok();
    }

    #[test]
    fn arrays_of_every_type() {
        let mut t = TestCtx::new();
        unsafe {
            let a = from_elements::<f64>(&[3], &[1.0, 2.0, 3.0]).unwrap();
            acc_print_array(t.ptr(), a);
            release(a);
            assert_eq!(t.output(), "[1.0, 2.0, 3.0]");
            let a = from_elements::<f32>(&[2], &[0.1, 1e-7]).unwrap();
            acc_print_array(t.ptr(), a);
            release(a);
            assert_eq!(t.output(), "[0.1, 1e-7]");
            let a = from_elements::<u8>(&[2], &[1, 0]).unwrap();
            acc_print_array(t.ptr(), a);
            release(a);
            assert_eq!(t.output(), "[true, false]");
            let a = from_elements::<i32>(&[2, 3], &[0, 0, 0, 0, 0, 5]).unwrap();
            acc_print_array(t.ptr(), a);
            release(a);
            assert_eq!(t.output(), "[[0, 0, 0],\n [0, 0, 5]]");
            let v: Vec<i64> = (0..12).collect();
            let a = from_elements::<i64>(&[12], &v).unwrap();
            acc_print_array(t.ptr(), a);
            release(a);
            assert_eq!(t.output(), "[0, 1, 2, ..., 9, 10, 11]");
        }
        t.assert_ok();
    }

    fn printf_text(t: &mut TestCtx, fmt: &str, args: &[u64]) -> String {
        unsafe {
            acc_printf(
                t.ptr(),
                fmt.as_ptr(),
                fmt.len(),
                args.as_ptr(),
                args.len() as u32,
            )
        };
        t.output()
    }

    #[test]
    fn printf_unpacks_slots() {
        let mut t = TestCtx::new();
        let name = StrRef {
            ptr: "world".as_ptr(),
            len: 5,
        };
        let args = [
            (-5i64) as u64,
            2.5f64.to_bits(),
            (&name as *const StrRef) as u64,
            'Z' as u64,
            (-1i64) as u64,
            f64::from(1.5f32).to_bits(),
        ];
        let got = printf_text(&mut t, "%4d|%.2f|%-7s|%c|%x|%g%%\n", &args);
        assert_eq!(got, "  -5|2.50|world  |Z|ffffffffffffffff|1.5%\n");
        assert_eq!(
            printf_text(&mut t, "no conversions\n", &[]),
            "no conversions\n"
        );
        let bad = "%q";
        unsafe { acc_printf(t.ptr(), bad.as_ptr(), bad.len(), std::ptr::null(), 0) };
        assert!(matches!(t.error().0, RunErrorKind::Internal { .. }));
    }
}
