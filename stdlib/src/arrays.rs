//! Array constructors and host reductions (LANGUAGE.md section 6, "Arrays"). Reductions run
//! in index order in the element type (`sum` of an f32 array accumulates in f32), except that
//! integer `sum` and `product` accumulate in i64, wrapping on overflow.

use acc_runtime::abi::{ArrayHeader, Ctx, ELEM_BOOL, ELEM_F32, ELEM_F64, ELEM_I32, ELEM_I64};
use acc_runtime::array::{
    self, dims_from_raw, elem_size, elements, elements_mut, new_view, Element,
};
use acc_runtime::host::{fail, guarded, host_state};
use acc_runtime::RunErrorKind;

/// A new zero-filled array, or null after recording the error (without a site).
unsafe fn new_or_fail(ctx: *mut Ctx, elem: u32, rank: u32, dims: *const i64) -> *mut ArrayHeader {
    match dims_from_raw(rank, dims).and_then(|d| array::new_array(elem, d)) {
        Ok(a) => a,
        Err(kind) => {
            fail(ctx, kind, None);
            std::ptr::null_mut()
        }
    }
}

unsafe fn fill_with<T: Element>(a: *mut ArrayHeader, v: T) -> *mut ArrayHeader {
    if !a.is_null() {
        elements_mut::<T>(a).fill(v);
    }
    a
}

/// `ones([T,] d0, …)`; `ones(bool, …)` is all `true`.
///
/// # Safety
/// `ctx` is a live context (so for every function of this module); `dims` points at `rank`
/// extents; array arguments are live arrays of the element type the name says.
pub unsafe extern "C" fn acc_ones(
    ctx: *mut Ctx,
    elem: u32,
    rank: u32,
    dims: *const i64,
) -> *mut ArrayHeader {
    guarded(ctx, None, || {
        let a = new_or_fail(ctx, elem, rank, dims);
        match elem {
            ELEM_BOOL => fill_with::<u8>(a, 1),
            ELEM_I32 => fill_with::<i32>(a, 1),
            ELEM_I64 => fill_with::<i64>(a, 1),
            ELEM_F32 => fill_with::<f32>(a, 1.0),
            _ => fill_with::<f64>(a, 1.0),
        }
    })
}

/// `random([T,] d0, …)`: uniform in [0, 1), from the context's generator, in index order.
/// Only float element types (the checker rejects the others).
///
/// # Safety
/// As `acc_ones`.
pub unsafe extern "C" fn acc_random(
    ctx: *mut Ctx,
    elem: u32,
    rank: u32,
    dims: *const i64,
) -> *mut ArrayHeader {
    guarded(ctx, None, || {
        if elem != ELEM_F32 && elem != ELEM_F64 {
            let message = format!("random of element code {elem}");
            fail(ctx, RunErrorKind::Internal { message }, None);
            return std::ptr::null_mut();
        }
        let a = new_or_fail(ctx, elem, rank, dims);
        if a.is_null() {
            return a;
        }
        let rng = host_state(ctx).rng();
        if elem == ELEM_F32 {
            elements_mut::<f32>(a).fill_with(|| rng.next_f32());
        } else {
            elements_mut::<f64>(a).fill_with(|| rng.next_f64());
        }
        a
    })
}

macro_rules! fills {
    ($($name:ident: $t:ty, $elem:expr;)*) => {$(
        /// `fill(v, d0, …)`.
        ///
        /// # Safety
        /// As `acc_ones`.
        pub unsafe extern "C" fn $name(
            ctx: *mut Ctx,
            v: $t,
            rank: u32,
            dims: *const i64,
        ) -> *mut ArrayHeader {
            guarded(ctx, None, || {
                fill_with::<$t>(new_or_fail(ctx, $elem, rank, dims), v)

            })
        }
    )*};
}

fills! {
    acc_fill_bool: u8, ELEM_BOOL;
    acc_fill_i32: i32, ELEM_I32;
    acc_fill_i64: i64, ELEM_I64;
    acc_fill_f32: f32, ELEM_F32;
    acc_fill_f64: f64, ELEM_F64;
}

/// `iota(n)`: `[0, 1, …, n - 1]`.
///
/// # Safety
/// As `acc_ones`.
pub unsafe extern "C" fn acc_iota(ctx: *mut Ctx, n: i64) -> *mut ArrayHeader {
    guarded(ctx, None, || {
        let a = new_or_fail(ctx, ELEM_I64, 1, &n);
        if !a.is_null() {
            for (i, x) in elements_mut::<i64>(a).iter_mut().enumerate() {
                *x = i as i64;
            }
        }
        a
    })
}

/// `linspace(a, b, n)`: `n` evenly spaced values from `a` to `b` inclusive (numpy's
/// definition: `a + i * (b - a) / (n - 1)`, the last exactly `b`; `n == 1` gives `[a]`).
///
/// # Safety
/// As `acc_ones`.
pub unsafe extern "C" fn acc_linspace(ctx: *mut Ctx, a: f64, b: f64, n: i64) -> *mut ArrayHeader {
    guarded(ctx, None, || {
        let arr = new_or_fail(ctx, ELEM_F64, 1, &n);
        if !arr.is_null() {
            let xs = elements_mut::<f64>(arr);
            let step = if n > 1 { (b - a) / (n - 1) as f64 } else { 0.0 };
            for (i, x) in xs.iter_mut().enumerate() {
                *x = a + i as f64 * step;
            }
            if let [.., last] = xs {
                if n > 1 {
                    *last = b;
                }
            }
        }
        arr
    })
}

/// `seed(s)`.
///
/// # Safety
/// As `acc_ones`.
pub unsafe extern "C" fn acc_seed(ctx: *mut Ctx, s: i64) {
    guarded(ctx, None, || {
        host_state(ctx).seed(s as u64);
    })
}

/// `copy(a)`: a new array of the same shape and elements.
///
/// # Safety
/// As `acc_ones`.
pub unsafe extern "C" fn acc_copy(ctx: *mut Ctx, a: *mut ArrayHeader) -> *mut ArrayHeader {
    guarded(ctx, None, || {
        let dims = array::shape(a);
        let b = new_or_fail(ctx, (*a).elem, dims.len() as u32, dims.as_ptr());
        if !b.is_null() {
            let bytes = (*a).len as usize * elem_size((*a).elem).unwrap_or(0);
            std::ptr::copy_nonoverlapping((*a).data, (*b).data, bytes);
        }
        b
    })
}

/// `reshape(a, d0, …)`: a new header sharing `a`'s data.
///
/// # Safety
/// As `acc_ones`.
pub unsafe extern "C" fn acc_reshape(
    ctx: *mut Ctx,
    site: u32,
    a: *mut ArrayHeader,
    rank: u32,
    dims: *const i64,
) -> *mut ArrayHeader {
    guarded(ctx, Some(site), || {
        match dims_from_raw(rank, dims).and_then(|d| new_view(a, d)) {
            Ok(v) => v,
            Err(kind) => {
                fail(ctx, kind, Some(site));
                std::ptr::null_mut()
            }
        }
    })
}

macro_rules! array_lits {
    ($($name:ident: $t:ty;)*) => {$(
        /// `[e0, e1, …]`: a rank-1 array of the `n` values at `values`.
        ///
        /// # Safety
        /// As `acc_ones`; `values` points at `n` elements.
        pub unsafe extern "C" fn $name(ctx: *mut Ctx, values: *const $t, n: i64) -> *mut ArrayHeader {
            guarded(ctx, None, || {
                let a = new_or_fail(ctx, <$t as Element>::ELEM, 1, &n);
                if !a.is_null() && n > 0 {
                    elements_mut::<$t>(a).copy_from_slice(std::slice::from_raw_parts(values, n as usize));
                }
                a

            })
        }
    )*};
}

array_lits! {
    acc_array_lit_bool: u8;
    acc_array_lit_i32: i32;
    acc_array_lit_i64: i64;
    acc_array_lit_f32: f32;
    acc_array_lit_f64: f64;
}

macro_rules! int_reductions {
    ($($sum:ident, $product:ident: $t:ty;)*) => {$(
        /// `sum(a)` of an integer array, in i64 (wrapping).
        ///
        /// # Safety
        /// As `acc_ones`.
        pub unsafe extern "C" fn $sum(ctx: *mut Ctx, a: *mut ArrayHeader) -> i64 {
            guarded(ctx, None, || {
                elements::<$t>(a).iter().fold(0i64, |s, &x| s.wrapping_add(i64::from(x)))

            })
        }

        /// `product(a)` of an integer array, in i64 (wrapping).
        ///
        /// # Safety
        /// As `acc_ones`.
        pub unsafe extern "C" fn $product(ctx: *mut Ctx, a: *mut ArrayHeader) -> i64 {
            guarded(ctx, None, || {
                elements::<$t>(a).iter().fold(1i64, |s, &x| s.wrapping_mul(i64::from(x)))

            })
        }
    )*};
}

int_reductions! {
    acc_sum_i32, acc_product_i32: i32;
    acc_sum_i64, acc_product_i64: i64;
}

macro_rules! float_reductions {
    ($($sum:ident, $product:ident: $t:ty;)*) => {$(
        /// `sum(a)` of a float array, accumulated in its own type in index order.
        ///
        /// # Safety
        /// As `acc_ones`.
        pub unsafe extern "C" fn $sum(ctx: *mut Ctx, a: *mut ArrayHeader) -> $t {
            guarded(ctx, None, || {
                let mut s: $t = 0.0;
                for &x in elements::<$t>(a) {
                    s += x;
                }
                s

            })
        }

        /// `product(a)` of a float array, in its own type in index order.
        ///
        /// # Safety
        /// As `acc_ones`.
        pub unsafe extern "C" fn $product(ctx: *mut Ctx, a: *mut ArrayHeader) -> $t {
            guarded(ctx, None, || {
                let mut p: $t = 1.0;
                for &x in elements::<$t>(a) {
                    p *= x;
                }
                p

            })
        }
    )*};
}

float_reductions! {
    acc_sum_f32, acc_product_f32: f32;
    acc_sum_f64, acc_product_f64: f64;
}

/// The larger of two elements for `maximum`: floats as C's `fmax` (a NaN loses to a number).
trait Extremes: Element {
    fn larger(self, other: Self) -> Self;
    fn smaller(self, other: Self) -> Self;
    const ZERO: Self;
}

macro_rules! extremes {
    ($($t:ty: $zero:expr;)*) => {$(
        impl Extremes for $t {
            fn larger(self, other: Self) -> Self {
                self.max(other)
            }
            fn smaller(self, other: Self) -> Self {
                self.min(other)
            }
            const ZERO: Self = $zero;
        }
    )*};
}

extremes! { i32: 0; i64: 0; f32: 0.0; f64: 0.0; }

/// `maximum` (`max == true`) or `minimum` of a live array, in index order.
unsafe fn extreme<T: Extremes>(ctx: *mut Ctx, site: u32, a: *mut ArrayHeader, max: bool) -> T {
    let xs = elements::<T>(a);
    let Some((&first, rest)) = xs.split_first() else {
        let function = if max { "maximum" } else { "minimum" };
        fail(ctx, RunErrorKind::EmptyReduction { function }, Some(site));
        return T::ZERO;
    };
    if max {
        rest.iter().fold(first, |m, &x| m.larger(x))
    } else {
        rest.iter().fold(first, |m, &x| m.smaller(x))
    }
}

macro_rules! extreme_fns {
    ($($maximum:ident, $minimum:ident: $t:ty;)*) => {$(
        /// `maximum(a)`; fails on an empty array.
        ///
        /// # Safety
        /// As `acc_ones`.
        pub unsafe extern "C" fn $maximum(ctx: *mut Ctx, site: u32, a: *mut ArrayHeader) -> $t {
            guarded(ctx, Some(site), || {
                extreme::<$t>(ctx, site, a, true)

            })
        }

        /// `minimum(a)`; fails on an empty array.
        ///
        /// # Safety
        /// As `acc_ones`.
        pub unsafe extern "C" fn $minimum(ctx: *mut Ctx, site: u32, a: *mut ArrayHeader) -> $t {
            guarded(ctx, Some(site), || {
                extreme::<$t>(ctx, site, a, false)

            })
        }
    )*};
}

extreme_fns! {
    acc_maximum_i32, acc_minimum_i32: i32;
    acc_maximum_i64, acc_minimum_i64: i64;
    acc_maximum_f32, acc_minimum_f32: f32;
    acc_maximum_f64, acc_minimum_f64: f64;
}

macro_rules! symbol_list {
    ($($f:ident)*) => {
        vec![$((stringify!($f), $f as *const u8),)*]
    };
}

pub fn symbols() -> Vec<(&'static str, *const u8)> {
    symbol_list![
        acc_ones acc_random acc_fill_bool acc_fill_i32 acc_fill_i64 acc_fill_f32 acc_fill_f64
        acc_iota acc_linspace acc_seed acc_copy acc_reshape
        acc_array_lit_bool acc_array_lit_i32 acc_array_lit_i64 acc_array_lit_f32 acc_array_lit_f64
        acc_sum_i32 acc_sum_i64 acc_sum_f32 acc_sum_f64
        acc_product_i32 acc_product_i64 acc_product_f32 acc_product_f64
        acc_maximum_i32 acc_maximum_i64 acc_maximum_f32 acc_maximum_f64
        acc_minimum_i32 acc_minimum_i64 acc_minimum_f32 acc_minimum_f64
    ]
}

pub(crate) use symbol_list;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::TestCtx;
    use acc_runtime::array::{from_elements, release, shape};

    unsafe fn vals<T: Element>(a: *mut ArrayHeader) -> Vec<T> {
        let v = elements::<T>(a).to_vec();
        release(a);
        v
    }

    #[test]
    fn ones_and_fills() {
        let mut t = TestCtx::new();
        let dims = [2i64, 3];
        unsafe {
            let a = acc_ones(t.ptr(), ELEM_F64, 2, dims.as_ptr());
            assert_eq!(shape(a), &[2, 3]);
            assert_eq!(vals::<f64>(a), vec![1.0; 6]);
            assert_eq!(
                vals::<u8>(acc_ones(t.ptr(), ELEM_BOOL, 1, dims.as_ptr())),
                [1, 1]
            );
            assert_eq!(
                vals::<i32>(acc_ones(t.ptr(), ELEM_I32, 1, dims.as_ptr())),
                [1, 1]
            );
            assert_eq!(
                vals::<i64>(acc_ones(t.ptr(), ELEM_I64, 1, dims.as_ptr())),
                [1, 1]
            );
            assert_eq!(
                vals::<f32>(acc_ones(t.ptr(), ELEM_F32, 1, dims.as_ptr())),
                [1.0, 1.0]
            );
            assert_eq!(
                vals::<u8>(acc_fill_bool(t.ptr(), 1, 1, dims.as_ptr())),
                [1, 1]
            );
            assert_eq!(
                vals::<i32>(acc_fill_i32(t.ptr(), -4, 1, dims.as_ptr())),
                [-4, -4]
            );
            assert_eq!(
                vals::<i64>(acc_fill_i64(t.ptr(), 1 << 40, 1, dims.as_ptr())),
                [1 << 40; 2]
            );
            assert_eq!(
                vals::<f32>(acc_fill_f32(t.ptr(), 0.5, 1, dims.as_ptr())),
                [0.5, 0.5]
            );
            let a = acc_fill_f64(t.ptr(), 2.5, 2, dims.as_ptr());
            assert_eq!(vals::<f64>(a), [2.5; 6]);
        }
        t.assert_ok();
        let bad = [3i64, -2];
        unsafe {
            assert!(acc_fill_f64(t.ptr(), 1.0, 2, bad.as_ptr()).is_null());
            assert_eq!(
                t.error(),
                (RunErrorKind::NegativeExtent { dim: 1, extent: -2 }, None)
            );
            assert!(acc_ones(t.ptr(), ELEM_I32, 2, bad.as_ptr()).is_null());
            assert!(matches!(t.error().0, RunErrorKind::NegativeExtent { .. }));
        }
    }

    #[test]
    fn random_is_seeded_and_in_range() {
        let mut t = TestCtx::new();
        let dims = [1000i64];
        unsafe {
            acc_seed(t.ptr(), 42);
            let a = vals::<f64>(acc_random(t.ptr(), ELEM_F64, 1, dims.as_ptr()));
            acc_seed(t.ptr(), 42);
            let b = vals::<f64>(acc_random(t.ptr(), ELEM_F64, 1, dims.as_ptr()));
            assert_eq!(a, b);
            assert!(a.iter().all(|x| (0.0..1.0).contains(x)));
            let c = vals::<f64>(acc_random(t.ptr(), ELEM_F64, 1, dims.as_ptr()));
            assert_ne!(a, c);
            let f = vals::<f32>(acc_random(t.ptr(), ELEM_F32, 1, dims.as_ptr()));
            assert!(f.iter().all(|x| (0.0..1.0).contains(x)));
            let mean = f.iter().map(|&x| f64::from(x)).sum::<f64>() / 1000.0;
            assert!((mean - 0.5).abs() < 0.05);
        }
        // The default seed is fixed: two fresh contexts agree.
        let u = TestCtx::new();
        let v = TestCtx::new();
        unsafe {
            let x = vals::<f64>(acc_random(u.ptr(), ELEM_F64, 1, dims.as_ptr()));
            let y = vals::<f64>(acc_random(v.ptr(), ELEM_F64, 1, dims.as_ptr()));
            assert_eq!(x, y);
            assert!(acc_random(t.ptr(), ELEM_I32, 1, dims.as_ptr()).is_null());
        }
        assert!(matches!(t.error().0, RunErrorKind::Internal { .. }));
    }

    #[test]
    fn iota_and_linspace() {
        let mut t = TestCtx::new();
        unsafe {
            assert_eq!(vals::<i64>(acc_iota(t.ptr(), 5)), [0, 1, 2, 3, 4]);
            assert_eq!(vals::<i64>(acc_iota(t.ptr(), 0)), [] as [i64; 0]);
            assert_eq!(
                vals::<f64>(acc_linspace(t.ptr(), 0.0, 1.0, 5)),
                [0.0, 0.25, 0.5, 0.75, 1.0]
            );
            assert_eq!(vals::<f64>(acc_linspace(t.ptr(), 2.0, 3.0, 1)), [2.0]);
            assert_eq!(
                vals::<f64>(acc_linspace(t.ptr(), 2.0, 3.0, 0)),
                [] as [f64; 0]
            );
            let l = vals::<f64>(acc_linspace(t.ptr(), 0.0, 0.3, 4));
            assert_eq!(l[3], 0.3);
            assert_eq!(
                vals::<f64>(acc_linspace(t.ptr(), 1.0, -1.0, 3)),
                [1.0, 0.0, -1.0]
            );
        }
        t.assert_ok();
        unsafe { assert!(acc_iota(t.ptr(), -1).is_null()) };
        assert_eq!(
            t.error().0,
            RunErrorKind::NegativeExtent { dim: 0, extent: -1 }
        );
        unsafe { assert!(acc_linspace(t.ptr(), 0.0, 1.0, -3).is_null()) };
        assert_eq!(
            t.error().0,
            RunErrorKind::NegativeExtent { dim: 0, extent: -3 }
        );
    }

    #[test]
    fn copy_is_deep_and_reshape_shares() {
        let mut t = TestCtx::new();
        unsafe {
            let a = from_elements::<i32>(&[2, 3], &[1, 2, 3, 4, 5, 6]).unwrap();
            let b = acc_copy(t.ptr(), a);
            assert_ne!((*a).data, (*b).data);
            assert_eq!(shape(b), &[2, 3]);
            elements_mut::<i32>(b)[0] = 100;
            assert_eq!(elements::<i32>(a)[0], 1);
            let dims = [3i64, 2];
            let r = acc_reshape(t.ptr(), 4, a, 2, dims.as_ptr());
            assert_eq!(shape(r), &[3, 2]);
            elements_mut::<i32>(r)[5] = 60;
            assert_eq!(elements::<i32>(a)[5], 60);
            release(a);
            assert_eq!(vals::<i32>(r), [1, 2, 3, 4, 5, 60]);
            assert_eq!(vals::<i32>(b), [100, 2, 3, 4, 5, 6]);
            let e = from_elements::<u8>(&[0], &[]).unwrap();
            let f = acc_copy(t.ptr(), e);
            assert_eq!((*f).len, 0);
            release(e);
            release(f);
        }
        t.assert_ok();
        unsafe {
            let a = from_elements::<f64>(&[6], &[0.0; 6]).unwrap();
            let dims = [4i64];
            assert!(acc_reshape(t.ptr(), 8, a, 1, dims.as_ptr()).is_null());
            release(a);
        }
        assert_eq!(
            t.error(),
            (
                RunErrorKind::ReshapeMismatch {
                    from: vec![6],
                    to: vec![4]
                },
                Some(8)
            )
        );
    }

    #[test]
    fn array_literals() {
        let mut t = TestCtx::new();
        unsafe {
            let v = [1.5, 2.5];
            assert_eq!(vals::<f64>(acc_array_lit_f64(t.ptr(), v.as_ptr(), 2)), v);
            let v = [1.5f32];
            assert_eq!(vals::<f32>(acc_array_lit_f32(t.ptr(), v.as_ptr(), 1)), v);
            let v = [7i32, 8, 9];
            assert_eq!(vals::<i32>(acc_array_lit_i32(t.ptr(), v.as_ptr(), 3)), v);
            let v = [7i64];
            assert_eq!(vals::<i64>(acc_array_lit_i64(t.ptr(), v.as_ptr(), 1)), v);
            let v = [1u8, 0];
            assert_eq!(vals::<u8>(acc_array_lit_bool(t.ptr(), v.as_ptr(), 2)), v);
            let a = acc_array_lit_f64(t.ptr(), std::ptr::null(), 0);
            assert_eq!(vals::<f64>(a), [] as [f64; 0]);
        }
        t.assert_ok();
    }

    #[test]
    fn sums_and_products() {
        let t = TestCtx::new();
        unsafe {
            let a = from_elements::<i32>(&[3], &[i32::MAX, i32::MAX, 2]).unwrap();
            assert_eq!(acc_sum_i32(t.ptr(), a), 2 * i64::from(i32::MAX) + 2);
            assert_eq!(
                acc_product_i32(t.ptr(), a),
                2 * i64::from(i32::MAX) * i64::from(i32::MAX)
            );
            release(a);
            let a = from_elements::<i64>(&[2], &[i64::MAX, 1]).unwrap();
            assert_eq!(acc_sum_i64(t.ptr(), a), i64::MIN);
            assert_eq!(acc_product_i64(t.ptr(), a), i64::MAX);
            release(a);
            // f32 accumulation in index order: 1e8 + 1 + 1 + … stays 1e8 in f32.
            let mut v = vec![1.0f32; 11];
            v[0] = 1e8;
            let a = from_elements::<f32>(&[11], &v).unwrap();
            assert_eq!(acc_sum_f32(t.ptr(), a), 1e8f32);
            release(a);
            let a = from_elements::<f64>(&[3], &[0.1, 0.2, 0.3]).unwrap();
            assert_eq!(acc_sum_f64(t.ptr(), a), 0.1 + 0.2 + 0.3);
            assert_eq!(acc_product_f64(t.ptr(), a), 0.1 * 0.2 * 0.3);
            release(a);
            let a = from_elements::<f32>(&[2], &[1.5, 4.0]).unwrap();
            assert_eq!(acc_product_f32(t.ptr(), a), 6.0);
            release(a);
            let e = from_elements::<f64>(&[0], &[]).unwrap();
            assert_eq!(acc_sum_f64(t.ptr(), e), 0.0);
            assert_eq!(acc_product_f64(t.ptr(), e), 1.0);
            release(e);
        }
    }

    #[test]
    fn maxima_and_minima() {
        let mut t = TestCtx::new();
        unsafe {
            let a = from_elements::<i32>(&[4], &[3, -7, 9, 0]).unwrap();
            assert_eq!(acc_maximum_i32(t.ptr(), 1, a), 9);
            assert_eq!(acc_minimum_i32(t.ptr(), 1, a), -7);
            release(a);
            let a = from_elements::<i64>(&[2, 1], &[i64::MIN, 5]).unwrap();
            assert_eq!(acc_maximum_i64(t.ptr(), 1, a), 5);
            assert_eq!(acc_minimum_i64(t.ptr(), 1, a), i64::MIN);
            release(a);
            let a = from_elements::<f64>(&[3], &[f64::NAN, 2.0, -1.0]).unwrap();
            assert_eq!(acc_maximum_f64(t.ptr(), 1, a), 2.0);
            assert_eq!(acc_minimum_f64(t.ptr(), 1, a), -1.0);
            release(a);
            let a = from_elements::<f32>(&[2], &[f32::NAN, f32::NAN]).unwrap();
            assert!(acc_maximum_f32(t.ptr(), 1, a).is_nan());
            release(a);
            let a = from_elements::<f32>(&[2], &[0.5, f32::NEG_INFINITY]).unwrap();
            assert_eq!(acc_minimum_f32(t.ptr(), 1, a), f32::NEG_INFINITY);
            release(a);
        }
        t.assert_ok();
        unsafe {
            let e = from_elements::<f64>(&[0], &[]).unwrap();
            assert_eq!(acc_maximum_f64(t.ptr(), 3, e), 0.0);
            assert_eq!(
                t.error(),
                (
                    RunErrorKind::EmptyReduction {
                        function: "maximum"
                    },
                    Some(3)
                )
            );
            acc_minimum_f64(t.ptr(), 4, e);
            assert_eq!(
                t.error(),
                (
                    RunErrorKind::EmptyReduction {
                        function: "minimum"
                    },
                    Some(4)
                )
            );
            release(e);
        }
    }
}
