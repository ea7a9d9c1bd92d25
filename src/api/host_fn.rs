//! Rust functions that scripts call: [`Engine::register_fn`].

use std::marker::PhantomData;

use acc_lang::ast::ScalarType;
use acc_lang::hir::Type;

use super::value::sealed::Value as _;
use crate::{Engine, Error};

pub(crate) mod sealed {
    use acc_lang::hir::Type;

    /// A scalar parameter type: its acc type.
    pub trait Scalar: Sized {
        fn ty() -> Type;
    }

    /// What a registered function returns: its acc type, and the value into its slot (or the
    /// error the call reports).
    pub trait HostRet {
        fn ty() -> Type;
        fn store(self, ret: &mut u64) -> Result<(), String>;
    }

    /// A Rust function with the parameter types `A` and the result `R`.
    pub trait HostFunction<A, R>: Send + 'static {
        fn params() -> Vec<Type>;
        fn ret() -> Type;
        fn into_host(self) -> Box<dyn acc_runtime::host::HostFn>;
    }
}

/// A scalar that crosses into a registered function: `bool`, `i32`, `i64`, `f32`, `f64`.
pub trait Scalar: super::Value + sealed::Scalar {}

/// What a registered function may return: a [`Scalar`], `()`, or a `Result` of either with a
/// `String` error, which becomes a run-time error at the call.
pub trait HostRet: sealed::HostRet {}

/// A Rust closure or function that scripts can call: `Fn(A…) -> R + Send + Sync + 'static`
/// with 0 to 8 [`Scalar`] parameters and a [`HostRet`] result.
pub trait HostFunction<A, R>: sealed::HostFunction<A, R> {}

macro_rules! scalar {
    ($($t:ty => $s:expr),*) => {$(
        impl sealed::Scalar for $t {
            fn ty() -> Type {
                Type::Scalar($s)
            }
        }
        impl Scalar for $t {}
        impl sealed::HostRet for $t {
            fn ty() -> Type {
                Type::Scalar($s)
            }
            fn store(self, ret: &mut u64) -> Result<(), String> {
                *ret = self.to_slot();
                Ok(())
            }
        }
        impl HostRet for $t {}
        impl sealed::HostRet for Result<$t, String> {
            fn ty() -> Type {
                Type::Scalar($s)
            }
            fn store(self, ret: &mut u64) -> Result<(), String> {
                *ret = self?.to_slot();
                Ok(())
            }
        }
        impl HostRet for Result<$t, String> {}
    )*};
}

scalar!(bool => ScalarType::Bool, i32 => ScalarType::I32, i64 => ScalarType::I64,
        f32 => ScalarType::F32, f64 => ScalarType::F64);

impl sealed::HostRet for () {
    fn ty() -> Type {
        Type::Void
    }
    fn store(self, _: &mut u64) -> Result<(), String> {
        Ok(())
    }
}
impl HostRet for () {}

impl sealed::HostRet for Result<(), String> {
    fn ty() -> Type {
        Type::Void
    }
    fn store(self, _: &mut u64) -> Result<(), String> {
        self
    }
}
impl HostRet for Result<(), String> {}

/// A registered closure as the runtime calls it: arguments from their slots.
struct Adapter<F, A, R> {
    f: F,
    types: PhantomData<fn(A) -> R>,
}

macro_rules! host_function {
    ($($a:ident $i:tt),*) => {
        impl<F, R, $($a),*> sealed::HostFunction<($($a,)*), R> for F
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: HostRet + 'static,
            $($a: Scalar + 'static,)*
        {
            fn params() -> Vec<Type> {
                vec![$(<$a as sealed::Scalar>::ty()),*]
            }
            fn ret() -> Type {
                <R as sealed::HostRet>::ty()
            }
            fn into_host(self) -> Box<dyn acc_runtime::host::HostFn> {
                Box::new(Adapter::<F, ($($a,)*), R> {
                    f: self,
                    types: PhantomData,
                })
            }
        }
        impl<F, R, $($a),*> HostFunction<($($a,)*), R> for F
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: HostRet + 'static,
            $($a: Scalar + 'static,)*
        {
        }

        impl<F, R, $($a),*> acc_runtime::host::HostFn for Adapter<F, ($($a,)*), R>
        where
            F: Fn($($a),*) -> R + Send + Sync + 'static,
            R: HostRet + 'static,
            $($a: Scalar + 'static,)*
        {
            #[allow(unused_variables)]
            fn call(&self, args: &[u64], ret: &mut u64) -> Result<(), String> {
                // SAFETY: compiled code stored each argument with the parameter's type, which
                // the checker gave the call (`register_fn` declared these types).
                let r = (self.f)($(unsafe { $a::from_slot(args[$i]) }.ok_or("a missing argument")?),*);
                sealed::HostRet::store(r, ret)
            }
        }
    };
}

host_function!();
host_function!(A 0);
host_function!(A 0, B 1);
host_function!(A 0, B 1, C 2);
host_function!(A 0, B 1, C 2, D 3);
host_function!(A 0, B 1, C 2, D 3, E 4);
host_function!(A 0, B 1, C 2, D 3, E 4, G 5);
host_function!(A 0, B 1, C 2, D 3, E 4, G 5, H 6);
host_function!(A 0, B 1, C 2, D 3, E 4, G 5, H 6, I 7);

impl Engine {
    /// Makes the Rust function `f` callable by scripts as `name`, from host code (a call in a
    /// compute region or a routine is a compile error that names it). Register it before the
    /// scripts that call it are compiled: calls are checked against its signature then.
    ///
    /// `f` takes 0 to 8 of `bool`, `i32`, `i64`, `f32`, `f64` and returns one of them, `()`,
    /// or a `Result` of either with a `String` error, which stops the run with a run-time
    /// error at the call.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.register_fn("gain", |v: f64| v * 2.0)?;
    /// engine.register_fn("checked_sqrt", |v: f64| -> Result<f64, String> {
    ///     if v < 0.0 { Err(format!("{v} is negative")) } else { Ok(v.sqrt()) }
    /// })?;
    /// engine.run("a.acc", "let g = gain(21.0)\nlet r = checked_sqrt(g + 22.0)")?;
    /// assert_eq!(engine.global::<f64>("r")?, 8.0);
    /// let err = engine.run("b.acc", "let s = checked_sqrt(-1.0)").unwrap_err();
    /// assert!(err.to_string().contains("`checked_sqrt` failed: -1 is negative"));
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn register_fn<A, R, F: HostFunction<A, R>>(
        &mut self,
        name: &str,
        f: F,
    ) -> Result<(), Error> {
        let params = <F as sealed::HostFunction<A, R>>::params();
        let ret = <F as sealed::HostFunction<A, R>>::ret();
        let number = self
            .frontend
            .register_host_fn(name, params, ret)
            .map_err(Error::Usage)?;
        let added = self.context.host().add_host_fn(name, f.into_host());
        debug_assert_eq!(number, added, "the front end and the runtime number alike");
        Ok(())
    }
}
