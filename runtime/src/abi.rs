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
    /// Offset 0: the elements (host memory), `len * elem_size` bytes, 64-byte aligned.
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
}

pub const CTX_GLOBALS_OFFSET: i32 = 0;
pub const CTX_STATUS_OFFSET: i32 = 8;
