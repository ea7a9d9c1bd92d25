//! Math functions for compiled code: `acc_math_<name>_f32` / `acc_math_<name>_f64` for every
//! float math built-in (and the float forms of `abs min max`), so that jit-host can call any
//! of them by name where it does not emit an instruction. No context: they cannot fail, and
//! they need no panic guard (`acc_runtime::host::guarded`): float operations and C library
//! calls, no indexing or allocation, cannot panic.
//!
//! They are Rust's `f32`/`f64` methods, which call the C library's functions of the same
//! precision: `round` rounds half away from zero (C's `round`), `fmod` is Rust's `%` (C's
//! `fmod`), `fma` is a fused multiply-add, and `min max fmin fmax` follow C's `fmin`/`fmax`
//! (a NaN operand yields the other operand).

macro_rules! math {
    ($($name:ident / $name32:ident, $name64:ident: |$($a:ident),*| $body:expr;)*) => {
        $(
            pub extern "C" fn $name32($($a: f32),*) -> f32 {
                $body
            }
            pub extern "C" fn $name64($($a: f64),*) -> f64 {
                $body
            }
        )*

        pub fn symbols() -> Vec<(&'static str, *const u8)> {
            vec![$(
                (stringify!($name32), $name32 as *const u8),
                (stringify!($name64), $name64 as *const u8),
            )*]
        }
    };
}

math! {
    sqrt / acc_math_sqrt_f32, acc_math_sqrt_f64: |x| x.sqrt();
    cbrt / acc_math_cbrt_f32, acc_math_cbrt_f64: |x| x.cbrt();
    exp / acc_math_exp_f32, acc_math_exp_f64: |x| x.exp();
    exp2 / acc_math_exp2_f32, acc_math_exp2_f64: |x| x.exp2();
    expm1 / acc_math_expm1_f32, acc_math_expm1_f64: |x| x.exp_m1();
    log / acc_math_log_f32, acc_math_log_f64: |x| x.ln();
    log2 / acc_math_log2_f32, acc_math_log2_f64: |x| x.log2();
    log10 / acc_math_log10_f32, acc_math_log10_f64: |x| x.log10();
    log1p / acc_math_log1p_f32, acc_math_log1p_f64: |x| x.ln_1p();
    pow / acc_math_pow_f32, acc_math_pow_f64: |x, y| x.powf(y);
    sin / acc_math_sin_f32, acc_math_sin_f64: |x| x.sin();
    cos / acc_math_cos_f32, acc_math_cos_f64: |x| x.cos();
    tan / acc_math_tan_f32, acc_math_tan_f64: |x| x.tan();
    asin / acc_math_asin_f32, acc_math_asin_f64: |x| x.asin();
    acos / acc_math_acos_f32, acc_math_acos_f64: |x| x.acos();
    atan / acc_math_atan_f32, acc_math_atan_f64: |x| x.atan();
    atan2 / acc_math_atan2_f32, acc_math_atan2_f64: |y, x| y.atan2(x);
    sinh / acc_math_sinh_f32, acc_math_sinh_f64: |x| x.sinh();
    cosh / acc_math_cosh_f32, acc_math_cosh_f64: |x| x.cosh();
    tanh / acc_math_tanh_f32, acc_math_tanh_f64: |x| x.tanh();
    floor / acc_math_floor_f32, acc_math_floor_f64: |x| x.floor();
    ceil / acc_math_ceil_f32, acc_math_ceil_f64: |x| x.ceil();
    round / acc_math_round_f32, acc_math_round_f64: |x| x.round();
    trunc / acc_math_trunc_f32, acc_math_trunc_f64: |x| x.trunc();
    hypot / acc_math_hypot_f32, acc_math_hypot_f64: |x, y| x.hypot(y);
    fma / acc_math_fma_f32, acc_math_fma_f64: |a, b, c| a.mul_add(b, c);
    copysign / acc_math_copysign_f32, acc_math_copysign_f64: |x, y| x.copysign(y);
    fabs / acc_math_fabs_f32, acc_math_fabs_f64: |x| x.abs();
    abs / acc_math_abs_f32, acc_math_abs_f64: |x| x.abs();
    fmin / acc_math_fmin_f32, acc_math_fmin_f64: |x, y| x.min(y);
    fmax / acc_math_fmax_f32, acc_math_fmax_f64: |x, y| x.max(y);
    min / acc_math_min_f32, acc_math_min_f64: |x, y| x.min(y);
    max / acc_math_max_f32, acc_math_max_f64: |x, y| x.max(y);
    fmod / acc_math_fmod_f32, acc_math_fmod_f64: |x, y| x % y;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_is_half_away_from_zero() {
        assert_eq!(acc_math_round_f64(2.5), 3.0);
        assert_eq!(acc_math_round_f64(-2.5), -3.0);
        assert_eq!(acc_math_round_f64(0.49999999999999994), 0.0);
        assert_eq!(acc_math_round_f32(1.5), 2.0);
        assert_eq!(acc_math_round_f32(-0.5), -1.0);
    }

    #[test]
    fn fmin_fmax_prefer_numbers() {
        assert_eq!(acc_math_fmin_f64(f64::NAN, 1.0), 1.0);
        assert_eq!(acc_math_fmax_f64(2.0, f64::NAN), 2.0);
        assert_eq!(acc_math_min_f32(f32::NAN, -1.0), -1.0);
        assert_eq!(acc_math_max_f32(3.0, 4.0), 4.0);
        assert!(acc_math_fmax_f64(f64::NAN, f64::NAN).is_nan());
    }

    #[test]
    fn fmod_is_c_fmod() {
        assert_eq!(acc_math_fmod_f64(5.5, 2.0), 1.5);
        assert_eq!(acc_math_fmod_f64(-5.5, 2.0), -1.5);
        assert_eq!(acc_math_fmod_f32(7.0, -3.0), 1.0);
        assert!(acc_math_fmod_f64(1.0, 0.0).is_nan());
    }

    #[test]
    fn fma_is_fused() {
        // (1 + 2^-30)(1 - 2^-30) - 1 = -2^-60 exactly when fused, 0 when rounded first.
        let e = 2f64.powi(-30);
        assert_eq!(acc_math_fma_f64(1.0 + e, 1.0 - e, -1.0), -(2f64.powi(-60)));
        let e = 2f32.powi(-13);
        assert_eq!(acc_math_fma_f32(1.0 + e, 1.0 - e, -1.0), -(2f32.powi(-26)));
    }

    #[test]
    fn values() {
        assert_eq!(acc_math_sqrt_f64(2.0), std::f64::consts::SQRT_2);
        assert_eq!(acc_math_cbrt_f64(27.0), 3.0);
        assert_eq!(acc_math_exp_f64(0.0), 1.0);
        assert_eq!(acc_math_exp2_f32(10.0), 1024.0);
        assert_eq!(acc_math_expm1_f64(0.0), 0.0);
        assert_eq!(acc_math_log_f64(1.0), 0.0);
        assert_eq!(acc_math_log2_f64(8.0), 3.0);
        assert_eq!(acc_math_log10_f32(1000.0), 3.0);
        assert!((acc_math_log1p_f64(1e-20) - 1e-20).abs() < 1e-35);
        assert_eq!(acc_math_pow_f64(2.0, 10.0), 1024.0);
        assert_eq!(acc_math_pow_f32(2.0, 0.5), std::f32::consts::SQRT_2);
        assert_eq!(acc_math_sin_f64(0.0), 0.0);
        assert_eq!(acc_math_cos_f64(0.0), 1.0);
        assert_eq!(acc_math_tan_f32(0.0), 0.0);
        assert_eq!(acc_math_asin_f64(1.0), std::f64::consts::FRAC_PI_2);
        assert_eq!(acc_math_acos_f64(1.0), 0.0);
        assert_eq!(acc_math_atan_f64(1.0), std::f64::consts::FRAC_PI_4);
        assert_eq!(
            acc_math_atan2_f64(1.0, -1.0),
            3.0 * std::f64::consts::FRAC_PI_4
        );
        assert_eq!(acc_math_atan2_f32(-0.0, 1.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(acc_math_sinh_f64(0.0), 0.0);
        assert_eq!(acc_math_cosh_f64(0.0), 1.0);
        assert_eq!(acc_math_tanh_f64(f64::INFINITY), 1.0);
        assert_eq!(acc_math_floor_f64(-1.5), -2.0);
        assert_eq!(acc_math_ceil_f32(-1.5), -1.0);
        assert_eq!(acc_math_trunc_f64(-1.7), -1.0);
        assert_eq!(acc_math_hypot_f64(3.0, 4.0), 5.0);
        assert_eq!(
            acc_math_hypot_f64(1e300, 1e300),
            1e300 * std::f64::consts::SQRT_2
        );
        assert_eq!(acc_math_copysign_f64(2.0, -0.0), -2.0);
        assert_eq!(acc_math_fabs_f32(-3.0), 3.0);
        assert_eq!(acc_math_abs_f64(-0.0).to_bits(), 0);
    }

    #[test]
    fn f32_versions_compute_in_f32() {
        // sin in f32 is the f32 rounding of the true value, not an f64 result rounded later.
        let x = 1.0e-3f32;
        assert_eq!(acc_math_sin_f32(x), x.sin());
        assert_eq!(acc_math_exp_f32(1.0), std::f32::consts::E);
        assert_eq!(symbols().len(), 2 * 34);
    }
}
