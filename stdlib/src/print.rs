//! `print` and `printf`: values go to the context's output sink. Compiled code calls one
//! `acc_print_*` per value with `acc_print_space` between them and `acc_print_newline` at the
//! end.

use std::fmt::Write;

use acc_lang::builtins::{parse_format, FormatArg, FormatPiece};
use acc_lang::ir::ScalarType;
use acc_runtime::abi::{
    string_arg, ArrayHeader, Ctx, StrRef, ELEM_BOOL, ELEM_F32, ELEM_F64, ELEM_I32, ELEM_I64,
};
use acc_runtime::array::{elements, shape, Element};
use acc_runtime::host::{fail, guarded, host_state};
use acc_runtime::RunErrorKind;

use crate::format::{self, Arg, ArrayElems};

/// The text `print` writes for a scalar of type `ty` given in its 8-byte slot form (the value
/// in the low bytes): what the `acc_print_*` functions write, and device output records hold.
pub fn scalar_text(ty: ScalarType, slot: u64) -> String {
    match ty {
        ScalarType::Bool => format::bool_text(slot as u8 != 0).to_string(),
        ScalarType::I32 => (slot as u32 as i32).to_string(),
        ScalarType::I64 => (slot as i64).to_string(),
        ScalarType::F32 => format::f32_text(f32::from_bits(slot as u32)),
        ScalarType::F64 => format::f64_text(f64::from_bits(slot)),
    }
}

/// # Safety
/// `ctx` is a live context (so for every function of this module).
pub unsafe extern "C" fn acc_print_bool(ctx: *mut Ctx, v: u8) {
    guarded(ctx, None, || {
        host_state(ctx).write_str(&scalar_text(ScalarType::Bool, u64::from(v)));
    })
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_i32(ctx: *mut Ctx, v: i32) {
    guarded(ctx, None, || {
        host_state(ctx).write_str(&scalar_text(ScalarType::I32, v as u32 as u64));
    })
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_i64(ctx: *mut Ctx, v: i64) {
    guarded(ctx, None, || {
        host_state(ctx).write_str(&scalar_text(ScalarType::I64, v as u64));
    })
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_f32(ctx: *mut Ctx, v: f32) {
    guarded(ctx, None, || {
        host_state(ctx).write_str(&scalar_text(ScalarType::F32, u64::from(v.to_bits())));
    })
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_f64(ctx: *mut Ctx, v: f64) {
    guarded(ctx, None, || {
        host_state(ctx).write_str(&scalar_text(ScalarType::F64, v.to_bits()));
    })
}

/// # Safety
/// As `acc_print_bool`; `ptr` points at `len` bytes.
pub unsafe extern "C" fn acc_print_str(ctx: *mut Ctx, ptr: *const u8, len: usize) {
    guarded(ctx, None, || {
        if len > 0 {
            host_state(ctx).write(std::slice::from_raw_parts(ptr, len));
        }
    })
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_space(ctx: *mut Ctx) {
    guarded(ctx, None, || {
        host_state(ctx).write(b" ");
    })
}

/// # Safety
/// As `acc_print_bool`.
pub unsafe extern "C" fn acc_print_newline(ctx: *mut Ctx) {
    guarded(ctx, None, || {
        host_state(ctx).write(b"\n");
    })
}

/// # Safety
/// As `acc_print_bool`; `a` is a live array.
pub unsafe extern "C" fn acc_print_array(ctx: *mut Ctx, a: *mut ArrayHeader) {
    guarded(ctx, None, || match array_text(a) {
        Some(text) => host_state(ctx).write_str(&text),
        None => fail(
            ctx,
            RunErrorKind::Internal {
                message: format!("print of an array with element code {}", (*a).elem),
            },
            None,
        ),
    })
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
    guarded(ctx, None, || {
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
        let string = |slot: u64| {
            let s = slot as usize as *const StrRef;
            if s.is_null() {
                String::new()
            } else {
                string_arg((*s).ptr, (*s).len).into_owned()
            }
        };
        host_state(ctx).write_str(&printf_text(&pieces, slots, string));
    })
}

/// The text of `printf` with the format `pieces` and one 8-byte slot per conversion, as
/// compiled code passes them: integers sign-extended to 64 bits, floats as `f64` bits, `%c` a
/// code point, `%s` something that `string` turns into its text (jit-host passes the address
/// of a `StrRef`; device code folds strings into the format and has no `%s`).
pub fn printf_text(
    pieces: &[FormatPiece],
    slots: &[u64],
    string: impl Fn(u64) -> String,
) -> String {
    let specs = pieces.iter().filter_map(|p| match p {
        FormatPiece::Spec(s) => Some(s),
        FormatPiece::Text(_) => None,
    });
    let strings: Vec<String> = specs
        .clone()
        .zip(slots)
        .filter(|(spec, _)| spec.arg() == FormatArg::Str)
        .map(|(_, &slot)| string(slot))
        .collect();
    let mut texts = strings.iter();
    let converted: Vec<Arg> = specs
        .zip(slots)
        .map(|(spec, &slot)| match spec.arg() {
            FormatArg::Int => Arg::Int(slot as i64),
            FormatArg::Char => Arg::Char(slot as i64),
            FormatArg::Float => Arg::Float(f64::from_bits(slot)),
            FormatArg::Str => Arg::Str(texts.next().map_or("", |t| t.as_str())),
        })
        .collect();
    format::printf(pieces, &converted)
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
    fn scalars_from_slots_read_as_print_writes_them() {
        let f64s = [
            0.1,
            -0.0,
            1e16,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
            2.5e-7,
        ];
        let texts: Vec<String> = f64s
            .iter()
            .map(|x| scalar_text(ScalarType::F64, x.to_bits()))
            .collect();
        assert_eq!(
            texts,
            ["0.1", "-0.0", "1e16", "nan", "inf", "-inf", "2.5e-7"]
        );
        let f32s = [0.1f32, 16777216.0, -0.0];
        let texts: Vec<String> = f32s
            .iter()
            .map(|x| scalar_text(ScalarType::F32, u64::from(x.to_bits())))
            .collect();
        assert_eq!(texts, ["0.1", "16777216.0", "-0.0"]);
        // An i32 slot holds the value sign-extended (device records) or zero-extended: both
        // read back as the i32.
        assert_eq!(scalar_text(ScalarType::I32, (-7i64) as u64), "-7");
        assert_eq!(
            scalar_text(ScalarType::I32, u64::from((-7i32) as u32)),
            "-7"
        );
        assert_eq!(
            scalar_text(ScalarType::I64, i64::MIN as u64),
            "-9223372036854775808"
        );
        assert_eq!(scalar_text(ScalarType::Bool, 1), "true");
        assert_eq!(scalar_text(ScalarType::Bool, 0), "false");
    }

    #[test]
    fn printf_text_takes_a_parsed_format_and_slots() {
        let pieces = parse_format("%5.2f|%x|%c|%s|%%\n").unwrap();
        let slots = [0.125f64.to_bits(), (-1i64) as u64, 'A' as u64, 9];
        let text = super::printf_text(&pieces, &slots, |s| format!("<{s}>"));
        assert_eq!(text, " 0.12|ffffffffffffffff|A|<9>|%\n");
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
