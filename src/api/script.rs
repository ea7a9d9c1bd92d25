//! [`Script`]: a source compiled once and run again and again.

use std::sync::Arc;

use acc_jit_host::MainFn;

use crate::engine::HeldCode;
use crate::{Engine, Error};

/// A script checked and compiled by [`Engine::compile`]: its top-level code runs with
/// [`Engine::run_script`] as often as wanted, without compiling again. Its functions and
/// globals are declared in the engine once it compiles, as with [`Engine::run`].
///
/// A `Script` is an owned value (no lifetime): keep it in your own structs. It runs only on
/// the engine that compiled it; its code stays alive while the `Script` does.
///
/// ```
/// let mut engine = acc::Engine::new()?;
/// engine.run("decl.acc", "let total: i64 = 0")?;
/// let step = engine.compile("step.acc", "total += 5")?;
/// for _ in 0..3 {
///     engine.run_script(&step)?;
/// }
/// assert_eq!(engine.global::<i64>("total")?, 15);
/// # Ok::<(), acc::Error>(())
/// ```
#[derive(Clone)]
pub struct Script {
    engine: u64,
    code: Arc<HeldCode>,
    main: MainFn,
    /// The slots of the array globals its top-level code declares, released before it runs
    /// again (it declares them anew).
    array_slots: Arc<[u32]>,
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Script(unit {} of engine {})",
            self.code.unit, self.engine
        )
    }
}

impl Engine {
    /// Checks and compiles `text` (named `name` in messages) without running it. What it
    /// declares (functions, globals) is declared from now on; its top-level code runs with
    /// [`run_script`](Engine::run_script). A compile error leaves the engine as it was.
    pub fn compile(&mut self, name: &str, text: &str) -> Result<Script, Error> {
        let code = self.compile_unit(name, text)?;
        let held = Arc::new(HeldCode { unit: code.unit });
        self.held.push(Arc::downgrade(&held));
        Ok(Script {
            engine: self.id,
            code: held,
            main: code.main,
            array_slots: code.array_slots.into(),
        })
    }

    /// Runs a compiled script's top-level code. A top-level `let` declares its global anew
    /// each time (a `let a = zeros(n)` makes a new array).
    pub fn run_script(&mut self, script: &Script) -> Result<(), Error> {
        if script.engine != self.id {
            return Err(Error::Usage(
                "this script was compiled by another engine; compile it with this one".into(),
            ));
        }
        for &slot in script.array_slots.iter() {
            self.context.release_global_array(slot as usize);
        }
        let result = self.run_main(script.main);
        self.free_code();
        result
    }
}
