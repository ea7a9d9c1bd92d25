//! `Context`: the safe owner of a `Ctx`, its `HostState`, its devices and its globals' storage, which the
//! engine creates once per run (or per REPL session) and whose `ctx_ptr()` it passes to
//! compiled code.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::abi::{ArrayHeader, Ctx, INTERRUPT_NONE, STATUS_ERROR, STATUS_EXIT, STATUS_OK};
use crate::array;
use crate::device::{DeviceOptions, Devices, RunDevices};
use crate::error::RunError;
use crate::host::HostState;
use crate::kernels::KernelTable;
use crate::launch::UnitId;

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// `main` returned normally.
    Finished,
    /// `exit(code)`.
    Exit(i32),
    /// A run-time error.
    Error(RunError),
}

/// Owns the `Ctx` compiled code runs with. The `Ctx`, the host state, the devices and the
/// globals live in allocations of their own, reached only through raw pointers, so their addresses stay put
/// and compiled code may hold them while the `Context` is not borrowed.
pub struct Context {
    ctx: *mut Ctx,
    host: *mut HostState,
    devices: *mut RunDevices,
    /// `globals_len` zero-initialized slots (a boxed slice), `(*ctx).globals`.
    globals_len: usize,
    /// Where `ctx` lives, with the interrupt word it points at: shared with `RunStop`s, which
    /// may outlive the context.
    cell: Arc<CtxCell>,
    /// `Ctx::max_depth` between stops.
    max_depth: u64,
}

/// The `Ctx` and its interrupt word, in one allocation that stop handles keep alive.
struct CtxCell {
    ctx: UnsafeCell<Ctx>,
    word: AtomicU32,
}

// SAFETY: the `Ctx` is written by its `Context` (between runs) and by compiled code (during
// one); other threads only store into its interrupt word and, atomically, its `max_depth`
// (`RunStop`).
unsafe impl Send for CtxCell {}
// SAFETY: as above.
unsafe impl Sync for CtxCell {}

/// Stops the runs of a context from any thread: sets the interrupt word, which every loop
/// checks, and the depth limit to 0, which every call checks (so that code without loops, a
/// deep recursion, stops too). Harmless once the context is gone.
#[derive(Clone)]
pub struct RunStop {
    cell: Arc<CtxCell>,
}

impl RunStop {
    /// Stops the run in progress, or the next one: `why` is `INTERRUPT_REQUESTED` or
    /// `INTERRUPT_TIME_LIMIT`.
    pub fn stop(&self, why: u32) {
        self.cell.word.store(why, Ordering::Relaxed);
        // SAFETY: the cell is alive; `max_depth` is only accessed atomically from Rust, and
        // compiled code reads it with a plain load of the same width.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.cell.ctx.get()).max_depth) }
            .store(0, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for RunStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunStop")
    }
}

// SAFETY: the context exclusively owns everything its pointers reach (its host state, devices
// and globals), which only the thread holding it uses; a GPU's context is made current on the
// using thread before each use.
unsafe impl Send for Context {}

impl Context {
    pub fn new(host: HostState) -> Context {
        let host = Box::into_raw(Box::new(host));
        let devices = Box::into_raw(Box::<RunDevices>::default());
        let globals = Box::into_raw(Vec::<u64>::new().into_boxed_slice()) as *mut u64;
        let cell = Arc::new(CtxCell {
            ctx: UnsafeCell::new(Ctx {
                globals,
                status: STATUS_OK,
                exit_code: 0,
                host: host.cast(),
                stack_limit: 0,
                interrupt: std::ptr::null(),
                max_depth: u64::MAX,
                devices: devices.cast(),
            }),
            word: AtomicU32::new(INTERRUPT_NONE),
        });
        let ctx = cell.ctx.get();
        // SAFETY: the cell is new; the word lives as long as the `Ctx` beside it.
        unsafe { (*ctx).interrupt = &raw const cell.word };
        Context {
            ctx,
            host,
            devices,
            globals_len: 0,
            cell,
            max_depth: u64::MAX,
        }
    }

    /// What stops this context's runs from another thread.
    pub fn run_stop(&self) -> RunStop {
        RunStop {
            cell: self.cell.clone(),
        }
    }

    /// The deepest call compiled code may make (`None`: as deep as the stack allows).
    pub fn set_max_depth(&mut self, depth: Option<u64>) {
        self.max_depth = depth.unwrap_or(u64::MAX);
        self.store_max_depth();
    }

    /// Clears a stop, at the end of a run: a stop asked for while no run is going on stops
    /// the next one, and only that one.
    pub fn clear_interrupt(&self) {
        self.cell.word.store(INTERRUPT_NONE, Ordering::Relaxed);
        self.store_max_depth();
    }

    fn store_max_depth(&self) {
        // SAFETY: owned by `self`; atomically, as `RunStop::stop` stores it.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.ctx).max_depth) }
            .store(self.max_depth, Ordering::Relaxed);
    }

    /// What compiled code takes as its first argument, for code about to run on the calling
    /// thread (whose stack bounds it records). Valid as long as the context lives.
    pub fn ctx_ptr(&self) -> *mut Ctx {
        // SAFETY: owned by `self`; compiled code is not running on this context now.
        unsafe { (*self.ctx).stack_limit = crate::abi::stack_limit_here() };
        self.ctx
    }

    pub fn host(&mut self) -> &mut HostState {
        // SAFETY: owned by `self`; compiled code does not run while `self` is borrowed.
        unsafe { &mut *self.host }
    }

    fn run_devices(&mut self) -> &mut RunDevices {
        // SAFETY: owned by `self`; compiled code does not run while `self` is borrowed.
        unsafe { &mut *self.devices }
    }

    /// The devices of the run (made on first use).
    pub fn devices(&mut self) -> &mut Devices {
        self.run_devices().get()
    }

    /// The devices if they were made.
    pub fn devices_if_made(&mut self) -> Option<&mut Devices> {
        self.run_devices().if_made()
    }

    /// Sets up the devices anew (waiting for and dropping the old ones; the GPU kernels stay).
    pub fn configure_devices(&mut self, options: DeviceOptions) {
        self.run_devices().configure(options);
    }

    /// The GPU kernels of the live compiles, which the devices launch by region.
    pub fn gpu_kernels(&mut self) -> &KernelTable {
        self.run_devices().kernels()
    }

    /// Drops the GPU kernels of `units` (the engine frees their code) and what the GPUs made
    /// for them. Nothing of theirs may be queued.
    pub fn forget_gpu_kernels(&mut self, units: &[UnitId]) {
        self.run_devices().forget_units(units);
    }

    /// Grows the globals' storage to at least `n` slots (new slots are zero: a null array
    /// handle, a zero scalar). Existing values are kept; `Ctx::globals` may move.
    pub fn ensure_globals(&mut self, n: usize) {
        if n <= self.globals_len {
            return;
        }
        let mut grown = vec![0u64; n].into_boxed_slice();
        grown[..self.globals_len].copy_from_slice(self.globals());
        // SAFETY: the old storage came from `Box::into_raw` of a slice of `globals_len`.
        unsafe { drop(Box::from_raw(self.globals_slice_ptr())) };
        // SAFETY: `ctx` is owned by `self`.
        unsafe { (*self.ctx).globals = Box::into_raw(grown) as *mut u64 };
        self.globals_len = n;
    }

    fn globals_slice_ptr(&self) -> *mut [u64] {
        // SAFETY: `ctx` is owned by `self`.
        let data = unsafe { (*self.ctx).globals };
        std::ptr::slice_from_raw_parts_mut(data, self.globals_len)
    }

    /// The globals' slots (scalars in the low bytes, arrays as handles).
    pub fn globals(&self) -> &[u64] {
        // SAFETY: the slots are owned by `self` and initialized.
        unsafe { &*self.globals_slice_ptr() }
    }

    pub fn globals_mut(&mut self) -> &mut [u64] {
        // SAFETY: as `globals`, borrowed mutably through `self`.
        unsafe { &mut *self.globals_slice_ptr() }
    }

    /// Releases the array held in global `slot` (if any) and clears the slot. The engine calls
    /// it for array globals when a session ends; the context does not know which slots hold
    /// arrays.
    pub fn release_global_array(&mut self, slot: usize) {
        if let Some(v) = self.globals_mut().get_mut(slot) {
            let a = std::mem::take(v) as usize as *mut ArrayHeader;
            // SAFETY: the engine says the slot holds an owned array handle (or null).
            unsafe { array::release(a) };
        }
    }

    /// Zeroes a global's slot that holds a scalar, for reuse by another global.
    pub fn clear_global(&mut self, slot: usize) {
        if let Some(v) = self.globals_mut().get_mut(slot) {
            *v = 0;
        }
    }

    /// `Ctx::status`.
    pub fn status(&self) -> u32 {
        // SAFETY: owned by `self`.
        unsafe { (*self.ctx).status }
    }

    /// How the last run ended; flushes the output (a write error, such as a closed pipe, is
    /// dropped: call `flush` first to see it) and resets the status (taking the error) so
    /// that the context can run again (the next REPL line).
    pub fn finish(&mut self) -> Outcome {
        let _ = self.flush();
        // SAFETY: owned by `self`.
        let ctx = unsafe { &mut *self.ctx };
        let status = std::mem::replace(&mut ctx.status, STATUS_OK);
        if status == STATUS_OK && !self.host().has_error() {
            return Outcome::Finished;
        }
        let error = self.host().take_error();
        match (status, error) {
            (STATUS_EXIT, _) => Outcome::Exit(ctx.exit_code),
            (STATUS_ERROR, Some(e)) => Outcome::Error(e),
            (STATUS_ERROR, None) => Outcome::Error(RunError {
                kind: crate::error::RunErrorKind::Internal {
                    message: "error status without a recorded error".into(),
                },
                site: None,
            }),
            _ => Outcome::Finished,
        }
    }

    /// Flushes the output sink (at the end of a run, before printing an error).
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.host().flush()
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        let _ = self.flush();
        // SAFETY: all came from `Box::into_raw` and are owned by `self` (the `Ctx` goes with
        // the last of the context and its `RunStop`s). The devices go first: they wait for
        // their queues' work, which may use the rest.
        unsafe {
            drop(Box::from_raw(self.devices));
            drop(Box::from_raw(self.globals_slice_ptr()));
            drop(Box::from_raw(self.host));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::ELEM_F64;
    use crate::entry::acc_rt_exit;
    use crate::error::RunErrorKind;
    use crate::host::{fail, host_state, SharedBuffer};

    fn context() -> (Context, SharedBuffer) {
        let buf = SharedBuffer::new();
        (Context::new(HostState::new(Box::new(buf.clone()))), buf)
    }

    #[test]
    fn ctx_points_at_host_and_globals() {
        let (mut c, buf) = context();
        c.ensure_globals(3);
        c.globals_mut()[1] = 42;
        c.ensure_globals(2);
        assert_eq!(c.globals(), &[0, 42, 0]);
        c.ensure_globals(10);
        assert_eq!(c.globals()[1], 42);
        assert_eq!(c.globals().len(), 10);
        let p = c.ctx_ptr();
        unsafe {
            assert_eq!(*(*p).globals.add(1), 42);
            host_state(p).write_str("out");
        }
        c.flush().unwrap();
        assert_eq!(buf.contents(), "out");
    }

    #[test]
    fn first_error_wins_and_finish_resets() {
        let (mut c, _) = context();
        let p = c.ctx_ptr();
        unsafe {
            fail(p, RunErrorKind::DivZero, Some(3));
            fail(p, RunErrorKind::DivZero, Some(4));
        }
        assert_eq!(c.status(), STATUS_ERROR);
        assert_eq!(
            c.finish(),
            Outcome::Error(RunError {
                kind: RunErrorKind::DivZero,
                site: Some(3)
            })
        );
        assert_eq!(c.status(), STATUS_OK);
        assert_eq!(c.finish(), Outcome::Finished);
        unsafe {
            acc_rt_exit(p, 7);
            fail(p, RunErrorKind::DivZero, Some(4));
        }
        assert_eq!(c.finish(), Outcome::Exit(7));
    }

    #[test]
    fn finish_flushes() {
        let buf = SharedBuffer::new();
        let out = std::io::BufWriter::new(buf.clone());
        let mut c = Context::new(HostState::new(Box::new(out)));
        c.host().write_str("buffered");
        assert_eq!(buf.contents(), "");
        assert_eq!(c.finish(), Outcome::Finished);
        assert_eq!(buf.contents(), "buffered");
    }

    #[test]
    fn global_arrays_are_released() {
        let (mut c, _) = context();
        c.ensure_globals(1);
        let a = array::new_array(ELEM_F64, &[4]).unwrap();
        c.globals_mut()[0] = a as u64;
        c.release_global_array(0);
        assert_eq!(c.globals()[0], 0);
        c.release_global_array(0);
        c.release_global_array(5);
    }
}
