//! The Rust types that cross into acc and back: [`Value`] (scalars and arrays), [`Ret`]
//! (a function's result, `()` too) and [`Args`] (a call's arguments, tuples of 0 to 8 values).
//!
//! Each maps to the type compiled code uses in its calling convention (docs/ABI.md): a call
//! through a [`Func`](crate::Func) is a direct native call of the compiled function.

use acc_lang::ast::ScalarType;
use acc_lang::hir::Type;
use acc_runtime::abi::{ArrayHeader, Ctx};

use super::array::{Array, Elem};

pub(crate) mod sealed {
    use super::*;

    /// How a value crosses: its acc type and its machine form.
    pub trait Value: Sized {
        /// What compiled code passes and returns (`bool` as a 0/1 byte, an array handle).
        type Abi: Copy;
        /// The acc type, for messages; arrays show no rank (`f64[…]`).
        fn type_name() -> String;
        /// Whether a script value of type `ty` can be this (for arrays: the element type; the
        /// rank is checked per value by `fits`).
        fn accepts(ty: Type) -> bool;
        /// Whether this value fits `ty` (an array's rank).
        fn fits(&self, _ty: Type) -> bool {
            true
        }
        /// The machine form of an argument (an array stays owned by `self`).
        fn to_abi(&self) -> Self::Abi;
        /// A result: takes over the reference an array result carries; `None` for the null
        /// handle a failed call returns.
        ///
        /// # Safety
        /// `abi` is what compiled code returned for type `Self`.
        unsafe fn from_abi(abi: Self::Abi) -> Option<Self>;
        /// A global's slot content: scalars in the low bytes, arrays as a handle with a new
        /// reference (the slot owns it).
        fn to_slot(&self) -> u64;
        /// A global's value from its slot (an array gets a reference of its own).
        ///
        /// # Safety
        /// The slot holds a value of a type this accepts.
        unsafe fn from_slot(slot: u64) -> Option<Self>;
        /// The array handle, for the run's locks.
        fn array(&self) -> Option<*mut ArrayHeader> {
            None
        }
        /// This value's acc type, for messages (an array's with its rank).
        fn value_type(&self) -> String {
            Self::type_name()
        }
    }

    /// A function's result: a value, or `()` for a function that returns nothing.
    pub trait Ret: Sized {
        type Abi: Copy;
        fn type_name() -> String;
        fn accepts(ty: Type) -> bool;
        /// # Safety
        /// As `Value::from_abi`.
        unsafe fn from_abi(abi: Self::Abi) -> Option<Self>;
    }

    /// A call's arguments.
    pub trait Args {
        /// The Rust types, for messages.
        fn type_names() -> Vec<String>;
        /// Whether each type can be the parameter's.
        fn accept(params: &[Type]) -> bool;
        /// Whether each value fits its parameter (arrays' ranks).
        fn fit(&self, params: &[Type]) -> Option<usize>;
        /// The array arguments, for the run's locks: written to the front of `out` (room for
        /// every argument), their count returned.
        fn arrays(&self, out: &mut [*mut ArrayHeader; 8]) -> usize;
        /// Calls the compiled function at `address` with these arguments.
        ///
        /// # Safety
        /// `address` is a live compiled function whose parameters are `(ctx, these…)` and whose
        /// result is `R`; `ctx` is a live context ready to run code on this thread.
        unsafe fn invoke<R: Ret>(&self, address: *const u8, ctx: *mut Ctx) -> R::Abi;
    }
}

/// A value that crosses between Rust and acc: `bool`, `i32`, `i64`, `f32`, `f64` and
/// [`Array<T>`] of those.
pub trait Value: sealed::Value {}

/// What a script function returns, as Rust sees it: any [`Value`], or `()`.
pub trait Ret: sealed::Ret {}

/// A script function's arguments: a tuple of 0 to 8 [`Value`]s.
pub trait Args: sealed::Args {}

macro_rules! scalar {
    ($($t:ty => $scalar:expr, $abi:ty, |$v:ident| $to:expr, |$s:ident| $from:expr;)*) => {$(
        impl sealed::Value for $t {
            type Abi = $abi;
            fn type_name() -> String {
                $scalar.name().to_string()
            }
            fn accepts(ty: Type) -> bool {
                ty == Type::Scalar($scalar)
            }
            fn to_abi(&self) -> $abi {
                *self as $abi
            }
            unsafe fn from_abi(abi: $abi) -> Option<$t> {
                Some(abi as $t)
            }
            fn to_slot(&self) -> u64 {
                let $v = *self;
                $to
            }
            unsafe fn from_slot($s: u64) -> Option<$t> {
                Some($from)
            }
        }
        impl Value for $t {}
    )*};
}

// Slots hold scalars in their low bytes, as compiled code loads and stores them.
scalar! {
    bool => ScalarType::Bool, bool, |v| u64::from(v), |s| s as u8 != 0;
    i32 => ScalarType::I32, i32, |v| u64::from(v as u32), |s| s as u32 as i32;
    i64 => ScalarType::I64, i64, |v| v as u64, |s| s as i64;
    f32 => ScalarType::F32, f32, |v| u64::from(v.to_bits()), |s| f32::from_bits(s as u32);
    f64 => ScalarType::F64, f64, |v| v.to_bits(), |s| f64::from_bits(s);
}

impl<T: Elem> sealed::Value for Array<T> {
    type Abi = *mut ArrayHeader;
    fn type_name() -> String {
        format!("{}[…]", T::SCALAR.name())
    }
    fn accepts(ty: Type) -> bool {
        matches!(ty, Type::Array { elem, .. } if elem == T::SCALAR)
    }
    fn fits(&self, ty: Type) -> bool {
        matches!(ty, Type::Array { rank, .. } if usize::from(rank) == self.rank())
    }
    fn to_abi(&self) -> *mut ArrayHeader {
        self.as_ptr()
    }
    unsafe fn from_abi(abi: *mut ArrayHeader) -> Option<Array<T>> {
        (!abi.is_null()).then(|| Array::adopt(abi))
    }
    fn to_slot(&self) -> u64 {
        // SAFETY: a live array; the slot owns the new reference.
        unsafe { acc_runtime::array::retain(self.as_ptr()) };
        self.as_ptr() as usize as u64
    }
    unsafe fn from_slot(slot: u64) -> Option<Array<T>> {
        let a = slot as usize as *mut ArrayHeader;
        if a.is_null() {
            return None;
        }
        acc_runtime::array::retain(a);
        Some(Array::adopt(a))
    }
    fn array(&self) -> Option<*mut ArrayHeader> {
        Some(self.as_ptr())
    }
    fn value_type(&self) -> String {
        format!(
            "{}[{}]",
            T::SCALAR.name(),
            ",".repeat(self.rank().saturating_sub(1))
        )
    }
}
impl<T: Elem> Value for Array<T> {}

impl<V: Value> sealed::Ret for V {
    type Abi = V::Abi;
    fn type_name() -> String {
        <V as sealed::Value>::type_name()
    }
    fn accepts(ty: Type) -> bool {
        <V as sealed::Value>::accepts(ty)
    }
    unsafe fn from_abi(abi: V::Abi) -> Option<V> {
        <V as sealed::Value>::from_abi(abi)
    }
}
impl<V: Value> Ret for V {}

impl sealed::Ret for () {
    type Abi = ();
    fn type_name() -> String {
        "()".into()
    }
    fn accepts(ty: Type) -> bool {
        ty == Type::Void
    }
    unsafe fn from_abi(_: ()) -> Option<()> {
        Some(())
    }
}
impl Ret for () {}

macro_rules! args {
    ($($name:ident $idx:tt),*) => {
        impl<$($name: Value),*> sealed::Args for ($($name,)*) {
            fn type_names() -> Vec<String> {
                vec![$(<$name as sealed::Value>::type_name()),*]
            }
            #[allow(unused_variables, unused_mut)]
            fn accept(params: &[Type]) -> bool {
                let mut p = params.iter();
                $(p.next().is_some_and(|&t| <$name as sealed::Value>::accepts(t)) &&)* p.next().is_none()
            }
            #[allow(unused_variables)]
            fn fit(&self, params: &[Type]) -> Option<usize> {
                $(if !params.get($idx).is_some_and(|&t| sealed::Value::fits(&self.$idx, t)) {
                    return Some($idx);
                })*
                None
            }
            #[allow(unused_variables, unused_mut)]
            fn arrays(&self, out: &mut [*mut ArrayHeader; 8]) -> usize {
                let mut n = 0;
                $(if let Some(a) = sealed::Value::array(&self.$idx) {
                    out[n] = a;
                    n += 1;
                })*
                n
            }
            unsafe fn invoke<R: sealed::Ret>(&self, address: *const u8, ctx: *mut Ctx) -> R::Abi {
                // The compiled function's signature is `(ctx, depth, params…) -> ret` in the
                // platform's C convention, with these machine types (`Func` checked them); a
                // call from the host is at depth 1.
                let f = std::mem::transmute::<
                    *const u8,
                    unsafe extern "C" fn(*mut Ctx, i64 $(, <$name as sealed::Value>::Abi)*) -> <R as sealed::Ret>::Abi,
                >(address);
                f(ctx, 1 $(, sealed::Value::to_abi(&self.$idx))*)
            }
        }
        impl<$($name: Value),*> Args for ($($name,)*) {}
    };
}

args!();
args!(A 0);
args!(A 0, B 1);
args!(A 0, B 1, C 2);
args!(A 0, B 1, C 2, D 3);
args!(A 0, B 1, C 2, D 3, E 4);
args!(A 0, B 1, C 2, D 3, E 4, F 5);
args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
args!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
