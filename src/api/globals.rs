//! Reading and writing a script's globals from Rust.

use super::value::{sealed, Value};
use crate::{Engine, Error};

impl Engine {
    /// Sets the global `name`, which a script declared, to `value`. Its type must be the
    /// declared one (an array's element type and rank too); an array global then is that
    /// array's storage, shared with the caller.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.run("decl.acc", "let n: i64 = 10\nlet scale = 1.0")?;
    /// engine.set_global("n", 1000_i64)?;
    /// assert!(engine.set_global("n", 1.5).is_err()); // `n` is an i64
    /// engine.run("use.acc", "scale = n * 2.0")?;
    /// assert_eq!(engine.global::<f64>("scale")?, 2000.0);
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn set_global<V: Value>(&mut self, name: &str, value: V) -> Result<(), Error> {
        let (slot, ty) = self.global_slot_of(name)?;
        if !V::accepts(ty) || !value.fits(ty) {
            return Err(Error::WrongType {
                what: format!("global `{name}`"),
                declared: ty.to_string(),
                given: value.value_type(),
            });
        }
        let new = value.to_slot();
        let globals = self.context.globals_mut();
        let old = std::mem::replace(&mut globals[slot], new);
        if ty.is_array() {
            // SAFETY: an array global's slot owns a reference on its array (or is null).
            unsafe { acc_runtime::array::release(old as usize as *mut _) };
        }
        Ok(())
    }

    /// The value of the global `name`, which must be of type `V` (for an array: its element
    /// type; the array is shared, not copied).
    pub fn global<V: Value>(&mut self, name: &str) -> Result<V, Error> {
        let (slot, ty) = self.global_slot_of(name)?;
        if !V::accepts(ty) {
            return Err(Error::WrongType {
                what: format!("global `{name}`"),
                declared: ty.to_string(),
                given: <V as sealed::Value>::type_name(),
            });
        }
        let bits = self.context.globals()[slot];
        // SAFETY: the slot holds a value of type `ty`, which `V` accepts.
        unsafe { V::from_slot(bits) }.ok_or_else(|| {
            Error::Usage(format!(
                "global `{name}` holds no array yet (its `let` has not run)"
            ))
        })
    }

    /// The storage slot and type of the global `name`.
    fn global_slot_of(&self, name: &str) -> Result<(usize, acc_lang::hir::Type), Error> {
        let Some((var, ty)) = self.frontend.global(name) else {
            return Err(Error::NotFound {
                kind: "global",
                name: name.to_string(),
                did_you_mean: self.frontend.closest_global(name),
            });
        };
        let slot = self
            .slots
            .get(&var)
            .copied()
            .ok_or_else(|| Error::Internal(format!("global `{name}` has no storage")))?;
        Ok((slot as usize, ty))
    }
}
