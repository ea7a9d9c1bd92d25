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

use std::sync::atomic::AtomicU32;

pub use acc_abi::ElemType;

/// `ArrayHeader::elem` codes (`ElemType`'s), as the runtime and the standard library match
/// on them.
pub const ELEM_BOOL: u32 = ElemType::Bool.code();
pub const ELEM_I32: u32 = ElemType::I32.code();
pub const ELEM_I64: u32 = ElemType::I64.code();
pub const ELEM_F32: u32 = ElemType::F32.code();
pub const ELEM_F64: u32 = ElemType::F64.code();

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
    /// Offset 68: an `ElemType` code.
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
pub const ARRAY_RANK_OFFSET: i32 = 64;

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
    /// Offset 48: the run's devices (`device::RunDevices`), opaque to compiled code; null in
    /// the contexts of gangs, whose code uses no device.
    pub devices: *mut std::ffi::c_void,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{align_of, offset_of, size_of};

    #[test]
    fn layouts_match_the_documented_offsets() {
        assert_eq!(offset_of!(ArrayHeader, data), ARRAY_DATA_OFFSET as usize);
        assert_eq!(offset_of!(ArrayHeader, len), ARRAY_LEN_OFFSET as usize);
        assert_eq!(offset_of!(ArrayHeader, dims), ARRAY_DIMS_OFFSET as usize);
        assert_eq!(offset_of!(ArrayHeader, rank), ARRAY_RANK_OFFSET as usize);
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
        assert_eq!(offset_of!(Ctx, devices), 48);
    }
}
