//! Unrolled sequential loops. A sequential loop (an inner loop of a thread, or of a serial
//! region) whose body is straight-line code runs `UNROLL` iterations per trip as one block of
//! code without branches, so that ptxas can issue the loads of later iterations before the
//! arithmetic of earlier ones waits for its data: a gather such as SpMV's
//! `sum += vals[j] * x[cols[j]]` then has `UNROLL` iterations' loads in flight instead of one
//! (what NVVM's unrolling gives CUDA C). Bounds checks that the loop's pre-check did not prove
//! stay, but are decided at the end of the copies: a load that would be out of bounds reads a
//! harmless address instead, and the first failing access in program order is reported, with
//! its own site and index, before anything after the copies runs.
//!
//! Unrolled thread loops. A loop shared among threads whose body is straight-line code with
//! every check proven runs `THREAD_UNROLL` of a thread's iterations per trip, every load of
//! the copies before any of their stores: ptxas cannot move a load above a store to memory it
//! cannot tell apart, so without this a thread has one iteration's loads in flight, which on
//! an H200 leaves saxpy at 87% of the copy bandwidth (hand-written CUDA gets there with
//! `__restrict__` and vector loads). Reordering loads of one iteration above stores of
//! another is what the schedule allows: the iterations of a shared loop are independent
//! (`parallel` loops are; a `kernels` loop is shared only when its independence is known).
//! Within an iteration the order stays: a read of an element the body stored before takes the
//! stored register, and a read of another array name after a store runs unrolled only where
//! the two names are different arrays at run time (arrays are references: two parameters
//! can be one array).
//!
//! Which loops run unrolled, and in which of their versions, is the plan's
//! (`plan::versions`; `plan::straight` says which bodies are straight-line): this module
//! generates the trips.

use acc_lang::ir::{Block, Expr};

use crate::fx::Fx;
use crate::plan::element_key;
use crate::ptx::{Class, Reg};

/// Iterations per trip of an unrolled sequential loop.
pub(crate) const UNROLL: u32 = 4;

/// Iterations per trip of an unrolled thread loop. Two reach the bandwidth of hand-written
/// CUDA on saxpy (H200: 0.78 ms for 2^28, nvcc's float4 version 0.79); four and eight hold
/// more registers than the extra loads in flight are worth (the guide's Jacobi stencil:
/// 123 us per sweep unrolled twice, 130 four times, against 125 not unrolled).
pub(crate) const THREAD_UNROLL: u32 = 2;

impl Fx<'_, '_> {
    /// A copy of `v` in a register of its own (a failure reported later must show the value
    /// the access had, not the register's value by then).
    pub(crate) fn keep(&mut self, v: Reg) -> Reg {
        let kept = self.fresh(v.class);
        let ty = match v.class {
            Class::Pred => "pred",
            Class::B32 => "b32",
            Class::B64 => "b64",
            Class::F32 => "f32",
            Class::F64 => "f64",
        };
        self.ins(format!("mov.{ty} {kept}, {v}"));
        kept
    }

    /// The unrolled trips of a sequential loop, placed before its ordinary loop: while at
    /// least `UNROLL` iterations remain (`k` counts iterations from 0 up to `last`, `v` is
    /// the variable's next value), `emit_iteration` is generated `UNROLL` times in a row,
    /// each followed by `advance` (which moves `k` and `v` on by one iteration); the
    /// deferred checks of the trip come at its end. Leaves to `exit` when no iteration
    /// remains, and to the ordinary loop for the last few.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn unrolled_trips(
        &mut self,
        ty: &str,
        k: Reg,
        last: Reg,
        exit: &str,
        rolled: &str,
        mut emit_iteration: impl FnMut(&mut Self) -> crate::Result<()>,
        mut advance: impl FnMut(&mut Self),
    ) -> crate::Result<()> {
        let top = self.label("unrolled");
        let u = if ty == "s32" { "u32" } else { "u64" };
        self.place(&top);
        let done = self.fresh(Class::Pred);
        self.ins(format!("setp.gt.{u} {done}, {k}, {last}"));
        self.ins(format!("@{done} bra {exit}"));
        let left = self.fresh(if u == "u32" { Class::B32 } else { Class::B64 });
        self.ins(format!("sub.{u} {left}, {last}, {k}"));
        let few = self.fresh(Class::Pred);
        self.ins(format!("setp.lt.{u} {few}, {left}, {}", UNROLL - 1));
        self.ins(format!("@{few} bra {rolled}"));
        self.hold_checks();
        let mut result = Ok(());
        for _ in 0..UNROLL {
            result = emit_iteration(self);
            if result.is_err() {
                break;
            }
            advance(self);
        }
        let checks = self.take_held_checks();
        result?;
        for (cond, failure) in checks {
            self.fail_if(cond, failure);
        }
        self.ins(format!("bra {top}"));
        Ok(())
    }
}

impl Fx<'_, '_> {
    /// Store `v` to element `array[indices]` with instruction `op` (`st… [addr]`): held
    /// back while an unrolled copy of a thread loop is generated, emitted otherwise.
    pub(crate) fn store_or_defer(&mut self, array: &Expr, indices: &[Expr], op: String, v: Reg) {
        if self.held_stores().is_none() {
            self.ins(format!("{op}, {v}"));
            return;
        }
        // The body's locals change in the next copy: the value waits in a register of its own.
        let kept = self.keep(v);
        if let Some(d) = self.held_stores_mut() {
            d.stores.push(format!("{op}, {kept}"));
            d.stored.insert(element_key(array, indices), kept);
        }
    }

    /// The value that the unrolled copy being generated stored to `array[indices]`, if it did.
    pub(crate) fn forwarded(&self, array: &Expr, indices: &[Expr]) -> Option<Reg> {
        let d = self.held_stores()?;
        d.stored.get(&element_key(array, indices)).copied()
    }

    /// The unrolled trips of a loop shared among threads, placed before its ordinary loop:
    /// while this thread's iterations `k, k + stride, …, k + (THREAD_UNROLL - 1) stride` are
    /// all below `total`, the body is generated `THREAD_UNROLL` times (`set_var(fx, k)` sets
    /// the loop variable for iteration number `k` before each copy), every copy's stores
    /// after the last copy's loads; then `k` is where the ordinary loop goes on.
    pub(crate) fn unrolled_shared(
        &mut self,
        body: &Block,
        k: Reg,
        stride: Reg,
        total: Reg,
        mut set_var: impl FnMut(&mut Self, Reg) -> crate::Result<()>,
    ) -> crate::Result<()> {
        let (top, done) = (self.label("unrolled"), self.label("unrolledend"));
        let span = self.fresh(Class::B64);
        self.ins(format!(
            "mul.lo.u64 {span}, {stride}, {}",
            THREAD_UNROLL - 1
        ));
        self.place(&top);
        let last = self.fresh(Class::B64);
        self.ins(format!("add.u64 {last}, {k}, {span}"));
        let out = self.fresh(Class::Pred);
        self.ins(format!("setp.ge.u64 {out}, {last}, {total}"));
        self.ins(format!("@{out} bra {done}"));
        let mut stores = Vec::new();
        let mut ku = k;
        for u in 0..THREAD_UNROLL {
            if u > 0 {
                let next = self.fresh(Class::B64);
                self.ins(format!("add.u64 {next}, {ku}, {stride}"));
                ku = next;
            }
            set_var(self, ku)?;
            self.hold_stores();
            let copy = self.block(body);
            let d = self.take_held_stores();
            copy?;
            stores.extend(d.stores);
        }
        for s in stores {
            self.ins(s);
        }
        self.ins(format!("add.u64 {k}, {last}, {stride}"));
        self.ins(format!("bra {top}"));
        self.place(&done);
        Ok(())
    }
}
