//! Calling script functions from Rust: [`Func`] and [`Engine::call`].

use std::marker::PhantomData;
use std::sync::Arc;

use acc_lang::hir::Type;

use super::value::{sealed, Args, Ret};
use crate::engine::{HeldCode, RunLocks};
use crate::{Engine, Error};

/// A script function, looked up and type-checked once by [`Engine::function`], then called
/// directly: [`call`](Func::call) is a native call of the compiled code.
///
/// An owned value (no lifetime). It calls the function as it was when looked up, even after a
/// later script redefines the name (its code stays alive while the `Func` does), and only on
/// the engine that made it.
///
/// ```
/// let mut engine = acc::Engine::new()?;
/// engine.run("lib.acc", "fn sq(x: f64) -> f64 { return x * x }")?;
/// let sq = engine.function::<(f64,), f64>("sq")?;
/// assert_eq!(sq.call(&mut engine, (3.0,))?, 9.0);
/// # Ok::<(), acc::Error>(())
/// ```
pub struct Func<A: Args, R: Ret> {
    engine: u64,
    name: Arc<str>,
    _code: Arc<HeldCode>,
    address: *const u8,
    params: Arc<[Type]>,
    types: PhantomData<fn(A) -> R>,
}

// SAFETY: `address` is the address of code kept alive by `_code`; calling it needs the engine
// (`&mut Engine`), which `call` checks is the one that made the `Func`.
unsafe impl<A: Args, R: Ret> Send for Func<A, R> {}
// SAFETY: as above; `&Func` only reads.
unsafe impl<A: Args, R: Ret> Sync for Func<A, R> {}

impl<A: Args, R: Ret> Clone for Func<A, R> {
    fn clone(&self) -> Self {
        Func {
            engine: self.engine,
            name: self.name.clone(),
            _code: self._code.clone(),
            address: self.address,
            params: self.params.clone(),
            types: PhantomData,
        }
    }
}

impl<A: Args, R: Ret> std::fmt::Debug for Func<A, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Func({})", self.name)
    }
}

impl<A: Args, R: Ret> Func<A, R> {
    /// Calls the function with `args` on `engine` (the one that made it).
    pub fn call(&self, engine: &mut Engine, args: A) -> Result<R, Error> {
        if engine.id != self.engine {
            return Err(Error::Usage(format!(
                "`{}` was looked up in another engine; look it up with this one",
                self.name
            )));
        }
        if let Some(i) = args.fit(&self.params) {
            let given = <A as sealed::Args>::type_names();
            return Err(Error::WrongType {
                what: format!("argument {} of `{}`", i + 1, self.name),
                declared: self.params[i].to_string(),
                given: given.get(i).cloned().unwrap_or_default(),
            });
        }
        let mut arrays = [std::ptr::null_mut(); 8];
        let n = args.arrays(&mut arrays);
        let mut locks = RunLocks::default();
        engine.lock_arrays(&arrays[..n], &mut locks)?;
        engine.arm_limits();
        let ctx = engine.context.ctx_ptr();
        // SAFETY: `address` is alive (held by `_code`) and has the signature `Engine::function`
        // checked; the context is this engine's, on this thread.
        let abi = unsafe { args.invoke::<R>(self.address, ctx) };
        // SAFETY: what the function returned, of type `R`.
        let value = unsafe { <R as sealed::Ret>::from_abi(abi) };
        let ended = engine.end_run(ctx);
        drop(locks);
        ended?;
        value.ok_or_else(|| Error::Internal(format!("`{}` returned no array", self.name)))
    }
}

impl Engine {
    /// The script function `name` as a [`Func`] taking `A` and returning `R`: looked up and
    /// type-checked now, so that each call is a direct one.
    ///
    /// `A` is a tuple of 0 to 8 of `bool`, `i32`, `i64`, `f32`, `f64` and [`Array<T>`]
    /// (whose rank is checked at each call); `R` is one of those, or `()` for a function
    /// that returns nothing.
    ///
    /// [`Array<T>`]: crate::Array
    pub fn function<A: Args, R: Ret>(&mut self, name: &str) -> Result<Func<A, R>, Error> {
        let Some(sig) = self.frontend.function(name) else {
            return Err(Error::NotFound {
                kind: "function",
                name: name.to_string(),
                did_you_mean: self.frontend.closest_function(name),
            });
        };
        let declared = || {
            let params: Vec<String> = sig.params.iter().map(Type::to_string).collect();
            let ret = match sig.ret {
                Type::Void => String::new(),
                t => format!(" -> {t}"),
            };
            format!("fn {name}({}){ret}", params.join(", "))
        };
        if !<A as sealed::Args>::accept(&sig.params) || !<R as sealed::Ret>::accepts(sig.ret) {
            let args = <A as sealed::Args>::type_names().join(", ");
            return Err(Error::WrongType {
                what: format!("function `{name}`"),
                declared: declared(),
                given: format!("fn({args}) -> {}", <R as sealed::Ret>::type_name()),
            });
        }
        if sig.gang_routine {
            return Err(Error::Usage(format!(
                "`{name}` is an `acc routine gang`: it runs within a compute region's gangs, \
                 not from the host"
            )));
        }
        let code = self
            .jit
            .function_code(sig.id)
            .ok_or_else(|| Error::Internal(format!("`{name}` has no compiled code")))?;
        let held = Arc::new(HeldCode { unit: code.unit });
        self.held.push(Arc::downgrade(&held));
        Ok(Func {
            engine: self.id,
            name: name.into(),
            _code: held,
            address: code.address,
            params: sig.params.into(),
            types: PhantomData,
        })
    }

    /// Calls the script function `name` with `args` (a tuple of 0 to 8 values): a lookup and a
    /// type check, then the call. To call one function many times, look it up once with
    /// [`function`](Engine::function).
    ///
    /// ```
    /// use acc::{Array, Engine};
    /// let mut engine = Engine::new()?;
    /// engine.run("dot.acc", "fn dot(a: f64[], b: f64[]) -> f64 {
    ///     let s = 0.0
    ///     for i in 0..len(a) { s += a[i] * b[i] }
    ///     return s
    /// }")?;
    /// let x = Array::from_vec(vec![1.0, 2.0, 3.0], &[3])?;
    /// let s: f64 = engine.call("dot", (x.clone(), x))?;
    /// assert_eq!(s, 14.0);
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn call<A: Args, R: Ret>(&mut self, name: &str, args: A) -> Result<R, Error> {
        self.function::<A, R>(name)?.call(self, args)
    }
}
