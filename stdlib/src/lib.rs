//! The acc standard library on the host (LANGUAGE.md section 6): the `extern "C"` functions
//! that JIT-compiled code calls (docs/ABI.md, "Standard library"), found by name through
//! `symbols()`.
//!
//! The formatting of `print` and `printf` is safe Rust in `format`; the entry points in the
//! other modules only unpack their arguments. Errors are recorded in the context
//! (`acc_runtime::host::fail`) and the function returns a dummy value.

pub mod arrays;
pub mod control;
pub mod format;
pub mod math;
pub mod mpi;
pub mod openacc;
pub mod pictures;
pub mod print;

/// Every entry point by name, for jit-host's symbol table.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    let mut all = Vec::new();
    all.extend(print::symbols());
    all.extend(arrays::symbols());
    all.extend(math::symbols());
    all.extend(control::symbols());
    all.extend(openacc::symbols());
    all.extend(mpi::symbols());
    all.extend(pictures::symbols());
    all
}

#[cfg(test)]
pub(crate) mod testing {
    //! A context writing to a buffer, for the tests of every module.

    use acc_runtime::{Context, HostState, Outcome, RunErrorKind, SharedBuffer};

    pub struct TestCtx {
        pub context: Context,
        pub out: SharedBuffer,
    }

    impl TestCtx {
        pub fn new() -> TestCtx {
            let out = SharedBuffer::new();
            let context = Context::new(HostState::new(Box::new(out.clone())));
            TestCtx { context, out }
        }

        pub fn ptr(&self) -> *mut acc_runtime::abi::Ctx {
            self.context.ctx_ptr()
        }

        /// Everything printed so far (flushed), taken.
        pub fn output(&mut self) -> String {
            self.context.flush().unwrap();
            String::from_utf8(self.out.take()).unwrap()
        }

        /// The recorded error's kind and site, resetting the context.
        pub fn error(&mut self) -> (RunErrorKind, Option<u32>) {
            match self.context.finish() {
                Outcome::Error(e) => (e.kind, e.site),
                other => panic!("expected an error, got {other:?}"),
            }
        }

        pub fn assert_ok(&mut self) {
            assert_eq!(self.context.finish(), Outcome::Finished);
        }
    }
}

#[cfg(test)]
mod tests {
    use acc_lang::builtins::{Builtin, Shape};

    #[test]
    fn symbols_are_unique() {
        let syms = super::symbols();
        let mut names: Vec<_> = syms.iter().map(|s| s.0).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "duplicate symbol names");
        let rt = acc_runtime::symbols();
        assert!(rt.iter().all(|(r, _)| !names.contains(r)));
        assert!(syms.iter().all(|s| !s.1.is_null()));
    }

    #[test]
    fn every_float_math_builtin_has_both_precisions() {
        let syms = super::symbols();
        let has = |name: &str| syms.iter().any(|s| s.0 == name);
        for &b in Builtin::ALL {
            let float_math = matches!(b.shape(), Shape::FloatMath(_) | Shape::NumMath(_));
            if float_math {
                for ty in ["f32", "f64"] {
                    let name = format!("acc_math_{}_{ty}", b.name());
                    assert!(has(&name), "missing {name}");
                }
            }
        }
    }

    #[test]
    fn every_runtime_routine_is_there() {
        let syms = super::symbols();
        for &b in Builtin::ALL {
            if b.is_runtime_routine() {
                assert!(syms.iter().any(|s| s.0 == b.name()), "missing {}", b.name());
            }
        }
    }
}
