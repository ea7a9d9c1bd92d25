//! The contract between JIT-compiled code and the runtime.
//!
//! Every compiled function (user functions, a compile's `main`, outlined regions) takes a
//! `*mut Ctx` as its first parameter and passes it on to every call. Run-time errors do not
//! unwind: the runtime function that detects one records it in the context and sets
//! `Ctx::status`; compiled code checks `status` after each call that can fail and returns at
//! once (with a dummy value) while it is non-zero. The engine reads the error after `main`
//! returns.
//!
//! Arrays are `*mut ArrayHeader` handles, reference counted: the `Retain`/`Release` statements
//! of the IR call `acc_rt_retain` / `acc_rt_release`. Element `i` of a rank-r array with dims
//! `d` lives at `data + elem_size * (((i0 * d1 + i1) * d2 + i2) …)` (row-major).

use std::sync::atomic::{AtomicU32, Ordering};

/// Element type codes in `ArrayHeader::elem` (the order of `ast::ScalarType`).
pub const ELEM_BOOL: u32 = 0;
pub const ELEM_I32: u32 = 1;
pub const ELEM_I64: u32 = 2;
pub const ELEM_F32: u32 = 3;
pub const ELEM_F64: u32 = 4;

/// Maximum array rank.
pub const MAX_RANK: usize = 6;

/// An array object. Compiled code reads `data` and `dims` directly for indexing and bounds
/// checks; everything else goes through runtime calls.
#[repr(C)]
pub struct ArrayHeader {
    /// Offset 0: the elements (host memory), `len * elem_size` bytes, 64-byte aligned when
    /// the runtime allocated them (an embedder's `Vec` is aligned to its element).
    pub data: *mut u8,
    /// Offset 8: total element count (product of `dims[..rank]`).
    pub len: i64,
    /// Offset 16: extents; entries past `rank` are 1.
    pub dims: [i64; MAX_RANK],
    /// Offset 64.
    pub rank: u32,
    /// Offset 68: an `ELEM_*` code.
    pub elem: u32,
    /// Offset 72: reference count; the array is freed when it drops to zero.
    pub refcount: i64,
    /// Offset 80: identity for presence tables (never reused within a process).
    pub id: u64,
    /// Offset 88: the header that owns `data` when this one shares it (a `reshape` of it), null
    /// when this header owns its data. A sharing header holds one reference on its owner, so the
    /// data is freed when the last header using it goes. The owner never shares itself: a
    /// reshape of a reshape points at the original owner. Presence tables key shared data by
    /// the owner's `id` (`device::ops::placed`).
    pub owner: *mut ArrayHeader,
    /// Offset 96: null until the embedding host holds the array (`acc::Array`), then its
    /// `array::HostShare`: the lock host access and runs share, and the host's storage when
    /// the data came from it. Only on owners (a view's is its owner's); compiled code never
    /// reads it.
    pub host: *mut crate::array::HostShare,
}

pub const ARRAY_DATA_OFFSET: i32 = 0;
pub const ARRAY_LEN_OFFSET: i32 = 8;
pub const ARRAY_DIMS_OFFSET: i32 = 16;

/// `Ctx::status` values.
pub const STATUS_OK: u32 = 0;
/// A run-time error was recorded; unwind to the engine.
pub const STATUS_ERROR: u32 = 1;
/// `exit(code)` was called; unwind to the engine.
pub const STATUS_EXIT: u32 = 2;

/// The execution context of one run.
#[repr(C)]
pub struct Ctx {
    /// Offset 0: the globals' storage, one 8-byte slot per global, indexed by the slot number
    /// the engine assigned (scalars stored in the low bytes, arrays as handles).
    pub globals: *mut u64,
    /// Offset 8: `STATUS_*`.
    pub status: u32,
    /// Offset 12: the exit code when `status == STATUS_EXIT`.
    pub exit_code: i32,
    /// Offset 16: the host side's state (output, recorded error, parameters, random state),
    /// opaque to compiled code.
    pub host: *mut std::ffi::c_void,
    /// Offset 24: the lowest stack address a function's frame may start below (the running
    /// thread's stack end plus `STACK_RESERVE`): compiled functions compare the stack pointer
    /// with it on entry, so that runaway recursion is an error, not a crash. 0: no limit.
    pub stack_limit: usize,
    /// Offset 32: the run's interrupt word (`INTERRUPT_*`), which the embedding program's
    /// interrupt handle and the time limit's watchdog set from other threads. Compiled code
    /// loads the pointer once before a loop and the word at every back edge, and calls
    /// `acc_rt_interrupted` when it is not `INTERRUPT_NONE`. Never null (`NO_INTERRUPT`).
    pub interrupt: *const AtomicU32,
    /// Offset 40: the deepest call allowed (`Limits::max_call_depth`; `u64::MAX` for none).
    /// Every user function takes its depth (1 for a call from top-level code or the host)
    /// after `ctx` and compares it with this on entry, beside the stack check.
    pub max_depth: u64,
}

pub const CTX_STACK_LIMIT_OFFSET: i32 = 24;
pub const CTX_INTERRUPT_OFFSET: i32 = 32;
pub const CTX_MAX_DEPTH_OFFSET: i32 = 40;

/// `*Ctx::interrupt` values: run on, stop (an interrupt), stop (the time limit).
pub const INTERRUPT_NONE: u32 = 0;
pub const INTERRUPT_REQUESTED: u32 = 1;
pub const INTERRUPT_TIME_LIMIT: u32 = 2;

/// The interrupt word of contexts no one interrupts (tests, tools).
pub static NO_INTERRUPT: AtomicU32 = AtomicU32::new(INTERRUPT_NONE);

/// Stack kept free below the deepest acc frame: room for the runtime and library calls that
/// frame makes, and for reporting the error.
pub const STACK_RESERVE: usize = 256 * 1024;

/// `Ctx::stack_limit` for code running on the calling thread (0 when the thread's stack
/// bounds are unknown).
pub fn stack_limit_here() -> usize {
    let marker = 0u8;
    let here = std::ptr::addr_of!(marker) as usize;
    match stacker::remaining_stack() {
        Some(remaining) => here.saturating_sub(remaining).saturating_add(STACK_RESERVE),
        None => 0,
    }
}

pub const CTX_GLOBALS_OFFSET: i32 = 0;
pub const CTX_STATUS_OFFSET: i32 = 8;
pub const ARRAY_OWNER_OFFSET: i32 = 88;

/// A string as compiled code passes it by reference: `acc_printf`'s `%s` slot holds the
/// address of one of these.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StrRef {
    /// Offset 0: UTF-8 bytes.
    pub ptr: *const u8,
    /// Offset 8: their count.
    pub len: usize,
}

// ---------------------------------------------------------------------------------------------
// Entry points (docs/ABI.md, "Runtime"). Each may be called only by compiled code, with the
// `Ctx` of a live `context::Context` and live array handles.
// ---------------------------------------------------------------------------------------------

use crate::array;
use crate::error::RunErrorKind;
use crate::host::{fail, guarded};

/// A zero-filled array of `rank` extents at `dims`; null after recording an error.
///
/// # Safety
/// `ctx` is a live context; `dims` points at `rank` extents.
pub unsafe extern "C" fn acc_rt_array_new(
    ctx: *mut Ctx,
    elem: u32,
    rank: u32,
    dims: *const i64,
) -> *mut ArrayHeader {
    guarded(ctx, None, || {
        let made = array::dims_from_raw(rank, dims).and_then(|dims| array::new_array(elem, dims));
        match made {
            Ok(a) => a,
            Err(kind) => {
                fail(ctx, kind, None);
                std::ptr::null_mut()
            }
        }
    })
}

/// No context and no panic guard: nothing here can panic (an atomic add; `release` frees with
/// the layout the array was made with, and a shared header's owner is never itself shared).
///
/// # Safety
/// `a` is null or a live array.
pub unsafe extern "C" fn acc_rt_retain(a: *mut ArrayHeader) {
    array::retain(a);
}

/// # Safety
/// `a` is null or a live array whose reference the caller gives up.
pub unsafe extern "C" fn acc_rt_release(a: *mut ArrayHeader) {
    array::release(a);
}

/// # Safety
/// `ctx` is a live context, `a` a live array.
pub unsafe extern "C" fn acc_rt_bounds_error(
    ctx: *mut Ctx,
    site: u32,
    a: *mut ArrayHeader,
    dim: u32,
    index: i64,
) {
    guarded(ctx, Some(site), || {
        let shape = if a.is_null() {
            Vec::new()
        } else {
            array::shape(a).to_vec()
        };
        fail(ctx, RunErrorKind::Bounds { index, dim, shape }, Some(site));
    })
}

/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_div_zero(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        fail(ctx, RunErrorKind::DivZero, Some(site));
    })
}

/// # Safety
/// `ctx` is a live context; `msg` points at `len` bytes of UTF-8 (any pointer when `len` is 0).
pub unsafe extern "C" fn acc_rt_assert_fail(ctx: *mut Ctx, site: u32, msg: *const u8, len: usize) {
    guarded(ctx, Some(site), || {
        let message = (len > 0).then(|| string_arg(msg, len).into_owned());
        fail(ctx, RunErrorKind::AssertFailed { message }, Some(site));
    })
}

/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_exit(ctx: *mut Ctx, code: i32) {
    guarded(ctx, None, || {
        if (*ctx).status == STATUS_OK {
            (*ctx).status = STATUS_EXIT;
            (*ctx).exit_code = code;
        }
    })
}

/// `size(a, d)`.
///
/// # Safety
/// `ctx` is a live context, `a` a live array.
pub unsafe extern "C" fn acc_rt_size(ctx: *mut Ctx, site: u32, a: *mut ArrayHeader, d: i64) -> i64 {
    guarded(ctx, Some(site), || {
        let rank = (*a).rank;
        match usize::try_from(d) {
            Ok(i) if i < rank as usize => (*a).dims[i],
            _ => {
                fail(ctx, RunErrorKind::BadDimension { dim: d, rank }, Some(site));
                0
            }
        }
    })
}

/// A counted loop's step, computed at run time, is 0 (`site`: the step expression).
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_zero_step(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        fail(ctx, RunErrorKind::ZeroStep, Some(site));
    })
}

/// A function found the stack exhausted on entry (`site`: its name).
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_stack_overflow(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        fail(ctx, RunErrorKind::StackOverflow, Some(site));
    })
}

/// A call deeper than `Ctx::max_depth`: records `CallDepth` at the called function's name, or
/// the stop that set the limit to 0 (`context::RunStop`: an interrupt or the time limit, which
/// reach code without loops this way).
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_depth_limit(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        let kind = match (*(*ctx).interrupt).load(Ordering::Relaxed) {
            INTERRUPT_NONE => RunErrorKind::CallDepth {
                limit: (*ctx).max_depth,
            },
            word => stop_error(word),
        };
        fail(ctx, kind, Some(site));
    })
}

/// The error of a run stopped by interrupt word `word` (not `INTERRUPT_NONE`).
pub(crate) fn stop_error(word: u32) -> RunErrorKind {
    if word == INTERRUPT_TIME_LIMIT {
        RunErrorKind::TimeLimit
    } else {
        RunErrorKind::Interrupted
    }
}

/// Calls function `index` of the embedding program with `n` argument slots at `args`, its
/// result to `*ret` (**may fail**: its `Err` is an error without a site, which the check after
/// the call locates at the call).
///
/// # Safety
/// `ctx` is a live context; `args` points at `n` slots and `ret` at one.
pub unsafe extern "C" fn acc_rt_host_call(
    ctx: *mut Ctx,
    index: u32,
    args: *const u64,
    n: u32,
    ret: *mut u64,
) {
    guarded(ctx, None, || {
        let args = if n == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(args, n as usize)
        };
        if let Err(kind) = crate::host::host_state(ctx).call_host_fn(index, args, &mut *ret) {
            fail(ctx, kind, None);
        }
    })
}

/// Stops the run at a loop's back edge: the interrupt word was set. Records `Interrupted` or
/// `TimeLimit` at the loop's `site`.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_interrupted(ctx: *mut Ctx, site: u32) {
    guarded(ctx, Some(site), || {
        let word = (*(*ctx).interrupt).load(Ordering::Relaxed);
        fail(ctx, stop_error(word), Some(site));
    })
}

/// Gives the error just recorded without a site (by a library function, which does not
/// know where it was called from) the site of the call that failed.
///
/// Not guarded: it only fills in a field of the recorded error, which cannot panic.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe extern "C" fn acc_rt_error_site(ctx: *mut Ctx, site: u32) {
    crate::host::locate_error(ctx, site);
}

/// A string argument (`ptr`, `len`) of compiled code; invalid UTF-8 is replaced.
///
/// # Safety
/// `ptr` points at `len` readable bytes, or `len` is 0.
pub unsafe fn string_arg<'a>(ptr: *const u8, len: usize) -> std::borrow::Cow<'a, str> {
    if len == 0 || ptr.is_null() {
        return "".into();
    }
    String::from_utf8_lossy(std::slice::from_raw_parts(ptr, len))
}

/// This module's entry points by name (`crate::symbols` has every one of the runtime's).
pub fn entry_points() -> Vec<(&'static str, *const u8)> {
    vec![
        ("acc_rt_array_new", acc_rt_array_new as *const u8),
        ("acc_rt_retain", acc_rt_retain as *const u8),
        ("acc_rt_release", acc_rt_release as *const u8),
        ("acc_rt_bounds_error", acc_rt_bounds_error as *const u8),
        ("acc_rt_div_zero", acc_rt_div_zero as *const u8),
        ("acc_rt_zero_step", acc_rt_zero_step as *const u8),
        ("acc_rt_assert_fail", acc_rt_assert_fail as *const u8),
        ("acc_rt_exit", acc_rt_exit as *const u8),
        ("acc_rt_size", acc_rt_size as *const u8),
        ("acc_rt_error_site", acc_rt_error_site as *const u8),
        ("acc_rt_interrupted", acc_rt_interrupted as *const u8),
        ("acc_rt_depth_limit", acc_rt_depth_limit as *const u8),
        ("acc_rt_host_call", acc_rt_host_call as *const u8),
        ("acc_rt_stack_overflow", acc_rt_stack_overflow as *const u8),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::{Context, Outcome};
    use crate::error::RunError;
    use crate::host::HostState;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn layouts_match_the_documented_offsets() {
        assert_eq!(offset_of!(ArrayHeader, data), ARRAY_DATA_OFFSET as usize);
        assert_eq!(offset_of!(ArrayHeader, len), ARRAY_LEN_OFFSET as usize);
        assert_eq!(offset_of!(ArrayHeader, dims), ARRAY_DIMS_OFFSET as usize);
        assert_eq!(offset_of!(ArrayHeader, rank), 64);
        assert_eq!(offset_of!(ArrayHeader, elem), 68);
        assert_eq!(offset_of!(ArrayHeader, refcount), 72);
        assert_eq!(offset_of!(ArrayHeader, id), 80);
        assert_eq!(offset_of!(ArrayHeader, owner), ARRAY_OWNER_OFFSET as usize);
        assert_eq!(offset_of!(ArrayHeader, host), 96);
        assert_eq!(offset_of!(Ctx, interrupt), CTX_INTERRUPT_OFFSET as usize);
        assert_eq!(offset_of!(Ctx, max_depth), CTX_MAX_DEPTH_OFFSET as usize);
        assert_eq!(size_of::<ArrayHeader>(), 104);
        assert_eq!(align_of::<ArrayHeader>(), 8);
        assert_eq!(offset_of!(Ctx, globals), CTX_GLOBALS_OFFSET as usize);
        assert_eq!(offset_of!(Ctx, status), CTX_STATUS_OFFSET as usize);
        assert_eq!(offset_of!(Ctx, exit_code), 12);
        assert_eq!(offset_of!(Ctx, host), 16);
    }

    fn context() -> Context {
        Context::new(HostState::new(Box::new(std::io::sink())))
    }

    fn error(c: &mut Context) -> RunError {
        match c.finish() {
            Outcome::Error(e) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn array_new_and_release() {
        let mut c = context();
        let dims = [2i64, 3];
        unsafe {
            let a = acc_rt_array_new(c.ctx_ptr(), ELEM_I32, 2, dims.as_ptr());
            assert!(!a.is_null());
            assert_eq!((*a).len, 6);
            acc_rt_retain(a);
            assert_eq!((*a).refcount, 2);
            acc_rt_release(a);
            acc_rt_release(a);
            let bad = [2i64, -1];
            let a = acc_rt_array_new(c.ctx_ptr(), ELEM_I32, 2, bad.as_ptr());
            assert!(a.is_null());
        }
        assert_eq!(
            error(&mut c).kind,
            RunErrorKind::NegativeExtent { dim: 1, extent: -1 }
        );
    }

    #[test]
    fn errors_are_recorded_with_their_site() {
        let mut c = context();
        let dims = [3i64, 4];
        unsafe {
            let a = acc_rt_array_new(c.ctx_ptr(), ELEM_F64, 2, dims.as_ptr());
            acc_rt_bounds_error(c.ctx_ptr(), 5, a, 1, 4);
            assert_eq!(
                error(&mut c),
                RunError {
                    kind: RunErrorKind::Bounds {
                        index: 4,
                        dim: 1,
                        shape: vec![3, 4]
                    },
                    site: Some(5)
                }
            );
            assert_eq!(acc_rt_size(c.ctx_ptr(), 6, a, 1), 4);
            assert_eq!(acc_rt_size(c.ctx_ptr(), 6, a, 0), 3);
            assert_eq!(c.status(), STATUS_OK);
            assert_eq!(acc_rt_size(c.ctx_ptr(), 6, a, 2), 0);
            assert_eq!(
                error(&mut c).kind,
                RunErrorKind::BadDimension { dim: 2, rank: 2 }
            );
            assert_eq!(acc_rt_size(c.ctx_ptr(), 6, a, -1), 0);
            assert_eq!(error(&mut c).site, Some(6));
            acc_rt_release(a);
        }
        unsafe { acc_rt_div_zero(c.ctx_ptr(), 9) };
        assert_eq!(
            error(&mut c),
            RunError {
                kind: RunErrorKind::DivZero,
                site: Some(9)
            }
        );
        let msg = "n must be even";
        unsafe { acc_rt_assert_fail(c.ctx_ptr(), 1, msg.as_ptr(), msg.len()) };
        assert_eq!(
            error(&mut c).kind,
            RunErrorKind::AssertFailed {
                message: Some(msg.into())
            }
        );
        unsafe { acc_rt_assert_fail(c.ctx_ptr(), 1, std::ptr::null(), 0) };
        assert_eq!(
            error(&mut c).kind,
            RunErrorKind::AssertFailed { message: None }
        );
    }

    #[test]
    fn exit_sets_the_code() {
        let mut c = context();
        unsafe { acc_rt_exit(c.ctx_ptr(), 3) };
        assert_eq!(c.status(), STATUS_EXIT);
        assert_eq!(c.finish(), Outcome::Exit(3));
    }

    #[test]
    fn symbols_are_unique_and_non_null() {
        let syms = crate::symbols();
        let mut names: Vec<_> = syms.iter().map(|s| s.0).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), syms.len());
        assert!(syms.iter().all(|s| !s.1.is_null()));
    }
}
